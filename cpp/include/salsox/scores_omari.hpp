// Score of the omARI loss for CountTableState (count_table.hpp).
#pragma once
#include <algorithm>
#include <cstdint>

#include "simd.hpp"  // (SALSOX_SIMD_X86)
#if SALSOX_SIMD_X86
#include <immintrin.h>
#endif

#include "count_table.hpp"
#include "scores_shared.hpp"

namespace salsox {

// omARI's denominator mixes draw and slot, so every cell is evaluated densely, one division
// each, B/N hoisted per slot. Each slot is a SIMD lane: on the wide paths the slots are padded
// to whole vectors (no scalar remainder); the padded lanes are computed and dropped.
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
  constexpr std::int32_t width = P == SimdPath::Baseline ? 1 : simd_width(P);
  const std::int32_t lanes = (slots + width - 1) / width * width;
  for (std::int32_t k = 0; k < q_; ++k) e_new_[k] = Es_ + dest_[sz(k)];
  e_new_[q_] = Es_ + dest_[0];
  for (std::int32_t k = slots; k < lanes; ++k) e_new_[k] = e_new_[q_];
  for (std::int32_t k = 0; k < lanes; ++k) e_norm_[k] = e_new_[k] / N;
  const double* dc = dcell_.data();
  const double* B = e_new_.data();
  const double* BN = e_norm_.data();
  // Branch-free (a zero denominator's value masked to 0), so that the slot loop vectorises.
  auto cell = [](double A, double B, double BN, double X) SALSOX_INLINE {
    const double expected = A * BN;
    const double denom = 0.5 * (A + B) - expected;
    const double zero = static_cast<double>(denom == 0.0);
    return (1.0 - zero) * (1.0 - (X - expected) / (denom + zero));
  };
  // Summed by chunks of draws (draw_chunks); each chunk gathers the joint sums into its own
  // scratch, keeping the division loop free of table lookups.
  const auto w = static_cast<std::size_t>(lanes);
  const std::int64_t chunks = (d_.H + kDrawChunk - 1) / kDrawChunk;
  if (e_x_.size() < static_cast<std::size_t>(chunks) * w) e_x_.resize(static_cast<std::size_t>(chunks) * w);
  const std::int32_t q = q_;
  double* scratch = e_x_.data();
#if SALSOX_SIMD_X86
  if constexpr (P != SimdPath::Baseline) {
    if (cells_are_counts_) {
      // The fused kernel below: the same operations on each element and the same order of
      // the draws in each slot's sum, so the same bits as the loop after it.
      const std::int32_t vectors = (slots + 3) / 4;
      const double* fused = draw_chunks<P>(lanes, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t*) {
        for (std::int32_t v = 0; v < vectors; v += 8)
          with_constant<1, 8>(vectors - v, [&](auto n) SALSOX_INLINE {
            omari_draws_avx2<decltype(n)::value>(i, lo, hi, v, acc);
          });
      });
      std::copy(fused, fused + slots, out);
      return;
    }
  }
#endif
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

#if SALSOX_SIMD_X86
// score_omari's sums over draws hi-1 down to lo for slots 4 first .. 4 (first + V) - 1, in
// registers, a cell's pair-count increment being its count. Reads up to three counts past the
// slots in use (inside the row, or the table's slack line after the last); they are masked.
template <class Label, class Count>
template <int V>
SALSOX_TARGET_AVX2 void CountTableState<Label, Count>::omari_draws_avx2(std::int64_t i, std::int64_t lo, std::int64_t hi,
                                                                       std::int32_t first, double* acc) const {
  constexpr std::int64_t kAhead = 8;
  const std::int32_t q = q_, dec = old_;
  const __m256d one = _mm256_set1_pd(1.0), half = _mm256_set1_pd(0.5), zero = _mm256_setzero_pd();
  const __m256d qv = _mm256_set1_pd(static_cast<double>(q)), decv = _mm256_set1_pd(static_cast<double>(dec));
  __m256d sum[V], keep[V], at_dec[V];
  for (int v = 0; v < V; ++v) {
    const double k0 = 4.0 * (first + v);
    const __m256d k = _mm256_add_pd(_mm256_set1_pd(k0), _mm256_set_pd(3.0, 2.0, 1.0, 0.0));
    sum[v] = _mm256_loadu_pd(acc + 4 * (first + v));
    keep[v] = _mm256_cmp_pd(k, qv, _CMP_LT_OQ);  // lanes of slots in use; the new slot's cell is 0
    at_dec[v] = _mm256_and_pd(_mm256_cmp_pd(k, decv, _CMP_EQ_OQ), one);
  }
  const double* B = e_new_.data() + 4 * first;
  const double* BN = e_norm_.data() + 4 * first;
  const Label* lab = d_.item(i);
  const Count* cells = cnt_ + 4 * first;
  for (std::int64_t h = hi - 1; h >= lo; --h) {
    // The rows of successive draws are scattered; this loop is short enough to wait on them.
    if (h >= lo + kAhead) __builtin_prefetch(cnt_ + row_index(h - kAhead, lab[h - kAhead]) * stride_);
    const std::int64_t r = row_index(h, lab[h]) * stride_;
    const Count* row = cnt_ + r;
    // As for_draws: D_h with item i in its draw cluster, J_h without it.
    const double Dh = dec < 0 ? D_[h] + ddraw_[row[cap_]] : D_[h];
    const double Jh = dec < 0 ? J_[h] : J_[h] - dcell_[row[dec] - 1];
    const __m256d A = _mm256_set1_pd(Dh), X = _mm256_set1_pd(Jh);
    for (int v = 0; v < V; ++v) {
      const __m256d c = _mm256_sub_pd(_mm256_and_pd(counts4_pd(cells + r + 4 * v), keep[v]), at_dec[v]);
      const __m256d x = _mm256_add_pd(X, c);
      const __m256d b = _mm256_loadu_pd(B + 4 * v), bn = _mm256_loadu_pd(BN + 4 * v);
      // score_omari's cell(A, B, BN, X), operation for operation.
      const __m256d expected = _mm256_mul_pd(A, bn);
      const __m256d denom = _mm256_sub_pd(_mm256_mul_pd(half, _mm256_add_pd(A, b)), expected);
      const __m256d z = _mm256_and_pd(_mm256_cmp_pd(denom, zero, _CMP_EQ_OQ), one);
      const __m256d ratio = _mm256_div_pd(_mm256_sub_pd(x, expected), _mm256_add_pd(denom, z));
      sum[v] = _mm256_add_pd(sum[v], _mm256_mul_pd(_mm256_sub_pd(one, z), _mm256_sub_pd(one, ratio)));
    }
  }
  for (int v = 0; v < V; ++v) _mm256_storeu_pd(acc + 4 * (first + v), sum[v]);
}
#endif

// The omARI score on the state's path (the AVX-512 path runs the AVX2 score).
template <class Label, class Count>
void CountTableState<Label, Count>::score_omari_paths(std::int64_t i, double* out) {
#if SALSOX_SIMD_X86
  if (simd_ != SimdPath::Baseline) return score_omari_avx2(i, out);
#endif
  score_omari<SimdPath::Baseline>(i, out);
}

#if SALSOX_SIMD_X86
template <class Label, class Count>
SALSOX_TARGET_AVX2 void CountTableState<Label, Count>::score_omari_avx2(std::int64_t i, double* out) {
  score_omari<SimdPath::AVX2>(i, out);
}
#endif

}  // namespace salsox
