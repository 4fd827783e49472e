// The dense scores of CountSumState (included by countsum_state.hpp after the class): the
// formula over every draw x candidate slot, node by node over blocks. Every node is an
// elementwise IEEE operation (no path contracts a multiply and an add, see CMakeLists.txt) and
// each slot sums its draws in the same order on every path, so the paths give the same bits.
#pragma once
#include <algorithm>
#include <cstdint>

#if SALSOX_SIMD_X86
#include <immintrin.h>
#endif

#include "countsum_state.hpp"
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

// The dense program's buffers (pool_): a Full value (or a broadcast) lives from its node to its
// last reader, then its buffer takes later values; the result lives to the end.
template <class Label, class Count>
void CountSumState<Label, Count>::assign_pool() {
  const auto V = loss_.nodes.size();
  const auto P = block_prog_.size();
  std::vector<std::int64_t> last_full(V, -1), last_bcast(V, -1);
  for (std::size_t p = 0; p < P; ++p) {
    const CsNode& x = loss_.nodes[block_prog_[p]];
    if (cs_is_leaf(x.op) || x.shape != kFull || outer_[block_prog_[p]]) continue;
    std::int32_t ops[4];
    cs_effective_operands(loss_, fuse_, block_prog_[p], ops);
    for (std::int32_t u : ops) {
      if (u < 0) continue;
      if (loss_.nodes[u].shape == kFull) last_full[u] = static_cast<std::int64_t>(p);
      if (loss_.nodes[u].shape == kDraw) last_bcast[u] = static_cast<std::int64_t>(p);
    }
  }
  last_full[loss_.result] = static_cast<std::int64_t>(P);
  if (acc_full_ >= 0) last_full[acc_full_] = static_cast<std::int64_t>(P);
  std::vector<std::int32_t> free_list;
  std::int32_t pool = 0;
  auto take = [&]() {
    if (!free_list.empty()) {
      const std::int32_t b = free_list.back();
      free_list.pop_back();
      return b;
    }
    return pool++;
  };
  for (std::size_t p = 0; p < P; ++p) {
    const std::int32_t v = block_prog_[p];
    const CsNode& x = loss_.nodes[v];
    // Operands read for the last time here: their buffers may take this node's values
    // (elementwise, so in place is safe).
    if (!cs_is_leaf(x.op) && x.shape == kFull && !outer_[v]) {
      std::int32_t seen[4] = {-1, -1, -1, -1}, ops[4];
      int m = 0;
      cs_effective_operands(loss_, fuse_, v, ops);
      for (std::int32_t u : ops) {
        if (u < 0 || std::find(seen, seen + m, u) != seen + m) continue;
        seen[m++] = u;
        if (last_full[u] == static_cast<std::int64_t>(p) && full_of_[u] >= 0) free_list.push_back(full_of_[u]);
        if (last_bcast[u] == static_cast<std::int64_t>(p) && bcast_of_[u] >= 0) free_list.push_back(bcast_of_[u]);
      }
    }
    if (x.shape == kFull && last_full[v] >= 0) full_of_[v] = take();
    if (x.shape == kFull && last_full[v] < 0) full_of_[v] = take(), free_list.push_back(full_of_[v]);
    if (x.shape == kDraw && last_bcast[v] >= 0) bcast_of_[v] = take();
  }
  // Slack past a block: the fixed-width rows write (cs_outer_rows, the pair-count gather) and
  // read (cs_acc_rows) up to kMaxRowWidth - 1 values past it.
  pool_.assign(static_cast<std::size_t>(pool), std::vector<double>(static_cast<std::size_t>(block_elems_ + kMaxRowWidth), 0.0));
  // The per-draw nodes other than the sums themselves, kept for all draws (see score_dense).
  dense_keep_.assign(V, {});
  for (std::int32_t v : block_prog_)
    if (loss_.nodes[v].shape == kDraw && loss_.nodes[v].op != CsOp::Draw)
      dense_keep_[v].assign(static_cast<std::size_t>(d_.H), 0.0);
}

template <class Label, class Count>
void CountSumState<Label, Count>::score_dense(std::int64_t i, std::int32_t old, std::int64_t Bd, double* out) {
  const std::int32_t q = table_.slots();
  const std::int64_t Q = q + 1;
  // With the formula compiled (countsum_kernel.hpp), the blocks need only the per-draw nodes and
  // the Cell leaves.
  const bool jit = jit_.fn != nullptr;
  if (!jit)
    for (std::int32_t v : tiled_) {
      const double* s = slotv_[v].data();
      double* t = tiles_[tile_of_[v]].data();
      for (std::int64_t b = 0; b < Bd; ++b)
        for (std::int64_t k = 0; k < Q; ++k) t[b * Q + k] = s[k];
    }
  std::fill(acc_.begin(), acc_.end(), 0.0);
  const Label* lab = d_.item(i);
  const Count* cnt = table_.counts();
  const std::int64_t stride = table_.stride();
  const CsNode& res = loss_.nodes[loss_.result];
  // Scoring an allocated item (a move), the per-draw nodes depend on the draw sums and scalars
  // only (the dense program has no CellZero): computed for all draws once per draw_epoch_, the
  // same operations on the same values.
  const bool keep = old >= 0;
  if (keep && dense_epoch_ != draw_epoch_) {
    for (std::int32_t v : block_prog_) {
      const CsNode& x = loss_.nodes[v];
      if (x.shape != kDraw || x.op == CsOp::Draw) continue;
      run_node(v, d_.H, [&](std::int32_t u) {
        if (u < 0) return CsArg{};
        const CsNode& y = loss_.nodes[u];
        if (y.shape == kScalar) return CsArg{nullptr, scal_[u]};
        CsArg a;
        a.p = y.op == CsOp::Draw ? draw_.data() + y.a * d_.H : dense_keep_[u].data();
        return a;
      }, dense_keep_[v].data());
    }
    dense_epoch_ = draw_epoch_;
  }
  // The item's rows of draws h0..h0+nb-1 into rows_next_, prefetched: each block's cache misses
  // start while the block before it is evaluated.
  auto fetch = [&](std::int64_t h0, std::int64_t nb) {
    for (std::int64_t b = 0; b < nb; ++b) {
      // The draw's row of alloc_, read by the Draw leaves of add scores only.
      if (old < 0) row_index_next_[b] = d_.base[h0 + b] + lab[h0 + b];
      rows_next_[b] = cnt + table_.row_index(h0 + b, lab[h0 + b]) * stride;
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
    for (std::int32_t v : block_prog_) {
      const CsNode& x = loss_.nodes[v];
      if (keep && x.shape == kDraw) {
        // Kept: the kernel reads them in place, the node loops from their block buffers.
        const double* kept = (x.op == CsOp::Draw ? draw_.data() + x.a * d_.H : dense_keep_[v].data()) + h0;
        if (jit) jit_.draw[v] = kept;
        else std::copy(kept, kept + nb, drawv_[v].data());
      } else if (x.op == CsOp::Draw) {
        if (jit) jit_.draw[v] = drawv_[v].data();
        // An unallocated item joins its draw clusters: the draw sums it would give.
        double* o = drawv_[v].data();
        const double* S = draw_.data() + x.a * d_.H + h0;
        const double* dd = diff_[2][x.a].data();
        for (std::int64_t b = 0; b < nb; ++b) o[b] = S[b] + dd[alloc_[row_index_[b]]];
      } else if (x.op == CsOp::Cell) {
        double* o = jit ? jit_.cells[v].data() : pool_[full_of_[v]].data();
        bool gathered = false;
#if SALSOX_SIMD_X86
        if (simd_ != SimdPath::Baseline && row_widths_) {
          if (cell_is_count_[x.a] && Q <= kMaxRowWidth) {
            const double* S = cell_.data() + x.a * d_.H + h0;
            cs_with_row_width(Q, [&](auto W) {
              cs_gather_counts_avx2<W()>(rows_.data(), S, diff_[0][x.a].data(), nb, q, old, o);
            });
            gathered = true;
          }
        }
#endif
        if (!gathered) gather_cells(x.a, h0, nb, q, old, o);
      } else if (x.shape == kDraw) {
        if (jit) jit_.draw[v] = drawv_[v].data();
        run_node(v, nb, [&](std::int32_t u) { return arg(u, kDraw); }, drawv_[v].data());
      } else if (jit) {
        continue;  // a Full node: the kernel's
      } else if (outer_[v]) {
        outer(x, nb, Q, pool_[full_of_[v]].data());
      } else {
        run_node(v, nb * Q, [&](std::int32_t u) { return arg(u, kFull); }, pool_[full_of_[v]].data());
      }
      if (bcast_of_[v] >= 0 && !jit) {
        const double* s = drawv_[v].data();
        double* t = pool_[bcast_of_[v]].data();
        for (std::int64_t b = 0; b < nb; ++b)
          for (std::int64_t k = 0; k < Q; ++k) t[b * Q + k] = s[b];
      }
    }
    if (jit) {
      jit_(nb, Q, scal_.data(), acc_.data());
    } else if (acc_full_ >= 0) {
      // acc += scalar op x (or x op scalar): the result node's operation, in the same order.
      ops_.accumulate(nb, Q, pool_[full_of_[acc_full_]].data(), acc_.data(), &res.op,
                      scal_[acc_scalar_left_ ? res.a : res.b], acc_scalar_left_);
    } else if (res.shape == kFull) {
      ops_.accumulate(nb, Q, pool_[full_of_[loss_.result]].data(), acc_.data(), nullptr, 0.0, false);
    } else if (res.shape == kDraw) {
      double t = 0.0;
      const double* f = drawv_[loss_.result].data();
      for (std::int64_t b = 0; b < nb; ++b) t += f[b];
      for (std::int64_t k = 0; k < Q; ++k) acc_[k] += t;
    }
  }
  const double H = static_cast<double>(d_.H);
  for (std::int64_t k = 0; k < Q; ++k) {
    if (res.shape == kSlot) out[k] = H * slotv_[loss_.result][k];
    else if (res.shape == kScalar) out[k] = H * scal_[loss_.result];
    else out[k] = acc_[k];
  }
}

}  // namespace salsox
