// Score of the omARI loss for CountTableState (count_table.hpp): every cell of the item's row
// evaluated densely, one division each.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "count_table.hpp"

namespace salsox {

// omARI has no such split (its denominator mixes draw and slot), so every cell is evaluated
// densely (cheaper than picking out the nonzero cells), with one division each: with B/N
// hoisted per slot, the expected index costs a product. Each slot is a SIMD lane (simd.hpp):
// on the wide paths the slots are padded to whole vectors, so that the division loop has no
// scalar remainder; the padded lanes are computed and dropped.
template <class Label, class Count>
template <SimdPath P>
inline void CountTableState<Label, Count>::score_omari(std::int64_t i, double* out) {
  const double m1 = static_cast<double>(ms_);
  const double N = m1 * (m1 - 1) / 2;
  if (N <= 0) {
    std::fill(out, out + q_ + 1, 0.0);
    return;
  }
  const std::int32_t slots = q_ + 1;
  const std::int32_t lanes = padded_slots<P>(slots);
  for (std::int32_t k = 0; k < q_; ++k) e_new_[k] = Es_ + dest_[sz(k)];
  e_new_[q_] = Es_ + dest_[0];
  for (std::int32_t k = slots; k < lanes; ++k) e_new_[k] = e_new_[q_];
  for (std::int32_t k = 0; k < lanes; ++k) e_norm_[k] = e_new_[k] / N;
  std::fill(acc_.begin(), acc_.begin() + lanes, 0.0);
  const double* dc = dcell_.data();
  const double* B = e_new_.data();
  const double* BN = e_norm_.data();
  double* acc = acc_.data();
  // Branch-free (a zero denominator becomes 1 and its value is masked to 0) so that the slot
  // loop vectorises.
  auto cell = [](double A, double B, double BN, double X) SALSOX_INLINE {
    const double expected = A * BN;
    const double denom = 0.5 * (A + B) - expected;
    const double zero = static_cast<double>(denom == 0.0);
    return (1.0 - zero) * (1.0 - (X - expected) / (denom + zero));
  };
  double* Xk = e_x_.data();
  std::fill(Xk, Xk + lanes, 0.0);
  // Lanes lo..hi-1 over every draw (last to first): each slot sums its draws in the same
  // order whichever block it falls in, so splitting the slots changes no bit.
  auto lanes_of = [&](std::int32_t lo, std::int32_t hi) SALSOX_INLINE {
    const std::int32_t gather_end = std::min(hi, q_);
    const bool has_new = lo <= q_ && q_ < hi;
    for_each_draw(i, [&](double A, double X, const Count* row, std::int32_t dec) SALSOX_INLINE {
      // Gathering the joint sums first keeps the division loop free of table lookups.
      for (std::int32_t k = lo; k < gather_end; ++k) Xk[k] = X + dc[row[k] - (k == dec)];
      if (has_new) Xk[q_] = X;
      for (std::int32_t k = lo; k < hi; ++k) acc[k] += cell(A, B[k], BN[k], Xk[k]);
    });
  };
  // Threads inside the run, or idle threads of the search (Crew), take blocks of whole
  // vectors of slots; alone, one block.
  const std::int32_t width = simd_width(P);
  const std::int32_t vectors = (lanes + width - 1) / width;
  const std::int32_t blocks = std::min<std::int32_t>(vectors, shared_threads());
  if (blocks <= 1) {
    lanes_of(0, lanes);
  } else {
    auto bounds = [=](std::int64_t b) SALSOX_INLINE {
      return std::min(lanes, static_cast<std::int32_t>(b * vectors / blocks) * width);
    };
#if SALSOX_SIMD_X86
    int team = 1;
    if constexpr (P == SimdPath::AVX512)
      team = parallel_for(blocks, [&](std::int64_t b) SALSOX_TARGET_AVX512 { lanes_of(bounds(b), bounds(b + 1)); });
    else if constexpr (P == SimdPath::AVX2)
      team = parallel_for(blocks, [&](std::int64_t b) SALSOX_TARGET_AVX2 { lanes_of(bounds(b), bounds(b + 1)); });
    else
#endif
      team = parallel_for(blocks, [&](std::int64_t b) { lanes_of(bounds(b), bounds(b + 1)); });
    score_team_max_ = std::max(score_team_max_, team);
  }
  std::copy(acc, acc + slots, out);
}

}  // namespace salsox
