// The SALSO searches over CountSumState, the count-sum formulas (table_search.hpp): the plan of
// the formula's scores is built once per search and read by every thread's state. The
// formula's node loops are compiled once, apart (countsum_block_ops.cpp).
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "salsox/countsum_plan.hpp"
#include "salsox/countsum_state.hpp"
#include "table_search.hpp"

namespace salsox::bindings {

template <class Count>
SearchResult table_search_countsum(const CompactDraws& draws, const CountSumLoss& loss, std::int32_t max_clusters,
                                   const EngineOptions& engine, const SearchOptions& opts, Monitor monitor) {
  const CountSumPlan plan(loss, max_clusters, engine);
  return visit_for_count<Count>(draws, [&](auto v) {
    using Label = std::remove_const_t<std::remove_pointer_t<decltype(v.labels)>>;
    auto make_state = [&] { return std::make_unique<CountSumState<Label, Count>>(v, plan); };
    return run_salso(make_state, opts, std::move(monitor), StateBuild::Parallel);
  });
}

template <class Count>
std::vector<double> countsum_scores(const CompactDraws& draws, const CountSumLoss& loss,
                                    const std::vector<std::int32_t>& labels, std::int32_t q, std::int64_t item,
                                    bool allocated, const EngineOptions& engine) {
  const CountSumPlan plan(loss, q + 1, engine);
  std::vector<double> out;
  visit_for_count<Count>(draws, [&](auto v) {
    using Label = std::remove_const_t<std::remove_pointer_t<decltype(v.labels)>>;
    CountSumState<Label, Count> state(v, plan);
    state.rebuild(labels);
    if (!allocated) state.remove(item);
    out.assign(static_cast<std::size_t>(state.slots()) + 1, 0.0);
    if (allocated)
      state.score_move(item, out.data());
    else
      state.score(item, out.data());
    return 0;
  });
  return out;
}

#define SALSOX_SEARCH(Count)                                                                                       \
  template SearchResult table_search_countsum<Count>(const CompactDraws&, const CountSumLoss&, std::int32_t,       \
                                                     const EngineOptions&, const SearchOptions&, Monitor);       \
  template std::vector<double> countsum_scores<Count>(const CompactDraws&, const CountSumLoss&,                   \
                                                      const std::vector<std::int32_t>&, std::int32_t,            \
                                                      std::int64_t, bool, const EngineOptions&);
SALSOX_SEARCH(std::uint8_t)
SALSOX_SEARCH(std::int32_t)

}  // namespace salsox::bindings
