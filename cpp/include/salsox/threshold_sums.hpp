// Sums split by a few thresholds, for ID's and NID's scores of an unallocated item: per slot,
// sums over the draws whose entropy Hr is at most that slot's estimate entropy, or above it.
// Lane j of eight takes the values t = j, j + 8, ... in order, and the lanes are added as
// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)): the same bits on every path.
#pragma once
#include <cstdint>
#include <type_traits>

#include "simd.hpp"

#if SALSOX_SIMD_X86
#include <immintrin.h>
#endif

namespace salsox {

constexpr int kThresholdLanes = 8;

inline double add_threshold_lanes(const double* l) {
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

inline void threshold_sums_baseline(const double* x, std::int64_t n, const double* th, std::int32_t m, double* sum,
                                    double* count) {
  for (std::int32_t p = 0; p < m; ++p) {
    double s[kThresholdLanes] = {};
    std::int64_t c = 0;
    const double bound = th[p];
    for (std::int64_t t = 0; t < n; t += kThresholdLanes)
      for (int j = 0; j < kThresholdLanes; ++j)
        if (x[t + j] <= bound) {
          s[j] += x[t + j];
          ++c;
        }
    sum[p] = add_threshold_lanes(s);
    count[p] = static_cast<double>(c);
  }
}

#if SALSOX_SIMD_X86
// Thresholds th[0..G), their sums kept in registers across the values; lanes 0-3 in one
// vector, 4-7 in the other.
template <int G>
SALSOX_TARGET_AVX2 inline void threshold_group_avx2(const double* x, std::int64_t n, const double* th, double* sum,
                                                    double* count) {
  __m256d s[G][2], bound[G];
  __m256i c[G];
  for (int g = 0; g < G; ++g) {
    s[g][0] = s[g][1] = _mm256_setzero_pd();
    bound[g] = _mm256_set1_pd(th[g]);
    c[g] = _mm256_setzero_si256();
  }
  for (std::int64_t t = 0; t < n; t += kThresholdLanes) {
    const __m256d v[2] = {_mm256_loadu_pd(x + t), _mm256_loadu_pd(x + t + 4)};
    for (int g = 0; g < G; ++g)
      for (int u = 0; u < 2; ++u) {
        const __m256d in = _mm256_cmp_pd(v[u], bound[g], _CMP_LE_OQ);
        s[g][u] = _mm256_blendv_pd(s[g][u], _mm256_add_pd(s[g][u], v[u]), in);
        c[g] = _mm256_sub_epi64(c[g], _mm256_castpd_si256(in));  // an all-ones lane is -1
      }
  }
  for (int g = 0; g < G; ++g) {
    alignas(32) double lanes[kThresholdLanes];
    alignas(32) std::int64_t n4[4];
    _mm256_store_pd(lanes, s[g][0]);
    _mm256_store_pd(lanes + 4, s[g][1]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(n4), c[g]);
    sum[g] = add_threshold_lanes(lanes);
    count[g] = static_cast<double>(n4[0] + n4[1] + n4[2] + n4[3]);
  }
}

// Four thresholds at a time, then the rest.
inline void threshold_sums_avx2(const double* x, std::int64_t n, const double* th, std::int32_t m, double* sum,
                                double* count) {
  for (std::int32_t p = 0; p < m; p += 4)
    with_constant<1, 4>(m - p, [&](auto g) {
      threshold_group_avx2<decltype(g)::value>(x, n, th + p, sum + p, count + p);
    });
}
#endif

// For p < m: sum[p] = the sum of the x[t] <= th[p] (t < n) and count[p] = how many there are.
// n is a multiple of kThresholdLanes (pad with +infinity, which no threshold takes); NaN
// values are taken by none.
template <SimdPath P>
inline void threshold_sums(const double* x, std::int64_t n, const double* th, std::int32_t m, double* sum,
                           double* count) {
#if SALSOX_SIMD_X86
  if constexpr (P != SimdPath::Baseline) return threshold_sums_avx2(x, n, th, m, sum, count);
#endif
  threshold_sums_baseline(x, n, th, m, sum, count);
}

// threshold_split_sums: for p < m, below[p] = the sum of the a[t] with x[t] <= th[p], and
// above_b[p], above_c[p] the sums of the b[t], c[t] with x[t] above th[p] (or NaN), t < n.

inline void threshold_split_baseline(const double* x, const double* a, const double* b, const double* c,
                                     std::int64_t n, const double* th, std::int32_t m, double* below,
                                     double* above_b, double* above_c) {
  for (std::int32_t p = 0; p < m; ++p) {
    double sa[kThresholdLanes] = {}, sb[kThresholdLanes] = {}, sc[kThresholdLanes] = {};
    const double bound = th[p];
    for (std::int64_t t = 0; t < n; t += kThresholdLanes)
      for (int j = 0; j < kThresholdLanes; ++j) {
        if (x[t + j] <= bound) {
          sa[j] += a[t + j];
        } else {
          sb[j] += b[t + j];
          sc[j] += c[t + j];
        }
      }
    below[p] = add_threshold_lanes(sa);
    above_b[p] = add_threshold_lanes(sb);
    above_c[p] = add_threshold_lanes(sc);
  }
}

#if SALSOX_SIMD_X86
// Lanes 0-3 in one vector, 4-7 in the other, as threshold_group_avx2.
SALSOX_TARGET_AVX2 inline void threshold_split_avx2(const double* x, const double* a, const double* b,
                                                    const double* c, std::int64_t n, const double* th, std::int32_t m,
                                                    double* below, double* above_b, double* above_c) {
  for (std::int32_t p = 0; p < m; ++p) {
    __m256d sa[2], sb[2], sc[2];
    const __m256d bound = _mm256_set1_pd(th[p]);
    for (int u = 0; u < 2; ++u) sa[u] = sb[u] = sc[u] = _mm256_setzero_pd();
    for (std::int64_t t = 0; t < n; t += kThresholdLanes)
      for (int u = 0; u < 2; ++u) {
        const std::int64_t at = t + 4 * u;
        const __m256d in = _mm256_cmp_pd(_mm256_loadu_pd(x + at), bound, _CMP_LE_OQ);
        sa[u] = _mm256_blendv_pd(sa[u], _mm256_add_pd(sa[u], _mm256_loadu_pd(a + at)), in);
        sb[u] = _mm256_blendv_pd(_mm256_add_pd(sb[u], _mm256_loadu_pd(b + at)), sb[u], in);
        sc[u] = _mm256_blendv_pd(_mm256_add_pd(sc[u], _mm256_loadu_pd(c + at)), sc[u], in);
      }
    alignas(32) double lanes[3][kThresholdLanes];
    for (int u = 0; u < 2; ++u) {
      _mm256_store_pd(lanes[0] + 4 * u, sa[u]);
      _mm256_store_pd(lanes[1] + 4 * u, sb[u]);
      _mm256_store_pd(lanes[2] + 4 * u, sc[u]);
    }
    below[p] = add_threshold_lanes(lanes[0]);
    above_b[p] = add_threshold_lanes(lanes[1]);
    above_c[p] = add_threshold_lanes(lanes[2]);
  }
}
#endif

// n is a multiple of kThresholdLanes (pad with x = +infinity and b = c = 0).
template <SimdPath P>
inline void threshold_split_sums(const double* x, const double* a, const double* b, const double* c, std::int64_t n,
                                 const double* th, std::int32_t m, double* below, double* above_b, double* above_c) {
#if SALSOX_SIMD_X86
  if constexpr (P != SimdPath::Baseline) return threshold_split_avx2(x, a, b, c, n, th, m, below, above_b, above_c);
#endif
  threshold_split_baseline(x, a, b, c, n, th, m, below, above_b, above_c);
}

}  // namespace salsox
