// The engine calls of the binding files (engine_calls.hpp), compiled without pybind11: the
// draws' construction, the pairwise and callback searches, the evaluations of given partitions
// and CHIPS.
#include <type_traits>

#include "salsox/callback_evaluate.hpp"
#include "salsox/countsum_evaluate.hpp"
#include "salsox/evaluate.hpp"
#include "salsox/particle_vi.hpp"
#include "engine_calls.hpp"

namespace salsox::bindings {

// The draws' compact form (draws.hpp) from labels of every integer width.
template <class Int>
CompactDraws* new_compact_draws(const Int* labels, std::int64_t H, std::int64_t n) {
  return new CompactDraws(labels, H, n);
}
#define SALSOX_DRAWS(Int) template CompactDraws* new_compact_draws(const Int*, std::int64_t, std::int64_t);
SALSOX_DRAWS(std::int8_t)
SALSOX_DRAWS(std::uint8_t)
SALSOX_DRAWS(std::int16_t)
SALSOX_DRAWS(std::uint16_t)
SALSOX_DRAWS(std::int32_t)
SALSOX_DRAWS(std::uint32_t)
SALSOX_DRAWS(std::int64_t)
SALSOX_DRAWS(std::uint64_t)

// The searches and losses from a similarity matrix, over PairwiseState.
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

// The searches for a Python callable's loss over CallbackState, and its evaluation of given
// estimates.
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

// The engine's evaluations of given partitions against the draws.
std::vector<double> expected_losses(const CompactDraws& draws, const CountLoss& loss, const std::int32_t* estimates,
                                    std::int64_t M, int n_jobs, Interrupt* interrupt) {
  return draws.visit([&](auto v) { return salsox::expected_losses(v, loss, estimates, M, n_jobs, interrupt); });
}

template <class Out>
void coclustering(const CompactDraws& draws, Out* co, int n_jobs, Interrupt* interrupt) {
  draws.visit([&](auto v) { salsox::coclustering(v, co, n_jobs, interrupt); });
}
template void coclustering(const CompactDraws&, std::int32_t*, int, Interrupt*);
template void coclustering(const CompactDraws&, double*, int, Interrupt*);

std::vector<double> countsum_losses(const CompactDraws& draws, const CountSumLoss& loss, const std::int32_t* estimates,
                                    std::int64_t M, int n_jobs, double tolerance, CountSumViolation& bad,
                                    Interrupt* interrupt) {
  return draws.visit(
      [&](auto v) { return salsox::countsum_losses(v, loss, estimates, M, n_jobs, tolerance, bad, interrupt); });
}

void particle_vi(const CompactDraws& draws, const std::int32_t* particles, std::int64_t L, double* out, int n_jobs,
                 Interrupt* interrupt) {
  draws.visit([&](auto v) { salsox::particle_vi(v, particles, L, out, n_jobs, interrupt); });
}

// The CHIPS runs and consistency checks over the draws.
ChipsOutcome chips_runs(const CompactDraws& draws, const std::int32_t* initial, const ChipsOptions& opts, bool path,
                        Monitor monitor) {
  ChipsOutcome out;
  draws.visit([&](auto v) {
    out.start = chips_start(v, initial);
    out.runs = run_chips(v, out.start, opts, std::move(monitor));
  });
  if (!out.runs.interrupted) out.rows = path ? chips_path(out.start, out.runs.runs) : chips_finals(out.start, out.runs.runs);
  return out;
}

void chips_consistency(const CompactDraws& draws, const std::int32_t* labels, std::int64_t M, std::uint8_t* out,
                       std::vector<std::vector<std::int64_t>>& together, int n_jobs) {
  const std::int64_t n = draws.n(), H = draws.H();
  draws.visit([&](auto v) {
    const int threads = loop_threads(n_jobs, M);
    std::vector<std::vector<std::int32_t>> stamps(static_cast<std::size_t>(threads),
                                                  std::vector<std::int32_t>(static_cast<std::size_t>(v.rows), -1));
    parallel_for(threads, M, nullptr, [&](std::int64_t r, int t) {
      salsox::chips_consistency(v, labels + r * n, out + r * H, together[static_cast<std::size_t>(r)], stamps[t]);
    });
  });
}

}  // namespace salsox::bindings
