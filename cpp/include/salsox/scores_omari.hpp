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
  const double* dc = dcell_.data();
  const double* B = e_new_.data();
  const double* BN = e_norm_.data();
  // Branch-free (a zero denominator becomes 1 and its value is masked to 0) so that the slot
  // loop vectorises.
  auto cell = [](double A, double B, double BN, double X) SALSOX_INLINE {
    const double expected = A * BN;
    const double denom = 0.5 * (A + B) - expected;
    const double zero = static_cast<double>(denom == 0.0);
    return (1.0 - zero) * (1.0 - (X - expected) / (denom + zero));
  };
  // Summed by chunks of draws (draw_chunks), so that threads inside the run or idle threads of
  // the search split the draws, each reading its own rows once (split by slots instead, every
  // thread read every row, and two of them were all a 16-slot score could use on AVX-512).
  // Each chunk gathers the joint sums into its own scratch: that keeps the division loop free
  // of table lookups.
  const auto w = static_cast<std::size_t>(lanes);
  const std::int64_t chunks = (d_.H + kDrawChunk - 1) / kDrawChunk;
  if (e_x_.size() < static_cast<std::size_t>(chunks) * w) e_x_.resize(static_cast<std::size_t>(chunks) * w);
  const std::int32_t q = q_;
  double* scratch = e_x_.data();
  const double* sums = draw_chunks<P>(lanes, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t*)
                                                 SALSOX_INLINE {
    double* Xk = scratch + static_cast<std::size_t>(lo / kDrawChunk) * w;
    std::fill(Xk, Xk + lanes, 0.0);  // the padded lanes: computed and dropped
    for_draws(i, lo, hi, [&](double A, double X, const Count* row, std::int32_t dec, std::int64_t) SALSOX_INLINE {
      for (std::int32_t k = 0; k < q; ++k) Xk[k] = X + dc[row[k] - (k == dec)];
      Xk[q] = X;
      for (std::int32_t k = 0; k < lanes; ++k) acc[k] += cell(A, B[k], BN[k], Xk[k]);
    });
  });
  std::copy(sums, sums + slots, out);
}

}  // namespace salsox
