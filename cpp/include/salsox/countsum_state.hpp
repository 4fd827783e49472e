// Search state for count-sum losses (countsum_loss.hpp): a CountTable (count_storage.hpp) and
// the running sums, per draw (cell and draw sums) and of the estimate. Moving item i into slot
// k changes a cell sum by g(n_ck + 1) - g(n_ck); a score builds the sums of every candidate
// slot over a block of draws and runs the formula node by node over the block.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "count_storage.hpp"
#include "options.hpp"
#include "simd.hpp"
#include "countsum_block_ops.hpp"
#include "countsum_fuse.hpp"
#include "countsum_kernel.hpp"
#include "countsum_loss.hpp"
#include "draws.hpp"

namespace salsox {

template <class Label, class Count = std::int32_t>
class CountSumState {
 public:
  // Elements (draws x slots) per block of the block evaluation: a node's block of values stays
  // in L1/L2 while the formula runs over it.
  static constexpr std::int64_t kBlockElems = 1024;
  // Sparse scores: draws per block, and the capacity of a block's nonzero-cell list. Large
  // blocks: the per-draw work is short, so the per-node dispatch must be spread over many.
  static constexpr std::int64_t kSparseDraws = 1024;
  static constexpr std::int64_t kSparseCells = 16384;
  static constexpr std::int64_t kListChunk = 256;  // cells of a sparse list evaluated together

  CountSumState(const DrawsView<Label>& draws, const CountSumLoss& loss, std::int32_t max_clusters,
                const EngineOptions& opts = EngineOptions::from_env(false))
      : d_(draws), loss_(loss), table_(draws, max_clusters), simd_(opts.simd),
        ops_(cs_block_ops(opts.simd, opts.countsum_row_widths)), row_widths_(opts.countsum_row_widths),
        sparse_(opts.countsum_sparse && !loss.terms.empty()) {
    for (int w = 0; w < 3; ++w) {
      for (const auto& t : loss_.g[w]) {
        std::vector<double> diff(t.size() - 1);
        for (std::size_t x = 0; x + 1 < t.size(); ++x) diff[x] = t[x + 1] - t[x];
        diff_[w].push_back(std::move(diff));
      }
    }
    // A cell sum whose increment at count x is x (pair counts): its gather converts the counts
    // instead of looking them up. The last entry (count n) is never an increment: a cell the
    // item would join holds at most n - 1 others.
    for (const auto& dc : diff_[0]) {
      bool identity = true;
      for (std::size_t x = 0; x + 1 < dc.size() && identity; ++x) identity = dc[x] == static_cast<double>(x);
      cell_is_count_.push_back(identity);
    }
    n_cell_ = loss_.sums(SumWhere::Cell);
    n_est_ = loss_.sums(SumWhere::Estimate);
    n_draw_ = loss_.sums(SumWhere::Draw);
    cell_.assign(static_cast<std::size_t>(n_cell_ * d_.H), 0.0);
    draw_.assign(static_cast<std::size_t>(n_draw_ * d_.H), 0.0);
    est_.assign(static_cast<std::size_t>(n_est_), 0.0);
    alloc_.assign(static_cast<std::size_t>(d_.rows), 0);
    // Full values (draws x slots) come from a pool, reused once a value is dead, so that the
    // live ones stay in L1 while the formula runs over a block.
    const std::int32_t slots = max_clusters + 1;
    block_elems_ = std::max<std::int64_t>(kBlockElems, 8 * slots);
    draw_elems_ = std::max<std::int64_t>(block_elems_, kSparseDraws);
    list_cap_ = std::max<std::int64_t>(kSparseCells, slots);
    const auto V = loss_.nodes.size();
    slotv_.assign(V, {});
    drawv_.assign(V, {});
    scal_.assign(V, 0.0);
    full_of_.assign(V, -1);
    bcast_of_.assign(V, -1);
    tile_of_.assign(V, -1);
    outer_.assign(V, 0);
    fuse_ = opts.countsum_fused ? cs_fuse_plan(loss_) : std::vector<CsFused>(V);
    folded_.assign(V, 0);
    for (const CsFused& f : fuse_)
      if (f.kind != kFuseNone) folded_[f.inner] = 1;
    // A Full node with no Full operand is an outer combination, computed directly; the other
    // Full nodes' Slot operands are tiled once per score, Draw ones broadcast once per block.
    const std::vector<bool> dense = reach({loss_.result});
    // A result `scalar op x` (or `x op scalar`), x Full, runs its operation in the accumulation
    // loop: one pass over the blocks less (e.g. 1 - ratio).
    {
      const CsNode& r = loss_.nodes[loss_.result];
      if (r.shape == kFull && cs_is_binary(r.op) && fuse_[loss_.result].kind == kFuseNone) {
        const std::int32_t sa = loss_.nodes[r.a].shape, sb = loss_.nodes[r.b].shape;
        if (sa == kScalar && sb == kFull) acc_full_ = r.b, acc_scalar_left_ = true;
        if (sa == kFull && sb == kScalar) acc_full_ = r.a, acc_scalar_left_ = false;
      }
    }
    std::vector<bool> tiled(V, false), broadcast(V, false);
    for (std::size_t v = 0; v < V; ++v) {
      const CsNode& x = loss_.nodes[v];
      if (!dense[v] || folded_[v] || cs_is_leaf(x.op) || x.shape != kFull) continue;
      bool any_full = false;
      for (std::int32_t u : {x.a, x.b, x.c})
        if (u >= 0 && loss_.nodes[u].shape == kFull) any_full = true;
      if (!any_full && x.op != CsOp::Where && fuse_[v].kind == kFuseNone) {
        outer_[v] = 1;
        continue;
      }
      std::int32_t ops[4];
      cs_effective_operands(loss_, fuse_, static_cast<std::int32_t>(v), ops);
      for (std::int32_t u : ops) {
        if (u < 0) continue;
        if (loss_.nodes[u].shape == kSlot) tiled[u] = true;
        if (loss_.nodes[u].shape == kDraw) broadcast[u] = true;
      }
    }
    for (std::size_t v = 0; v < V; ++v) {
      const CsNode& x = loss_.nodes[v];
      switch (x.shape) {
        case kScalar: scalar_prog_.push_back(static_cast<std::int32_t>(v)); break;
        case kSlot:  // slack: the fixed-width outer rows read past the slots (cs_outer_rows)
          slot_prog_.push_back(static_cast<std::int32_t>(v));
          slotv_[v].assign(static_cast<std::size_t>(slots + kMaxRowWidth), 0.0);
          break;
        case kDraw:
          if (dense[v]) block_prog_.push_back(static_cast<std::int32_t>(v));
          drawv_[v].assign(draw_elems_, 0.0);
          break;
        default:
          if (dense[v] && !folded_[v] && !(acc_full_ >= 0 && static_cast<std::int32_t>(v) == loss_.result))
            block_prog_.push_back(static_cast<std::int32_t>(v));
      }
      if (tiled[v]) {
        tile_of_[v] = static_cast<std::int32_t>(tiles_.size());
        tiles_.emplace_back(block_elems_, 0.0);
        tiled_.push_back(static_cast<std::int32_t>(v));
      }
    }
    assign_pool();
    if (sparse_) prepare_sparse();
    if (opts.countsum_jit) jit_.prepare(loss_, block_elems_, kMaxRowWidth, drawv_, slotv_);
    acc_.assign(static_cast<std::size_t>(slots + kMaxRowWidth), 0.0);  // slack: see cs_acc_rows
    rows_.assign(draw_elems_, nullptr);
    rows_next_.assign(draw_elems_, nullptr);
    row_index_.assign(draw_elems_, 0);
    row_index_next_.assign(draw_elems_, 0);
  }

  CountSumState(const CountSumState&) = delete;
  CountSumState& operator=(const CountSumState&) = delete;

  std::int64_t n() const { return d_.n; }
  std::int32_t max_clusters() const { return table_.max_clusters(); }
  std::int32_t slots() const { return table_.slots(); }
  std::int64_t size(std::int32_t k) const { return table_.size(k); }
  std::int32_t label(std::int64_t i) const { return table_.label(i); }
  const std::vector<std::int32_t>& labels() const { return table_.labels(); }

  void clear() {
    ++draw_epoch_;
    table_.clear();
    std::fill(cell_.begin(), cell_.end(), 0.0);
    std::fill(draw_.begin(), draw_.end(), 0.0);
    std::fill(est_.begin(), est_.end(), 0.0);
    std::fill(alloc_.begin(), alloc_.end(), 0);
  }

  void rebuild(const std::vector<std::int32_t>& labels) {
    table_.rebuild(labels);
    recompute_sums();
  }

  void add(std::int64_t i, std::int32_t k) {
    ++draw_epoch_;
    const std::int64_t s = table_.size(k);
    for (std::int32_t j = 0; j < n_est_; ++j) est_[j] += diff_[1][j][s];
    with_sums_visitor<true>(i, [&](const auto& visit) { table_.add(i, k, visit); });
  }

  void remove(std::int64_t i) {
    ++draw_epoch_;
    const std::int64_t s = table_.size(table_.label(i)) - 1;
    for (std::int32_t j = 0; j < n_est_; ++j) est_[j] -= diff_[1][j][s];
    with_sums_visitor<false>(i, [&](const auto& visit) { table_.remove(i, visit); });
  }

  void close_slot(std::int32_t k) { table_.close_slot(k); }

  // Allocated item i from its slot to slot k in one pass over the draws (the draw sums stay).
  void move(std::int64_t i, std::int32_t k) {
    const std::int32_t old = table_.label(i);
    if (k == old) return;
    table_.fit_slot(k);  // before reading slot k: a slot past the table's width is not there yet
    const Label* lab = d_.item(i);
    const Count* cnt = table_.counts();
    const std::int64_t stride = table_.stride();
    for (std::int32_t j = 0; j < n_cell_; ++j) {
      const double* dc = diff_[0][j].data();
      double* S = cell_.data() + j * d_.H;
      for (std::int64_t h = 0; h < d_.H; ++h) {
        const Count* row = cnt + table_.row_index(h, lab[h]) * stride;
        S[h] += dc[row[k]] - dc[row[old] - 1];
      }
    }
    const std::int64_t sk = table_.size(k), so = table_.size(old);
    for (std::int32_t j = 0; j < n_est_; ++j) est_[j] += diff_[1][j][sk] - diff_[1][j][so - 1];
    table_.move(i, k);
  }

  void release_slot(std::int32_t k) {
    ++draw_epoch_;
    const Count* cnt = table_.counts();
    const std::int64_t stride = table_.stride();
    for (std::int64_t h = 0; h < d_.H; ++h) {
      for (std::int64_t r = d_.base[h]; r < d_.base[h + 1]; ++r) {
        const std::int64_t x = cnt[table_.row_index(h, r - d_.base[h]) * stride + k];
        if (x == 0) continue;
        const std::int64_t s = alloc_[r];
        alloc_[r] = static_cast<std::int32_t>(s - x);
        for (std::int32_t j = 0; j < n_cell_; ++j) cell_[j * d_.H + h] += loss_.g[0][j][0] - loss_.g[0][j][x];
        for (std::int32_t j = 0; j < n_draw_; ++j) draw_[j * d_.H + h] += loss_.g[2][j][s - x] - loss_.g[2][j][s];
      }
    }
    const std::int64_t s = table_.size(k);
    for (std::int32_t j = 0; j < n_est_; ++j) est_[j] += loss_.g[1][j][0] - loss_.g[1][j][s];
    table_.release_slot(k);
  }

  bool prefers_table_pass(std::int64_t members) const { return table_.prefers_table_pass(members); }

  void snapshot() {
    table_.snapshot();
    snap_cell_ = cell_;
    snap_draw_ = draw_;
    snap_est_ = est_;
    snap_alloc_ = alloc_;
  }
  void restore() {
    ++draw_epoch_;
    table_.restore();
    cell_ = snap_cell_;
    draw_ = snap_draw_;
    est_ = snap_est_;
    alloc_ = snap_alloc_;
  }

  void score(std::int64_t i, double* out) { score_as(i, -1, out); }
  void score_move(std::int64_t i, double* out) { score_as(i, table_.label(i), out); }

  // The formula's value in every draw for the current allocation, from scratch (sums in a
  // fixed order, so no incremental rounding leaks into reported values).
  void draw_losses(double* out) const {
    const Count* cnt = table_.counts();
    const std::int64_t stride = table_.stride();
    const std::int32_t q = table_.slots();
    std::vector<double> est(static_cast<std::size_t>(n_est_) + 1, 0.0), cell(static_cast<std::size_t>(n_cell_) + 1),
        draw(static_cast<std::size_t>(n_draw_) + 1), scratch;
    estimate_sums(est.data());
    if (n_cell_ == 1 && n_draw_ == 1) {
      // The usual shape. g(0) is +-0 (checked when tabulated) and c never -0, so a zero cell
      // changes no bit of c: from 8 slots only the nonzero cells are visited.
      const double* gc = loss_.g[0][0].data();
      const double* gd = loss_.g[2][0].data();
      const bool sparse = q >= 8 && q <= 64;
      for (std::int64_t h = 0; h < d_.H; ++h) {
        double c = 0.0, e = 0.0;
        auto row_at = [&](std::int64_t r) SALSOX_INLINE { return cnt + table_.row_index(h, r) * stride; };
        auto add_cell = [&](Count x) SALSOX_INLINE { c += gc[x]; };
        auto add_row = [&](std::int64_t, std::int64_t s) SALSOX_INLINE { e += gd[s]; };
        if (sparse) sum_draw_rows<Cells::NonzeroMask, Label, Count>(d_.k[h], q, row_at, add_cell, add_row);
        else sum_draw_rows<Cells::All, Label, Count>(d_.k[h], q, row_at, add_cell, add_row);
        cell[0] = c;
        draw[0] = e;
        out[h] = loss_.evaluate(static_cast<double>(table_.allocated()), cell.data(), est.data(), draw.data(), scratch);
      }
      return;
    }
    for (std::int64_t h = 0; h < d_.H; ++h) {
      table_sums(h, cell.data(), draw.data(), 1, nullptr);
      out[h] = loss_.evaluate(static_cast<double>(table_.allocated()), cell.data(), est.data(), draw.data(), scratch);
    }
  }

  double expected_loss() const {
    std::vector<double> values(static_cast<std::size_t>(d_.H));
    draw_losses(values.data());
    double total = 0.0;
    for (double v : values) total += v;
    return total / static_cast<double>(d_.H);
  }

  // The running sums from scratch, so that incremental rounding does not build up over a long
  // run, and the table's rows narrowed if they can be (CountTable::shrink).
  void refresh_sums() {
    table_.shrink();
    recompute_sums();
  }

 private:
  // The per-draw sums of the current table, from scratch.
  void recompute_sums() {
    ++draw_epoch_;
    for (std::int64_t h = 0; h < d_.H; ++h) table_sums(h, cell_.data() + h, draw_.data() + h, d_.H, alloc_.data());
    estimate_sums(est_.data());
  }

  // Draw h's cell and draw sums from the table into cell[j * step] and draw[j * step], rows in
  // order, each row's nonzero cells in slot order (g(0) = +-0 and a sum from +0 adding it keeps
  // its bits); each row's allocated items into alloc[r] unless alloc is null.
  void table_sums(std::int64_t h, double* cell, double* draw, std::int64_t step, std::int32_t* alloc) const {
    const std::int32_t q = table_.slots();
    for (std::int32_t j = 0; j < n_cell_; ++j) cell[j * step] = 0.0;
    for (std::int32_t j = 0; j < n_draw_; ++j) draw[j * step] = 0.0;
    const Count* cnt = table_.counts();
    const std::int64_t stride = table_.stride();
    sum_draw_rows<Cells::Nonzero, Label, Count>(
        d_.k[h], q, [&](std::int64_t r) SALSOX_INLINE { return cnt + table_.row_index(h, r) * stride; },
        [&](Count x) SALSOX_INLINE {
          for (std::int32_t j = 0; j < n_cell_; ++j) cell[j * step] += loss_.g[0][j][x];
        },
        [&](std::int64_t r, std::int64_t s) SALSOX_INLINE {
          if (alloc) alloc[d_.base[h] + r] = static_cast<std::int32_t>(s);
          for (std::int32_t j = 0; j < n_draw_; ++j) draw[j * step] += loss_.g[2][j][s];
        });
  }

  // The estimate sums of the current allocation into est[j].
  void estimate_sums(double* est) const {
    for (std::int32_t j = 0; j < n_est_; ++j) {
      est[j] = 0.0;
      for (std::int32_t k = 0; k < table_.slots(); ++k) est[j] += loss_.g[1][j][table_.size(k)];
    }
  }

  // Calls f(visit) with the table's per-draw visitor for add or remove (countsum_update.hpp).
  template <bool kAdd, class F>
  void with_sums_visitor(std::int64_t i, const F& f);

  // Operand u of a node of shape `shape`.
  CsArg arg(std::int32_t u, std::int32_t shape) const {
    if (u < 0) return CsArg{};
    const std::int32_t s = loss_.nodes[u].shape;
    if (s == kScalar) return CsArg{nullptr, scal_[u]};
    CsArg a;
    if (shape == kSlot) a.p = slotv_[u].data();
    else if (shape == kDraw) a.p = drawv_[u].data();
    else if (s == kSlot) a.p = tiles_[tile_of_[u]].data();
    else if (s == kDraw) a.p = pool_[bcast_of_[u]].data();
    else a.p = pool_[full_of_[u]].data();
    return a;
  }

  // out[k] (k = 0..q, q a new cluster) = sum over draws of the formula with item i in slot k,
  // item i being virtually removed from slot `old` first (-1: unallocated).
  void score_as(std::int64_t i, std::int32_t old, double* out) {
    const std::int32_t q = table_.slots();
    const std::int64_t Q = q + 1;
    const double m = static_cast<double>(old >= 0 ? table_.allocated() : table_.allocated() + 1);
    // Scalars and per-slot values, once per item.
    for (std::int32_t v : scalar_prog_) {
      const CsNode& x = loss_.nodes[v];
      if (x.op == CsOp::Const) scal_[v] = x.value;
      else if (x.op == CsOp::N) scal_[v] = m;
      else run_node(v, 1, [&](std::int32_t u) { return arg(u, kScalar); }, &scal_[v]);
    }
    for (std::int32_t v : slot_prog_) {
      const CsNode& x = loss_.nodes[v];
      double* o = slotv_[v].data();
      if (x.op == CsOp::Est) {
        const double* de = diff_[1][x.a].data();
        const double base = old >= 0 ? est_[x.a] - de[table_.size(old) - 1] : est_[x.a];
        for (std::int32_t k = 0; k < q; ++k) o[k] = base + de[table_.size(k) - (k == old ? 1 : 0)];
        o[q] = base + de[0];
      } else {
        run_node(v, Q, [&](std::int32_t u) { return arg(u, kSlot); }, o);
      }
    }
    const std::int64_t Bd = std::max<std::int64_t>(1, std::min<std::int64_t>(d_.H, block_elems_ / Q));
    if (sparse_ && jit_.fn == nullptr) {
      score_sparse(i, old, std::max<std::int64_t>(1, std::min({d_.H, kSparseDraws, list_cap_ / std::max(1, q)})), out);
      return;
    }
    score_dense(i, old, Bd, out);
  }

  // Node v over `len` elements (CsBlockOps::node), operand u read as arg_of(u).
  template <class ArgOf>
  void run_node(std::int32_t v, std::int64_t len, ArgOf arg_of, double* out) const {
    std::int32_t ops[4];
    cs_effective_operands(loss_, fuse_, v, ops);
    const CsArg args[4] = {arg_of(ops[0]), arg_of(ops[1]), arg_of(ops[2]), arg_of(ops[3])};
    const CsNode& x = loss_.nodes[v];
    const CsOp inner = fuse_[v].kind != kFuseNone ? loss_.nodes[fuse_[v].inner].op : x.op;
    ops_.node(x, inner, fuse_[v], len, args, out);
  }

  // Nodes the roots depend on.
  std::vector<bool> reach(const std::vector<std::int32_t>& roots) const {
    std::vector<bool> in(loss_.nodes.size(), false);
    for (std::int32_t r : roots)
      if (r >= 0) in[r] = true;
    for (std::size_t v = loss_.nodes.size(); v-- > 0;) {
      const CsNode& x = loss_.nodes[v];
      if (!in[v] || cs_is_leaf(x.op)) continue;
      for (std::int32_t u : {x.a, x.b, x.c})
        if (u >= 0) in[u] = true;
    }
    return in;
  }

  void prepare_sparse();  // countsum_sparse.hpp
  void assign_pool();     // countsum_dense.hpp

  // A term's atom in slot k.
  double atom_at(std::int32_t a, std::int64_t k) const {
    if (a < 0) return 1.0;
    return loss_.nodes[a].shape == kScalar ? scal_[a] : slotv_[a][k];
  }

  // Operand u of a node evaluated over the nonzero-cell list.
  CsArg list_arg(std::int32_t u) const {
    if (u < 0) return CsArg{};
    const std::int32_t s = loss_.nodes[u].shape;
    if (s == kScalar) return CsArg{nullptr, scal_[u]};
    CsArg a;
    a.p = s == kFull ? lbuf_[u].data() : lgat_[u].data();
    return a;
  }

  void score_sparse(std::int64_t i, std::int32_t old, std::int64_t Bd, double* out);  // countsum_sparse.hpp

  // The dense scores (every draw x slot, blocks of Bd draws; countsum_dense.hpp).
  void score_dense(std::int64_t i, std::int32_t old, std::int64_t Bd, double* out);

  // A Full node without Full operands (e.g. draw sum + estimate sum): binary, so one operand
  // is per draw and the other per slot.
  void outer(const CsNode& x, std::int64_t nb, std::int64_t Q, double* out) const {
    const bool a_draw = loss_.nodes[x.a].shape == kDraw;
    const double* a = a_draw ? drawv_[x.a].data() : slotv_[x.a].data();
    const double* b = a_draw ? slotv_[x.b].data() : drawv_[x.b].data();
    ops_.outer(x.op, nb, Q, a, a_draw, b, out);
  }

  // Cell sum j with item i in each slot, for draws h0..h0+nb-1: out[b * Q + k].
  void gather_cells(std::int32_t j, std::int64_t h0, std::int64_t nb, std::int32_t q, std::int32_t old, double* out) const {
    const double* dc = diff_[0][j].data();
    const double* S = cell_.data() + j * d_.H + h0;
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

  DrawsView<Label> d_;
  const CountSumLoss& loss_;
  CountTable<Label, Count> table_;
  SimdPath simd_;           // the path of the dense and sparse scores (simd.hpp)
  const CsBlockOps& ops_;  // the formula's node operations compiled for that path
  bool row_widths_, sparse_;  // EngineOptions::countsum_row_widths, countsum_sparse (a separable formula)
  std::vector<std::vector<double>> diff_[3];  // g(x + 1) - g(x), by kind and sum
  std::vector<bool> cell_is_count_;           // by cell sum: diff_[0][j][x] == x for every x
  std::int32_t n_cell_ = 0, n_est_ = 0, n_draw_ = 0;
  // Running sums: cell_[j * H + h], draw_[j * H + h], est_[j]; alloc_[r]: allocated items of
  // draw cluster (table row) r.
  std::vector<double> cell_, draw_, est_;
  std::vector<std::int32_t> alloc_;
  std::vector<double> snap_cell_, snap_draw_, snap_est_;
  std::vector<std::int32_t> snap_alloc_;
  // Evaluation buffers, by node.
  std::int64_t block_elems_ = 0, draw_elems_ = 0, list_cap_ = 0;
  std::vector<std::vector<double>> pool_, tiles_, slotv_, drawv_;
  CsKernelCall jit_;  // the formula's dense part as native code, when it was compiled
  // By node: its Full values' pool buffer, its broadcast's pool buffer, its tile; whether it is
  // an outer combination (see outer).
  std::vector<std::int32_t> full_of_, bcast_of_, tile_of_;
  std::vector<std::uint8_t> outer_;
  // Fused node pairs (countsum_fuse.hpp), and the nodes folded into their reader.
  std::vector<CsFused> fuse_;
  std::vector<std::uint8_t> folded_;
  // The result's Full operand when the accumulation applies the result's operation (-1: none),
  // and whether the scalar operand is the left one.
  std::int32_t acc_full_ = -1;
  bool acc_scalar_left_ = false;
  // Sparse scores (see prepare_sparse): programs, the nonzero-cell list (draw in the block,
  // slot, count), per-draw cell sums without the item, gathered operands and list values by
  // node, the coefficients' sums over draws, and the separable form in each listed cell.
  std::vector<std::int32_t> list_prog_, draw_sp_prog_, gathered_;
  std::vector<std::int32_t> lb_, lk_, lx_;
  std::vector<std::vector<double>> cellbase_, lgat_, lbuf_;
  std::vector<double> coefsum_, sep_;
  // By node: a list node combining a draw and a slot value (read through the list's indices),
  // a draw node of the draw sums only (kept for all draws in draw_keep_ while draw_epoch_, which
  // every change of the draw sums advances, equals keep_epoch_), and a draw node's values in
  // the current block.
  std::vector<std::uint8_t> list_outer_, draw_static_;
  std::vector<std::vector<double>> draw_keep_;
  std::vector<const double*> dptr_;
  std::uint64_t draw_epoch_ = 1, keep_epoch_ = 0;
  // The dense scores' per-draw nodes for all draws (score_dense), valid while dense_epoch_
  // equals draw_epoch_.
  std::vector<std::vector<double>> dense_keep_;
  std::uint64_t dense_epoch_ = 0;
  std::vector<double> scal_, acc_;
  std::vector<std::int32_t> scalar_prog_, slot_prog_, block_prog_, tiled_;
  std::vector<const Count*> rows_, rows_next_;  // rows_next_: the next block's (score_dense)
  std::vector<std::int64_t> row_index_, row_index_next_;
};

}  // namespace salsox

#include "countsum_dense.hpp"
#include "countsum_update.hpp"
#include "countsum_sparse.hpp"
