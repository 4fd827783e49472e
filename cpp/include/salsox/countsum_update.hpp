// The sums' side of CountSumState's add and remove (declared in countsum_state.hpp, which
// includes this file after the class).
#pragma once
#include <cstdint>
#include <vector>

#include "countsum_state.hpp"

namespace salsox {

// Calls f(visit) with the visitor that the table's add (kAdd) or remove of item i calls per
// draw with the item's cell count x before the change, so that the sums follow in the table's
// own pass. Each draw's sums are its own: the pass may be shared between threads.
template <class Label, class Count>
template <bool kAdd, class F>
inline void CountSumState<Label, Count>::with_sums_visitor(std::int64_t i, const F& f) {
  const Label* lab = d_.item(i);
  const std::int64_t* base = d_.base;
  std::int32_t* alloc = sums_.alloc.data();
  double* cell = sums_.cell.data();
  double* draw = sums_.draw.data();
  if (plan_.n_cell == 1 && plan_.n_draw == 1) {  // the usual shape, with the tables' pointers in registers
    const double* dc = plan_.diff[0][0].data();
    const double* dd = plan_.diff[2][0].data();
    f([=](std::int64_t h, std::int64_t x) {
      const std::int64_t c = kAdd ? x : x - 1;
      const std::int64_t r = base[h] + lab[h];
      const std::int64_t s = kAdd ? alloc[r]++ : --alloc[r];
      cell[h] += kAdd ? dc[c] : -dc[c];
      draw[h] += kAdd ? dd[s] : -dd[s];
    });
    return;
  }
  const std::vector<double>* dcs = plan_.diff[0].data();
  const std::vector<double>* dds = plan_.diff[2].data();
  const std::int32_t nc = plan_.n_cell, nd = plan_.n_draw;
  const std::int64_t H = d_.H;
  f([=](std::int64_t h, std::int64_t x) {
    const std::int64_t c = kAdd ? x : x - 1;
    const std::int64_t r = base[h] + lab[h];
    const std::int64_t s = kAdd ? alloc[r]++ : --alloc[r];
    for (std::int32_t j = 0; j < nc; ++j) cell[j * H + h] += kAdd ? dcs[j][c] : -dcs[j][c];
    for (std::int32_t j = 0; j < nd; ++j) draw[j * H + h] += kAdd ? dds[j][s] : -dds[j][s];
  });
}

}  // namespace salsox
