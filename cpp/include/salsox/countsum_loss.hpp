// Count-sum losses: L = f(n, S_1, S_2, ...), each S_j a sum of a tabulated g_j(count) over the
// contingency table's cells, the estimate's clusters or the draw's clusters (Jaccard,
// Fowlkes-Mallows, omARI, NVI, NMI...). The formula arrives compiled by the Python package as
// nodes in topological order; the search runs each node as one loop over a block of draws x
// candidate slots, so that the interpretation cost is amortised.
#pragma once
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace salsox {

enum class SumWhere : std::int32_t { Cell = 0, Estimate = 1, Draw = 2 };

enum class CsOp : std::int32_t {
  // Leaves: a constant, the number of items in the table, and sum number `a` of its kind.
  Const, N, Cell, Est, Draw,
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
inline bool cs_is_leaf(CsOp op) { return op <= CsOp::Draw; }

// The operations' names, in CsOp's order (the Python compiler's and the JIT's spelling).
inline constexpr const char* kCsOpNames[] = {"const", "n", "cell", "estimate", "draw", "neg", "not", "sqrt",
                                             "log", "log2", "exp", "abs", "add", "sub", "mul", "div", "pow",
                                             "lt", "le", "gt", "ge", "eq", "ne", "min", "max", "and", "or",
                                             "where"};
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
  // The address of the formula's dense part compiled to native code (0: none, see
  // countsum_kernel.hpp).
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
    for (std::size_t k = 0; k <= static_cast<std::size_t>(result); ++k) {
      const CsNode& x = nodes[k];
      switch (x.op) {
        case CsOp::Const: v[k] = x.value; break;
        case CsOp::N: v[k] = m; break;
        case CsOp::Cell: v[k] = cell[x.a]; break;
        case CsOp::Est: v[k] = est[x.a]; break;
        case CsOp::Draw: v[k] = draw[x.a]; break;
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

}  // namespace salsox
