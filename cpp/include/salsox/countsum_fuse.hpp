// Fused node pairs of the count-sum block evaluation: each node costs a pass over the block,
// so three frequent shapes run as one loop when the inner node has no other reader:
//   where(cmp(p, q), b, c)  (the guard of a ratio: where(den == 0, 0, ...)),
//   a - p / q               (one minus a ratio),
//   a / sqrt(q)             (a ratio to a geometric mean).
// Each fused loop performs the same IEEE operations in the same order as the two nodes, so
// values are bit-identical to the unfused evaluation (and to CountSumLoss::evaluate).
#pragma once
#include <cstdint>
#include <vector>

#include "countsum_loss.hpp"

namespace salsox {

enum CsFuse : std::int32_t { kFuseNone = 0, kFuseWhereCmp = 1, kFuseSubDiv = 2, kFuseDivSqrt = 3 };

struct CsFused {
  std::int32_t kind = kFuseNone;
  std::int32_t inner = -1;  // the node folded into this one (not evaluated on its own)
};

inline bool cs_is_compare(CsOp op) { return op >= CsOp::Lt && op <= CsOp::Ne; }

// The fusion plan of a loss: by node, what it fuses. A node is folded into its reader only when
// that reader is its only use anywhere (formula or result), both are Full (per
// draw and slot) and the operands the fused loop reads as arrays are not scalars.
inline std::vector<CsFused> cs_fuse_plan(const CountSumLoss& L) {
  const auto V = L.nodes.size();
  std::vector<std::int32_t> uses(V, 0);
  for (const CsNode& x : L.nodes) {
    if (cs_is_leaf(x.op)) continue;
    for (std::int32_t u : {x.a, x.b, x.c})
      if (u >= 0) ++uses[u];
  }
  if (L.result >= 0) ++uses[L.result];
  std::vector<CsFused> plan(V);
  std::vector<bool> folded(V, false);
  auto array = [&](std::int32_t u) { return u >= 0 && L.nodes[u].shape != kScalar; };
  auto foldable = [&](std::int32_t u) {
    return u >= 0 && !folded[u] && uses[u] == 1 && L.nodes[u].shape == kFull && plan[u].kind == kFuseNone;
  };
  for (std::size_t v = 0; v < V; ++v) {
    const CsNode& x = L.nodes[v];
    if (x.shape != kFull) continue;
    if (x.op == CsOp::Where && foldable(x.a) && cs_is_compare(L.nodes[x.a].op) && array(L.nodes[x.a].a) &&
        array(x.c)) {
      plan[v] = {kFuseWhereCmp, x.a};
      folded[x.a] = true;
    } else if (x.op == CsOp::Sub && foldable(x.b) && L.nodes[x.b].op == CsOp::Div && array(L.nodes[x.b].a) &&
               array(L.nodes[x.b].b)) {
      plan[v] = {kFuseSubDiv, x.b};
      folded[x.b] = true;
    } else if (x.op == CsOp::Div && foldable(x.b) && L.nodes[x.b].op == CsOp::Sqrt && array(L.nodes[x.b].a)) {
      plan[v] = {kFuseDivSqrt, x.b};
      folded[x.b] = true;
    }
  }
  return plan;
}

// The operands a node reads when evaluated (its own, or for a fused node the inner node's in
// place of the inner node): at most four, -1 padded.
inline void cs_effective_operands(const CountSumLoss& L, const std::vector<CsFused>& plan, std::int32_t v,
                                  std::int32_t out[4]) {
  const CsNode& x = L.nodes[v];
  out[0] = out[1] = out[2] = out[3] = -1;
  if (cs_is_leaf(x.op)) return;
  const CsFused& f = plan[v];
  if (f.kind == kFuseWhereCmp) {
    const CsNode& c = L.nodes[f.inner];
    out[0] = c.a, out[1] = c.b, out[2] = x.b, out[3] = x.c;
  } else if (f.kind == kFuseSubDiv) {
    const CsNode& d = L.nodes[f.inner];
    out[0] = x.a, out[1] = d.a, out[2] = d.b;
  } else if (f.kind == kFuseDivSqrt) {
    out[0] = x.a, out[1] = L.nodes[f.inner].a;
  } else {
    out[0] = x.a, out[1] = x.b, out[2] = x.c;
  }
}

}  // namespace salsox
