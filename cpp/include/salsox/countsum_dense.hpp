// The dense scores of a count-sum state (countsum_state.hpp): the formula over every draw x
// candidate slot, node by node over blocks (CountSumPlan::dense), or the formula's compiled
// kernel over them. Every node is an elementwise IEEE operation (no path contracts a multiply
// and an add, see CMakeLists.txt) and each slot sums its draws in the same order on every path,
// so the paths give the same bits. The scorer holds only scratch.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#if SALSOX_SIMD_X86
#include <immintrin.h>
#endif

#include "count_storage.hpp"
#include "countsum_plan.hpp"
#include "countsum_sums.hpp"
#include "draws.hpp"
#include "simd.hpp"

namespace salsox {

#if SALSOX_SIMD_X86
// The gather of a cell sum whose increment at count x is x (pair counts): out[b * Q + k] =
// base + row[k], the counts converted four at a time. Each row writes W >= Q values; those past
// Q are overwritten by the next row or fall in the pool's slack, and the counts read past a
// row stay inside the table (its cache line of slack).
template <std::int64_t W, class Count>
SALSOX_TARGET_AVX2 inline void cs_gather_counts_avx2(const Count* const* rows, const double* S, const double* dc,
                                                     std::int64_t nb, std::int32_t q, std::int32_t old, double* out) {
  const std::int64_t Q = q + 1;
  for (std::int64_t b = 0; b < nb; ++b) {
    const Count* row = rows[b];
    double* o = out + b * Q;
    const double base = old >= 0 ? S[b] - dc[row[old] - 1] : S[b];
    const __m256d vb = _mm256_set1_pd(base);
    for (std::int64_t v = 0; v < W / 4; ++v) _mm256_storeu_pd(o + 4 * v, _mm256_add_pd(vb, counts4_pd(row + 4 * v)));
    if (old >= 0) o[old] = base + dc[row[old] - 1];
    o[q] = base + dc[0];
  }
}
#endif

template <class Label, class Count>
class CsDenseScorer {
 public:
  CsDenseScorer(const CountSumPlan& plan, const DrawsView<Label>& d, CsValues& values)
      : plan_(plan), P_(plan.dense), d_(d), val_(values) {
    const auto V = plan.loss.nodes.size();
    const auto elems = static_cast<std::size_t>(plan.block_elems);
    // Slack past a block: the fixed-width rows write (cs_outer_rows, the pair-count gather) and
    // read (cs_acc_rows) up to kMaxRowWidth - 1 values past it.
    pool_.assign(static_cast<std::size_t>(P_.pools), std::vector<double>(elems + kMaxRowWidth, 0.0));
    tiles_.assign(P_.tiled.size(), std::vector<double>(elems, 0.0));
    kept_.assign(V, {});
    for (std::size_t v = 0; v < V; ++v)
      if (P_.kept[v]) kept_[v].assign(static_cast<std::size_t>(d.H), 0.0);
    rows_.assign(elems, nullptr);
    rows_next_.assign(elems, nullptr);
    row_index_.assign(elems, 0);
    row_index_next_.assign(elems, 0);
    jit_.prepare(plan.loss, P_.kernel, plan.block_elems, kMaxRowWidth, val_.drawv, val_.slotv);
  }

  CsDenseScorer(const CsDenseScorer&) = delete;
  CsDenseScorer& operator=(const CsDenseScorer&) = delete;

  // out[k] (k = 0..q) = the sum over draws of the formula with item i in slot k, the item
  // virtually removed from slot `old` first (-1: unallocated); the per-item values are in val_.
  void score(const CountTable<Label, Count>& table, const CsRunningSums& sums, std::int64_t i, std::int32_t old,
             double* out);

 private:
  // Operand u of a Full node.
  CsArg full_arg(std::int32_t u) const {
    if (u < 0) return CsArg{};
    const std::int32_t s = plan_.loss.nodes[u].shape;
    if (s == kScalar) return CsArg{nullptr, val_.scal[u]};
    CsArg a;
    if (s == kSlot) a.p = tiles_[P_.tile_of[u]].data();
    else if (s == kDraw) a.p = pool_[P_.bcast_of[u]].data();
    else a.p = pool_[P_.full_of[u]].data();
    return a;
  }

  // A Full node without Full operands (e.g. draw sum + estimate sum): binary, so one operand
  // is per draw and the other per slot.
  void outer(const CsNode& x, std::int64_t nb, std::int64_t Q, double* out) const {
    const bool a_draw = plan_.loss.nodes[x.a].shape == kDraw;
    const double* a = a_draw ? val_.drawv[x.a].data() : val_.slotv[x.a].data();
    const double* b = a_draw ? val_.slotv[x.b].data() : val_.drawv[x.b].data();
    plan_.ops.outer(x.op, nb, Q, a, a_draw, b, out);
  }

  // Cell sum j with item i in each slot, for draws h0..h0+nb-1: out[b * Q + k].
  void gather_cells(const CsRunningSums& sums, std::int32_t j, std::int64_t h0, std::int64_t nb, std::int32_t q,
                    std::int32_t old, double* out) const {
    const double* dc = plan_.diff[0][j].data();
    const double* S = sums.cell.data() + j * d_.H + h0;
    const std::int64_t Q = q + 1;
    for (std::int64_t b = 0; b < nb; ++b) {
      const Count* row = rows_[b];
      double* o = out + b * Q;
      const double base = old >= 0 ? S[b] - dc[row[old] - 1] : S[b];
      for (std::int32_t k = 0; k < q; ++k) o[k] = base + dc[row[k]];
      if (old >= 0) o[old] = base + dc[row[old] - 1];
      o[q] = base + dc[0];
    }
  }

  const CountSumPlan& plan_;
  const CsDensePlan& P_;
  DrawsView<Label> d_;
  CsValues& val_;
  std::vector<std::vector<double>> pool_, tiles_;
  // The per-draw nodes for all draws (score moves), valid while kept_epoch_ equals the sums'
  // draw_epoch.
  std::vector<std::vector<double>> kept_;
  std::uint64_t kept_epoch_ = 0;
  std::vector<const Count*> rows_, rows_next_;  // the item's rows in this block and the next
  std::vector<std::int64_t> row_index_, row_index_next_;
  CsKernelCall jit_;
};

template <class Label, class Count>
void CsDenseScorer<Label, Count>::score(const CountTable<Label, Count>& table, const CsRunningSums& sums,
                                        std::int64_t i, std::int32_t old, double* out) {
  const CountSumLoss& loss = plan_.loss;
  const std::int32_t q = table.slots();
  const std::int64_t Q = q + 1;
  const std::int64_t Bd = std::max<std::int64_t>(1, std::min<std::int64_t>(d_.H, plan_.block_elems / Q));
  // With the formula compiled (countsum_kernel.hpp), the blocks need only the per-draw nodes and
  // the Cell leaves.
  const bool jit = P_.kernel != nullptr;
  if (!jit)
    for (std::int32_t v : P_.tiled) {
      const double* s = val_.slotv[v].data();
      double* t = tiles_[P_.tile_of[v]].data();
      for (std::int64_t b = 0; b < Bd; ++b)
        for (std::int64_t k = 0; k < Q; ++k) t[b * Q + k] = s[k];
    }
  std::fill(val_.acc.begin(), val_.acc.end(), 0.0);
  const Label* lab = d_.item(i);
  const Count* cnt = table.counts();
  const std::int64_t stride = table.stride();
  const CsNode& res = loss.nodes[loss.result];
  // Scoring an allocated item (a move), the per-draw nodes depend on the draw sums and scalars
  // only (no per-draw node reads a cell): computed for all draws once per draw epoch, the
  // same operations on the same values.
  const bool keep = old >= 0;
  if (keep && kept_epoch_ != sums.draw_epoch) {
    for (std::int32_t v : P_.block_prog) {
      if (!P_.kept[v]) continue;
      plan_.run_node(v, d_.H, [&](std::int32_t u) {
        if (u < 0) return CsArg{};
        const CsNode& y = loss.nodes[u];
        if (y.shape == kScalar) return CsArg{nullptr, val_.scal[u]};
        CsArg a;
        a.p = y.op == CsOp::Draw ? sums.draw.data() + y.a * d_.H : kept_[u].data();
        return a;
      }, kept_[v].data());
    }
    kept_epoch_ = sums.draw_epoch;
  }
  // The item's rows of draws h0..h0+nb-1 into rows_next_, prefetched: each block's cache misses
  // start while the block before it is evaluated.
  auto fetch = [&](std::int64_t h0, std::int64_t nb) {
    for (std::int64_t b = 0; b < nb; ++b) {
      // The draw's row of alloc, read by the Draw leaves of add scores only.
      if (old < 0) row_index_next_[b] = d_.base[h0 + b] + lab[h0 + b];
      rows_next_[b] = cnt + table.row_index(h0 + b, lab[h0 + b]) * stride;
      __builtin_prefetch(rows_next_[b]);
    }
  };
  // Blocks from the last draw down: add and remove touched the last draws' rows last.
  fetch(std::max<std::int64_t>(0, d_.H - Bd), std::min<std::int64_t>(d_.H, Bd));
  for (std::int64_t end = d_.H; end > 0; end -= Bd) {
    const std::int64_t h0 = std::max<std::int64_t>(0, end - Bd);
    const std::int64_t nb = end - h0;
    rows_.swap(rows_next_);
    row_index_.swap(row_index_next_);
    if (h0 > 0) fetch(std::max<std::int64_t>(0, h0 - Bd), h0 - std::max<std::int64_t>(0, h0 - Bd));
    for (std::int32_t v : P_.block_prog) {
      const CsNode& x = loss.nodes[v];
      if (keep && x.shape == kDraw) {
        // Kept: the kernel reads them in place, the node loops from their block buffers.
        const double* kept = (x.op == CsOp::Draw ? sums.draw.data() + x.a * d_.H : kept_[v].data()) + h0;
        if (jit) jit_.draw[v] = kept;
        else std::copy(kept, kept + nb, val_.drawv[v].data());
      } else if (x.op == CsOp::Draw) {
        if (jit) jit_.draw[v] = val_.drawv[v].data();
        // An unallocated item joins its draw clusters: the draw sums it would give.
        double* o = val_.drawv[v].data();
        const double* S = sums.draw.data() + x.a * d_.H + h0;
        const double* dd = plan_.diff[2][x.a].data();
        for (std::int64_t b = 0; b < nb; ++b) o[b] = S[b] + dd[sums.alloc[row_index_[b]]];
      } else if (x.op == CsOp::Cell) {
        double* o = jit ? jit_.cells[v].data() : pool_[P_.full_of[v]].data();
        bool gathered = false;
#if SALSOX_SIMD_X86
        if (plan_.simd != SimdPath::Baseline && plan_.row_widths && plan_.cell_is_count[x.a] && Q <= kMaxRowWidth) {
          const double* S = sums.cell.data() + x.a * d_.H + h0;
          cs_with_row_width(Q, [&](auto W) {
            cs_gather_counts_avx2<W()>(rows_.data(), S, plan_.diff[0][x.a].data(), nb, q, old, o);
          });
          gathered = true;
        }
#endif
        if (!gathered) gather_cells(sums, x.a, h0, nb, q, old, o);
      } else if (x.shape == kDraw) {
        if (jit) jit_.draw[v] = val_.drawv[v].data();
        plan_.run_node(v, nb, [&](std::int32_t u) { return val_.arg(loss, u, kDraw); }, val_.drawv[v].data());
      } else if (jit) {
        continue;  // a Full node: the kernel's
      } else if (P_.outer[v]) {
        outer(x, nb, Q, pool_[P_.full_of[v]].data());
      } else {
        plan_.run_node(v, nb * Q, [&](std::int32_t u) { return full_arg(u); }, pool_[P_.full_of[v]].data());
      }
      if (P_.bcast_of[v] >= 0 && !jit) {
        const double* s = val_.drawv[v].data();
        double* t = pool_[P_.bcast_of[v]].data();
        for (std::int64_t b = 0; b < nb; ++b)
          for (std::int64_t k = 0; k < Q; ++k) t[b * Q + k] = s[b];
      }
    }
    double* acc = val_.acc.data();
    if (jit) {
      jit_(nb, Q, val_.scal.data(), acc);
    } else if (P_.acc_full >= 0) {
      // acc += scalar op x (or x op scalar): the result node's operation, in the same order.
      plan_.ops.accumulate(nb, Q, pool_[P_.full_of[P_.acc_full]].data(), acc, &res.op,
                           val_.scal[P_.acc_scalar_left ? res.a : res.b], P_.acc_scalar_left);
    } else if (res.shape == kFull) {
      plan_.ops.accumulate(nb, Q, pool_[P_.full_of[loss.result]].data(), acc, nullptr, 0.0, false);
    } else if (res.shape == kDraw) {
      double t = 0.0;
      const double* f = val_.drawv[loss.result].data();
      for (std::int64_t b = 0; b < nb; ++b) t += f[b];
      for (std::int64_t k = 0; k < Q; ++k) acc[k] += t;
    }
  }
  const double H = static_cast<double>(d_.H);
  for (std::int64_t k = 0; k < Q; ++k) {
    if (res.shape == kSlot) out[k] = H * val_.slotv[loss.result][k];
    else if (res.shape == kScalar) out[k] = H * val_.scal[loss.result];
    else out[k] = val_.acc[k];
  }
}

}  // namespace salsox
