// The scorer of the omARI loss (table_scorer.hpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "simd.hpp"  // (SALSOX_SIMD_X86)
#if SALSOX_SIMD_X86
#include <immintrin.h>
#endif

#include "count_table.hpp"
#include "table_scorer.hpp"

namespace salsox {

template <class Label, class Count>
class OmariScorer : public TableScorer<Label, Count> {
  using Base = TableScorer<Label, Count>;
  using Base::s_, Base::d_, Base::simd_, Base::old_, Base::Es_, Base::ms_, Base::sz, Base::begin, Base::for_draws,
      Base::kDrawChunk;

 public:
  OmariScorer(const typename Base::State& state, const EngineOptions& opts) : Base(state, opts) {
    const std::size_t slots = static_cast<std::size_t>(state.max_clusters()) + 1 + kSimdPad;
    e_new_.assign(slots, 0.0);
    e_norm_.assign(slots, 0.0);
    const double* dcell = state.cell_diffs();
    for (std::size_t x = 0; x < state.cell_diffs_size(); ++x) cells_are_counts_ &= dcell[x] == static_cast<double>(x);
  }

  // The score on the state's path.
  void score(std::int64_t i, std::int32_t old, double* out) override {
    begin(old);
#if SALSOX_SIMD_X86
    if (simd_ != SimdPath::Baseline) return score_avx2(i, out);
#endif
    score_on<SimdPath::Baseline>(i, out);
  }

 private:
  template <SimdPath P>
  SALSOX_INLINE void score_on(std::int64_t i, double* out);
#if SALSOX_SIMD_X86
  SALSOX_TARGET_AVX2 void score_avx2(std::int64_t i, double* out) { score_on<SimdPath::AVX2>(i, out); }
  template <int V>
  SALSOX_TARGET_AVX2 void draws_avx2(std::int64_t i, std::int64_t lo, std::int64_t hi, std::int32_t first,
                                     double* acc) const;
#endif

  // Each slot's estimate sum with the item in it, and that over the pairs of items; each chunk's sums.
  std::vector<double> e_new_, e_norm_, e_x_;
  bool cells_are_counts_ = true;  // dcell(x) == x (pair counts: the fused score draws_avx2)
};

// omARI's denominator mixes draw and slot, so every cell is evaluated densely, one division
// each, B/N hoisted per slot. Each slot is a SIMD lane: on the wide paths the slots are padded
// to whole vectors (no scalar remainder); the padded lanes are computed and dropped.
template <class Label, class Count>
template <SimdPath P>
inline void OmariScorer<Label, Count>::score_on(std::int64_t i, double* out) {
  const std::int32_t q = s_.slots();
  const double m1 = static_cast<double>(ms_);
  const double N = m1 * (m1 - 1) / 2;
  if (N <= 0) {
    std::fill(out, out + q + 1, 0.0);
    return;
  }
  const std::int32_t slots = q + 1;
  constexpr std::int32_t width = P == SimdPath::Baseline ? 1 : simd_width(P);
  const std::int32_t lanes = (slots + width - 1) / width * width;
  const double* dest = s_.est_diffs();
  for (std::int32_t k = 0; k < q; ++k) e_new_[k] = Es_ + dest[sz(k)];
  e_new_[q] = Es_ + dest[0];
  for (std::int32_t k = slots; k < lanes; ++k) e_new_[k] = e_new_[q];
  for (std::int32_t k = 0; k < lanes; ++k) e_norm_[k] = e_new_[k] / N;
  const double* dc = s_.cell_diffs();
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
  double* scratch = e_x_.data();
#if SALSOX_SIMD_X86
  if constexpr (P != SimdPath::Baseline) {
    if (cells_are_counts_) {
      // The fused kernel below: the same operations on each element and the same order of
      // the draws in each slot's sum, so the same bits as the loop after it.
      const std::int32_t vectors = (slots + 3) / 4;
      const double* fused = this->template draw_chunks<P>(
          lanes, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t*) {
        for (std::int32_t v = 0; v < vectors; v += 8)
          with_constant<1, 8>(vectors - v, [&](auto n) SALSOX_INLINE {
            draws_avx2<decltype(n)::value>(i, lo, hi, v, acc);
          });
      });
      std::copy(fused, fused + slots, out);
      return;
    }
  }
#endif
  const double* sums = this->template draw_chunks<P>(
      lanes, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t*) SALSOX_INLINE {
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
// score_on's sums over draws hi-1 down to lo for slots 4 first .. 4 (first + V) - 1, in
// registers, a cell's pair-count increment being its count. Reads up to three counts past the
// slots in use (inside the row, or the table's slack line after the last); they are masked.
template <class Label, class Count>
template <int V>
SALSOX_TARGET_AVX2 void OmariScorer<Label, Count>::draws_avx2(std::int64_t i, std::int64_t lo, std::int64_t hi,
                                                              std::int32_t first, double* acc) const {
  constexpr std::int64_t kAhead = 8;
  const std::int32_t q = s_.slots(), dec = old_;
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
  const Count* cnt = s_.counts();
  const std::int64_t stride = s_.stride();
  const std::int32_t alloc = s_.allocated_column();
  const double *D = s_.draw_sums(), *J = s_.joint_sums(), *ddraw = s_.draw_diffs(), *dcell = s_.cell_diffs();
  const Count* cells = cnt + 4 * first;
  for (std::int64_t h = hi - 1; h >= lo; --h) {
    // The rows of successive draws are scattered; this loop is short enough to wait on them.
    if (h >= lo + kAhead) __builtin_prefetch(cnt + s_.row_index(h - kAhead, lab[h - kAhead]) * stride);
    const std::int64_t r = s_.row_index(h, lab[h]) * stride;
    const Count* row = cnt + r;
    // As for_draws: D_h with item i in its draw cluster, J_h without it.
    const double Dh = dec < 0 ? D[h] + ddraw[row[alloc]] : D[h];
    const double Jh = dec < 0 ? J[h] : J[h] - dcell[row[dec] - 1];
    const __m256d A = _mm256_set1_pd(Dh), X = _mm256_set1_pd(Jh);
    for (int v = 0; v < V; ++v) {
      const __m256d c = _mm256_sub_pd(_mm256_and_pd(counts4_pd(cells + r + 4 * v), keep[v]), at_dec[v]);
      const __m256d x = _mm256_add_pd(X, c);
      const __m256d b = _mm256_loadu_pd(B + 4 * v), bn = _mm256_loadu_pd(BN + 4 * v);
      // score_on's cell(A, B, BN, X), operation for operation.
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

}  // namespace salsox
