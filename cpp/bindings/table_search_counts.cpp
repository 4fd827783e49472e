// The SALSO searches over CountTableState, the built-in and tabulated losses (table_search.hpp).
// The scorers are compiled by family in table_scores_*.cpp: this unit needs their interface only.
#include <utility>

#include "salsox/count_table.hpp"
#include "table_search.hpp"

#define SALSOX_EXTERN(Label, Count, Scorer)                                                                        \
  extern template std::unique_ptr<salsox::TableScorer<Label, Count>> salsox::make_scorer<salsox::Scorer>(          \
      const salsox::CountTableState<Label, Count>&, const salsox::EngineOptions&);
#define SALSOX_EXTERN_SCORERS(Label, Count)                                                                        \
  SALSOX_EXTERN(Label, Count, CellSumScorer) SALSOX_EXTERN(Label, Count, OmariScorer)                              \
  SALSOX_EXTERN(Label, Count, EntropyScorer)
SALSOX_FOR_TABLES(SALSOX_EXTERN_SCORERS)

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
SALSOX_SEARCH(std::int32_t)

}  // namespace salsox::bindings
