// The sparse scores of CountSumState (included by countsum_state.hpp after the class): a
// formula with a separable form in the zero cells (CountSumLoss::terms) is summed per draw over
// those and evaluated fully only in the nonzero cells.
#pragma once
#include <algorithm>
#include <cstdint>

#include "countsum_state.hpp"
#include "simd.hpp"

namespace salsox {

// Programs and buffers of the sparse scores (CountSumLoss::terms): the coefficients over the
// draws of a block, and the formula over the list of a block's nonzero cells.
template <class Label, class Count>
void CountSumState<Label, Count>::prepare_sparse() {
  const auto V = loss_.nodes.size();
  const std::vector<bool> in_formula = reach({loss_.result});
  std::vector<std::int32_t> roots;
  for (const auto& t : loss_.terms) roots.push_back(t.first);
  lgat_.assign(V, {});
  lbuf_.assign(V, {});
  list_outer_.assign(V, 0);
  auto shape = [&](std::int32_t u) { return u < 0 ? kScalar : loss_.nodes[u].shape; };
  for (std::size_t v = 0; v < V; ++v) {
    const CsNode& x = loss_.nodes[v];
    if (!in_formula[v] || folded_[v] || x.shape != kFull) continue;
    list_prog_.push_back(static_cast<std::int32_t>(v));
    lbuf_[v].assign(kListChunk, 0.0);
    if (cs_is_leaf(x.op)) continue;
    // A binary node of a draw and a slot value reads them through the cell's draw and slot
    // (one loop), without gathering its operands first.
    if (cs_is_binary(x.op) && fuse_[v].kind == kFuseNone && shape(x.a) != kFull && shape(x.b) != kFull) {
      list_outer_[v] = 1;
      for (std::int32_t u : {x.a, x.b})
        if (shape(u) == kDraw) roots.push_back(u);
      continue;
    }
    std::int32_t ops[4];
    cs_effective_operands(loss_, fuse_, static_cast<std::int32_t>(v), ops);
    for (std::int32_t u : ops) {
      if (u < 0) continue;
      const std::int32_t s = loss_.nodes[u].shape;
      if ((s == kSlot || s == kDraw) && lgat_[u].empty()) {
        lgat_[u].assign(kListChunk, 0.0);
        gathered_.push_back(u);
        if (s == kDraw) roots.push_back(u);
      }
    }
  }
  const std::vector<bool> in_draws = reach(roots);
  // Draw nodes that depend on the draw sums (and scalars) only, not on the cells: while every
  // item is allocated (scans) they are the same for every item, so they are kept for all draws
  // and recomputed only when the draw sums change (draw_epoch_).
  draw_static_.assign(V, 0);
  draw_keep_.assign(V, {});
  for (std::size_t v = 0; v < V; ++v) {
    const CsNode& x = loss_.nodes[v];
    if (!in_draws[v] || x.shape != kDraw) continue;
    draw_sp_prog_.push_back(static_cast<std::int32_t>(v));
    bool fixed = x.op == CsOp::Draw;
    if (!cs_is_leaf(x.op)) {
      fixed = true;
      for (std::int32_t u : {x.a, x.b, x.c})
        if (u >= 0 && loss_.nodes[u].shape == kDraw && !draw_static_[u]) fixed = false;
    }
    draw_static_[v] = fixed;
    if (fixed && x.op != CsOp::Draw) draw_keep_[v].assign(static_cast<std::size_t>(d_.H), 0.0);
  }
  dptr_.assign(V, nullptr);
  cellbase_.assign(static_cast<std::size_t>(n_cell_), std::vector<double>(static_cast<std::size_t>(draw_elems_), 0.0));
  lb_.assign(list_cap_, 0);
  lk_.assign(list_cap_, 0);
  lx_.assign(list_cap_, 0);
  coefsum_.assign(loss_.terms.size(), 0.0);
  sep_.assign(kListChunk, 0.0);
}

// The sparse scores: sum over draws of the separable form (coefficients summed per block) plus,
// in every nonzero cell, the formula's value less the separable form's. Every loop is
// elementwise or sums in a fixed order, so every instruction set gives the same bits.
template <class Label, class Count>
void CountSumState<Label, Count>::score_sparse(std::int64_t i, std::int32_t old, std::int64_t Bd, double* out) {
  const std::int32_t q = table_.slots();
  const std::int64_t Q = q + 1;
  const auto T = loss_.terms.size();
  const std::int64_t H = d_.H;
  std::fill(acc_.begin(), acc_.begin() + Q, 0.0);
  std::fill(coefsum_.begin(), coefsum_.end(), 0.0);
  // Operand u of a draw node, in the current block.
  auto draw_arg = [&](std::int32_t u) {
    CsArg a;
    if (u < 0) return a;
    if (loss_.nodes[u].shape == kScalar) a.v = scal_[u];
    else a.p = dptr_[u];
    return a;
  };
  // The draw-sum-only nodes for all draws, when scoring allocated items with stale ones.
  const bool keep = old >= 0;
  if (keep && keep_epoch_ != draw_epoch_) {
    for (std::int32_t v : draw_sp_prog_) {
      const CsNode& x = loss_.nodes[v];
      if (!draw_static_[v]) continue;
      if (x.op != CsOp::Draw) run_node(v, H, draw_arg, draw_keep_[v].data());
      dptr_[v] = x.op == CsOp::Draw ? draw_.data() + x.a * H : draw_keep_[v].data();
    }
    keep_epoch_ = draw_epoch_;
  }
  const Label* lab = d_.item(i);
  const Count* cnt = table_.counts();
  const std::int64_t stride = table_.stride();
  for (std::int64_t end = H; end > 0; end -= Bd) {
    const std::int64_t h0 = std::max<std::int64_t>(0, end - Bd);
    const std::int64_t nb = end - h0;
    std::int64_t L = 0;
    // Rows are read in draw order at scattered places: fetched a few draws ahead.
    constexpr std::int64_t kAhead = 8;
    for (std::int64_t b = 0; b < nb; ++b) {
      if (b + kAhead < nb) __builtin_prefetch(cnt + table_.row_index(h0 + b + kAhead, lab[h0 + b + kAhead]) * stride);
      const std::int64_t r = d_.base[h0 + b] + lab[h0 + b];
      row_index_[b] = r;  // of alloc_ and of the table
      const Count* row = cnt + r * stride;
      rows_[b] = row;
      if (sizeof(Count) <= 2 && q <= 64) {  // few nonzero counts: visited bit by bit
        const auto bb = static_cast<std::int32_t>(b);
        CountTable<Label, Count>::for_each_nonzero(row, q, old, nullptr, [&](std::int32_t k) SALSOX_INLINE {
          lb_[L] = bb;
          lk_[L] = k;
          lx_[L] = static_cast<std::int32_t>(row[k]) - (k == old ? 1 : 0);
          ++L;
        });
        continue;
      }
      // Otherwise every slot is written and the list advances past the nonzero ones only, with
      // no unpredictable branch (L <= nb * q <= the list's capacity, see score_as).
      std::int32_t* pb = lb_.data();
      std::int32_t* pk = lk_.data();
      std::int32_t* px = lx_.data();
      const auto bb = static_cast<std::int32_t>(b);
      for (std::int32_t k = 0; k < q; ++k) {
        const std::int32_t x = static_cast<std::int32_t>(row[k]) - (k == old ? 1 : 0);
        pb[L] = bb;
        pk[L] = k;
        px[L] = x;
        L += x != 0;
      }
    }
    for (std::int32_t j = 0; j < n_cell_; ++j) {
      const double* dc = diff_[0][j].data();
      const double* S = cell_.data() + j * H + h0;
      double* cb = cellbase_[j].data();
      if (old >= 0)
        for (std::int64_t b = 0; b < nb; ++b) cb[b] = S[b] - dc[rows_[b][old] - 1];
      else
        for (std::int64_t b = 0; b < nb; ++b) cb[b] = S[b];
    }
    for (std::int32_t v : draw_sp_prog_) {
      const CsNode& x = loss_.nodes[v];
      if (keep && draw_static_[v]) {
        dptr_[v] = (x.op == CsOp::Draw ? draw_.data() + x.a * H : draw_keep_[v].data()) + h0;
        continue;
      }
      double* o = drawv_[v].data();
      dptr_[v] = o;
      if (x.op == CsOp::Draw) {
        const double* S = draw_.data() + x.a * H + h0;
        if (old >= 0) {
          for (std::int64_t b = 0; b < nb; ++b) o[b] = S[b];
        } else {
          const double* dd = diff_[2][x.a].data();
          for (std::int64_t b = 0; b < nb; ++b) o[b] = S[b] + dd[alloc_[row_index_[b]]];
        }
      } else if (x.op == CsOp::CellZero) {
        const double* cb = cellbase_[x.a].data();
        const double d0 = diff_[0][x.a][0];
        for (std::int64_t b = 0; b < nb; ++b) o[b] = cb[b] + d0;
      } else {
        run_node(v, nb, draw_arg, o);
      }
    }
    for (std::size_t t = 0; t < T; ++t) {
      const std::int32_t c = loss_.terms[t].first;
      if (loss_.nodes[c].shape == kScalar) {
        coefsum_[t] += static_cast<double>(nb) * scal_[c];
      } else {
        const double* o = dptr_[c];
        double sum = 0.0;
        for (std::int64_t b = 0; b < nb; ++b) sum += o[b];
        coefsum_[t] += sum;
      }
    }
    if (L == 0) continue;
    // The list in chunks, every node over a chunk before the next, so that the nodes' buffers
    // stay in L1.
    for (std::int64_t l0 = 0; l0 < L; l0 += kListChunk) {
      const std::int64_t C = std::min(kListChunk, L - l0);
      const std::int32_t* lb = lb_.data() + l0;
      const std::int32_t* lk = lk_.data() + l0;
      for (std::int32_t u : gathered_) {
        double* g = lgat_[u].data();
        if (loss_.nodes[u].shape == kSlot) {
          const double* s = slotv_[u].data();
          for (std::int64_t l = 0; l < C; ++l) g[l] = s[lk[l]];
        } else {
          const double* s = dptr_[u];
          for (std::int64_t l = 0; l < C; ++l) g[l] = s[lb[l]];
        }
      }
      for (std::int32_t v : list_prog_) {
        const CsNode& x = loss_.nodes[v];
        double* o = lbuf_[v].data();
        if (x.op == CsOp::Cell) {
          const double* cb = cellbase_[x.a].data();
          const double* dc = diff_[0][x.a].data();
          const std::int32_t* lx = lx_.data() + l0;
          for (std::int64_t l = 0; l < C; ++l) o[l] = cb[lb[l]] + dc[lx[l]];
        } else if (list_outer_[v]) {
          // One operand per draw, the other per slot (scalars are not Full).
          const bool a_draw = loss_.nodes[x.a].shape == kDraw;
          const double* pa = a_draw ? dptr_[x.a] : slotv_[x.a].data();
          const double* pb = a_draw ? slotv_[x.b].data() : dptr_[x.b];
          const std::int32_t* ia = a_draw ? lb : lk;
          const std::int32_t* ib = a_draw ? lk : lb;
          ops_.indexed(x.op, C, pa, ia, pb, ib, o);
        } else {
          run_node(v, C, [&](std::int32_t u) { return list_arg(u); }, o);
        }
      }
      // In each nonzero cell, the formula less its separable form, added to the cell's slot in
      // one pass: one chain of read-modify-writes per slot instead of one per term.
      const double* f = lbuf_[loss_.result].data();
      double* acc = acc_.data();
      auto coef = [&](std::size_t t, const double*& p, double& s) {
        const std::int32_t c = loss_.terms[t].first;
        p = loss_.nodes[c].shape == kScalar ? nullptr : dptr_[c];
        s = loss_.nodes[c].shape == kScalar ? scal_[c] : 0.0;
      };
      auto atom = [&](std::size_t t, const double*& p, double& s) {
        const std::int32_t a = loss_.terms[t].second;
        p = a >= 0 && loss_.nodes[a].shape == kSlot ? slotv_[a].data() : nullptr;
        s = p ? 0.0 : atom_at(a, 0);
      };
      if (T <= 2) {
        const double *c0, *a0, *c1 = nullptr, *a1 = nullptr;
        double cs0, as0, cs1 = 0.0, as1 = 0.0;
        coef(0, c0, cs0);
        atom(0, a0, as0);
        if (T == 2) coef(1, c1, cs1), atom(1, a1, as1);
        for (std::int64_t l = 0; l < C; ++l) {
          double s = (c0 ? c0[lb[l]] : cs0) * (a0 ? a0[lk[l]] : as0);
          if (T == 2) s += (c1 ? c1[lb[l]] : cs1) * (a1 ? a1[lk[l]] : as1);
          acc[lk[l]] += f[l] - s;
        }
        continue;
      }
      double* sep = sep_.data();
      for (std::size_t t = 0; t < T; ++t) {
        const double* cp;
        const double* ap;
        double cv, av;
        coef(t, cp, cv);
        atom(t, ap, av);
        for (std::int64_t l = 0; l < C; ++l) {
          const double v = (cp ? cp[lb[l]] : cv) * (ap ? ap[lk[l]] : av);
          sep[l] = t == 0 ? v : sep[l] + v;
        }
      }
      for (std::int64_t l = 0; l < C; ++l) acc[lk[l]] += f[l] - sep[l];
    }
  }
  // The separable form summed over all draws, plus the nonzero cells' corrections.
  for (std::int64_t k = 0; k < Q; ++k) {
    double v = atom_at(loss_.terms[0].second, k) * coefsum_[0];
    for (std::size_t t = 1; t < T; ++t) v += atom_at(loss_.terms[t].second, k) * coefsum_[t];
    out[k] = v + acc_[k];
  }
}

}  // namespace salsox
