// Expected losses of given estimates, and posterior similarity (co-clustering) matrices.
#pragma once
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <memory>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "count_table.hpp"
#include "draws.hpp"
#include "pairwise_state.hpp"
#include "threads.hpp"

namespace salsox {

// Monte Carlo expected loss of each row of `estimates` (M x n, labels 0..q-1 per row), through
// count tables: O(H n) per estimate. Parallel over estimates; each value is computed by one
// thread in a fixed order, so results do not depend on the thread count. Stops early (values
// left unset) when `interrupt` fires: the caller checks it.
template <class Label>
std::vector<double> expected_losses(const DrawsView<Label>& d, const CountLoss& loss,
                                    const std::int32_t* estimates, std::int64_t M, int n_jobs,
                                    Interrupt* interrupt = nullptr) {
  std::vector<double> out(M);
  std::int32_t q = 1;
  for (std::int64_t e = 0; e < M * d.n; ++e) {
    assert(estimates[e] >= 0);  // canonical labels 0..q-1 index the count tables
    q = std::max(q, estimates[e] + 1);
  }
  const int threads = usable_threads(static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(n_jobs, M))));
  with_count_type(d.n, [&](auto count) {
    using State = CountTableState<Label, decltype(count)>;
    // Built up front, so that an allocation failure surfaces before any thread starts.
    std::vector<std::unique_ptr<State>> states;
    for (int t = 0; t < threads; ++t) states.push_back(std::make_unique<State>(d, loss, q));
    parallel_for(threads, M, interrupt, [&](std::int64_t e, int t) {
      std::vector<std::int32_t> labels(estimates + e * d.n, estimates + (e + 1) * d.n);
      states[t]->rebuild(labels);
      out[e] = states[t]->expected_loss();
    });
  });
  return out;
}

template <class T>
std::vector<double> pairwise_losses(const T* sim, std::int64_t n, double scale, PairwiseKind kind,
                                    double a, double b, const std::int32_t* estimates,
                                    std::int64_t M, int n_jobs, Interrupt* interrupt = nullptr) {
  std::vector<double> out(M);
  std::int32_t q = 1;
  for (std::int64_t e = 0; e < M * n; ++e) q = std::max(q, estimates[e] + 1);
  const int threads = usable_threads(static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(n_jobs, M))));
  std::vector<std::unique_ptr<PairwiseState<T>>> states;
  for (int t = 0; t < threads; ++t)
    states.push_back(std::make_unique<PairwiseState<T>>(sim, n, scale, kind, a, b, q));
  parallel_for(threads, M, interrupt, [&](std::int64_t e, int t) {
    std::vector<std::int32_t> labels(estimates + e * n, estimates + (e + 1) * n);
    states[t]->rebuild(labels);
    out[e] = states[t]->expected_loss();
  });
  return out;
}

// Co-clustering counts: co[i][j] = number of draws with i and j together. Item-major labels
// make each pair a comparison of two contiguous byte runs. Stops early (co incomplete) when
// `interrupt` fires: the caller checks it.
template <class Label>
void coclustering(const DrawsView<Label>& d, std::int32_t* co, int n_jobs, Interrupt* interrupt = nullptr) {
  const std::int64_t n = d.n, H = d.H;
  parallel_for(n_jobs > 0 ? n_jobs : 1, n, interrupt, [&](std::int64_t i, int) {
    const Label* li = d.item(i);
    co[i * n + i] = static_cast<std::int32_t>(H);
    for (std::int64_t j = i + 1; j < n; ++j) {
      const Label* lj = d.item(j);
      std::int32_t c = 0;
      for (std::int64_t h = 0; h < H; ++h) c += li[h] == lj[h];
      co[i * n + j] = c;
    }
  });
  if (interrupt && interrupt->stopped()) return;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < i; ++j) co[i * n + j] = co[j * n + i];
}

}  // namespace salsox
