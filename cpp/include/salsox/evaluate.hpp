// Expected losses of given estimates, and posterior similarity (co-clustering) matrices.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "count_loss.hpp"
#include "count_storage.hpp"
#include "count_types.hpp"
#include "dispatch.hpp"
#include "draw_blocks.hpp"
#include "draws.hpp"
#include "pairwise_state.hpp"

namespace salsox {

// An estimate's per-draw losses a block of draws at a time (DrawBlockTables, block_expected_losses),
// each draw's summed as CountTableState::expected_loss sums it (sum_draw_rows): the same bits.
template <class Label, class Count>
class DrawBlockLoss {
 public:
  using Tables = DrawBlockTables<Label, Count>;

  DrawBlockLoss(const DrawsView<Label>& d, const CountLoss& loss, std::int32_t q_max)
      : d_(d), loss_(loss), tables_(d, q_max) {}

  // The estimate `est` (labels 0..q-1) whose losses draw_losses takes: its clusters q and
  // E = sum over them of g_est(size).
  void prepare(const std::int32_t* est) {
    est_ = est;
    q_ = 1;
    for (std::int64_t i = 0; i < d_.n; ++i) q_ = std::max(q_, est[i] + 1);
    size_.assign(static_cast<std::size_t>(q_), 0);
    for (std::int64_t i = 0; i < d_.n; ++i) ++size_[static_cast<std::size_t>(est[i])];
    E_ = 0.0;
    for (std::int32_t k = 0; k < q_; ++k) E_ += loss_.g_est[static_cast<std::size_t>(size_[static_cast<std::size_t>(k)])];
  }

  // Each draw's loss for draws [lo, hi) (hi - lo <= the tables' block()) into out[h - lo].
  void draw_losses(std::int64_t lo, std::int64_t hi, double* out) {
    const std::int32_t q = q_;
    const double E = E_;
    tables_.count(est_, q, lo, hi);
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


 private:
  const DrawsView<Label>& d_;
  const CountLoss& loss_;
  Tables tables_;
  const std::int32_t* est_ = nullptr;
  std::int32_t q_ = 1;
  double E_ = 0.0;
  std::vector<std::int64_t> size_;
};

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

// Expected loss of each row of `estimates` (M x n, labels 0..q-1) (DrawBlockLoss,
// block_expected_losses). Stops early (values left unset) when `interrupt` fires.
template <class Label>
std::vector<double> expected_losses(const DrawsView<Label>& d, const CountLoss& loss,
                                    const std::int32_t* estimates, std::int64_t M, int n_jobs,
                                    Interrupt* interrupt = nullptr) {
  const std::int32_t q_max = estimates_clusters(estimates, M, d.n);
  return with_count_type(d.n, [&](auto count) {
    using Eval = DrawBlockLoss<Label, decltype(count)>;
    return block_expected_losses<Eval>(
        d, estimates, M, q_max, n_jobs, interrupt, [&] { return std::make_unique<Eval>(d, loss, q_max); },
        [](std::int64_t, std::int64_t, double) {});
  });
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
