// The running sums of a count-sum search (countsum_state.hpp keeps them up to date as items
// move; the scorers read them): per draw h, cell sum j at cell[j * H + h] and draw sum j at
// draw[j * H + h]; estimate sum j at est[j]; the allocated items of each draw cluster (table
// row r) at alloc[r]; and their snapshot.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace salsox {

struct CsRunningSums {
  CsRunningSums(std::int32_t n_cell, std::int32_t n_est, std::int32_t n_draw, std::int64_t H, std::int64_t rows)
      : cell(static_cast<std::size_t>(n_cell * H), 0.0), draw(static_cast<std::size_t>(n_draw * H), 0.0),
        est(static_cast<std::size_t>(n_est), 0.0), alloc(static_cast<std::size_t>(rows), 0) {}

  void clear() {
    ++draw_epoch;
    std::fill(cell.begin(), cell.end(), 0.0);
    std::fill(draw.begin(), draw.end(), 0.0);
    std::fill(est.begin(), est.end(), 0.0);
    std::fill(alloc.begin(), alloc.end(), 0);
  }
  void snapshot() {
    saved.cell = cell;
    saved.draw = draw;
    saved.est = est;
    saved.alloc = alloc;
  }
  void restore() {
    ++draw_epoch;
    cell = saved.cell;
    draw = saved.draw;
    est = saved.est;
    alloc = saved.alloc;
  }

  std::vector<double> cell, draw, est;
  std::vector<std::int32_t> alloc;
  // Advanced by every change of the draw sums: a scorer keeps per-draw values computed from
  // them for all draws while it holds.
  std::uint64_t draw_epoch = 1;

 private:
  struct Saved {
    std::vector<double> cell, draw, est;
    std::vector<std::int32_t> alloc;
  } saved;
};

}  // namespace salsox
