// The searches and losses from a similarity matrix, over PairwiseState (engine_calls.hpp).
#include "salsox/evaluate.hpp"
#include "engine_calls.hpp"

namespace salsox::bindings {

template <class Sim>
SearchResult pairwise_search(const Sim* sim, std::int64_t n, double H, PairwiseKind kind, double a, double b,
                             std::int32_t max_clusters, const SearchOptions& opts, Monitor monitor) {
  return run_salso([&] { return std::make_unique<PairwiseState<Sim>>(sim, n, H, kind, a, b, max_clusters); }, opts,
                   std::move(monitor), StateBuild::Parallel);
}
template SearchResult pairwise_search(const std::int32_t*, std::int64_t, double, PairwiseKind, double, double,
                                      std::int32_t, const SearchOptions&, Monitor);
template SearchResult pairwise_search(const double*, std::int64_t, double, PairwiseKind, double, double,
                                      std::int32_t, const SearchOptions&, Monitor);

std::vector<double> psm_losses(const double* psm, std::int64_t n, PairwiseKind kind, double a, double b,
                               const std::int32_t* estimates, std::int64_t M, int n_jobs, Interrupt* interrupt) {
  return pairwise_losses(psm, n, 1.0, kind, a, b, estimates, M, n_jobs, interrupt);
}

}  // namespace salsox::bindings
