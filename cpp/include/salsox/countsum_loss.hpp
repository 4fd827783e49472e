// Count-sum losses: a loss given as a formula in a few per-draw sums of tabulated functions of
// counts, L = f(n, S_1, S_2, ...), each S_j a sum over the contingency table's cells, over the
// estimate's clusters or over the draw's clusters of g_j(count) (Jaccard, Fowlkes-Mallows,
// omARI, NVI, NMI... are all of this form). The formula arrives compiled (by the Python package,
// which parses it without eval) as a list of nodes in topological order, and is evaluated here
// natively: once per draw for a loss value, and over whole blocks of draws x candidate slots
// during the search, each node being one tight loop over the block so that the interpretation
// cost is amortised.
#pragma once
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace salsox {

enum class SumWhere : std::int32_t { Cell = 0, Estimate = 1, Draw = 2 };

enum class CsOp : std::int32_t {
  // Leaves: a constant, the number of items in the table, and sum number `a` of its kind;
  // CellZero is cell sum `a` of a draw in an estimate cluster the item does not meet (the
  // sparse scores, see CountSumLoss::terms).
  Const, N, Cell, Est, Draw, CellZero,
  // Unary.
  Neg, Not, Sqrt, Log, Log2, Exp, Abs,
  // Binary (comparisons and logic give 1 or 0).
  Add, Sub, Mul, Div, Pow, Lt, Le, Gt, Ge, Eq, Ne, Min, Max, And, Or,
  // where(cond, a, b): a where cond != 0, else b (both evaluated).
  Where
};

// What a node's value varies with during a score: nothing (Scalar), the candidate slot (Slot),
// the draw (Draw) or both (Full). The bits combine by or.
enum CsShape : std::int32_t { kScalar = 0, kSlot = 1, kDraw = 2, kFull = 3 };

struct CsNode {
  CsOp op = CsOp::Const;
  std::int32_t a = -1, b = -1, c = -1;  // operand nodes (leaves: a is the sum's index)
  double value = 0.0;                   // Const
  std::int32_t shape = kScalar;
};

// The elementary operations, shared by the per-draw and the block evaluation so that both give
// bit-identical values. Each is one IEEE operation (or one libm call): nothing to contract.
inline double cs_unary(CsOp op, double x) {
  switch (op) {
    case CsOp::Neg: return -x;
    case CsOp::Not: return static_cast<double>(x == 0.0);
    case CsOp::Sqrt: return std::sqrt(x);
    case CsOp::Log: return std::log(x);
    case CsOp::Log2: return std::log2(x);
    case CsOp::Exp: return std::exp(x);
    case CsOp::Abs: return std::fabs(x);
    default: return 0.0;
  }
}

struct CsAdd { double operator()(double x, double y) const { return x + y; } };
struct CsSub { double operator()(double x, double y) const { return x - y; } };
struct CsMul { double operator()(double x, double y) const { return x * y; } };
struct CsDiv { double operator()(double x, double y) const { return x / y; } };
struct CsPow { double operator()(double x, double y) const { return std::pow(x, y); } };
struct CsLt { double operator()(double x, double y) const { return static_cast<double>(x < y); } };
struct CsLe { double operator()(double x, double y) const { return static_cast<double>(x <= y); } };
struct CsGt { double operator()(double x, double y) const { return static_cast<double>(x > y); } };
struct CsGe { double operator()(double x, double y) const { return static_cast<double>(x >= y); } };
struct CsEq { double operator()(double x, double y) const { return static_cast<double>(x == y); } };
struct CsNe { double operator()(double x, double y) const { return static_cast<double>(x != y); } };
// Python's min and max: the first argument unless the second is strictly smaller (larger).
struct CsMin { double operator()(double x, double y) const { return y < x ? y : x; } };
struct CsMax { double operator()(double x, double y) const { return x < y ? y : x; } };
struct CsAnd { double operator()(double x, double y) const { return static_cast<double>((x != 0.0) & (y != 0.0)); } };
struct CsOr { double operator()(double x, double y) const { return static_cast<double>((x != 0.0) | (y != 0.0)); } };

template <class F>
decltype(auto) cs_binary_functor(CsOp op, F&& f) {
  switch (op) {
    case CsOp::Add: return f(CsAdd{});
    case CsOp::Sub: return f(CsSub{});
    case CsOp::Mul: return f(CsMul{});
    case CsOp::Div: return f(CsDiv{});
    case CsOp::Pow: return f(CsPow{});
    case CsOp::Lt: return f(CsLt{});
    case CsOp::Le: return f(CsLe{});
    case CsOp::Gt: return f(CsGt{});
    case CsOp::Ge: return f(CsGe{});
    case CsOp::Eq: return f(CsEq{});
    case CsOp::Ne: return f(CsNe{});
    case CsOp::Min: return f(CsMin{});
    case CsOp::Max: return f(CsMax{});
    case CsOp::And: return f(CsAnd{});
    default: return f(CsOr{});
  }
}

inline bool cs_is_unary(CsOp op) { return op >= CsOp::Neg && op <= CsOp::Abs; }
inline bool cs_is_binary(CsOp op) { return op >= CsOp::Add && op <= CsOp::Or; }
inline bool cs_is_leaf(CsOp op) { return op <= CsOp::CellZero; }

// The operations' names, in CsOp's order (the Python compiler's and the JIT's spelling).
inline constexpr const char* kCsOpNames[] = {"const", "n", "cell", "estimate", "draw", "cellzero", "neg", "not",
                                             "sqrt", "log", "log2", "exp", "abs", "add", "sub", "mul", "div",
                                             "pow", "lt", "le", "gt", "ge", "eq", "ne", "min", "max", "and",
                                             "or", "where"};
inline const char* cs_op_name(CsOp op) { return kCsOpNames[static_cast<int>(op)]; }

inline CsOp cs_parse_op(const std::string& s) {
  for (std::int32_t k = 0; k < static_cast<std::int32_t>(sizeof(kCsOpNames) / sizeof(kCsOpNames[0])); ++k)
    if (s == kCsOpNames[k]) return static_cast<CsOp>(k);
  throw std::invalid_argument("unknown count-sum operation '" + s + "'");
}

struct CountSumLoss {
  std::string label;  // how errors name the loss (its plugin)
  // g[w][j]: sum j of kind w (SumWhere), tabulated for counts 0..n, plus one spare entry.
  std::vector<std::vector<double>> g[3];
  std::vector<CsNode> nodes;
  std::int32_t result = -1;
  std::int64_t n = 0;
  // Optional separable form of the formula in the cells an item does not meet (the zero cells,
  // most of them): f = sum over terms of coefficient(draw) x atom(slot), atom -1 meaning 1,
  // coefficients being Draw or Scalar nodes (over CellZero leaves) and atoms Slot or Scalar
  // nodes. With it, a score sums the coefficients over the draws once and evaluates the full
  // formula only in the nonzero cells (as the built-in NVI does).
  std::vector<std::pair<std::int32_t, std::int32_t>> terms;
  // Optional: the address of the formula's dense part compiled to native code (0: none), see
  // countsum_kernel.hpp.
  std::uintptr_t dense_kernel = 0;

  std::int32_t sums(SumWhere w) const { return static_cast<std::int32_t>(g[static_cast<int>(w)].size()); }

  // Checks the nodes (operands before their node, sum indices in range) and works out shapes.
  void finalise() {
    const auto count = static_cast<std::int32_t>(nodes.size());
    if (count == 0 || result < 0 || result >= count) throw std::invalid_argument("count-sum formula has no result");
    for (std::int32_t v = 0; v < count; ++v) {
      CsNode& x = nodes[v];
      auto operand = [&](std::int32_t u) {
        if (u < 0 || u >= v) throw std::invalid_argument("count-sum formula nodes are not in topological order");
        return nodes[u].shape;
      };
      switch (x.op) {
        case CsOp::Const:
        case CsOp::N: x.shape = kScalar; break;
        case CsOp::CellZero:
          if (x.a < 0 || x.a >= sums(SumWhere::Cell)) throw std::invalid_argument("count-sum formula refers to a missing sum");
          x.shape = kDraw;
          break;
        case CsOp::Cell:
        case CsOp::Est:
        case CsOp::Draw: {
          const auto w = x.op == CsOp::Cell ? SumWhere::Cell : x.op == CsOp::Est ? SumWhere::Estimate : SumWhere::Draw;
          if (x.a < 0 || x.a >= sums(w)) throw std::invalid_argument("count-sum formula refers to a missing sum");
          x.shape = x.op == CsOp::Cell ? kFull : x.op == CsOp::Est ? kSlot : kDraw;
          break;
        }
        case CsOp::Where: x.shape = operand(x.a) | operand(x.b) | operand(x.c); break;
        default:
          if (cs_is_unary(x.op)) x.shape = operand(x.a);
          else x.shape = operand(x.a) | operand(x.b);
      }
    }
    for (const auto& [coef, atom] : terms) {
      if (coef < 0 || coef >= count || (nodes[coef].shape & kSlot) != 0)
        throw std::invalid_argument("count-sum term coefficients must not depend on the estimate");
      if (atom >= count || (atom >= 0 && (nodes[atom].shape & kDraw) != 0))
        throw std::invalid_argument("count-sum term atoms must depend on the estimate only");
    }
    for (int w = 0; w < 3; ++w)
      for (const auto& t : g[w])
        if (static_cast<std::int64_t>(t.size()) != n + 2) throw std::invalid_argument("count-sum tables must have n + 1 entries");
  }

  // The formula for scalar inputs: m items, and the sums of each kind. `scratch` holds one value
  // per node.
  double evaluate(double m, const double* cell, const double* est, const double* draw,
                  std::vector<double>& scratch) const {
    scratch.resize(nodes.size());
    double* v = scratch.data();
    // Nodes beyond the result belong to the separable form only.
    for (std::size_t k = 0; k <= static_cast<std::size_t>(result); ++k) {
      const CsNode& x = nodes[k];
      switch (x.op) {
        case CsOp::Const: v[k] = x.value; break;
        case CsOp::N: v[k] = m; break;
        case CsOp::Cell: v[k] = cell[x.a]; break;
        case CsOp::Est: v[k] = est[x.a]; break;
        case CsOp::Draw: v[k] = draw[x.a]; break;
        case CsOp::CellZero: v[k] = 0.0; break;  // not part of the formula itself
        case CsOp::Where: v[k] = v[x.a] != 0.0 ? v[x.b] : v[x.c]; break;
        default:
          if (cs_is_unary(x.op)) v[k] = cs_unary(x.op, v[x.a]);
          else {
            const double p = v[x.a], q = v[x.b];
            v[k] = cs_binary_functor(x.op, [&](auto f) { return f(p, q); });
          }
      }
    }
    return v[result];
  }
};

// An operand of a block operation: an array of the operation's length, or a constant.
struct CsArg {
  const double* p = nullptr;
  double v = 0.0;
};

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
// check per draw).
template <class F>
inline void cs_outer_loop(std::int64_t nb, std::int64_t Q, const double* __restrict a, bool a_draw,
                          const double* __restrict b, double* __restrict out, F f) {
  if (a_draw) {
    for (std::int64_t r = 0; r < nb; ++r) {
      const double x = a[r];
      double* o = out + r * Q;
      for (std::int64_t k = 0; k < Q; ++k) o[k] = f(x, b[k]);
    }
  } else {
    for (std::int64_t r = 0; r < nb; ++r) {
      const double y = b[r];
      double* o = out + r * Q;
      for (std::int64_t k = 0; k < Q; ++k) o[k] = f(a[k], y);
    }
  }
}

// f(W) with W the narrowest of 4, 8, 16, 32 that holds Q values, as a compile-time constant
// (Q <= kMaxRowWidth): a row loop of fixed width unrolls into whole vectors. Four widths only:
// every width is compiled for every operation, loss state and instruction set.
constexpr std::int64_t kMaxRowWidth = 32;

template <class F>
inline void cs_with_row_width(std::int64_t Q, F f) {
  if (Q <= 4) return f(std::integral_constant<std::int64_t, 4>{});
  if (Q <= 8) return f(std::integral_constant<std::int64_t, 8>{});
  if (Q <= 16) return f(std::integral_constant<std::int64_t, 16>{});
  f(std::integral_constant<std::int64_t, 32>{});
}

// cs_outer_loop with rows of W >= Q values: row r writes W values from out + r * Q, the ones
// past its Q overwritten by row r + 1 (or falling in the buffer's slack past the block); the
// per-slot operand holds at least W values. No remainder loop per row.
template <std::int64_t W, class F>
inline void cs_outer_rows(std::int64_t nb, std::int64_t Q, const double* __restrict a, bool a_draw,
                          const double* __restrict b, double* out, F f) {
  if (a_draw) {
    for (std::int64_t r = 0; r < nb; ++r) {
      const double x = a[r];
      double* o = out + r * Q;
      for (std::int64_t k = 0; k < W; ++k) o[k] = f(x, b[k]);
    }
  } else {
    for (std::int64_t r = 0; r < nb; ++r) {
      const double y = b[r];
      double* o = out + r * Q;
      for (std::int64_t k = 0; k < W; ++k) o[k] = f(a[k], y);
    }
  }
}

// Binary node `x` as an outer combination: `a` is the per-draw operand when a_draw, else the
// per-slot one (and `b` the other). With Q <= kMaxRowWidth the per-slot operand and `out` need
// kMaxRowWidth - 1 values of slack past Q and nb * Q.
inline void cs_outer(const CsNode& x, std::int64_t nb, std::int64_t Q, const double* a, bool a_draw, const double* b,
                     double* out) {
  cs_binary_functor(x.op, [&](auto f) {
    // Fixed-width rows for the arithmetic operations only (the sums and products of pair counts
    // of Jaccard-like indices): each width is more code to compile for every loss state.
    using F = decltype(f);
    constexpr bool rows = std::is_same_v<F, CsAdd> || std::is_same_v<F, CsSub> || std::is_same_v<F, CsMul> ||
                          std::is_same_v<F, CsDiv>;
    if constexpr (rows) {
      if (Q <= kMaxRowWidth) {
        cs_with_row_width(Q, [&](auto W) { cs_outer_rows<W()>(nb, Q, a, a_draw, b, out, f); });
        return 0;
      }
    }
    cs_outer_loop(nb, Q, a, a_draw, b, out, f);
    return 0;
  });
}

// sqrt over a block. std::sqrt may set errno, which keeps the compiler from vectorising its
// loop; the SSE2 square root is the same correctly rounded IEEE operation, two at a time.
inline void cs_sqrt(std::int64_t len, CsArg a, double* out) {
  if (!a.p) {
    cs_map1(len, a, out, [](double t) { return std::sqrt(t); });
    return;
  }
  std::int64_t e = 0;
#if defined(__SSE2__)
  for (; e + 2 <= len; e += 2) _mm_storeu_pd(out + e, _mm_sqrt_pd(_mm_loadu_pd(a.p + e)));
#endif
  for (; e < len; ++e) out[e] = std::sqrt(a.p[e]);
}

inline double cs_at(const CsArg& a, std::int64_t e) { return a.p ? a.p[e] : a.v; }

// Node `x` over `len` elements: out[e] = op(args[e]).
inline void cs_apply(const CsNode& x, std::int64_t len, CsArg a, CsArg b, CsArg c, double* out) {
  switch (x.op) {
    case CsOp::Neg: cs_map1(len, a, out, [](double t) { return -t; }); return;
    case CsOp::Not: cs_map1(len, a, out, [](double t) { return static_cast<double>(t == 0.0); }); return;
    case CsOp::Sqrt: cs_sqrt(len, a, out); return;
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

}  // namespace salsox
