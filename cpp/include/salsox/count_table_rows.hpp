// CountTableState's footprint (count_table.hpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "count_table.hpp"

namespace salsox {

// Bytes of a state (see the declaration).
template <class Label, class Count>
inline double CountTableState<Label, Count>::footprint(std::int64_t rows, std::int64_t H, std::int64_t n,
                                                     std::int32_t max_clusters, bool tracked, bool cell_sums) {
  const double line = kCacheLine;
  const double cells = table_bytes(rows, max_clusters, tracked), table = cells + 2 * line;
  const double chunk = TableScorer<Label, Count>::kDrawChunk;
  const double chunks = std::ceil(static_cast<double>(H) / chunk) * (max_clusters + 2.0) * 44.0;
  // The tracked losses' per-draw sums and entropies (12 words a draw) and order_by_key's scratch (4).
  const double per_draw = tracked ? 16.0 * 8.0 * static_cast<double>(H) + chunks : 0.0;
  const double cache = cell_sums && cell_cache_fits(n, max_clusters, cells) ? cell_cache_bytes(n, max_clusters) : 0.0;
  return 2 * table + 2 * 4.0 * static_cast<double>(n) + 2 * 8.0 * (max_clusters + 1) + per_draw + cache;
}

// CountTableState::footprint with the count width the engine picks for n items.
inline double count_table_bytes(std::int64_t rows, std::int64_t H, std::int64_t n, std::int32_t max_clusters,
                                bool tracked, bool cell_sums = false) {
  return with_count_type(n, [&](auto count) {
    return CountTableState<std::uint8_t, decltype(count)>::footprint(rows, H, n, max_clusters, tracked, cell_sums);
  });
}

}  // namespace salsox
