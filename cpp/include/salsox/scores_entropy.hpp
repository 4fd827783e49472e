// Scores of the entropy losses for CountTableState (count_table.hpp): NVI, ID and NID, as per-draw
// sums for all slots at once plus a correction for the few nonzero cells of the item's row.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "simd.hpp"  // (SALSOX_SIMD_X86)
#if SALSOX_SIMD_X86
#include <immintrin.h>
#endif

#include "count_table.hpp"
#include "scores_shared.hpp"
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

// Entropy (bits) of a partition of m items from its sum of x log2 x; clamped at 0.
template <class Label, class Count>
struct CountTableState<Label, Count>::EntropyScale {
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
inline void CountTableState<Label, Count>::slot_entropies(const EntropyScale& ent) {
  for (std::int32_t k = 0; k < q_; ++k) he_[k] = ent(Es_ + dest_[sz(k)]);
  he_[q_] = ent(Es_ + dest_[0]);
}

// Slots 0..q sorted by estimate entropy (ties by index), into order_.
template <class Label, class Count>
inline void CountTableState<Label, Count>::sort_slots() {
  for (std::int32_t k = 0; k <= q_; ++k) order_[k] = k;
  std::sort(order_.begin(), order_.begin() + q_ + 1, [this](std::int32_t x, std::int32_t y) {
    return he_[x] < he_[y] || (he_[x] == he_[y] && x < y);
  });
  for (std::int32_t p = 0; p <= q_; ++p) sorted_he_[p] = he_[order_[p]];
}

// NVI = 2 - (Hr + He) / Hj (0 when Hj is negligible). Zero cells sum over draws to
// sum(2 - Hr/Hj) - He_k sum(1/Hj), and the nonzero cells are corrected one by one: up to 32
// slots on the wide paths every slot as a lane of nvi_draws_avx2, else visiting the nonzero
// cells; both take the same operations per cell in the draws' order: the same bits.
template <class Label, class Count>
template <SimdPath P>
inline void CountTableState<Label, Count>::score_nvi(std::int64_t i, double* out) {
  const EntropyScale ent(static_cast<double>(ms_));
  slot_entropies(ent);
  const double* dc = dcell_.data();
  const double* he = he_.data();
  const std::int32_t q = q_;
  // Summed by chunks of draws (draw_chunks): per slot k < q its nonzero cells' corrections,
  // then (from `at`) the zero cells' constant terms and their 1 / Hj.
  const double* sums = nullptr;
  std::int32_t at = q;
#if SALSOX_SIMD_X86
  if constexpr (P != SimdPath::Baseline) {
    const std::int32_t vectors = (q + 3) / 4;
    if (vectors > 0 && vectors <= kLaneVectors && lane_cells_) {
      at = 4 * vectors;
      sums = draw_chunks<P>(at + 2, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t*) {
        with_constant<1, kLaneVectors>(vectors, [&](auto v) SALSOX_INLINE {
          nvi_draws_avx2<decltype(v)::value>(i, lo, hi, ent, acc);
        });
      });
    }
  }
#endif
  if (sums == nullptr) {
    sums = draw_chunks<P>(q + 2, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t* nz) SALSOX_INLINE {
      double s_const = 0.0, s_inv = 0.0;
      for_draws(i, lo, hi, [&](double Dn, double J, const Count* row, std::int32_t dec, std::int64_t) SALSOX_INLINE {
        const auto t = ent.nvi_draw(Dn, J);
        s_const += t.zero_const;
        s_inv += t.inv;
        for_each_nonzero(row, q, dec, nz, [&](std::int32_t k) SALSOX_INLINE {
          const int x = row[k] - (k == dec);
          acc[k] += CountLoss::nvi_of(t.hr, he[k], ent(J + dc[x]), ent.tiny) - (t.zero_const - he[k] * t.inv);
        });
      });
      acc[q] = s_const;
      acc[q + 1] = s_inv;
    });
  }
  const double s_const = sums[at], s_inv = sums[at + 1];
  for (std::int32_t k = 0; k < q_; ++k) out[k] = s_const - he_[k] * s_inv + sums[k];
  out[q_] = s_const - he_[q_] * s_inv;
}

#if SALSOX_SIMD_X86
// score_nvi's sums over draws hi-1 down to lo with slots 0 .. 4V-1 as lanes, each doing the
// nonzero-cell loop's operations where its cell is nonzero: the slots' sums into acc[0 .. 4V),
// then the zero cells' constant terms and their 1 / Hj. Reads up to three counts past the
// slots in use (inside the row, or the table's spare line after the last one); they are masked.
template <class Label, class Count>
template <int V>
SALSOX_TARGET_AVX2 void CountTableState<Label, Count>::nvi_draws_avx2(std::int64_t i, std::int64_t lo, std::int64_t hi,
                                                                     const EntropyScale& ent, double* acc) const {
  constexpr std::int64_t kAhead = 8;
  const std::int32_t q = q_, dec = old_;
  const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
  const __m256d lm = _mm256_set1_pd(ent.lm), inv_m = _mm256_set1_pd(ent.inv_m), tiny = _mm256_set1_pd(ent.tiny);
  __m256d sum[V], he[V];
  __m128i keep[V], at_dec[V];
  for (int v = 0; v < V; ++v) {
    const __m128i k = _mm_add_epi32(_mm_set1_epi32(4 * v), _mm_set_epi32(3, 2, 1, 0));
    sum[v] = zero;
    he[v] = _mm256_loadu_pd(he_.data() + 4 * v);
    keep[v] = _mm_cmplt_epi32(k, _mm_set1_epi32(q));
    at_dec[v] = _mm_and_si128(_mm_cmpeq_epi32(k, _mm_set1_epi32(dec)), _mm_set1_epi32(1));
  }
  const double* dc = dcell_.data();
  const Label* lab = d_.item(i);
  double s_const = 0.0, s_inv = 0.0;
  for (std::int64_t h = hi - 1; h >= lo; --h) {
    if (h >= lo + kAhead) __builtin_prefetch(cnt_ + row_index(h - kAhead, lab[h - kAhead]) * stride_);
    const Count* row = cnt_ + row_index(h, lab[h]) * stride_;
    // As for_draws: D_h with item i in its draw cluster, J_h without it.
    const double Dn = dec < 0 ? D_[h] + ddraw_[row[cap_]] : D_[h];
    const double J = dec < 0 ? J_[h] : J_[h] - dcell_[row[dec] - 1];
    const auto t = ent.nvi_draw(Dn, J);
    s_const += t.zero_const;
    s_inv += t.inv;
    const __m256d Jv = _mm256_set1_pd(J), hrv = _mm256_set1_pd(t.hr), invv = _mm256_set1_pd(t.inv);
    const __m256d zc = _mm256_set1_pd(t.zero_const);
    for (int v = 0; v < V; ++v) {
      const __m128i x = _mm_sub_epi32(counts4_epi32(row + 4 * v), at_dec[v]);
      const __m128i visit = _mm_andnot_si128(_mm_cmpeq_epi32(x, _mm_setzero_si128()), keep[v]);
      const __m256d mask = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(visit));
      const __m256d dcx = _mm256_mask_i32gather_pd(zero, dc, x, mask, 8);
      // The scalar loop's cell, operation for operation.
      const __m256d hjn = _mm256_max_pd(_mm256_sub_pd(lm, _mm256_mul_pd(_mm256_add_pd(Jv, dcx), inv_m)), zero);
      const __m256d ratio = _mm256_div_pd(_mm256_sub_pd(_mm256_add_pd(hrv, he[v]), hjn), hjn);
      const __m256d nvi = _mm256_andnot_pd(_mm256_cmp_pd(hjn, tiny, _CMP_LE_OQ), _mm256_max_pd(_mm256_sub_pd(one, ratio), zero));
      const __m256d val = _mm256_sub_pd(nvi, _mm256_sub_pd(zc, _mm256_mul_pd(he[v], invv)));
      sum[v] = _mm256_blendv_pd(sum[v], _mm256_add_pd(sum[v], val), mask);
    }
  }
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
inline void CountTableState<Label, Count>::score_id(std::int64_t i, double* out) {
  const EntropyScale ent(static_cast<double>(ms_));
  slot_entropies(ent);
  sort_slots();
  const std::int32_t q = q_;
  const bool fixed_hr = old_ >= 0;
  const double* cells;
  const double* below_sums = nullptr;
  if (fixed_hr) {
    // A scan: every Hr is fixed, and the draws below each slot come from the sorted Hr.
    draw_entropies(ent);
    cells = cell_sums(i);
  } else {
    // An unallocated item joins its draw clusters, so Hr depends on it: per chunk of draws, the
    // Hr at most each sorted He summed and counted (threshold_sums; from q + 1 the numbers).
    const double* th = sorted_he_.data();
    below_sums = draw_chunks<P>(2 * q + 2, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t*)
                                                SALSOX_INLINE {
      alignas(64) double hrs[kDrawChunk + kThresholdLanes];
      std::int64_t t = 0;
      for_draws(i, lo, hi, [&](double Dn, double, const Count*, std::int32_t, std::int64_t) SALSOX_INLINE {
        hrs[t++] = ent(Dn);
      });
      while (t % kThresholdLanes != 0) hrs[t++] = std::numeric_limits<double>::infinity();
      threshold_sums<P>(hrs, t, th, q + 1, acc, acc + q + 1);
    });
    cells = cell_sums(i);
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
    const double cell = k < q ? cells[k] : H * dcell_[0];
    out[k] = -(below_hr + sorted_he_[p] * static_cast<double>(d_.H - below_n)) - ent.inv_m * cell;
  }
}

// Every draw's Hr (and 1 / Hr, 0 when negligible), by draw and sorted, each draw's rank, and the
// sorted Hr's prefix sums; kept until the draw sums D_h change.
template <class Label, class Count>
inline void CountTableState<Label, Count>::draw_entropies(const EntropyScale& ent) {
  if (hr_valid_) return;
  const auto H = static_cast<std::size_t>(d_.H);
  hr_draw_.resize(H);
  inv_hr_draw_.resize(H);
  for (std::size_t h = 0; h < H; ++h) {
    hr_draw_[h] = ent(D_[h]);
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
  hr_valid_ = true;
}

// NID = 1 - (Hr + He - Hj) / max(Hr, He) (0 when the maximum is negligible); in a zero cell
// (Hj - He) / Hr when Hr > He, else (Hj - Hr) / He. So a slot's zero cells sum to
// sum_{Hr <= He}(Hj - Hr) / He + sum_{Hr > He} Hj/Hr - He sum_{Hr > He} 1/Hr.
template <class Label, class Count>
template <SimdPath P>
inline void CountTableState<Label, Count>::score_nid(std::int64_t i, double* out) {
  const EntropyScale ent(static_cast<double>(ms_));
  slot_entropies(ent);
  sort_slots();
  for (std::int32_t k = 0; k <= q_; ++k) inv_he_[k] = he_[k] > ent.tiny ? 1.0 / he_[k] : 0.0;
  const double* dc = dcell_.data();
  const double* he = he_.data();
  const double* inv_he = inv_he_.data();
  const std::int32_t q = q_;
  auto cell = [&](double* acc, std::int32_t k, std::int32_t x, double hr, double inv_hr) SALSOX_INLINE {
    // NID = (Hj - min(Hr, He)) / top, top = max(Hr, He) (1 / top stored as 0 when negligible).
    // In a cell the item joins, Hj is lower than in a zero cell by dcell(x) / m.
    acc[k] += vselect(hr > he[k], inv_hr, inv_he[k]) * dc[x];
  };
  // Both passes sum by chunks of draws: first the cells of the slots 0..q (`width` of them,
  // whole vectors with lanes), then, scoring an unallocated item, the three sums split by each
  // He. On the AVX2 and AVX-512 paths, up to 31 slots, every slot is a lane of nid_draws_avx2.
  const std::int32_t slots = q + 1;
  const std::int32_t vectors = (slots + 3) / 4;
  bool lanes = false;
#if SALSOX_SIMD_X86
  lanes = P != SimdPath::Baseline && vectors <= kLaneVectors && lane_cells_;
#endif
  const std::int32_t width = lanes ? 4 * vectors : slots;
  const double* sums;
  if (old_ >= 0) {
    // A scan: every Hr is fixed (draw_entropies), and a bucket's draws are a run of the draws
    // sorted by Hr: the pass records each draw's Hj at its rank, summed after in rank order.
    draw_entropies(ent);
    hj_by_rank_.resize(static_cast<std::size_t>(d_.H));
    double* hj_at = hj_by_rank_.data();
    const std::int64_t* rank = rank_.data();
    const double* hr_of = hr_draw_.data();
    const double* inv_hr_of = inv_hr_draw_.data();
    sums = draw_chunks<P>(width, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t* nz) SALSOX_INLINE {
#if SALSOX_SIMD_X86
      if (lanes)
        return with_constant<1, kLaneVectors>(vectors, [&](auto v) SALSOX_INLINE {
          nid_draws_avx2<decltype(v)::value, true>(i, lo, hi, ent, acc, hj_at);
        });
#endif
      for_draws(i, lo, hi, [&](double, double J, const Count* row, std::int32_t dec, std::int64_t h) SALSOX_INLINE {
        hj_at[rank[h]] = ent(J);
        const double hr = hr_of[h], inv_hr = inv_hr_of[h];
        for_each_nonzero(row, q, dec, nz, [&](std::int32_t k) SALSOX_INLINE {
          cell(acc, k, row[k] - (k == dec), hr, inv_hr);
        });
      });
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
    sums = draw_chunks<P>(width + 3 * slots, [&](std::int64_t lo, std::int64_t hi, double* acc, std::int32_t* nz)
                                                 SALSOX_INLINE {
      alignas(64) double terms[4 * kNidTerms];
#if SALSOX_SIMD_X86
      if (lanes) {
        with_constant<1, kLaneVectors>(vectors, [&](auto v) SALSOX_INLINE {
          nid_draws_avx2<decltype(v)::value, false>(i, lo, hi, ent, acc, terms);
        });
      } else
#endif
      {
        for_draws(i, lo, hi, [&](double Dn, double J, const Count* row, std::int32_t dec, std::int64_t h)
                                 SALSOX_INLINE {
          const double hr = ent(Dn), hj = ent(J);
          const double inv_hr = hr > ent.tiny ? 1.0 / hr : 0.0;
          nid_terms(terms + (hi - 1 - h), hr, hj, inv_hr);
          for_each_nonzero(row, q, dec, nz, [&](std::int32_t k) SALSOX_INLINE {
            cell(acc, k, row[k] - (k == dec), hr, inv_hr);
          });
        });
      }
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
    for (std::int32_t p = q_; p >= 0; --p) {
      above_b += bucket_b_[p + 1];
      above_c += bucket_c_[p + 1];
      const std::int32_t k = order_[p];
      out[k] = above_b - sorted_he_[p] * above_c - ent.inv_m * acc_[k];
    }
    double below_a = 0.0;
    for (std::int32_t p = 0; p <= q_; ++p) {
      below_a += bucket_a_[p];
      out[order_[p]] += below_a * inv_he_[order_[p]];
    }
    return;
  }
  const double* below = sums + width;
  const double* above_b = below + slots;
  const double* above_c = above_b + slots;
  for (std::int32_t p = 0; p <= q_; ++p) {
    const std::int32_t k = order_[p];
    out[k] = above_b[p] - sorted_he_[p] * above_c[p] - ent.inv_m * acc_[k] + below[p] * inv_he_[k];
  }
}

#if SALSOX_SIMD_X86
// score_nid's passes over draws hi-1 down to lo with slots 0 .. 4V-1 as lanes (see
// nvi_draws_avx2): each draw's terms as in score_nid's loops (kAlloc: a scan's, Hj at the draw's
// rank in hj_at; else an unallocated item's nid_terms in hj_at), then the cell loop per lane.
template <class Label, class Count>
template <int V, bool kAlloc>
SALSOX_TARGET_AVX2 void CountTableState<Label, Count>::nid_draws_avx2(std::int64_t i, std::int64_t lo,
                                                                     std::int64_t hi, const EntropyScale& ent,
                                                                     double* acc, double* hj_at) const {
  constexpr std::int64_t kAhead = 8;
  const std::int32_t q = q_, dec = old_;
  const __m256d zero = _mm256_setzero_pd();
  __m256d sum[V], he[V], inv_he[V];
  __m128i keep[V], at_dec[V];
  for (int v = 0; v < V; ++v) {
    const __m128i k = _mm_add_epi32(_mm_set1_epi32(4 * v), _mm_set_epi32(3, 2, 1, 0));
    sum[v] = zero;
    he[v] = _mm256_loadu_pd(he_.data() + 4 * v);
    inv_he[v] = _mm256_loadu_pd(inv_he_.data() + 4 * v);
    keep[v] = _mm_cmplt_epi32(k, _mm_set1_epi32(q));
    at_dec[v] = _mm_and_si128(_mm_cmpeq_epi32(k, _mm_set1_epi32(dec)), _mm_set1_epi32(1));
  }
  double* const terms = hj_at;  // (an unallocated item's terms, see score_nid)
  const double* dc = dcell_.data();
  const Label* lab = d_.item(i);
  for (std::int64_t h = hi - 1; h >= lo; --h) {
    if (h >= lo + kAhead) __builtin_prefetch(cnt_ + row_index(h - kAhead, lab[h - kAhead]) * stride_);
    const Count* row = cnt_ + row_index(h, lab[h]) * stride_;
    double hr, inv_hr;
    if constexpr (kAlloc) {
      hj_at[rank_[h]] = ent(J_[h] - dcell_[row[dec] - 1]);
      hr = hr_draw_[h];
      inv_hr = inv_hr_draw_[h];
    } else {
      hr = ent(D_[h] + ddraw_[row[cap_]]);
      const double hj = ent(J_[h]);
      inv_hr = hr > ent.tiny ? 1.0 / hr : 0.0;
      nid_terms(terms + (hi - 1 - h), hr, hj, inv_hr);
    }
    const __m256d hrv = _mm256_set1_pd(hr), inv_hrv = _mm256_set1_pd(inv_hr);
    for (int v = 0; v < V; ++v) {
      const __m128i x = _mm_sub_epi32(counts4_epi32(row + 4 * v), at_dec[v]);
      const __m128i visit = _mm_andnot_si128(_mm_cmpeq_epi32(x, _mm_setzero_si128()), keep[v]);
      const __m256d mask = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(visit));
      const __m256d dcx = _mm256_mask_i32gather_pd(zero, dc, x, mask, 8);
      // vselect(hr > he, 1 / hr, 1 / he) times the cell's difference, as the cell loop.
      const __m256d w = _mm256_blendv_pd(inv_he[v], inv_hrv, _mm256_cmp_pd(hrv, he[v], _CMP_GT_OQ));
      sum[v] = _mm256_blendv_pd(sum[v], _mm256_add_pd(sum[v], _mm256_mul_pd(w, dcx)), mask);
    }
  }
  for (int v = 0; v < V; ++v) _mm256_storeu_pd(acc + 4 * v, sum[v]);
}
#endif

// The entropy scores on the state's path, as score_omari_paths.
template <class Label, class Count>
template <SimdPath P>
inline void CountTableState<Label, Count>::score_entropy_on(std::int64_t i, double* out) {
  switch (loss_.kind) {
    case LossKind::NVI: score_nvi<P>(i, out); break;
    case LossKind::ID: score_id<P>(i, out); break;
    default: score_nid<P>(i, out); break;
  }
}

template <class Label, class Count>
void CountTableState<Label, Count>::score_entropy_paths(std::int64_t i, double* out) {
#if SALSOX_SIMD_X86
  if (simd_ != SimdPath::Baseline) return score_entropy_avx2(i, out);
#endif
  score_entropy_on<SimdPath::Baseline>(i, out);
}

#if SALSOX_SIMD_X86
template <class Label, class Count>
SALSOX_TARGET_AVX2 void CountTableState<Label, Count>::score_entropy_avx2(std::int64_t i, double* out) {
  score_entropy_on<SimdPath::AVX2>(i, out);
}
#endif

}  // namespace salsox
