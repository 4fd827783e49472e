// Fused node pairs ("superinstructions") of the count-sum block evaluation. The block
// evaluation runs one loop per node over a block of draws x slots, so each node costs a pass
// that loads its operands and stores its values; two frequent shapes are run as one loop when
// the inner node has no other reader:
//   where(cmp(p, q), b, c)  (the guard of a ratio: where(den == 0, 0, ...)),
//   a - p / q               (one minus a ratio),
//   a / sqrt(q)             (a ratio to a geometric mean).
// Each fused loop performs the same IEEE operations in the same order as the two nodes, so
// values are bit-identical to the unfused evaluation (and to CountSumLoss::evaluate).
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "countsum_loss.hpp"

namespace salsox {

enum CsFuse : std::int32_t { kFuseNone = 0, kFuseWhereCmp = 1, kFuseSubDiv = 2, kFuseDivSqrt = 3 };

struct CsFused {
  std::int32_t kind = kFuseNone;
  std::int32_t inner = -1;  // the node folded into this one (not evaluated on its own)
};

inline bool cs_is_compare(CsOp op) { return op >= CsOp::Lt && op <= CsOp::Ne; }

// The fusion plan of a loss: by node, what it fuses. A node is folded into its reader only when
// that reader is its only use anywhere (formula, separable form, result), both are Full (per
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
  for (const auto& [coef, atom] : L.terms) {
    ++uses[coef];
    if (atom >= 0) ++uses[atom];
  }
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

template <class Cmp>
inline void cs_where_cmp_loop(std::int64_t len, const double* p, CsArg q, CsArg b, const double* c, double* out,
                              Cmp cmp) {
  if (q.p && b.p) {
    for (std::int64_t e = 0; e < len; ++e) {
      const double y = b.p[e], z = c[e];
      out[e] = cmp(p[e], q.p[e]) != 0.0 ? y : z;
    }
  } else if (q.p) {
    const double y = b.v;
    for (std::int64_t e = 0; e < len; ++e) {
      const double z = c[e];
      out[e] = cmp(p[e], q.p[e]) != 0.0 ? y : z;
    }
  } else if (b.p) {
    const double r = q.v;
    for (std::int64_t e = 0; e < len; ++e) {
      const double y = b.p[e], z = c[e];
      out[e] = cmp(p[e], r) != 0.0 ? y : z;
    }
  } else {
    const double r = q.v, y = b.v;
    for (std::int64_t e = 0; e < len; ++e) {
      const double z = c[e];
      out[e] = cmp(p[e], r) != 0.0 ? y : z;
    }
  }
}

// out[e] = a[e] / sqrt(q[e]) (a may be a constant). std::sqrt may set errno, which keeps the
// compiler from vectorising its loop; the SSE2 square root is the same IEEE operation.
inline void cs_div_sqrt(std::int64_t len, CsArg a, const double* q, double* out) {
  std::int64_t e = 0;
#if defined(__SSE2__)
  if (a.p) {
    for (; e + 2 <= len; e += 2)
      _mm_storeu_pd(out + e, _mm_div_pd(_mm_loadu_pd(a.p + e), _mm_sqrt_pd(_mm_loadu_pd(q + e))));
  } else {
    const __m128d s = _mm_set1_pd(a.v);
    for (; e + 2 <= len; e += 2) _mm_storeu_pd(out + e, _mm_div_pd(s, _mm_sqrt_pd(_mm_loadu_pd(q + e))));
  }
#endif
  for (; e < len; ++e) out[e] = (a.p ? a.p[e] : a.v) / std::sqrt(q[e]);
}

// Fused node `x` (plan entry f) over `len` elements; `arg(u)` gives operand u as the node's
// evaluation lays it out.
template <class Arg>
inline void cs_apply_fused(const CountSumLoss& L, const CsNode& x, const CsFused& f, std::int64_t len, Arg arg,
                           double* out) {
  const CsNode& in = L.nodes[f.inner];
  if (f.kind == kFuseWhereCmp) {
    const CsArg p = arg(in.a), q = arg(in.b), b = arg(x.b), c = arg(x.c);
    switch (in.op) {
      case CsOp::Lt: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsLt{}); return;
      case CsOp::Le: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsLe{}); return;
      case CsOp::Gt: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsGt{}); return;
      case CsOp::Ge: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsGe{}); return;
      case CsOp::Eq: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsEq{}); return;
      default: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsNe{}); return;
    }
  }
  if (f.kind == kFuseDivSqrt) {
    cs_div_sqrt(len, arg(x.a), arg(in.a).p, out);
    return;
  }
  // a - p / q
  const CsArg a = arg(x.a), p = arg(in.a), q = arg(in.b);
  if (a.p) {
    for (std::int64_t e = 0; e < len; ++e) out[e] = a.p[e] - p.p[e] / q.p[e];
  } else {
    const double s = a.v;
    for (std::int64_t e = 0; e < len; ++e) out[e] = s - p.p[e] / q.p[e];
  }
}

}  // namespace salsox
