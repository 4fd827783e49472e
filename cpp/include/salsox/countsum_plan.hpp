// The plan of a count-sum formula's scores, built once per search from the loss, the cluster cap
// and the engine's options, and read by every thread's state (countsum_state.hpp): the
// increments of the tabulated g, which nodes run once per item and which per block of draws x
// slots (countsum_dense.hpp), the fused node pairs, and the block buffer each value lives in.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "countsum_block_ops.hpp"
#include "countsum_fuse.hpp"
#include "countsum_kernel.hpp"
#include "countsum_loss.hpp"
#include "options.hpp"

namespace salsox {

// The dense scores' program: the nodes run per block, and where each value lives. A Full value
// (or a per-draw value broadcast over the slots) takes a pool buffer from its node to its last
// reader; a per-slot operand of a Full node is tiled once per score.
struct CsDensePlan {
  std::vector<std::int32_t> block_prog, tiled;
  // By node: its Full values' pool buffer, its broadcast's pool buffer, its tile (-1: none);
  // whether it is an outer combination (a Full node of a per-draw and a per-slot operand,
  // computed directly), and whether it is a per-draw node kept for all draws (see score_dense).
  std::vector<std::int32_t> full_of, bcast_of, tile_of;
  std::vector<std::uint8_t> outer, kept;
  std::int32_t pools = 0;
  // The result's Full operand when the accumulation applies the result's operation (-1: none),
  // and whether the scalar operand is the left one.
  std::int32_t acc_full = -1;
  bool acc_scalar_left = false;
  CsDenseKernel kernel = nullptr;  // the formula's Full nodes as native code, when used
};

struct CountSumPlan {
  // Elements (draws x slots) per block of the dense scores: a node's block of values stays in
  // L1/L2 while the formula runs over it.
  static constexpr std::int64_t kBlockElems = 1024;

  CountSumPlan(const CountSumLoss& loss_, std::int32_t max_clusters, const EngineOptions& opts)
      : loss(loss_), ops(cs_block_ops(opts.simd, opts.countsum_row_widths)), simd(opts.simd),
        row_widths(opts.countsum_row_widths) {
    for (int w = 0; w < 3; ++w) {
      for (const auto& t : loss.g[w]) {
        std::vector<double> d(t.size() - 1);
        for (std::size_t x = 0; x + 1 < t.size(); ++x) d[x] = t[x + 1] - t[x];
        diff[w].push_back(std::move(d));
      }
    }
    // A cell sum whose increment at count x is x (pair counts): its gather converts the counts
    // instead of looking them up. The last entry (count n) is never an increment: a cell the
    // item would join holds at most n - 1 others.
    for (const auto& dc : diff[0]) {
      bool identity = true;
      for (std::size_t x = 0; x + 1 < dc.size() && identity; ++x) identity = dc[x] == static_cast<double>(x);
      cell_is_count.push_back(identity);
    }
    n_cell = loss.sums(SumWhere::Cell);
    n_est = loss.sums(SumWhere::Estimate);
    n_draw = loss.sums(SumWhere::Draw);
    slots = max_clusters + 1;
    block_elems = std::max<std::int64_t>(kBlockElems, 8 * slots);
    const auto V = loss.nodes.size();
    fuse = opts.countsum_fused ? cs_fuse_plan(loss) : std::vector<CsFused>(V);
    folded.assign(V, 0);
    for (const CsFused& f : fuse)
      if (f.kind != kFuseNone) folded[f.inner] = 1;
    for (std::size_t v = 0; v < V; ++v) {
      if (loss.nodes[v].shape == kScalar) scalar_prog.push_back(static_cast<std::int32_t>(v));
      if (loss.nodes[v].shape == kSlot) slot_prog.push_back(static_cast<std::int32_t>(v));
    }
    plan_dense(opts);
  }

  CountSumPlan(const CountSumPlan&) = delete;
  CountSumPlan& operator=(const CountSumPlan&) = delete;

  // The operands node v reads when evaluated (cs_effective_operands).
  void operands(std::int32_t v, std::int32_t out[4]) const { cs_effective_operands(loss, fuse, v, out); }

  // Node v over `len` elements (CsBlockOps::node), operand u read as arg_of(u).
  template <class ArgOf>
  void run_node(std::int32_t v, std::int64_t len, ArgOf arg_of, double* out) const {
    std::int32_t ops_of[4];
    operands(v, ops_of);
    const CsArg args[4] = {arg_of(ops_of[0]), arg_of(ops_of[1]), arg_of(ops_of[2]), arg_of(ops_of[3])};
    const CsNode& x = loss.nodes[v];
    const CsOp inner = fuse[v].kind != kFuseNone ? loss.nodes[fuse[v].inner].op : x.op;
    ops.node(x, inner, fuse[v], len, args, out);
  }

  const CountSumLoss& loss;
  const CsBlockOps& ops;  // the formula's node operations compiled for `simd`
  SimdPath simd;          // the path of the scores (simd.hpp)
  bool row_widths;        // EngineOptions::countsum_row_widths
  std::vector<std::vector<double>> diff[3];  // g(x + 1) - g(x), by kind and sum
  std::vector<bool> cell_is_count;           // by cell sum: diff[0][j][x] == x for every x
  std::int32_t n_cell = 0, n_est = 0, n_draw = 0, slots = 0;  // slots: the cluster cap + 1
  std::int64_t block_elems = 0;
  std::vector<CsFused> fuse;          // fused node pairs (countsum_fuse.hpp)
  std::vector<std::uint8_t> folded;   // by node: folded into its reader
  std::vector<std::int32_t> scalar_prog, slot_prog;  // the nodes run once per item
  CsDensePlan dense;

 private:
  // Nodes the roots depend on.
  std::vector<bool> reach(const std::vector<std::int32_t>& roots) const {
    std::vector<bool> in(loss.nodes.size(), false);
    for (std::int32_t r : roots)
      if (r >= 0) in[r] = true;
    for (std::size_t v = loss.nodes.size(); v-- > 0;) {
      const CsNode& x = loss.nodes[v];
      if (!in[v] || cs_is_leaf(x.op)) continue;
      for (std::int32_t u : {x.a, x.b, x.c})
        if (u >= 0) in[u] = true;
    }
    return in;
  }

  void plan_dense(const EngineOptions& opts) {
    CsDensePlan& P = dense;
    const auto V = loss.nodes.size();
    P.full_of.assign(V, -1);
    P.bcast_of.assign(V, -1);
    P.tile_of.assign(V, -1);
    P.outer.assign(V, 0);
    P.kept.assign(V, 0);
    // A Full node with no Full operand is an outer combination, computed directly; the other
    // Full nodes' Slot operands are tiled once per score, Draw ones broadcast once per block.
    const std::vector<bool> in = reach({loss.result});
    // A result `scalar op x` (or `x op scalar`), x Full, runs its operation in the accumulation
    // loop: one pass over the blocks less (e.g. 1 - ratio).
    const CsNode& r = loss.nodes[loss.result];
    if (r.shape == kFull && cs_is_binary(r.op) && fuse[loss.result].kind == kFuseNone) {
      const std::int32_t sa = loss.nodes[r.a].shape, sb = loss.nodes[r.b].shape;
      if (sa == kScalar && sb == kFull) P.acc_full = r.b, P.acc_scalar_left = true;
      if (sa == kFull && sb == kScalar) P.acc_full = r.a, P.acc_scalar_left = false;
    }
    std::vector<bool> tiled(V, false);
    for (std::size_t v = 0; v < V; ++v) {
      const CsNode& x = loss.nodes[v];
      if (!in[v] || folded[v] || cs_is_leaf(x.op) || x.shape != kFull) continue;
      bool any_full = false;
      for (std::int32_t u : {x.a, x.b, x.c})
        if (u >= 0 && loss.nodes[u].shape == kFull) any_full = true;
      if (!any_full && x.op != CsOp::Where && fuse[v].kind == kFuseNone) {
        P.outer[v] = 1;
        continue;
      }
      std::int32_t ops_of[4];
      operands(static_cast<std::int32_t>(v), ops_of);
      for (std::int32_t u : ops_of)
        if (u >= 0 && loss.nodes[u].shape == kSlot) tiled[u] = true;
    }
    std::int32_t tiles = 0;
    for (std::size_t v = 0; v < V; ++v) {
      const CsNode& x = loss.nodes[v];
      const auto s = static_cast<std::int32_t>(v);
      if ((x.shape == kDraw && in[v]) ||
          (x.shape == kFull && in[v] && !folded[v] && !(P.acc_full >= 0 && s == loss.result)))
        P.block_prog.push_back(s);
      if (tiled[v]) P.tile_of[v] = tiles++, P.tiled.push_back(s);
    }
    assign_pool();
    // The per-draw nodes other than the sums themselves, kept for all draws (see score_dense).
    for (std::int32_t v : P.block_prog)
      if (loss.nodes[v].shape == kDraw && loss.nodes[v].op != CsOp::Draw) P.kept[v] = 1;
    // The formula compiled, for a formula whose result is Full.
    if (opts.countsum_jit && loss.dense_kernel != 0 && r.shape == kFull)
      P.kernel = reinterpret_cast<CsDenseKernel>(loss.dense_kernel);
  }

  // The dense program's buffers: a Full value (or a broadcast) lives from its node to its last
  // reader, then its buffer takes later values; the result lives to the end.
  void assign_pool() {
    CsDensePlan& P = dense;
    const auto V = loss.nodes.size();
    const auto N = P.block_prog.size();
    std::vector<std::int64_t> last_full(V, -1), last_bcast(V, -1);
    for (std::size_t p = 0; p < N; ++p) {
      const CsNode& x = loss.nodes[P.block_prog[p]];
      if (cs_is_leaf(x.op) || x.shape != kFull || P.outer[P.block_prog[p]]) continue;
      std::int32_t ops_of[4];
      operands(P.block_prog[p], ops_of);
      for (std::int32_t u : ops_of) {
        if (u < 0) continue;
        if (loss.nodes[u].shape == kFull) last_full[u] = static_cast<std::int64_t>(p);
        if (loss.nodes[u].shape == kDraw) last_bcast[u] = static_cast<std::int64_t>(p);
      }
    }
    last_full[loss.result] = static_cast<std::int64_t>(N);
    if (P.acc_full >= 0) last_full[P.acc_full] = static_cast<std::int64_t>(N);
    std::vector<std::int32_t> free_list;
    auto take = [&]() {
      if (free_list.empty()) return P.pools++;
      const std::int32_t b = free_list.back();
      free_list.pop_back();
      return b;
    };
    for (std::size_t p = 0; p < N; ++p) {
      const std::int32_t v = P.block_prog[p];
      const CsNode& x = loss.nodes[v];
      // Operands read for the last time here: their buffers may take this node's values
      // (elementwise, so in place is safe).
      if (!cs_is_leaf(x.op) && x.shape == kFull && !P.outer[v]) {
        std::int32_t seen[4] = {-1, -1, -1, -1}, ops_of[4];
        int m = 0;
        operands(v, ops_of);
        for (std::int32_t u : ops_of) {
          if (u < 0 || std::find(seen, seen + m, u) != seen + m) continue;
          seen[m++] = u;
          if (last_full[u] == static_cast<std::int64_t>(p) && P.full_of[u] >= 0) free_list.push_back(P.full_of[u]);
          if (last_bcast[u] == static_cast<std::int64_t>(p) && P.bcast_of[u] >= 0) free_list.push_back(P.bcast_of[u]);
        }
      }
      if (x.shape == kFull && last_full[v] >= 0) P.full_of[v] = take();
      if (x.shape == kFull && last_full[v] < 0) P.full_of[v] = take(), free_list.push_back(P.full_of[v]);
      if (x.shape == kDraw && last_bcast[v] >= 0) P.bcast_of[v] = take();
    }
  }
};

// A score's per-item values (CountSumState::score_as), read by the dense scorer: by node, the
// scalars, the per-slot values (with kMaxRowWidth of slack: the fixed-width rows read past the
// slots) and the per-draw values of a block; and the slots' sums over the draws (acc, slack too).
struct CsValues {
  explicit CsValues(const CountSumPlan& plan) {
    const auto V = plan.loss.nodes.size();
    scal.assign(V, 0.0);
    slotv.assign(V, {});
    drawv.assign(V, {});
    for (std::size_t v = 0; v < V; ++v) {
      if (plan.loss.nodes[v].shape == kSlot) slotv[v].assign(static_cast<std::size_t>(plan.slots + kMaxRowWidth), 0.0);
      if (plan.loss.nodes[v].shape == kDraw) drawv[v].assign(static_cast<std::size_t>(plan.block_elems), 0.0);
    }
    acc.assign(static_cast<std::size_t>(plan.slots + kMaxRowWidth), 0.0);
  }

  // Operand u of a node of shape `shape` (not Full: see CsDenseScorer::arg).
  CsArg arg(const CountSumLoss& loss, std::int32_t u, std::int32_t shape) const {
    if (u < 0) return CsArg{};
    if (loss.nodes[u].shape == kScalar) return CsArg{nullptr, scal[u]};
    CsArg a;
    a.p = shape == kSlot ? slotv[u].data() : drawv[u].data();
    return a;
  }

  std::vector<double> scal, acc;
  std::vector<std::vector<double>> slotv, drawv;
};

}  // namespace salsox
