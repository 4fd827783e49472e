// The searches for a Python callable's loss over CallbackState, and its evaluation of given
// estimates (engine_calls.hpp).
#include <type_traits>

#include "salsox/callback_evaluate.hpp"
#include "engine_calls.hpp"

namespace salsox::bindings {

SearchResult callback_search(const CompactDraws& draws, const TableLayout& layout, const TableLossFn& fn,
                             std::int32_t max_clusters, std::int64_t max_cells, const SearchOptions& opts,
                             Monitor monitor) {
  return draws.visit([&](auto v) {
    using Label = std::remove_const_t<std::remove_pointer_t<decltype(v.labels)>>;
    return run_salso([&] { return std::make_unique<CallbackState<Label>>(v, layout, fn, max_clusters, max_cells); },
                     opts, monitor);
  });
}

std::vector<double> callback_losses(const CompactDraws& draws, const TableLayout& layout, const TableLossFn& fn,
                                    const std::int32_t* estimates, std::int64_t M, std::int64_t max_cells,
                                    Interrupt* interrupt) {
  std::vector<double> out(static_cast<std::size_t>(M));
  draws.visit([&](auto v) {
    for (std::int64_t r = 0; r < M && !interrupt->stopped(); ++r)
      out[r] = callback_expected_loss(v, layout, fn, estimates + r * v.n, max_cells, interrupt);
  });
  return out;
}

}  // namespace salsox::bindings
