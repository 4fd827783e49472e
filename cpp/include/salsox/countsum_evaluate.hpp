// Expected losses of given estimates under a count-sum loss, with the check that no per-draw
// loss is negative or not finite (the zero-at-equality rule for plugin losses).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "count_storage.hpp"
#include "count_types.hpp"
#include "countsum_loss.hpp"
#include "draw_blocks.hpp"
#include "draws.hpp"
#include "threads.hpp"

namespace salsox {

// The first offending value of a count-sum evaluation (a negative or non-finite per-draw loss).
struct CountSumViolation {
  std::int64_t estimate = -1, draw = -1;
  double value = 0.0;
};

// One estimate's per-draw losses a block of draws at a time (as DrawBlockLoss, evaluate.hpp),
// each draw's sums taken as CountSumState::draw_losses takes them, so the same bits. Memory
// O(block), and a call can stop between blocks.
template <class Label, class Count>
class CountSumBlockLoss {
 public:
  using Tables = DrawBlockTables<Label, Count>;

  CountSumBlockLoss(const DrawsView<Label>& d, const CountSumLoss& loss, std::int32_t q_max)
      : d_(d), loss_(loss), tables_(d, q_max) {}

  std::int64_t block() const { return tables_.block(); }

  // The estimate's clusters q (labels 0..q-1) and its estimate sums (slot order) into `est`.
  std::int32_t estimate_sums(const std::int32_t* labels, std::vector<double>& est) const {
    std::int32_t q = 1;
    for (std::int64_t i = 0; i < d_.n; ++i) q = std::max(q, labels[i] + 1);
    std::vector<std::int64_t> size(static_cast<std::size_t>(q), 0);
    for (std::int64_t i = 0; i < d_.n; ++i) ++size[static_cast<std::size_t>(labels[i])];
    const std::int32_t n_est = loss_.sums(SumWhere::Estimate);
    est.assign(static_cast<std::size_t>(n_est) + 1, 0.0);
    for (std::int32_t j = 0; j < n_est; ++j)
      for (std::int32_t k = 0; k < q; ++k) est[j] += loss_.g[1][j][static_cast<std::size_t>(size[k])];
    return q;
  }

  // Each draw's loss for draws [lo, hi) (hi - lo <= block()) into out[h - lo].
  void draw_losses(const std::int32_t* labels, std::int32_t q, const std::vector<double>& est, std::int64_t lo,
                   std::int64_t hi, double* out) {
    tables_.count(labels, q, lo, hi);
    const std::int32_t n_cell = loss_.sums(SumWhere::Cell), n_draw = loss_.sums(SumWhere::Draw);
    cell_.assign(static_cast<std::size_t>(n_cell) + 1, 0.0);
    draw_.assign(static_cast<std::size_t>(n_draw) + 1, 0.0);
    const double m = static_cast<double>(d_.n);
    for (std::int64_t h = lo; h < hi; ++h) {
      std::fill(cell_.begin(), cell_.end(), 0.0);
      std::fill(draw_.begin(), draw_.end(), 0.0);
      const Count* t = tables_.table(h - lo, q);
      sum_draw_rows<Cells::Nonzero, Label, Count>(
          d_.k[h], q, [&](std::int64_t r) SALSOX_INLINE { return t + r * q; },
          [&](Count x) SALSOX_INLINE {
            for (std::int32_t j = 0; j < n_cell; ++j) cell_[j] += loss_.g[0][j][static_cast<std::size_t>(x)];
          },
          [&](std::int64_t, std::int64_t s) SALSOX_INLINE {
            for (std::int32_t j = 0; j < n_draw; ++j) draw_[j] += loss_.g[2][j][static_cast<std::size_t>(s)];
          });
      out[h - lo] = loss_.evaluate(m, cell_.data(), est.data(), draw_.data(), scratch_);
    }
  }

 private:
  const DrawsView<Label>& d_;
  const CountSumLoss& loss_;
  Tables tables_;
  std::vector<double> cell_, draw_, scratch_;
};

// Expected loss of each row of `estimates` (M x n, canonical labels 0..q-1), and the first
// per-draw loss below -tolerance or not finite (lowest estimate row, then draw). Threads take
// whole estimates, or with fewer estimates than threads blocks of draws; either way the draws'
// losses are summed in draw order, so the same bits whatever the threads. Stops early between
// blocks when `interrupt` fires (the caller checks it).
template <class Label>
std::vector<double> countsum_losses(const DrawsView<Label>& d, const CountSumLoss& loss, const std::int32_t* estimates,
                                    std::int64_t M, int n_jobs, double tolerance, CountSumViolation& bad,
                                    Interrupt* interrupt = nullptr) {
  std::vector<double> out(static_cast<std::size_t>(M));
  std::int32_t q_max = 1;
  for (std::int64_t e = 0; e < M * d.n; ++e) q_max = std::max(q_max, estimates[e] + 1);
  std::vector<CountSumViolation> found(static_cast<std::size_t>(M));
  with_count_type(d.n, [&](auto count) {
    using Eval = CountSumBlockLoss<Label, decltype(count)>;
    const std::int64_t block = Eval::Tables::block_draws(d.kmax, q_max);
    const std::int64_t blocks = (d.H + block - 1) / block;
    int threads = loop_threads(n_jobs, std::numeric_limits<std::int64_t>::max());
    const bool split = M < threads;
    threads = loop_threads(threads, split ? blocks : M);
    // Built up front, so that an allocation failure surfaces before any thread starts.
    std::vector<std::unique_ptr<Eval>> evals;
    for (int t = 0; t < threads; ++t) evals.push_back(std::make_unique<Eval>(d, loss, q_max));
    // Sums the draws' losses of estimate e in draw order; notes its first bad value.
    auto finish = [&](std::int64_t e, const double* values) {
      double total = 0.0;
      for (std::int64_t h = 0; h < d.H; ++h) {
        const double v = values[h];
        total += v;
        if (found[e].draw < 0 && (!std::isfinite(v) || v < -tolerance)) found[e] = {e, h, v};
      }
      out[static_cast<std::size_t>(e)] = total / static_cast<double>(d.H);
    };
    if (!split) {
      std::vector<std::vector<double>> values(static_cast<std::size_t>(threads), std::vector<double>(d.H));
      std::vector<std::vector<double>> est(static_cast<std::size_t>(threads));
      parallel_for(threads, M, interrupt, [&](std::int64_t e, int t) {
        Eval& eval = *evals[static_cast<std::size_t>(t)];
        const std::int32_t* labels = estimates + e * d.n;
        const std::int32_t q = eval.estimate_sums(labels, est[t]);
        for (std::int64_t lo = 0; lo < d.H; lo += block) {
          if (interrupt && interrupt->poll()) return;
          eval.draw_losses(labels, q, est[t], lo, std::min(d.H, lo + block), values[t].data() + lo);
        }
        finish(e, values[t].data());
      });
      return;
    }
    std::vector<double> per_draw(static_cast<std::size_t>(d.H)), est;
    for (std::int64_t e = 0; e < M; ++e) {
      const std::int32_t* labels = estimates + e * d.n;
      const std::int32_t q = evals[0]->estimate_sums(labels, est);
      parallel_for(threads, blocks, interrupt, [&](std::int64_t b, int t) {
        evals[static_cast<std::size_t>(t)]->draw_losses(labels, q, est, b * block, std::min(d.H, (b + 1) * block),
                                                         per_draw.data() + b * block);
      });
      if (interrupt && interrupt->stopped()) return;
      finish(e, per_draw.data());
    }
  });
  const auto first = std::find_if(found.begin(), found.end(), [](const CountSumViolation& f) { return f.draw >= 0; });
  if (first != found.end()) bad = *first;
  return out;
}

}  // namespace salsox
