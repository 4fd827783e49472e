// Expected losses of given estimates under a count-sum loss, with the check that no per-draw
// loss is negative or not finite (the zero-at-equality rule for plugin losses).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "countsum_state.hpp"
#include "threads.hpp"

namespace salsox {

// The first offending value of a count-sum evaluation (a negative or non-finite per-draw loss).
struct CountSumViolation {
  std::int64_t estimate = -1, draw = -1;
  double value = 0.0;
};

// Expected loss of each row of `estimates` (M x n, canonical labels 0..q-1), and the first
// per-draw loss below -tolerance or not finite (lowest estimate row, then draw). Parallel over
// estimates, each value computed by one thread in a fixed order; stops early when `interrupt`
// fires (the caller checks it).
template <class Label>
std::vector<double> countsum_losses(const DrawsView<Label>& d, const CountSumLoss& loss, const std::int32_t* estimates,
                                    std::int64_t M, int n_jobs, double tolerance, CountSumViolation& bad,
                                    Interrupt* interrupt = nullptr) {
  std::vector<double> out(static_cast<std::size_t>(M));
  std::int32_t q = 1;
  for (std::int64_t e = 0; e < M * d.n; ++e) q = std::max(q, estimates[e] + 1);
  std::vector<CountSumViolation> found(static_cast<std::size_t>(M));
  const int threads = usable_threads(static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(n_jobs, M))));
  with_count_type(d.n, [&](auto count) {
    using State = CountSumState<Label, decltype(count)>;
    std::vector<std::unique_ptr<State>> states;
    for (int t = 0; t < threads; ++t) states.push_back(std::make_unique<State>(d, loss, q));
    parallel_for(threads, M, interrupt, [&](std::int64_t e, int t) {
      std::vector<std::int32_t> labels(estimates + e * d.n, estimates + (e + 1) * d.n);
      states[t]->rebuild(labels);
      std::vector<double> values(static_cast<std::size_t>(d.H));
      states[t]->draw_losses(values.data());
      double total = 0.0;
      for (std::int64_t h = 0; h < d.H; ++h) {
        const double v = values[h];
        total += v;
        if (found[e].draw < 0 && (!std::isfinite(v) || v < -tolerance)) found[e] = {e, h, v};
      }
      out[e] = total / static_cast<double>(d.H);
    });
  });
  for (const auto& f : found)
    if (f.draw >= 0) {
      bad = f;
      break;
    }
  return out;
}

}  // namespace salsox
