// The cell sums over many slots on the AVX-512 path (cell_sums_pass): every slot a lane. A
// slot of fewer than 16 items has counts below 16, whose fixed-point differences fit in two
// registers: one permute (vpermi2q) looks up eight cells. Up to four larger slots are summed
// alongside by scalar loads. The sums are integers: the scalar pass's bits, in any order.
#pragma once
#include <cstdint>

#include "simd.hpp"

#if SALSOX_SIMD_X86
#include <immintrin.h>

namespace salsox {

// The sums over draws [lo, hi) of item `lab`'s rows: lane[8 g + j] for slot 8 g + j (g < G),
// with kBig big[u]'s sums in big_sum[u] (unused entries may repeat a slot), and with kOwn slot
// `old` read one lower in `own`. `dc16`: the differences of counts 0..15; `dc`: all of them.
// Rows hold at least 8 G counts (the row stride is a power of two >= 8).
template <int G, bool kBig, bool kOwn, class Label, class Count>
SALSOX_TARGET_AVX512 void cell_lanes_avx512(const Label* lab, const std::int64_t* base, std::int64_t stride,
                                            const Count* cnt, std::int64_t lo, std::int64_t hi,
                                            const std::int64_t* dc16, const std::int64_t* dc, const std::int32_t* big,
                                            std::int32_t old, std::int64_t* lane, std::int64_t* big_sum,
                                            std::int64_t& own) {
  static_assert(G >= 1 && G <= 4, "up to 32 slots");
  const __m512i t0 = _mm512_loadu_si512(dc16), t1 = _mm512_loadu_si512(dc16 + 8);
  __m512i acc[G];
  for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_si512();
  std::int64_t b0 = 0, b1 = 0, b2 = 0, b3 = 0, o = 0;
  const std::int32_t k0 = big[0], k1 = big[1], k2 = big[2], k3 = big[3];
  for (std::int64_t h = hi - 1; h >= lo; --h) {  // last draw first, as the scalar pass
    const Count* r = cnt + (base[h] + lab[h]) * stride;
    for (int g = 0; g < G; ++g) {
      __m512i x;
      if constexpr (sizeof(Count) == 1)
        x = _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r + 8 * g)));
      else
        x = _mm512_cvtepu16_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + 8 * g)));
      acc[g] = _mm512_add_epi64(acc[g], _mm512_permutex2var_epi64(t0, x, t1));
    }
    if constexpr (kBig) {
      b0 += dc[r[k0]];
      b1 += dc[r[k1]];
      b2 += dc[r[k2]];
      b3 += dc[r[k3]];
    }
    if constexpr (kOwn) o += dc[r[old] - 1];
  }
  for (int g = 0; g < G; ++g) _mm512_storeu_si512(lane + 8 * g, acc[g]);
  big_sum[0] = b0;
  big_sum[1] = b1;
  big_sum[2] = b2;
  big_sum[3] = b3;
  own = o;
}

}  // namespace salsox
#endif
