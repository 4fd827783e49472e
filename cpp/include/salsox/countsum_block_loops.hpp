// The loops of the count-sum formula's node operations over blocks (CsBlockOps,
// countsum_block_ops.hpp), and the table of them for each instruction set. Only
// cpp/bindings/countsum_block_ops.cpp includes this file: it defines cs_block_ops. That unit
// is compiled with -fno-math-errno, so that the loops over std::sqrt vectorise (CMakeLists.txt).
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "countsum_block_ops.hpp"

namespace salsox {

// out[e] = f(a[e], b[e]) for e < len, one loop per operand kind so that each vectorises.
template <class F>
inline void cs_map2(std::int64_t len, CsArg a, CsArg b, double* out, F f) {
  if (a.p && b.p) {
    const double* x = a.p;
    const double* y = b.p;
    for (std::int64_t e = 0; e < len; ++e) out[e] = f(x[e], y[e]);
  } else if (a.p) {
    const double* x = a.p;
    const double y = b.v;
    for (std::int64_t e = 0; e < len; ++e) out[e] = f(x[e], y);
  } else if (b.p) {
    const double x = a.v;
    const double* y = b.p;
    for (std::int64_t e = 0; e < len; ++e) out[e] = f(x, y[e]);
  } else {
    const double r = f(a.v, b.v);
    for (std::int64_t e = 0; e < len; ++e) out[e] = r;
  }
}

template <class F>
inline void cs_map1(std::int64_t len, CsArg a, double* out, F f) {
  if (a.p) {
    const double* x = a.p;
    for (std::int64_t e = 0; e < len; ++e) out[e] = f(x[e]);
  } else {
    const double r = f(a.v);
    for (std::int64_t e = 0; e < len; ++e) out[e] = r;
  }
}

// out[b * Q + k] = f(x, y) for b < nb, k < Q, one operand varying with b (per draw) and the
// other with k (per slot): one dispatch per block, and an inner loop over the slots that
// vectorises (the output is a block buffer, never an operand: restrict spares the overlap
// check per draw). With W > 0 (W >= Q), rows of W values: row r writes W values from
// out + r * Q, the ones past its Q overwritten by row r + 1 (or falling in the buffer's slack
// past the block); the per-slot operand holds at least W values. No remainder loop per row.
template <std::int64_t W, class F>
inline void cs_outer_rows(std::int64_t nb, std::int64_t Q, const double* __restrict a, bool a_draw,
                          const double* __restrict b, double* __restrict out, F f) {
  const std::int64_t width = W > 0 ? W : Q;
  if (a_draw) {
    for (std::int64_t r = 0; r < nb; ++r) {
      const double x = a[r];
      double* o = out + r * Q;
      for (std::int64_t k = 0; k < width; ++k) o[k] = f(x, b[k]);
    }
  } else {
    for (std::int64_t r = 0; r < nb; ++r) {
      const double y = b[r];
      double* o = out + r * Q;
      for (std::int64_t k = 0; k < width; ++k) o[k] = f(a[k], y);
    }
  }
}

inline double cs_at(const CsArg& a, std::int64_t e) { return a.p ? a.p[e] : a.v; }

// Node `x` over `len` elements: out[e] = op(args[e]).
inline void cs_apply(const CsNode& x, std::int64_t len, CsArg a, CsArg b, CsArg c, double* out) {
  switch (x.op) {
    case CsOp::Neg: cs_map1(len, a, out, [](double t) { return -t; }); return;
    case CsOp::Not: cs_map1(len, a, out, [](double t) { return static_cast<double>(t == 0.0); }); return;
    case CsOp::Sqrt: cs_map1(len, a, out, [](double t) { return std::sqrt(t); }); return;
    case CsOp::Log: cs_map1(len, a, out, [](double t) { return std::log(t); }); return;
    case CsOp::Log2: cs_map1(len, a, out, [](double t) { return std::log2(t); }); return;
    case CsOp::Exp: cs_map1(len, a, out, [](double t) { return std::exp(t); }); return;
    case CsOp::Abs: cs_map1(len, a, out, [](double t) { return std::fabs(t); }); return;
    case CsOp::Where: {
      // Both branches read before the select (they are evaluated anyway): no control flow,
      // so the loops vectorise.
      const double* p = a.p;
      if (p && b.p && c.p) {
        for (std::int64_t e = 0; e < len; ++e) {
          const double y = b.p[e], z = c.p[e];
          out[e] = p[e] != 0.0 ? y : z;
        }
      } else if (p && !b.p && c.p) {  // where(cond, constant, x): the usual guard
        const double y = b.v;
        for (std::int64_t e = 0; e < len; ++e) {
          const double z = c.p[e];
          out[e] = p[e] != 0.0 ? y : z;
        }
      } else if (p && b.p && !c.p) {
        const double z = c.v;
        for (std::int64_t e = 0; e < len; ++e) {
          const double y = b.p[e];
          out[e] = p[e] != 0.0 ? y : z;
        }
      } else {
        for (std::int64_t e = 0; e < len; ++e) out[e] = cs_at(a, e) != 0.0 ? cs_at(b, e) : cs_at(c, e);
      }
      return;
    }
    default:
      cs_binary_functor(x.op, [&](auto f) {
        cs_map2(len, a, b, out, f);
        return 0;
      });
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

// out[e] = a[e] / sqrt(q[e]) (a may be a constant).
inline void cs_div_sqrt(std::int64_t len, CsArg a, const double* q, double* out) {
  if (a.p) {
    for (std::int64_t e = 0; e < len; ++e) out[e] = a.p[e] / std::sqrt(q[e]);
  } else {
    const double s = a.v;
    for (std::int64_t e = 0; e < len; ++e) out[e] = s / std::sqrt(q[e]);
  }
}

// Fused node (inner operation `inner_op`, plan entry f) over `len` elements, its operands in
// the order of cs_effective_operands.
inline void cs_apply_fused(CsOp inner_op, const CsFused& f, std::int64_t len, const CsArg* args, double* out) {
  if (f.kind == kFuseWhereCmp) {
    const CsArg p = args[0], q = args[1], b = args[2], c = args[3];
    switch (inner_op) {
      case CsOp::Lt: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsLt{}); return;
      case CsOp::Le: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsLe{}); return;
      case CsOp::Gt: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsGt{}); return;
      case CsOp::Ge: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsGe{}); return;
      case CsOp::Eq: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsEq{}); return;
      default: cs_where_cmp_loop(len, p.p, q, b, c.p, out, CsNe{}); return;
    }
  }
  if (f.kind == kFuseDivSqrt) {
    cs_div_sqrt(len, args[0], args[1].p, out);
    return;
  }
  // a - p / q
  const CsArg a = args[0], p = args[1], q = args[2];
  if (a.p) {
    for (std::int64_t e = 0; e < len; ++e) out[e] = a.p[e] - p.p[e] / q.p[e];
  } else {
    const double s = a.v;
    for (std::int64_t e = 0; e < len; ++e) out[e] = s - p.p[e] / q.p[e];
  }
}

// acc[k] += g(f[b * Q + k]) for b < nb, k < Q, with W >= Q accumulators in registers across
// the rows (a loop over acc in memory waits on each row's stores). Lanes Q..W-1 read the next
// row's values (or the slack past a block) and are dropped; each slot adds its rows in
// the same order as the plain loop.
template <std::int64_t W, class G>
inline void cs_acc_rows(std::int64_t nb, std::int64_t Q, const double* __restrict f, double* __restrict acc, G g) {
  double a[W];
  for (std::int64_t k = 0; k < W; ++k) a[k] = acc[k];
  for (std::int64_t b = 0; b < nb; ++b) {
    const double* r = f + b * Q;
    for (std::int64_t k = 0; k < W; ++k) a[k] += g(r[k]);
  }
  for (std::int64_t k = 0; k < Q; ++k) acc[k] = a[k];
}

// acc[k] += g(f[b * Q + k]); acc and f hold kMaxRowWidth - 1 values of slack (see cs_acc_rows).
template <bool kRows, class G>
inline void cs_accumulate(std::int64_t nb, std::int64_t Q, const double* __restrict f, double* __restrict acc, G g) {
  if (kRows && Q <= kMaxRowWidth) return cs_with_row_width(Q, [&](auto W) { cs_acc_rows<W()>(nb, Q, f, acc, g); });
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t k = 0; k < Q; ++k) acc[k] += g(f[b * Q + k]);
}

// The operations, compiled as they are for the baseline table and, inlined into the CsAvx2
// wrappers below, for the AVX2 target; kRows: with the fixed-width rows.
template <bool kRows>
struct CsBlockLoops {
  static void node(const CsNode& x, CsOp inner_op, const CsFused& f, std::int64_t len, const CsArg* args,
                   double* out) {
    if (f.kind != kFuseNone) return cs_apply_fused(inner_op, f, len, args, out);
    cs_apply(x, len, args[0], args[1], args[2], out);
  }

  static void outer(CsOp op, std::int64_t nb, std::int64_t Q, const double* a, bool a_draw, const double* b,
                    double* out) {
    cs_binary_functor(op, [&](auto f) {
      // Fixed-width rows for the arithmetic operations only (the sums and products of pair counts
      // of Jaccard-like indices): each width is more code to compile.
      using F = decltype(f);
      constexpr bool rows = std::is_same_v<F, CsAdd> || std::is_same_v<F, CsSub> || std::is_same_v<F, CsMul> ||
                            std::is_same_v<F, CsDiv>;
      if constexpr (rows && kRows) {
        if (Q <= kMaxRowWidth) {
          cs_with_row_width(Q, [&](auto W) { cs_outer_rows<W()>(nb, Q, a, a_draw, b, out, f); });
          return 0;
        }
      }
      cs_outer_rows<0>(nb, Q, a, a_draw, b, out, f);
      return 0;
    });
  }

  static void accumulate(std::int64_t nb, std::int64_t Q, const double* f, double* acc, const CsOp* op, double s,
                         bool scalar_left) {
    if (op == nullptr) return cs_accumulate<kRows>(nb, Q, f, acc, [](double x) { return x; });
    cs_binary_functor(*op, [&](auto g) {
      if (scalar_left) cs_accumulate<kRows>(nb, Q, f, acc, [&](double x) { return g(s, x); });
      else cs_accumulate<kRows>(nb, Q, f, acc, [&](double x) { return g(x, s); });
      return 0;
    });
  }
};

#if SALSOX_SIMD_X86
// Operation F of CsBlockLoops under the AVX2 target, everything it calls inlined.
template <auto F>
struct CsAvx2;
template <class... A, void (*F)(A...)>
struct CsAvx2<F> {
  SALSOX_TARGET_AVX2 __attribute__((flatten)) static void run(A... a) { F(a...); }
};
#endif

template <bool kRows>
const CsBlockOps& cs_block_ops_for(SimdPath path) {
  using L = CsBlockLoops<kRows>;
  static const CsBlockOps baseline{&L::node, &L::outer, &L::accumulate};
#if SALSOX_SIMD_X86
  static const CsBlockOps avx2{&CsAvx2<&L::node>::run, &CsAvx2<&L::outer>::run, &CsAvx2<&L::accumulate>::run};
  if (path != SimdPath::Baseline) return avx2;
#endif
  (void)path;
  return baseline;
}

const CsBlockOps& cs_block_ops(SimdPath path, bool row_widths) {
  return row_widths ? cs_block_ops_for<true>(path) : cs_block_ops_for<false>(path);
}

}  // namespace salsox
