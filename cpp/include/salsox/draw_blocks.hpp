// Expected losses of given estimates a block of draws at a time: the contingency tables of an
// estimate against a block of draws, counted in one pass over the items, and the loop that sums
// an evaluator's per-draw losses over the blocks (DrawBlockLoss, CountSumBlockLoss): memory O(block).
#pragma once
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "dispatch.hpp"
#include "draws.hpp"

namespace salsox {

template <class Label, class Count>
class DrawBlockTables {
 public:
  // Bytes of one block's tables at most (a block holds one draw at least).
  static constexpr std::int64_t kBlockBytes = std::int64_t{1} << 20;
  static constexpr std::int64_t kMaxBlock = 64;  // draws: one cache line of each item's labels

  // Draws per block for estimates of up to q clusters.
  static std::int64_t block_draws(std::int64_t kmax, std::int64_t q) {
    const std::int64_t per_draw = std::max<std::int64_t>(1, kmax * q * static_cast<std::int64_t>(sizeof(Count)));
    return std::max<std::int64_t>(1, std::min<std::int64_t>(kMaxBlock, kBlockBytes / per_draw));
  }
  // Bytes one block's tables take for estimates of up to q clusters.
  static std::int64_t bytes(std::int64_t kmax, std::int64_t q) {
    return block_draws(kmax, q) * std::max<std::int64_t>(1, kmax) * q * static_cast<std::int64_t>(sizeof(Count));
  }

  DrawBlockTables(const DrawsView<Label>& d, std::int32_t q_max)
      : d_(d), block_(block_draws(d.kmax, q_max)),
        cnt_(static_cast<std::size_t>(block_ * std::max<std::int32_t>(1, d.kmax) * q_max)) {}

  std::int64_t block() const { return block_; }

  // Counts the tables of draws [lo, hi) (hi - lo <= block()) against estimate `est` with q
  // clusters. Draw h's table is table(h - lo, q): k[h] rows (its clusters) of q counts.
  void count(const std::int32_t* est, std::int32_t q, std::int64_t lo, std::int64_t hi) {
    const std::int64_t kq = static_cast<std::int64_t>(d_.kmax) * q;
    Count* cnt = cnt_.data();
    for (std::int64_t h = lo; h < hi; ++h)
      std::fill(cnt + (h - lo) * kq, cnt + (h - lo) * kq + static_cast<std::int64_t>(d_.k[h]) * q, Count{0});
    const std::int64_t B = hi - lo;
    for (std::int64_t i = 0; i < d_.n; ++i) {
      const Label* l = d_.item(i) + lo;
      Count* c = cnt + est[i];
      for (std::int64_t j = 0; j < B; ++j) ++c[j * kq + static_cast<std::int64_t>(l[j]) * q];
    }
  }
  const Count* table(std::int64_t j, std::int32_t q) const {
    return cnt_.data() + j * static_cast<std::int64_t>(d_.kmax) * q;
  }

 private:
  const DrawsView<Label>& d_;
  std::int64_t block_;
  std::vector<Count> cnt_;
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

// The expected loss of each row of `estimates` (M x n, labels 0..q-1, q <= q_max) from an
// evaluator's per-draw losses (Eval, one per thread, made by make(): prepare(labels) once per
// estimate, then draw_losses(lo, hi, out) for blocks of Eval::Tables::block_draws draws).
// Threads take whole estimates, or with fewer estimates than threads an estimate's blocks; each
// estimate's draws are summed in draw order, and passed in that order to note(e, h, value), so
// the same bits whatever the threads. Stops between blocks (values left unset) when `interrupt` fires.
template <class Eval, class Label, class Make, class Note>
std::vector<double> block_expected_losses(const DrawsView<Label>& d, const std::int32_t* estimates, std::int64_t M,
                                          std::int32_t q_max, int n_jobs, Interrupt* interrupt, Make make, Note note) {
  std::vector<double> out(static_cast<std::size_t>(M));
  const std::int64_t block = Eval::Tables::block_draws(d.kmax, q_max);
  const std::int64_t blocks = (d.H + block - 1) / block;
  int threads = loop_threads(n_jobs, std::numeric_limits<std::int64_t>::max());
  const bool split = M < threads;
  threads = loop_threads(threads, split ? blocks : M);
  // Built up front, so that an allocation failure surfaces before any thread starts.
  std::vector<std::unique_ptr<Eval>> evals;
  for (int t = 0; t < threads; ++t) evals.push_back(make());
  auto sum = [&](std::int64_t e, std::int64_t lo, std::int64_t hi, const double* values, double& total) {
    for (std::int64_t h = lo; h < hi; ++h) {
      total += values[h - lo];
      note(e, h, values[h - lo]);
    }
  };
  if (!split) {
    std::vector<std::vector<double>> buffers(static_cast<std::size_t>(threads), std::vector<double>(block));
    parallel_for(threads, M, interrupt, [&](std::int64_t e, int t) {
      Eval& eval = *evals[static_cast<std::size_t>(t)];
      double* values = buffers[static_cast<std::size_t>(t)].data();
      eval.prepare(estimates + e * d.n);
      double total = 0.0;
      for (std::int64_t lo = 0; lo < d.H; lo += block) {
        if (interrupt && interrupt->poll()) return;
        const std::int64_t hi = std::min(d.H, lo + block);
        eval.draw_losses(lo, hi, values);
        sum(e, lo, hi, values, total);
      }
      out[static_cast<std::size_t>(e)] = total / static_cast<double>(d.H);
    });
    return out;
  }
  std::vector<double> per_draw(static_cast<std::size_t>(d.H));
  for (std::int64_t e = 0; e < M; ++e) {
    for (auto& eval : evals) eval->prepare(estimates + e * d.n);
    parallel_for(threads, blocks, interrupt, [&](std::int64_t b, int t) {
      evals[static_cast<std::size_t>(t)]->draw_losses(b * block, std::min(d.H, (b + 1) * block),
                                                       per_draw.data() + b * block);
    });
    if (interrupt && interrupt->stopped()) return out;
    double total = 0.0;
    sum(e, 0, d.H, per_draw.data(), total);
    out[static_cast<std::size_t>(e)] = total / static_cast<double>(d.H);
  }
  return out;
}

}  // namespace salsox
