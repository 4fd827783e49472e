// The SALSO searches over count tables, the heaviest code of the module, split into units
// compiled in parallel (table_search_*.cpp, and the scores of each loss family in
// table_scores_*.cpp); module.cpp and countsum.cpp call them through with_table_search.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "salsox/count_loss.hpp"
#include "salsox/count_types.hpp"
#include "salsox/countsum_loss.hpp"
#include "salsox/draws.hpp"
#include "salsox/options.hpp"
#include "salsox/search.hpp"

namespace salsox::bindings {

// One search over tables of Count-wide counts, for a built-in or tabulated loss and for a
// count-sum formula.
template <class Count>
SearchResult table_search_counts(const CompactDraws& draws, const CountLoss& loss, std::int32_t max_clusters,
                                 const EngineOptions& engine, const SearchOptions& opts, Monitor monitor);
template <class Count>
SearchResult table_search_countsum(const CompactDraws& draws, const CountSumLoss& loss, std::int32_t max_clusters,
                                   const EngineOptions& engine, const SearchOptions& opts, Monitor monitor);

// The count-sum search's scores of `item` from the partition `labels` of q clusters (the test
// entry point countsum_scores): slots 0..q, with the item moved to each (allocated) or taken
// out first.
template <class Count>
std::vector<double> countsum_scores(const CompactDraws& draws, const CountSumLoss& loss,
                                    const std::vector<std::int32_t>& labels, std::int32_t q, std::int64_t item,
                                    bool allocated, const EngineOptions& engine);

// The search with the count width the engine picks for the draws' n items; Loss is CountLoss
// or CountSumLoss.
template <class Loss>
SearchResult with_table_search(const CompactDraws& draws, const Loss& loss, std::int32_t max_clusters,
                               const EngineOptions& engine, const SearchOptions& opts, Monitor monitor) {
  return with_count_type(draws.n(), [&](auto count) {
    using Count = decltype(count);
    if constexpr (std::is_same_v<Loss, CountLoss>)
      return table_search_counts<Count>(draws, loss, max_clusters, engine, opts, std::move(monitor));
    else
      return table_search_countsum<Count>(draws, loss, max_clusters, engine, opts, std::move(monitor));
  });
}

// Calls f(view) with the draws' view when its label width can come with Count-wide counts:
// draws of n < 256 items have at most 256 clusters, so 16-bit labels never meet 8-bit counts
// and that pair is not compiled.
template <class Count, class F>
decltype(auto) visit_for_count(const CompactDraws& draws, F&& f) {
  using R = decltype(f(std::declval<DrawsView<std::uint8_t>>()));
  return draws.visit([&](auto v) -> R {
    using Label = std::remove_const_t<std::remove_pointer_t<decltype(v.labels)>>;
    if constexpr (sizeof(Label) > sizeof(Count))
      throw std::logic_error("draws with 16-bit labels have at least 256 items");
    else
      return f(v);
  });
}

// One search over State<Label, Count> tables, Label the draws' label width (the body of
// table_search_counts and table_search_countsum, each instantiated in its own unit).
template <template <class, class> class State, class Count, class Loss>
SearchResult search_tables(const CompactDraws& draws, const Loss& loss, std::int32_t max_clusters,
                           const EngineOptions& engine, const SearchOptions& opts, Monitor monitor) {
  return visit_for_count<Count>(draws, [&](auto v) {
    using Label = std::remove_const_t<std::remove_pointer_t<decltype(v.labels)>>;
    return run_salso([&] { return std::make_unique<State<Label, Count>>(v, loss, max_clusters, engine); }, opts,
                     monitor, StateBuild::Parallel);
  });
}

}  // namespace salsox::bindings

// The (Label, Count) pairs a search may take (see visit_for_count), for the explicit
// instantiations of each unit: X(Label, Count) for each.
#define SALSOX_FOR_TABLES(X)                                                                                       \
  X(std::uint8_t, std::uint8_t)                                                                                   \
  X(std::uint8_t, std::int32_t)                                                                                   \
  X(std::uint16_t, std::int32_t)
