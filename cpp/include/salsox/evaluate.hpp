// Expected losses of given estimates, and posterior similarity (co-clustering) matrices.
#pragma once
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "count_loss.hpp"
#include "count_storage.hpp"
#include "count_types.hpp"
#include "draw_blocks.hpp"
#include "draws.hpp"
#include "pairwise_state.hpp"
#include "threads.hpp"

namespace salsox {

// The expected loss of an estimate a block of draws at a time (DrawBlockTables), each draw's
// summed as CountTableState::expected_loss sums it (sum_draw_rows): the same bits.
template <class Label, class Count>
class DrawBlockLoss {
 public:
  using Tables = DrawBlockTables<Label, Count>;

  DrawBlockLoss(const DrawsView<Label>& d, const CountLoss& loss, std::int32_t q_max)
      : d_(d), loss_(loss), tables_(d, q_max) {}

  // Each draw's loss for draws [lo, hi) (hi - lo <= the tables' block()) into out[h - lo], for estimate `est`
  // with q clusters and estimate sum E (see estimate_sum).
  void draw_losses(const std::int32_t* est, std::int32_t q, double E, std::int64_t lo, std::int64_t hi, double* out) {
    tables_.count(est, q, lo, hi);
    const double* g_draw = loss_.g_draw.data();
    const double* g_cell = loss_.g_cell.data();
    const double m = static_cast<double>(d_.n);
    for (std::int64_t h = lo; h < hi; ++h) {
      const Count* t = tables_.table(h - lo, q);
      double D = 0.0, J = 0.0;
      sum_draw_rows<Cells::All, Label, Count>(
          d_.k[h], q, [&](std::int64_t l) SALSOX_INLINE { return t + l * q; },
          [&](Count x) SALSOX_INLINE { J += g_cell[x]; },
          [&](std::int64_t, std::int64_t s) SALSOX_INLINE { D += g_draw[s]; });
      out[h - lo] = loss_.combine(m, D, E, J);
    }
  }

  // The estimate's clusters q (labels 0..q-1) and E = sum over its clusters of g_est(size).
  static std::pair<std::int32_t, double> estimate_sum(const CountLoss& loss, const std::int32_t* est, std::int64_t n,
                                                      std::vector<std::int64_t>& size) {
    std::int32_t q = 1;
    for (std::int64_t i = 0; i < n; ++i) q = std::max(q, est[i] + 1);
    size.assign(static_cast<std::size_t>(q), 0);
    for (std::int64_t i = 0; i < n; ++i) ++size[static_cast<std::size_t>(est[i])];
    double E = 0.0;
    for (std::int32_t k = 0; k < q; ++k) E += loss.g_est[static_cast<std::size_t>(size[static_cast<std::size_t>(k)])];
    return {q, E};
  }

  // The expected loss of one estimate on this thread, block after block; NaN once `interrupt` stops.
  double expected_loss(const std::int32_t* est, Interrupt* interrupt) {
    const auto [q, E] = estimate_sum(loss_, est, d_.n, size_);
    double total = 0.0;
    const std::int64_t block = tables_.block();
    buffer_.resize(static_cast<std::size_t>(block));
    for (std::int64_t lo = 0; lo < d_.H; lo += block) {
      if (interrupt && interrupt->poll()) return std::numeric_limits<double>::quiet_NaN();
      const std::int64_t hi = std::min(d_.H, lo + block);
      draw_losses(est, q, E, lo, hi, buffer_.data());
      for (std::int64_t h = lo; h < hi; ++h) total += buffer_[static_cast<std::size_t>(h - lo)];
    }
    return total / static_cast<double>(d_.H);
  }

 private:
  const DrawsView<Label>& d_;
  const CountLoss& loss_;
  Tables tables_;
  std::vector<std::int64_t> size_;
  std::vector<double> buffer_;
};

// The estimates' largest number of clusters (labels 0..q-1).
inline std::int32_t estimates_clusters(const std::int32_t* estimates, std::int64_t M, std::int64_t n) {
  std::int32_t q = 1;
  for (std::int64_t e = 0; e < M * n; ++e) {
    assert(estimates[e] >= 0);  // canonical labels 0..q-1 index the tables
    q = std::max(q, estimates[e] + 1);
  }
  return q;
}

// Bytes expected_losses allocates for M estimates of up to q clusters on `n_jobs` threads.
template <class Label>
std::int64_t expected_losses_bytes(const DrawsView<Label>& d, std::int32_t q, std::int64_t M, int n_jobs) {
  const std::int64_t threads = std::min<std::int64_t>(std::max(1, n_jobs), usable_cpus());
  return with_count_type(d.n, [&](auto count) {
    using Eval = DrawBlockLoss<Label, decltype(count)>;
    const std::int64_t block = Eval::Tables::block_draws(d.kmax, q);
    const std::int64_t per_thread = Eval::Tables::bytes(d.kmax, q) + 8 * (q + block) + 256;
    const std::int64_t split = M < threads ? 8 * d.H : 0;
    return threads * per_thread + split + 8 * M;
  });
}

// Expected loss of each row of `estimates` (M x n, labels 0..q-1) (DrawBlockLoss). With fewer
// estimates than threads, an estimate's blocks of draws are spread over the threads and summed
// in draw order: the same bits. Stops early (values left unset) when `interrupt` fires.
template <class Label>
std::vector<double> expected_losses(const DrawsView<Label>& d, const CountLoss& loss,
                                    const std::int32_t* estimates, std::int64_t M, int n_jobs,
                                    Interrupt* interrupt = nullptr) {
  std::vector<double> out(M);
  const std::int32_t q_max = estimates_clusters(estimates, M, d.n);
  int threads = loop_threads(n_jobs, std::numeric_limits<std::int64_t>::max());
  with_count_type(d.n, [&](auto count) {
    using Eval = DrawBlockLoss<Label, decltype(count)>;
    const std::int64_t block = Eval::Tables::block_draws(d.kmax, q_max);
    const std::int64_t blocks = (d.H + block - 1) / block;
    threads = loop_threads(threads, M < threads ? blocks : M);
    // Built up front, so that an allocation failure surfaces before any thread starts.
    std::vector<std::unique_ptr<Eval>> evals;
    for (int t = 0; t < threads; ++t) evals.push_back(std::make_unique<Eval>(d, loss, q_max));
    if (M >= threads) {
      parallel_for(threads, M, interrupt, [&](std::int64_t e, int t) {
        out[e] = evals[t]->expected_loss(estimates + e * d.n, interrupt);
      });
      return;
    }
    std::vector<double> per_draw(static_cast<std::size_t>(d.H));
    std::vector<std::int64_t> size;
    for (std::int64_t e = 0; e < M; ++e) {
      const std::int32_t* est = estimates + e * d.n;
      const auto [q, E] = Eval::estimate_sum(loss, est, d.n, size);
      parallel_for(threads, blocks, interrupt, [&, q = q, E = E](std::int64_t b, int t) {
        evals[t]->draw_losses(est, q, E, b * block, std::min(d.H, (b + 1) * block), per_draw.data() + b * block);
      });
      if (interrupt && interrupt->stopped()) return;
      double total = 0.0;
      for (std::int64_t h = 0; h < d.H; ++h) total += per_draw[static_cast<std::size_t>(h)];
      out[e] = total / static_cast<double>(d.H);
    }
  });
  return out;
}

template <class T>
std::vector<double> pairwise_losses(const T* sim, std::int64_t n, double scale, PairwiseKind kind,
                                    double a, double b, const std::int32_t* estimates,
                                    std::int64_t M, int n_jobs, Interrupt* interrupt = nullptr) {
  std::vector<double> out(M);
  const std::int32_t q = estimates_clusters(estimates, M, n);
  const int threads = loop_threads(n_jobs, M);
  std::vector<std::unique_ptr<PairwiseState<T>>> states;
  for (int t = 0; t < threads; ++t)
    states.push_back(std::make_unique<PairwiseState<T>>(sim, n, scale, kind, a, b, q, interrupt));
  if (interrupt && interrupt->stopped()) return out;
  parallel_for(threads, M, interrupt, [&](std::int64_t e, int t) {
    std::vector<std::int32_t> labels(estimates + e * n, estimates + (e + 1) * n);
    states[t]->rebuild(labels, interrupt);  // O(n^2) for one estimate: polls as it goes
    out[e] = states[t]->expected_loss();
  });
  return out;
}

// Co-clustering counts: co[i][j] = number of draws with i and j together, or with a floating
// `Out`, that number over H (built in place). Stops early (co incomplete) when `interrupt` fires.
template <class Label, class Out>
void coclustering(const DrawsView<Label>& d, Out* co, int n_jobs, Interrupt* interrupt = nullptr) {
  const std::int64_t n = d.n, H = d.H;
  const auto value = [H](std::int32_t c) {
    if constexpr (std::is_floating_point_v<Out>) return static_cast<Out>(c) / static_cast<Out>(H);
    else return static_cast<Out>(c);
  };
  parallel_for(n_jobs > 0 ? n_jobs : 1, n, interrupt, [&](std::int64_t i, int) {
    const Label* li = d.item(i);
    co[i * n + i] = value(static_cast<std::int32_t>(H));
    for (std::int64_t j = i + 1; j < n; ++j) {
      const Label* lj = d.item(j);
      std::int32_t c = 0;
      for (std::int64_t h = 0; h < H; ++h) c += li[h] == lj[h];
      co[i * n + j] = value(c);
    }
  });
  if (interrupt && interrupt->stopped()) return;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < i; ++j) co[i * n + j] = co[j * n + i];
}

}  // namespace salsox
