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

  // The score on the state's path. The AVX2 kernel reads a cell's pair-count increment as its
  // count, exact in doubles below about 10^8 items; beyond that the portable loop (the same bits).
  void score(std::int64_t i, std::int32_t old, double* out) override {
    begin(old);
#if SALSOX_SIMD_X86
    if (simd_ != SimdPath::Baseline && cells_are_counts_) return score_avx2(i, out);
#endif
    score_portable(i, out);
  }

 private:
  SALSOX_INLINE bool slot_sums(std::int32_t lanes, double* out);
  void score_portable(std::int64_t i, double* out);
#if SALSOX_SIMD_X86
  SALSOX_TARGET_AVX2 void score_avx2(std::int64_t i, double* out);
  template <int V>
  SALSOX_TARGET_AVX2 __attribute__((flatten)) void draws_avx2(std::int64_t i, std::int64_t lo, std::int64_t hi,
                                                              std::int32_t first, double* acc) const;
#endif

  // Each slot's estimate sum with the item in it, and that over the pairs of items; each chunk's sums.
  std::vector<double> e_new_, e_norm_, e_x_;
  bool cells_are_counts_ = true;  // dcell(x) == x (pair counts: the AVX2 kernel draws_avx2)
};

// omARI's denominator mixes draw and slot, so every cell is evaluated densely, one division
// each, B/N hoisted per slot. slot_sums sets each slot's B and B/N, `lanes` of them (the AVX2
// lanes pad the slots to whole vectors with the new slot's, computed and dropped); false, the
// scores all 0, when fewer than two items are placed.
template <class Label, class Count>
inline bool OmariScorer<Label, Count>::slot_sums(std::int32_t lanes, double* out) {
  const std::int32_t q = s_.slots();
  const double m1 = static_cast<double>(ms_);
  const double N = m1 * (m1 - 1) / 2;
  if (N <= 0) {
    std::fill(out, out + q + 1, 0.0);
    return false;
  }
  const double* dest = s_.est_diffs();
  for (std::int32_t k = 0; k < q; ++k) e_new_[k] = Es_ + dest[sz(k)];
  e_new_[q] = Es_ + dest[0];
  for (std::int32_t k = q + 1; k < lanes; ++k) e_new_[k] = e_new_[q];
  for (std::int32_t k = 0; k < lanes; ++k) e_norm_[k] = e_new_[k] / N;
  return true;
}

template <class Label, class Count>
void OmariScorer<Label, Count>::score_portable(std::int64_t i, double* out) {
  const std::int32_t q = s_.slots(), slots = q + 1;
  if (!slot_sums(slots, out)) return;
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
  const auto w = static_cast<std::size_t>(slots);
  const std::int64_t chunks = (d_.H + kDrawChunk - 1) / kDrawChunk;
  if (e_x_.size() < static_cast<std::size_t>(chunks) * w) e_x_.resize(static_cast<std::size_t>(chunks) * w);
  double* scratch = e_x_.data();
  const double* sums = this->template draw_chunks<SimdPath::Baseline>(
      slots, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t*) SALSOX_INLINE {
    double* Xk = scratch + static_cast<std::size_t>(lo / kDrawChunk) * w;
    for_draws(i, lo, hi, [&](double A, double X, const Count* row, std::int32_t dec, std::int64_t) SALSOX_INLINE {
      for (std::int32_t k = 0; k < q; ++k) Xk[k] = X + dc[row[k] - (k == dec)];
      Xk[q] = X;
      for (std::int32_t k = 0; k < slots; ++k) acc[k] += cell(A, B[k], BN[k], Xk[k]);
    });
  });
  std::copy(sums, sums + slots, out);
}

#if SALSOX_SIMD_X86
// The same sums with the slots as AVX2 lanes (draws_avx2, eight vectors at a time): the same
// operations on each element and the same order of the draws in each slot's sum, so the same bits.
template <class Label, class Count>
SALSOX_TARGET_AVX2 void OmariScorer<Label, Count>::score_avx2(std::int64_t i, double* out) {
  const std::int32_t slots = s_.slots() + 1, vectors = (slots + 3) / 4;
  if (!slot_sums(4 * vectors, out)) return;
  const double* sums = this->template draw_chunks<SimdPath::AVX2>(
      4 * vectors, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t*) {
    for (std::int32_t v = 0; v < vectors; v += 8)
      with_constant<1, 8>(vectors - v, [&](auto n) SALSOX_INLINE {
        draws_avx2<decltype(n)::value>(i, lo, hi, v, acc);
      });
  });
  std::copy(sums, sums + slots, out);
}

// score_avx2's sums over draws hi-1 down to lo for slots 4 first .. 4 (first + V) - 1, in
// registers, a cell's pair-count increment being its count (exact in 32-bit integers, so the
// integer mask and decrement give the doubles score_portable's cells take). Reads up to three
// counts past the slots in use (inside the row, or the table's slack line after the last); they
// are masked.
template <class Label, class Count>
template <int V>
SALSOX_TARGET_AVX2 void OmariScorer<Label, Count>::draws_avx2(std::int64_t i, std::int64_t lo, std::int64_t hi,
                                                              std::int32_t first, double* acc) const {
  const std::int32_t q = s_.slots();
  const __m256d one = _mm256_set1_pd(1.0), half = _mm256_set1_pd(0.5), zero = _mm256_setzero_pd();
  __m256d sum[V];
  SlotLanes lane[V];
  for (int v = 0; v < V; ++v) {
    sum[v] = _mm256_loadu_pd(acc + 4 * (first + v));
    lane[v] = slot_lanes(4 * (first + v), q, old_);  // the new slot's cell is 0
  }
  const double* B = e_new_.data() + 4 * first;
  const double* BN = e_norm_.data() + 4 * first;
  this->template for_draws<8>(i, lo, hi, [&](double Dh, double Jh, const Count* row, std::int32_t, std::int64_t)
                                             SALSOX_TARGET_AVX2 {
    const __m256d A = _mm256_set1_pd(Dh), X = _mm256_set1_pd(Jh);
    for (int v = 0; v < V; ++v) {
      const __m128i kept = _mm_and_si128(counts4_epi32(row + 4 * (first + v)), lane[v].keep);
      const __m256d c = _mm256_cvtepi32_pd(_mm_sub_epi32(kept, lane[v].at_dec));
      const __m256d x = _mm256_add_pd(X, c);
      const __m256d b = _mm256_loadu_pd(B + 4 * v), bn = _mm256_loadu_pd(BN + 4 * v);
      // score_portable's cell(A, B, BN, X), operation for operation.
      const __m256d expected = _mm256_mul_pd(A, bn);
      const __m256d denom = _mm256_sub_pd(_mm256_mul_pd(half, _mm256_add_pd(A, b)), expected);
      const __m256d z = _mm256_and_pd(_mm256_cmp_pd(denom, zero, _CMP_EQ_OQ), one);
      const __m256d ratio = _mm256_div_pd(_mm256_sub_pd(x, expected), _mm256_add_pd(denom, z));
      sum[v] = _mm256_add_pd(sum[v], _mm256_mul_pd(_mm256_sub_pd(one, z), _mm256_sub_pd(one, ratio)));
    }
  });
  for (int v = 0; v < V; ++v) _mm256_storeu_pd(acc + 4 * (first + v), sum[v]);
}
#endif

}  // namespace salsox
