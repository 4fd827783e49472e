// Rows of the count tables of CountTableState (count_table.hpp): the bytes a state takes, and
// the walk over an item's rows across the draws.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "count_table.hpp"

namespace salsox {

// Whether a state of the losses that score through cell sums (VI, tabulated, ID) keeps each
// item's sums per slot between its scores (see cell_sums_cached): while that cache (a value
// and a version per item and slot) takes no more than 4 MiB or the table itself.
template <class Label, class Count>
inline double CountTableState<Label, Count>::cell_cache_bytes(std::int64_t n, std::int32_t max_clusters) {
  return 16.0 * static_cast<double>(n) * static_cast<double>(max_clusters);
}
template <class Label, class Count>
inline bool CountTableState<Label, Count>::cell_cache_fits(std::int64_t n, std::int32_t max_clusters, double table) {
  return cell_cache_bytes(n, max_clusters) <= std::max(4.0 * 1024 * 1024, table);
}

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

// CountTableState::footprint with the count width the engine picks for n items.
inline double count_table_bytes(std::int64_t rows, std::int64_t H, std::int64_t n, std::int32_t max_clusters,
                                bool tracked, bool cell_sums = false) {
  return with_count_type(n, [&](auto count) {
    return CountTableState<std::uint8_t, decltype(count)>::footprint(rows, H, n, max_clusters, tracked, cell_sums);
  });
}

}  // namespace salsox
