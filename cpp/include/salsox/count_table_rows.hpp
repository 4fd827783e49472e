// Rows of the count tables of CountTableState (count_table.hpp): the layout, sized to the slots
// in use, the walk over an item's rows across the draws, and the scan for a row's nonzero cells.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "count_table.hpp"

namespace salsox {

// Bytes of a state (see the declaration).
template <class Label, class Count>
inline double CountTableState<Label, Count>::footprint(std::int64_t rows, std::int64_t H, std::int64_t n,
                                                     std::int32_t max_clusters, bool tracked, bool cell_sums) {
  const double line = kCacheLine;
  const double cells = table_bytes(rows, max_clusters, tracked), table = cells + 2 * line;
  const double chunks = std::ceil(static_cast<double>(H) / kDrawChunk) * (max_clusters + 2.0) * 44.0;
  // The tracked losses' per-draw sums and entropies (12 words a draw) and order_by_key's scratch (4).
  const double per_draw = tracked ? 16.0 * 8.0 * static_cast<double>(H) + chunks : 0.0;
  const double cache = cell_sums && cell_cache_fits(n, max_clusters, cells) ? cell_cache_bytes(n, max_clusters) : 0.0;
  return 2 * table + 2 * 4.0 * static_cast<double>(n) + 2 * 8.0 * (max_clusters + 1) + per_draw + cache;
}

// Sets an empty table's layout to the narrowest stride holding `slots` slots (and the
// allocated-items column), with as many slots as that stride holds, up to max_clusters.
template <class Label, class Count>
inline void CountTableState<Label, Count>::set_layout(std::int32_t slots) {
  const std::int64_t extra = track_stats_ ? 1 : 0;
  stride_ = row_stride(std::min(slots, kd_) + extra);
  cap_ = static_cast<std::int32_t>(std::min<std::int64_t>(kd_, stride_ - extra));
}

// Widens the layout, when slots 0..slots-1 do not fit, to at least twice as many slots, moving
// the rows in place (last first: a row only moves up). The table is kept as narrow as the
// clusters in use allow, so that more of it stays in cache; scores do not depend on it.
template <class Label, class Count>
inline void CountTableState<Label, Count>::grow(std::int32_t slots) {
  if (slots <= cap_) return;
  const std::int64_t old_stride = stride_;
  const std::int32_t old_cap = cap_;
  set_layout(std::max(slots, 2 * old_cap));
  std::vector<Count> tmp(static_cast<std::size_t>(old_stride));
  for (std::int64_t r = d_.rows - 1; r >= 0; --r) {
    std::copy(cnt_ + r * old_stride, cnt_ + (r + 1) * old_stride, tmp.begin());
    Count* row = cnt_ + r * stride_;
    std::fill(row, row + stride_, Count{0});
    std::copy(tmp.begin(), tmp.begin() + old_cap, row);
    if (track_stats_) row[cap_] = tmp[old_cap];
  }
}

// Narrows the layout again when the slots in use fit in half the stride (a run started from
// many random clusters soon keeps few, and every pass over its rows then reads half the lines
// or fewer), moving the rows in place (first first: with the stride at least halved, row r's
// new place ends before its old one starts). Slots from q on are empty, so the rows keep
// their counts exactly; scores do not depend on the layout.
template <class Label, class Count>
inline void CountTableState<Label, Count>::shrink() {
  const std::int64_t extra = track_stats_ ? 1 : 0;
  const std::int32_t slots = std::max(q_, kFirstSlots);
  if (2 * row_stride(std::min(slots, kd_) + extra) > stride_) return;
  const std::int64_t old_stride = stride_;
  const std::int32_t old_cap = cap_;
  set_layout(slots);
  for (std::int64_t r = 0; r < d_.rows; ++r) {
    const Count* from = cnt_ + r * old_stride;
    Count* row = cnt_ + r * stride_;
    const Count allocated = track_stats_ ? from[old_cap] : Count{0};
    std::memmove(row, from, static_cast<std::size_t>(cap_) * sizeof(Count));
    std::fill(row + cap_, row + stride_, Count{0});
    if (track_stats_) row[cap_] = allocated;
  }
}

// for_each_draw over draws hi-1 down to lo, with the draw h as f's fifth argument.
template <class Label, class Count>
template <class F>
inline void CountTableState<Label, Count>::for_draws(std::int64_t i, std::int64_t lo, std::int64_t hi, F f) const {
  const Label* lab = d_.item(i);
  const std::int32_t dec = old_;
  if (dec < 0) {
    for (std::int64_t h = hi - 1; h >= lo; --h) {
      const Count* row = cnt_ + row_index(h, lab[h]) * stride_;
      f(D_[h] + ddraw_[row[cap_]], J_[h], row, dec, h);
    }
    return;
  }
  for (std::int64_t h = hi - 1; h >= lo; --h) {
    const Count* row = cnt_ + row_index(h, lab[h]) * stride_;
    f(D_[h], J_[h] - dcell_[row[dec] - 1], row, dec, h);
  }
}

template <class Label, class Count>
template <class F>
inline void CountTableState<Label, Count>::for_each_draw(std::int64_t i, F f) const {
  for_draws(i, 0, d_.H, [&f](double D, double J, const Count* row, std::int32_t dec, std::int64_t) SALSOX_INLINE {
    f(D, J, row, dec);
  });
}

// Calls f(k) for each slot k < q whose cell row[k] - (k == dec) is nonzero. A row has few of
// them, at unpredictable places: up to 64 slots they are found as a bit mask (sixteen counts
// at a time where SSE2 is, else 8-bit counts eight at a time), so that only they are visited.
template <class Label, class Count>
template <class F>
inline void CountTableState<Label, Count>::for_each_nonzero(const Count* row, std::int32_t q, std::int32_t dec,
                                                            std::int32_t* nz, F f) {
  if (q > 64) {
    std::int32_t m = 0;
    for (std::int32_t k = 0; k < q; ++k) {
      nz[m] = k;
      m += (row[k] - (k == dec)) != 0;
    }
    for (std::int32_t t = 0; t < m; ++t) f(nz[t]);
    return;
  }
  std::uint64_t mask = 0;
#if defined(__SSE2__)
  if constexpr (sizeof(Count) <= 2) {
    // Sixteen counts at a time, compared with zero (SSE2, in every x86-64 build). Reads past q
    // stay inside the row, or inside the table (the next rows, or its spare line after the
    // last): at most 64 bytes from the row's start, for q <= 64.
    const __m128i zero = _mm_setzero_si128();
    for (std::int32_t w = 0; w * 16 < q; ++w) {
      std::uint32_t is_zero;
      if constexpr (sizeof(Count) == 1) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * w));
        is_zero = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, zero)));
      } else {
        const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * w));
        const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * w + 8));
        is_zero = static_cast<std::uint32_t>(
            _mm_movemask_epi8(_mm_packs_epi16(_mm_cmpeq_epi16(lo, zero), _mm_cmpeq_epi16(hi, zero))));
      }
      mask |= static_cast<std::uint64_t>(~is_zero & 0xFFFFu) << (16 * w);
    }
    if (q < 64) mask &= (std::uint64_t{1} << q) - 1;
  } else
#endif
  if constexpr (sizeof(Count) == 1) {
    // Reads whole words: past q they stay inside the row when it has >= 8 bytes, and inside
    // the table (the next rows, or its spare line after the last) when rows are shorter.
    constexpr std::uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL, high = 0x8080808080808080ULL;
    for (std::int32_t w = 0; w * 8 < q; ++w) {
      std::uint64_t x;
      std::memcpy(&x, row + 8 * w, 8);
      const std::uint64_t nonzero = (((x & low7) + low7) | x) & high;  // top bit of each nonzero byte
      mask |= ((nonzero * 0x0002040810204081ULL) >> 56) << (8 * w);   // gathered into 8 bits
    }
    if (q < 64) mask &= (std::uint64_t{1} << q) - 1;
  } else {
    for (std::int32_t k = 0; k < q; ++k) mask |= static_cast<std::uint64_t>(row[k] != 0) << k;
  }
  if (dec >= 0 && row[dec] == 1) mask &= ~(std::uint64_t{1} << dec);
  while (mask != 0) {
    f(static_cast<std::int32_t>(ctz64(mask)));
    mask &= mask - 1;
  }
}

// CountTableState::footprint with the count width the engine picks for n items.
inline double count_table_bytes(std::int64_t rows, std::int64_t H, std::int64_t n, std::int32_t max_clusters,
                                bool tracked, bool cell_sums = false) {
  return with_count_type(n, [&](auto count) {
    return CountTableState<std::uint8_t, decltype(count)>::footprint(rows, H, n, max_clusters, tracked, cell_sums);
  });
}

}  // namespace salsox
