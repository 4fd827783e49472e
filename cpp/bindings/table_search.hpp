// The SALSO searches over count tables (CountTableState for the built-in and tabulated losses,
// CountSumState for count-sum formulas), the heaviest code of the module: each count width is
// its own translation unit (table_search_u8.cpp, _u16.cpp, _i32.cpp), so that the three
// compile in parallel and touching one scorer header rebuilds only them. module.cpp and
// countsum.cpp call them through with_table_search.
#pragma once
#include <cstdint>
#include <vector>

#include "salsox/count_loss.hpp"
#include "salsox/count_types.hpp"
#include "salsox/countsum_loss.hpp"
#include "salsox/draws.hpp"
#include "salsox/options.hpp"
#include "salsox/search.hpp"

namespace salsox::bindings {

// One search over tables of Count-wide counts; Loss is CountLoss or CountSumLoss.
template <class Count, class Loss>
SearchResult table_search(const CompactDraws& draws, const Loss& loss, std::int32_t max_clusters,
                          const EngineOptions& engine, const SearchOptions& opts, Monitor monitor);

// The count-sum search's scores of `item` from the partition `labels` of q clusters (the test
// entry point countsum_scores): slots 0..q, with the item moved to each (allocated) or taken
// out first.
template <class Count>
std::vector<double> countsum_scores(const CompactDraws& draws, const CountSumLoss& loss,
                                    const std::vector<std::int32_t>& labels, std::int32_t q, std::int64_t item,
                                    bool allocated);

// table_search with the count width the engine picks for the draws' n items.
template <class Loss>
SearchResult with_table_search(const CompactDraws& draws, const Loss& loss, std::int32_t max_clusters,
                               const EngineOptions& engine, const SearchOptions& opts, Monitor monitor) {
  return with_count_type(draws.n(), [&](auto count) {
    return table_search<decltype(count)>(draws, loss, max_clusters, engine, opts, std::move(monitor));
  });
}

}  // namespace salsox::bindings
