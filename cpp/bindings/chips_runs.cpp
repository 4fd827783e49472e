// The CHIPS runs and consistency checks over the draws (engine_calls.hpp).
#include <algorithm>

#include "engine_calls.hpp"

namespace salsox::bindings {

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
    const int threads = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(n_jobs, M)));
#pragma omp parallel num_threads(threads)
    {
      std::vector<std::int32_t> stamp(static_cast<std::size_t>(v.rows), -1);
#pragma omp for schedule(dynamic)
      for (std::int64_t r = 0; r < M; ++r)
        salsox::chips_consistency(v, labels + r * n, out + r * H, together[static_cast<std::size_t>(r)], stamp);
    }
  });
}

}  // namespace salsox::bindings
