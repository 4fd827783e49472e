// The engine's evaluations of given partitions against the draws (engine_calls.hpp).
#include "salsox/countsum_evaluate.hpp"
#include "salsox/evaluate.hpp"
#include "salsox/particle_vi.hpp"
#include "engine_calls.hpp"

namespace salsox::bindings {

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

}  // namespace salsox::bindings
