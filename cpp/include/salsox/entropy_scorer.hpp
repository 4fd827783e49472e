// The scorer of the entropy losses (table_scorer.hpp): NVI, ID and NID, as per-draw sums for
// all slots at once plus a correction for the few nonzero cells of the item's row.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "simd.hpp"  // (SALSOX_SIMD_X86)
#if SALSOX_SIMD_X86
#include <immintrin.h>
#endif

#include "cell_sum_scorer.hpp"
#include "count_table.hpp"
#include "order_by_key.hpp"
#include "table_scorer.hpp"
#include "threshold_sums.hpp"

namespace salsox {

// An unallocated item's NID terms in one draw, kept by chunks of draws (see score_nid): Hr,
// then Hj - Hr, Hj / Hr and 1 / Hr, each kNidTerms further on (a chunk and its padding).
constexpr std::int64_t kNidTerms = 256 + kThresholdLanes;
inline void nid_terms(double* at, double hr, double hj, double inv_hr) {
  at[0] = hr;
  at[kNidTerms] = hj - hr;
  at[2 * kNidTerms] = hj * inv_hr;
  at[3 * kNidTerms] = inv_hr;
}

#if SALSOX_SIMD_X86
// The cell differences dc[x] of four slots of a row (x: their counts less the item's own, see
// slot_lanes) where x is nonzero and the slot in use (`mask`), 0 elsewhere.
template <class Count>
SALSOX_TARGET_AVX2 inline __m256d lane_cell_diffs(const Count* row, const SlotLanes& lane, const double* dc,
                                                  __m256d& mask) {
  const __m128i x = _mm_sub_epi32(counts4_epi32(row), lane.at_dec);
  mask = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_andnot_si128(_mm_cmpeq_epi32(x, _mm_setzero_si128()), lane.keep)));
  return _mm256_mask_i32gather_pd(_mm256_setzero_pd(), dc, x, mask, 8);
}
#endif

template <class Label, class Count>
class EntropyScorer : public TableScorer<Label, Count> {
  using Base = TableScorer<Label, Count>;
  using Base::s_, Base::d_, Base::simd_, Base::old_, Base::Es_, Base::ms_, Base::sz, Base::begin, Base::for_draws,
      Base::kDrawChunk;

 public:
  EntropyScorer(const typename Base::State& state, const EngineOptions& opts);

  // The score on the state's path, compiled for each instruction set.
  void score(std::int64_t i, std::int32_t old, double* out) override {
    begin(old);
#if SALSOX_SIMD_X86
    if (simd_ != SimdPath::Baseline) return score_avx2(i, out);
#endif
    score_on<SimdPath::Baseline>(i, out);
  }
  void reset_threads_used() override {
    Base::reset_threads_used();
    if (cells_) cells_->reset_threads_used();
  }
  int threads_used() const override {
    return std::max(Base::threads_used(), cells_ ? cells_->threads_used() : 1);
  }

 private:
  struct EntropyScale;
  template <SimdPath P>
  SALSOX_INLINE void score_on(std::int64_t i, double* out);
#if SALSOX_SIMD_X86
  SALSOX_TARGET_AVX2 void score_avx2(std::int64_t i, double* out) { score_on<SimdPath::AVX2>(i, out); }
#endif
  void slot_entropies(const EntropyScale& ent);
  void sort_slots();
  void draw_entropies(const EntropyScale& ent);
  template <SimdPath P>
  SALSOX_INLINE void score_nvi(std::int64_t i, double* out);
  template <SimdPath P>
  SALSOX_INLINE void score_id(std::int64_t i, double* out);
  template <SimdPath P>
  SALSOX_INLINE void score_nid(std::int64_t i, double* out);
  // NVI's and NID's scores take every slot as a lane, up to kLaneVectors vectors of four slots
  // (EngineOptions::cell_lanes), else visit the nonzero cells.
  static constexpr std::int32_t kLaneVectors = 8;
#if SALSOX_SIMD_X86
  template <int V>
  SALSOX_TARGET_AVX2 __attribute__((flatten)) void nvi_draws_avx2(std::int64_t, std::int64_t, std::int64_t,
                                                                  const EntropyScale&, double*) const;
  template <int V, bool kScan>
  SALSOX_TARGET_AVX2 __attribute__((flatten)) void nid_draws_avx2(std::int64_t, std::int64_t, std::int64_t,
                                                                  const EntropyScale&, double*, double*) const;
#endif

  // A draw's Hr and 1 / Hr for score_nid's cells, its other terms kept in `at`: a scan's Hj at the
  // draw's rank (kScan), else an unallocated item's nid_terms.
  struct NidDraw {
    double hr, inv_hr;
  };
  template <bool kScan>
  SALSOX_INLINE NidDraw nid_draw(const EntropyScale& ent, double Dn, double J, std::int64_t h, std::int64_t hi,
                                 double* at) const {
    if constexpr (kScan) {
      at[rank_[h]] = ent(J);
      return {hr_draw_[h], inv_hr_draw_[h]};
    }
    const double hr = ent(Dn), inv_hr = hr > ent.tiny ? 1.0 / hr : 0.0;
    nid_terms(at + (hi - 1 - h), hr, ent(J), inv_hr);
    return {hr, inv_hr};
  }

  // score_nid's pass over draws hi-1 down to lo: each draw's terms (nid_draw) into `at`, and into
  // acc[k] each nonzero cell's (Hj - min(Hr, He)) / max(Hr, He) less a zero cell's, which is
  // dcell(x) / m lower in a cell the item joins (1 / max stored as 0 when negligible). With
  // `vectors` > 0, every slot a lane of nid_draws_avx2.
  template <SimdPath P, bool kScan>
  SALSOX_INLINE void nid_cells(std::int32_t vectors, std::int64_t i, std::int64_t lo, std::int64_t hi,
                               const EntropyScale& ent, double* acc, std::int32_t* nz, double* at) const {
#if SALSOX_SIMD_X86
    if (vectors > 0)
      return with_constant<1, kLaneVectors>(vectors, [&](auto v) SALSOX_INLINE {
        nid_draws_avx2<decltype(v)::value, kScan>(i, lo, hi, ent, acc, at);
      });
#endif
    const std::int32_t q = s_.slots();
    const double *dc = s_.cell_diffs(), *he = he_.data(), *inv_he = inv_he_.data();
    for_draws(i, lo, hi, [&](double Dn, double J, const Count* row, std::int32_t dec, std::int64_t h) SALSOX_INLINE {
      const NidDraw t = nid_draw<kScan>(ent, Dn, J, h, hi, at);
      s_.for_each_nonzero(row, q, dec, nz, [&](std::int32_t k) SALSOX_INLINE {
        acc[k] += vselect(t.hr > he[k], t.inv_hr, inv_he[k]) * dc[row[k] - (k == dec)];
      });
    });
  }

  const CountLoss& loss_;
  const bool lane_cells_;
  // ID's cell sums: VI's, of the loss's own cell table.
  std::unique_ptr<CellSumScorer<Label, Count>> cells_;
  // Scratch indexed by slot (0..q) or bucket (0..q+1).
  std::vector<double> acc_, he_, inv_he_, sorted_he_;
  std::vector<std::int32_t> order_;
  std::vector<double> bucket_a_, bucket_b_, bucket_c_;
  // Draw entropies for the ID and NID scans (see draw_entropies), at the state's draw sums
  // version hr_version_.
  std::vector<double> hr_draw_, inv_hr_draw_, hr_sorted_, inv_hr_sorted_, hr_prefix_;
  std::vector<std::int64_t> by_hr_, rank_;
  std::vector<KeyedIndex> sort_a_, sort_b_;  // order_by_key's scratch
  std::uint64_t hr_version_ = 0;
  // Scratch for score_nid: each draw's joint entropy, at the draw's rank.
  std::vector<double> hj_by_rank_;
};

template <class Label, class Count>
EntropyScorer<Label, Count>::EntropyScorer(const typename Base::State& state, const EngineOptions& opts)
    : Base(state, opts), loss_(state.loss()), lane_cells_(opts.cell_lanes) {
  const std::size_t slots = static_cast<std::size_t>(state.max_clusters()) + 1;
  for (auto* v : {&acc_, &he_, &inv_he_}) v->assign(slots + kSimdPad, 0.0);
  for (auto* v : {&bucket_a_, &bucket_b_, &bucket_c_}) v->assign(slots + 1, 0.0);
  sorted_he_.assign(slots, 0.0);
  order_.assign(slots, 0);
  if (loss_.kind == LossKind::ID) cells_ = std::make_unique<CellSumScorer<Label, Count>>(state, opts);
}

// Entropy (bits) of a partition of m items from its sum of x log2 x; clamped at 0.
template <class Label, class Count>
struct EntropyScorer<Label, Count>::EntropyScale {
  double lm, inv_m, tiny;
  explicit EntropyScale(double m)
      : lm(std::log2(m)), inv_m(1.0 / m), tiny(CountLoss::negligible_bound(m)) {}
  double operator()(double S) const { return vmax(0.0, lm - S * inv_m); }
  // A draw's NVI terms from its sums: Hr, 1 / Hj (0 when Hj is negligible) and its zero cells'
  // constant term, 2 - Hr / Hj (0 - Hr / Hj when negligible).
  struct NviDraw {
    double hr, inv, zero_const;
  };
  NviDraw nvi_draw(double Dn, double J) const {
    const double hr = (*this)(Dn), hj = (*this)(J);
    const bool live = hj > tiny;
    const double inv = live ? 1.0 / hj : 0.0;
    return {hr, inv, (live ? 2.0 : 0.0) - hr * inv};
  }
};

// Estimate entropies with the item in slot k (he_[k], k < q) or in a new cluster (he_[q]).
template <class Label, class Count>
inline void EntropyScorer<Label, Count>::slot_entropies(const EntropyScale& ent) {
  const std::int32_t q = s_.slots();
  const double* dest = s_.est_diffs();
  for (std::int32_t k = 0; k < q; ++k) he_[k] = ent(Es_ + dest[sz(k)]);
  he_[q] = ent(Es_ + dest[0]);
}

// Slots 0..q sorted by estimate entropy (ties by index), into order_.
template <class Label, class Count>
inline void EntropyScorer<Label, Count>::sort_slots() {
  const std::int32_t q = s_.slots();
  for (std::int32_t k = 0; k <= q; ++k) order_[k] = k;
  std::sort(order_.begin(), order_.begin() + q + 1, [this](std::int32_t x, std::int32_t y) {
    return he_[x] < he_[y] || (he_[x] == he_[y] && x < y);
  });
  for (std::int32_t p = 0; p <= q; ++p) sorted_he_[p] = he_[order_[p]];
}

// NVI = 2 - (Hr + He) / Hj (0 when Hj is negligible). Zero cells sum over draws to
// sum(2 - Hr/Hj) - He_k sum(1/Hj), and the nonzero cells are corrected one by one: up to 32
// slots on the wide paths every slot as a lane of nvi_draws_avx2, else visiting the nonzero
// cells; both take the same operations per cell in the draws' order: the same bits.
template <class Label, class Count>
template <SimdPath P>
inline void EntropyScorer<Label, Count>::score_nvi(std::int64_t i, double* out) {
  const EntropyScale ent(static_cast<double>(ms_));
  slot_entropies(ent);
  const double* dc = s_.cell_diffs();
  const double* he = he_.data();
  const std::int32_t q = s_.slots();
  // Summed by chunks of draws (draw_chunks): per slot k < q its nonzero cells' corrections,
  // then (from `at`) the zero cells' constant terms and their 1 / Hj.
  const double* sums = nullptr;
  std::int32_t at = q;
#if SALSOX_SIMD_X86
  if constexpr (P != SimdPath::Baseline) {
    const std::int32_t vectors = (q + 3) / 4;
    if (vectors > 0 && vectors <= kLaneVectors && lane_cells_) {
      at = 4 * vectors;
      sums = this->template draw_chunks<P>(at + 2, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t*) {
        with_constant<1, kLaneVectors>(vectors, [&](auto v) SALSOX_INLINE {
          nvi_draws_avx2<decltype(v)::value>(i, lo, hi, ent, acc);
        });
      });
    }
  }
#endif
  if (sums == nullptr) {
    sums = this->template draw_chunks<P>(
        q + 2, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t* nz) SALSOX_INLINE {
      double s_const = 0.0, s_inv = 0.0;
      for_draws(i, lo, hi, [&](double Dn, double J, const Count* row, std::int32_t dec, std::int64_t) SALSOX_INLINE {
        const auto t = ent.nvi_draw(Dn, J);
        s_const += t.zero_const;
        s_inv += t.inv;
        s_.for_each_nonzero(row, q, dec, nz, [&](std::int32_t k) SALSOX_INLINE {
          const int x = row[k] - (k == dec);
          acc[k] += CountLoss::nvi_of(t.hr, he[k], ent(J + dc[x]), ent.tiny) - (t.zero_const - he[k] * t.inv);
        });
      });
      acc[q] = s_const;
      acc[q + 1] = s_inv;
    });
  }
  const double s_const = sums[at], s_inv = sums[at + 1];
  for (std::int32_t k = 0; k < q; ++k) out[k] = s_const - he_[k] * s_inv + sums[k];
  out[q] = s_const - he_[q] * s_inv;
}

#if SALSOX_SIMD_X86
// score_nvi's sums over draws hi-1 down to lo with slots 0 .. 4V-1 as lanes, each doing the
// nonzero-cell loop's operations where its cell is nonzero: the slots' sums into acc[0 .. 4V),
// then the zero cells' constant terms and their 1 / Hj. Reads up to three counts past the
// slots in use (inside the row, or the table's spare line after the last one); they are masked.
template <class Label, class Count>
template <int V>
SALSOX_TARGET_AVX2 void EntropyScorer<Label, Count>::nvi_draws_avx2(std::int64_t i, std::int64_t lo, std::int64_t hi,
                                                                     const EntropyScale& ent, double* acc) const {
  const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
  const __m256d lm = _mm256_set1_pd(ent.lm), inv_m = _mm256_set1_pd(ent.inv_m), tiny = _mm256_set1_pd(ent.tiny);
  __m256d sum[V], he[V];
  SlotLanes lane[V];
  for (int v = 0; v < V; ++v) {
    sum[v] = zero;
    he[v] = _mm256_loadu_pd(he_.data() + 4 * v);
    lane[v] = slot_lanes(4 * v, s_.slots(), old_);
  }
  const double* dc = s_.cell_diffs();
  double s_const = 0.0, s_inv = 0.0;
  this->template for_draws<8>(i, lo, hi, [&](double Dn, double J, const Count* row, std::int32_t, std::int64_t)
                                             SALSOX_TARGET_AVX2 {
    const auto t = ent.nvi_draw(Dn, J);
    s_const += t.zero_const;
    s_inv += t.inv;
    const __m256d Jv = _mm256_set1_pd(J), hrv = _mm256_set1_pd(t.hr), invv = _mm256_set1_pd(t.inv);
    const __m256d zc = _mm256_set1_pd(t.zero_const);
    for (int v = 0; v < V; ++v) {
      __m256d mask;
      const __m256d dcx = lane_cell_diffs(row + 4 * v, lane[v], dc, mask);
      // The scalar loop's cell, operation for operation.
      const __m256d hjn = _mm256_max_pd(_mm256_sub_pd(lm, _mm256_mul_pd(_mm256_add_pd(Jv, dcx), inv_m)), zero);
      const __m256d ratio = _mm256_div_pd(_mm256_sub_pd(_mm256_add_pd(hrv, he[v]), hjn), hjn);
      const __m256d nvi = _mm256_andnot_pd(_mm256_cmp_pd(hjn, tiny, _CMP_LE_OQ), _mm256_max_pd(_mm256_sub_pd(one, ratio), zero));
      const __m256d val = _mm256_sub_pd(nvi, _mm256_sub_pd(zc, _mm256_mul_pd(he[v], invv)));
      sum[v] = _mm256_blendv_pd(sum[v], _mm256_add_pd(sum[v], val), mask);
    }
  });
  for (int v = 0; v < V; ++v) _mm256_storeu_pd(acc + 4 * v, sum[v]);
  acc[4 * V] = s_const;
  acc[4 * V + 1] = s_inv;
}
#endif

// ID = max(Hr, He) - (Hr + He - Hj) = Hj - min(Hr, He) in every draw. With item i in slot k
// the joint entropy is Hj_h without it, less dcell(x_hk) / m for the cell it joins. Up to a
// constant, slot k scores -sum_h min(Hr_h, He_k) - sum_h dcell(x_hk) / m: the second sum is VI's
// cell sums, the first the Hr_h at most He_k plus He_k times the number of the others. (The
// loss's clamps at 0 never act: a joint entropy is at least either marginal.)
template <class Label, class Count>
template <SimdPath P>
inline void EntropyScorer<Label, Count>::score_id(std::int64_t i, double* out) {
  const EntropyScale ent(static_cast<double>(ms_));
  slot_entropies(ent);
  sort_slots();
  const std::int32_t q = s_.slots();
  const bool fixed_hr = old_ >= 0;
  const double* cells;
  const double* below_sums = nullptr;
  if (fixed_hr) {
    // A scan: every Hr is fixed, and the draws below each slot come from the sorted Hr.
    draw_entropies(ent);
    cells = cells_->cell_sums(i, old_);
  } else {
    // An unallocated item joins its draw clusters, so Hr depends on it: per chunk of draws, the
    // Hr at most each sorted He summed and counted (threshold_sums; from q + 1 the numbers).
    const double* th = sorted_he_.data();
    below_sums = this->template draw_chunks<P>(
        2 * q + 2, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t*) SALSOX_INLINE {
      alignas(64) double hrs[kDrawChunk + kThresholdLanes];
      std::int64_t t = 0;
      for_draws(i, lo, hi, [&](double Dn, double, const Count*, std::int32_t, std::int64_t) SALSOX_INLINE {
        hrs[t++] = ent(Dn);
      });
      while (t % kThresholdLanes != 0) hrs[t++] = std::numeric_limits<double>::infinity();
      threshold_sums<P>(hrs, t, th, q + 1, acc, acc + q + 1);
    });
    cells = cells_->cell_sums(i, old_);
  }
  // Slot at sorted position p: sum of min(Hr, He) = sum of the Hr <= He + He times the rest.
  const double H = static_cast<double>(d_.H);
  std::int64_t below_n = 0;
  double below_hr = 0.0;
  for (std::int32_t p = 0; p <= q; ++p) {
    if (fixed_hr) {
      below_n = std::upper_bound(hr_sorted_.begin(), hr_sorted_.end(), sorted_he_[p]) - hr_sorted_.begin();
      below_hr = hr_prefix_[below_n];
    } else {
      below_hr = below_sums[p];
      below_n = static_cast<std::int64_t>(below_sums[q + 1 + p]);
    }
    const std::int32_t k = order_[p];
    const double cell = k < q ? cells[k] : H * s_.cell_diffs()[0];
    out[k] = -(below_hr + sorted_he_[p] * static_cast<double>(d_.H - below_n)) - ent.inv_m * cell;
  }
}

// Every draw's Hr (and 1 / Hr, 0 when negligible), by draw and sorted, each draw's rank, and the
// sorted Hr's prefix sums; kept until the draw sums D_h change.
template <class Label, class Count>
inline void EntropyScorer<Label, Count>::draw_entropies(const EntropyScale& ent) {
  if (hr_version_ == s_.draw_sums_version()) return;
  const double* D = s_.draw_sums();
  const auto H = static_cast<std::size_t>(d_.H);
  hr_draw_.resize(H);
  inv_hr_draw_.resize(H);
  for (std::size_t h = 0; h < H; ++h) {
    hr_draw_[h] = ent(D[h]);
    inv_hr_draw_[h] = hr_draw_[h] > ent.tiny ? 1.0 / hr_draw_[h] : 0.0;
  }
  order_by_key(hr_draw_.data(), d_.H, by_hr_, sort_a_, sort_b_);  // (Hr >= +0: ent clamps with vmax(0.0, .))
  hr_sorted_.resize(H);
  inv_hr_sorted_.resize(H);
  rank_.resize(H);
  hr_prefix_.assign(H + 1, 0.0);
  for (std::size_t r = 0; r < H; ++r) {
    const auto h = static_cast<std::size_t>(by_hr_[r]);
    hr_sorted_[r] = hr_draw_[h];
    inv_hr_sorted_[r] = inv_hr_draw_[h];
    rank_[h] = static_cast<std::int64_t>(r);
    hr_prefix_[r + 1] = hr_prefix_[r] + hr_sorted_[r];
  }
  hr_version_ = s_.draw_sums_version();
}

// NID = 1 - (Hr + He - Hj) / max(Hr, He) (0 when the maximum is negligible); in a zero cell
// (Hj - He) / Hr when Hr > He, else (Hj - Hr) / He. So a slot's zero cells sum to
// sum_{Hr <= He}(Hj - Hr) / He + sum_{Hr > He} Hj/Hr - He sum_{Hr > He} 1/Hr.
template <class Label, class Count>
template <SimdPath P>
inline void EntropyScorer<Label, Count>::score_nid(std::int64_t i, double* out) {
  const EntropyScale ent(static_cast<double>(ms_));
  slot_entropies(ent);
  sort_slots();
  const std::int32_t q = s_.slots();
  for (std::int32_t k = 0; k <= q; ++k) inv_he_[k] = he_[k] > ent.tiny ? 1.0 / he_[k] : 0.0;
  // Both passes sum by chunks of draws: first the cells of the slots 0..q (`width` of them,
  // whole vectors with lanes), then, scoring an unallocated item, the three sums split by each
  // He. On the AVX2 path, up to 31 slots, every slot is a lane of nid_draws_avx2.
  const std::int32_t slots = q + 1;
  std::int32_t vectors = 0;  // (0: no lanes)
#if SALSOX_SIMD_X86
  if (P != SimdPath::Baseline && (slots + 3) / 4 <= kLaneVectors && lane_cells_) vectors = (slots + 3) / 4;
#endif
  const std::int32_t width = vectors > 0 ? 4 * vectors : slots;
  const double* sums;
  if (old_ >= 0) {
    // A scan: every Hr is fixed (draw_entropies), and a bucket's draws are a run of the draws
    // sorted by Hr: the pass records each draw's Hj at its rank, summed after in rank order.
    draw_entropies(ent);
    hj_by_rank_.resize(static_cast<std::size_t>(d_.H));
    double* hj_at = hj_by_rank_.data();
    sums = this->template draw_chunks<P>(
        width, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t* nz) SALSOX_INLINE {
      nid_cells<P, true>(vectors, i, lo, hi, ent, acc, nz, hj_at);
    });
    std::int64_t r = 0;
    for (std::int32_t b = 0; b <= q + 1; ++b) {
      const std::int64_t end =
          b <= q ? std::upper_bound(hr_sorted_.begin(), hr_sorted_.end(), sorted_he_[b]) - hr_sorted_.begin()
                 : d_.H;
      double sa = 0.0, sb = 0.0, sc = 0.0;
      for (; r < end; ++r) {
        sa += hj_at[r] - hr_sorted_[r];
        sb += hj_at[r] * inv_hr_sorted_[r];
        sc += inv_hr_sorted_[r];
      }
      bucket_a_[b] = sa;
      bucket_b_[b] = sb;
      bucket_c_[b] = sc;
    }
  } else {
    // An unallocated item: the pass also keeps each draw's terms (nid_terms), split per chunk
    // by each sorted He (threshold_split_sums).
    sums = this->template draw_chunks<P>(
        width + 3 * slots, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t* nz) SALSOX_INLINE {
      alignas(64) double terms[4 * kNidTerms];
      nid_cells<P, false>(vectors, i, lo, hi, ent, acc, nz, terms);
      static_assert(kDrawChunk + kThresholdLanes <= kNidTerms, "a chunk's terms and their padding");
      std::int64_t t = hi - lo;
      for (; t % kThresholdLanes != 0; ++t) {  // taken by no threshold, and adding 0 above them
        terms[t] = std::numeric_limits<double>::infinity();
        terms[kNidTerms + t] = terms[2 * kNidTerms + t] = terms[3 * kNidTerms + t] = 0.0;
      }
      double* below = acc + width;
      threshold_split_sums<P>(terms, terms + kNidTerms, terms + 2 * kNidTerms, terms + 3 * kNidTerms, t,
                              sorted_he_.data(), slots, below, below + slots, below + 2 * slots);
    });
  }
  std::copy(sums, sums + slots, acc_.begin());
  if (old_ >= 0) {
    // Sums over the buckets above p accumulated downwards (not as total minus prefix, which
    // would cancel badly when some Hr are small).
    double above_b = 0.0, above_c = 0.0;
    for (std::int32_t p = q; p >= 0; --p) {
      above_b += bucket_b_[p + 1];
      above_c += bucket_c_[p + 1];
      const std::int32_t k = order_[p];
      out[k] = above_b - sorted_he_[p] * above_c - ent.inv_m * acc_[k];
    }
    double below_a = 0.0;
    for (std::int32_t p = 0; p <= q; ++p) {
      below_a += bucket_a_[p];
      out[order_[p]] += below_a * inv_he_[order_[p]];
    }
    return;
  }
  const double* below = sums + width;
  const double* above_b = below + slots;
  const double* above_c = above_b + slots;
  for (std::int32_t p = 0; p <= q; ++p) {
    const std::int32_t k = order_[p];
    out[k] = above_b[p] - sorted_he_[p] * above_c[p] - ent.inv_m * acc_[k] + below[p] * inv_he_[k];
  }
}

#if SALSOX_SIMD_X86
// nid_cells over draws hi-1 down to lo with slots 0 .. 4V-1 as lanes (see nvi_draws_avx2): each
// draw's terms (nid_draw), then the cell loop's operations per lane.
template <class Label, class Count>
template <int V, bool kScan>
SALSOX_TARGET_AVX2 void EntropyScorer<Label, Count>::nid_draws_avx2(std::int64_t i, std::int64_t lo,
                                                                     std::int64_t hi, const EntropyScale& ent,
                                                                     double* acc, double* at) const {
  const __m256d zero = _mm256_setzero_pd();
  __m256d sum[V], he[V], inv_he[V];
  SlotLanes lane[V];
  for (int v = 0; v < V; ++v) {
    sum[v] = zero;
    he[v] = _mm256_loadu_pd(he_.data() + 4 * v);
    inv_he[v] = _mm256_loadu_pd(inv_he_.data() + 4 * v);
    lane[v] = slot_lanes(4 * v, s_.slots(), old_);
  }
  const double* dc = s_.cell_diffs();
  this->template for_draws<8, kScan ? 1 : -1>(i, lo, hi, [&](double Dn, double J, const Count* row, std::int32_t,
                                                               std::int64_t h) SALSOX_TARGET_AVX2 {
    const NidDraw t = nid_draw<kScan>(ent, Dn, J, h, hi, at);
    const __m256d hrv = _mm256_set1_pd(t.hr), inv_hrv = _mm256_set1_pd(t.inv_hr);
    for (int v = 0; v < V; ++v) {
      __m256d mask;
      const __m256d dcx = lane_cell_diffs(row + 4 * v, lane[v], dc, mask);
      // vselect(hr > he, 1 / hr, 1 / he) times the cell's difference, as the cell loop.
      const __m256d w = _mm256_blendv_pd(inv_he[v], inv_hrv, _mm256_cmp_pd(hrv, he[v], _CMP_GT_OQ));
      sum[v] = _mm256_blendv_pd(sum[v], _mm256_add_pd(sum[v], _mm256_mul_pd(w, dcx)), mask);
    }
  });
  for (int v = 0; v < V; ++v) _mm256_storeu_pd(acc + 4 * v, sum[v]);
}
#endif

template <class Label, class Count>
template <SimdPath P>
inline void EntropyScorer<Label, Count>::score_on(std::int64_t i, double* out) {
  switch (loss_.kind) {
    case LossKind::NVI: score_nvi<P>(i, out); break;
    case LossKind::ID: score_id<P>(i, out); break;
    default: score_nid<P>(i, out); break;
  }
}

}  // namespace salsox
