// Expected losses of given estimates under a count-sum loss, with the check that no per-draw
// loss is negative or not finite (the zero-at-equality rule for plugin losses).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "count_storage.hpp"
#include "count_types.hpp"
#include "countsum_loss.hpp"
#include "draw_blocks.hpp"
#include "draws.hpp"
#include "threads.hpp"

namespace salsox {

// The first offending value of a count-sum evaluation (a negative or non-finite per-draw loss).
struct CountSumViolation {
  std::int64_t estimate = -1, draw = -1;
  double value = 0.0;
};

// One estimate's per-draw losses a block of draws at a time (as DrawBlockLoss, evaluate.hpp),
// each draw's sums taken as CountSumState::draw_losses takes them, so the same bits.
template <class Label, class Count>
class CountSumBlockLoss {
 public:
  using Tables = DrawBlockTables<Label, Count>;

  CountSumBlockLoss(const DrawsView<Label>& d, const CountSumLoss& loss, std::int32_t q_max)
      : d_(d), loss_(loss), tables_(d, q_max) {}

  // The estimate `labels` (0..q-1) whose losses draw_losses takes: its clusters q and its
  // estimate sums (slot order).
  void prepare(const std::int32_t* labels) {
    labels_ = labels;
    q_ = 1;
    for (std::int64_t i = 0; i < d_.n; ++i) q_ = std::max(q_, labels[i] + 1);
    std::vector<std::int64_t> size(static_cast<std::size_t>(q_), 0);
    for (std::int64_t i = 0; i < d_.n; ++i) ++size[static_cast<std::size_t>(labels[i])];
    const std::int32_t n_est = loss_.sums(SumWhere::Estimate);
    est_.assign(static_cast<std::size_t>(n_est) + 1, 0.0);
    for (std::int32_t j = 0; j < n_est; ++j)
      for (std::int32_t k = 0; k < q_; ++k) est_[j] += loss_.g[1][j][static_cast<std::size_t>(size[k])];
  }

  // Each draw's loss for draws [lo, hi) (hi - lo <= the tables' block()) into out[h - lo].
  void draw_losses(std::int64_t lo, std::int64_t hi, double* out) {
    const std::int32_t q = q_;
    tables_.count(labels_, q, lo, hi);
    const std::int32_t n_cell = loss_.sums(SumWhere::Cell), n_draw = loss_.sums(SumWhere::Draw);
    cell_.assign(static_cast<std::size_t>(n_cell) + 1, 0.0);
    draw_.assign(static_cast<std::size_t>(n_draw) + 1, 0.0);
    const double m = static_cast<double>(d_.n);
    for (std::int64_t h = lo; h < hi; ++h) {
      std::fill(cell_.begin(), cell_.end(), 0.0);
      std::fill(draw_.begin(), draw_.end(), 0.0);
      const Count* t = tables_.table(h - lo, q);
      sum_draw_rows<Cells::Nonzero, Label, Count>(
          d_.k[h], q, [&](std::int64_t r) SALSOX_INLINE { return t + r * q; },
          [&](Count x) SALSOX_INLINE {
            for (std::int32_t j = 0; j < n_cell; ++j) cell_[j] += loss_.g[0][j][static_cast<std::size_t>(x)];
          },
          [&](std::int64_t, std::int64_t s) SALSOX_INLINE {
            for (std::int32_t j = 0; j < n_draw; ++j) draw_[j] += loss_.g[2][j][static_cast<std::size_t>(s)];
          });
      out[h - lo] = loss_.evaluate(m, cell_.data(), est_.data(), draw_.data(), scratch_);
    }
  }

 private:
  const DrawsView<Label>& d_;
  const CountSumLoss& loss_;
  Tables tables_;
  const std::int32_t* labels_ = nullptr;
  std::int32_t q_ = 1;
  std::vector<double> est_, cell_, draw_, scratch_;
};

// Expected loss of each row of `estimates` (M x n, canonical labels 0..q-1) (CountSumBlockLoss,
// block_expected_losses), and the first per-draw loss below -tolerance or not finite (lowest
// estimate row, then draw). Stops early when `interrupt` fires (the caller checks it).
template <class Label>
std::vector<double> countsum_losses(const DrawsView<Label>& d, const CountSumLoss& loss, const std::int32_t* estimates,
                                    std::int64_t M, int n_jobs, double tolerance, CountSumViolation& bad,
                                    Interrupt* interrupt = nullptr) {
  const std::int32_t q_max = estimates_clusters(estimates, M, d.n);
  std::vector<CountSumViolation> found(static_cast<std::size_t>(M));
  const std::vector<double> out = with_count_type(d.n, [&](auto count) {
    using Eval = CountSumBlockLoss<Label, decltype(count)>;
    return block_expected_losses<Eval>(
        d, estimates, M, q_max, n_jobs, interrupt, [&] { return std::make_unique<Eval>(d, loss, q_max); },
        [&](std::int64_t e, std::int64_t h, double v) {
          if (found[e].draw < 0 && (!std::isfinite(v) || v < -tolerance)) found[e] = {e, h, v};
        });
  });
  const auto first = std::find_if(found.begin(), found.end(), [](const CountSumViolation& f) { return f.draw >= 0; });
  if (first != found.end()) bad = *first;
  return out;
}

}  // namespace salsox
