// The engine calls of the binding files, on the draws' CompactDraws, compiled for every label
// width in engine_calls.cpp, a unit without pybind11 beside the bindings' one (CMakeLists.txt).
#pragma once
#include <cstdint>
#include <vector>

#include "salsox/callback_state.hpp"
#include "salsox/chips.hpp"
#include "salsox/count_loss.hpp"
#include "salsox/draws.hpp"
#include "salsox/pairwise_state.hpp"
#include "salsox/search.hpp"

namespace salsox {
struct CountSumLoss;       // countsum_loss.hpp
struct CountSumViolation;  // countsum_evaluate.hpp
}  // namespace salsox

namespace salsox::bindings {

// The draws from H x n labels of an integer type Int, in their compact form.
template <class Int>
CompactDraws* new_compact_draws(const Int* labels, std::int64_t H, std::int64_t n);

// SALSO over PairwiseState<Sim>: a similarity matrix of n x n co-clustering counts over H draws
// (Sim int32) or of probabilities (Sim double, H 1).
template <class Sim>
SearchResult pairwise_search(const Sim* sim, std::int64_t n, double H, PairwiseKind kind, double a, double b,
                             std::int32_t max_clusters, const SearchOptions& opts, Monitor monitor);
// The pairwise loss of each of the M estimates (M x n labels) from the posterior similarity matrix.
std::vector<double> psm_losses(const double* psm, std::int64_t n, PairwiseKind kind, double a, double b,
                               const std::int32_t* estimates, std::int64_t M, int n_jobs, Interrupt* interrupt);

// SALSO over CallbackState, the loss a Python callable on contingency tables, and that loss of
// each estimate row (canonical labels) until `interrupt` stops.
SearchResult callback_search(const CompactDraws& draws, const TableLayout& layout, const TableLossFn& fn,
                             std::int32_t max_clusters, std::int64_t max_cells, const SearchOptions& opts,
                             Monitor monitor);
std::vector<double> callback_losses(const CompactDraws& draws, const TableLayout& layout, const TableLossFn& fn,
                                    const std::int32_t* estimates, std::int64_t M, std::int64_t max_cells,
                                    Interrupt* interrupt);

// The engine's evaluations of given partitions against the draws (evaluate.hpp,
// countsum_evaluate.hpp, particle_vi.hpp).
std::vector<double> expected_losses(const CompactDraws& draws, const CountLoss& loss, const std::int32_t* estimates,
                                    std::int64_t M, int n_jobs, Interrupt* interrupt);
template <class Out>
void coclustering(const CompactDraws& draws, Out* co, int n_jobs, Interrupt* interrupt);
std::vector<double> countsum_losses(const CompactDraws& draws, const CountSumLoss& loss, const std::int32_t* estimates,
                                    std::int64_t M, int n_jobs, double tolerance, CountSumViolation& bad,
                                    Interrupt* interrupt);
void particle_vi(const CompactDraws& draws, const std::int32_t* particles, std::int64_t L, double* out, int n_jobs,
                 Interrupt* interrupt);

// CHIPS (chips.hpp): the start, the runs and, unless interrupted, the rows of `path` or of the
// final states.
struct ChipsOutcome {
  ChipsStart start;
  ChipsRuns runs;
  std::vector<ChipsRow> rows;
};
ChipsOutcome chips_runs(const CompactDraws& draws, const std::int32_t* initial, const ChipsOptions& opts, bool path,
                        Monitor monitor);
// For each of the M rows of `labels` (n labels, -1 unallocated): its mask of consistent draws
// (out, M x H) and its clusters' together-counts.
void chips_consistency(const CompactDraws& draws, const std::int32_t* labels, std::int64_t M, std::uint8_t* out,
                       std::vector<std::vector<std::int64_t>>& together, int n_jobs);

}  // namespace salsox::bindings
