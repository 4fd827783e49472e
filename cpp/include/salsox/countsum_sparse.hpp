// The sparse scores of CountSumState (declared in countsum_state.hpp, which includes this file
// after the class): formulas affine in the estimate-only terms are summed per draw over the
// zero cells and evaluated fully only in the nonzero ones (see prepare_sparse).
#pragma once
#include <algorithm>
#include <cstdint>

#include "countsum_state.hpp"

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
  for (std::size_t v = 0; v < V; ++v) {
    const CsNode& x = loss_.nodes[v];
    if (!in_formula[v] || folded_[v] || x.shape != kFull) continue;
    list_prog_.push_back(static_cast<std::int32_t>(v));
    lbuf_[v].assign(list_cap_, 0.0);
    if (cs_is_leaf(x.op)) continue;
    std::int32_t ops[4];
    cs_effective_operands(loss_, fuse_, static_cast<std::int32_t>(v), ops);
    for (std::int32_t u : ops) {
      if (u < 0) continue;
      const std::int32_t s = loss_.nodes[u].shape;
      if ((s == kSlot || s == kDraw) && lgat_[u].empty()) {
        lgat_[u].assign(list_cap_, 0.0);
        gathered_.push_back(u);
        if (s == kDraw) roots.push_back(u);
      }
    }
  }
  const std::vector<bool> in_draws = reach(roots);
  for (std::size_t v = 0; v < V; ++v)
    if (in_draws[v] && loss_.nodes[v].shape == kDraw) draw_sp_prog_.push_back(static_cast<std::int32_t>(v));
  cellbase_.assign(static_cast<std::size_t>(n_cell_), std::vector<double>(static_cast<std::size_t>(draw_elems_), 0.0));
  lb_.assign(list_cap_, 0);
  lk_.assign(list_cap_, 0);
  lx_.assign(list_cap_, 0);
  coefsum_.assign(loss_.terms.size(), 0.0);
}

// The sparse scores: sum over draws of the separable form (coefficients summed per block) plus,
// in every nonzero cell, the formula's value less the separable form's.
template <class Label, class Count>
void CountSumState<Label, Count>::score_sparse(std::int64_t i, std::int32_t old, std::int64_t Bd, double* out) {
  const std::int32_t q = table_.slots();
  const std::int64_t Q = q + 1;
  const auto T = loss_.terms.size();
  std::fill(acc_.begin(), acc_.begin() + Q, 0.0);
  std::fill(coefsum_.begin(), coefsum_.end(), 0.0);
  corr_.assign(T * static_cast<std::size_t>(Q), 0.0);
  const Label* lab = d_.item(i);
  const Count* cnt = table_.counts();
  const std::int64_t stride = table_.stride();
  for (std::int64_t end = d_.H; end > 0; end -= Bd) {
    const std::int64_t h0 = std::max<std::int64_t>(0, end - Bd);
    const std::int64_t nb = end - h0;
    std::int64_t L = 0;
    for (std::int64_t b = 0; b < nb; ++b) {
      const std::int64_t r = d_.base[h0 + b] + lab[h0 + b];
      row_index_[b] = r;
      const Count* row = cnt + r * stride;
      rows_[b] = row;
      auto push = [&](std::int32_t k) {
        const std::int32_t x = static_cast<std::int32_t>(row[k]) - (k == old ? 1 : 0);
        if (x == 0) return;
        lb_[L] = static_cast<std::int32_t>(b);
        lk_[L] = k;
        lx_[L] = x;
        ++L;
      };
      if constexpr (sizeof(Count) == 1) {
        // A row has few nonzero counts: found eight at a time (as CountTableState does; word
        // reads past a short row stay inside the table's spare line).
        constexpr std::uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL, high = 0x8080808080808080ULL;
        for (std::int32_t w = 0; w * 8 < q; ++w) {
          std::uint64_t word;
          std::memcpy(&word, row + 8 * w, 8);
          std::uint64_t nonzero = (((word & low7) + low7) | word) & high;
          while (nonzero != 0) {
            const std::int32_t k = 8 * w + (ctz64(nonzero) >> 3);
            if (k >= q) break;
            push(k);
            nonzero &= nonzero - 1;
          }
        }
      } else {
        // Wider counts: every slot is written and the list advances past the nonzero ones only,
        // with no unpredictable branch (L <= nb * q <= the list's capacity, see score_as).
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
    }
    for (std::int32_t j = 0; j < n_cell_; ++j) {
      const double* dc = diff_[0][j].data();
      const double* S = cell_.data() + j * d_.H + h0;
      double* cb = cellbase_[j].data();
      if (old >= 0)
        for (std::int64_t b = 0; b < nb; ++b) cb[b] = S[b] - dc[rows_[b][old] - 1];
      else
        for (std::int64_t b = 0; b < nb; ++b) cb[b] = S[b];
    }
    for (std::int32_t v : draw_sp_prog_) {
      const CsNode& x = loss_.nodes[v];
      double* o = drawv_[v].data();
      if (x.op == CsOp::Draw) {
        const double* S = draw_.data() + x.a * d_.H + h0;
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
        cs_apply(x, nb, arg(x.a, kDraw), arg(x.b, kDraw), arg(x.c, kDraw), o);
      }
    }
    for (std::size_t t = 0; t < T; ++t) {
      const std::int32_t c = loss_.terms[t].first;
      if (loss_.nodes[c].shape == kScalar) {
        coefsum_[t] += static_cast<double>(nb) * scal_[c];
      } else {
        const double* o = drawv_[c].data();
        double sum = 0.0;
        for (std::int64_t b = 0; b < nb; ++b) sum += o[b];
        coefsum_[t] += sum;
      }
    }
    if (L == 0) continue;
    for (std::int32_t u : gathered_) {
      double* g = lgat_[u].data();
      if (loss_.nodes[u].shape == kSlot) {
        const double* s = slotv_[u].data();
        for (std::int64_t l = 0; l < L; ++l) g[l] = s[lk_[l]];
      } else {
        const double* s = drawv_[u].data();
        for (std::int64_t l = 0; l < L; ++l) g[l] = s[lb_[l]];
      }
    }
    for (std::int32_t v : list_prog_) {
      const CsNode& x = loss_.nodes[v];
      double* o = lbuf_[v].data();
      if (x.op == CsOp::Cell) {
        const double* cb = cellbase_[x.a].data();
        const double* dc = diff_[0][x.a].data();
        for (std::int64_t l = 0; l < L; ++l) o[l] = cb[lb_[l]] + dc[lx_[l]];
      } else if (fuse_[v].kind != kFuseNone) {
        cs_apply_fused(loss_, x, fuse_[v], L, [&](std::int32_t u) { return list_arg(u); }, o);
      } else {
        cs_apply(x, L, list_arg(x.a), list_arg(x.b), list_arg(x.c), o);
      }
    }
    // The formula in the nonzero cells, and there the coefficients (their separable form is
    // taken out per slot at the end: slot k gets atom(k) x (coefficient sum over all draws
    // less over its nonzero cells)).
    const double* f = lbuf_[loss_.result].data();
    const std::int32_t* lb = lb_.data();
    const std::int32_t* lk = lk_.data();
    double* acc = acc_.data();
    for (std::int64_t l = 0; l < L; ++l) acc[lk[l]] += f[l];
    for (std::size_t t = 0; t < T; ++t) {
      const std::int32_t c = loss_.terms[t].first;
      double* corr = corr_.data() + t * Q;
      if (loss_.nodes[c].shape == kScalar) {
        const double v = scal_[c];
        for (std::int64_t l = 0; l < L; ++l) corr[lk[l]] += v;
      } else {
        const double* v = drawv_[c].data();
        for (std::int64_t l = 0; l < L; ++l) corr[lk[l]] += v[lb[l]];
      }
    }
  }
  for (std::int64_t k = 0; k < Q; ++k) {
    double v = acc_[k];
    for (std::size_t t = 0; t < T; ++t) v += atom_at(loss_.terms[t].second, k) * (coefsum_[t] - corr_[t * Q + k]);
    out[k] = v;
  }
}

}  // namespace salsox
