// The SALSO searches over CountTableState, the built-in and tabulated losses (table_search.hpp).
// The scores are compiled by family in table_scores_*.cpp.
#include <utility>

#include "salsox/count_table.hpp"
#include "table_search.hpp"

namespace salsox::bindings {

template <class Count>
SearchResult table_search_counts(const CompactDraws& draws, const CountLoss& loss, std::int32_t max_clusters,
                                 const EngineOptions& engine, const SearchOptions& opts, Monitor monitor) {
  return search_tables<CountTableState, Count>(draws, loss, max_clusters, engine, opts, std::move(monitor));
}

#define SALSOX_SEARCH(Count)                                                                                       \
  template SearchResult table_search_counts<Count>(const CompactDraws&, const CountLoss&, std::int32_t,           \
                                                   const EngineOptions&, const SearchOptions&, Monitor);
SALSOX_SEARCH(std::uint8_t)
SALSOX_SEARCH(std::uint16_t)
SALSOX_SEARCH(std::int32_t)

}  // namespace salsox::bindings
