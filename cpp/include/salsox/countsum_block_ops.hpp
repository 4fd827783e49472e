// The count-sum formula's node operations over blocks of values. They depend on neither the
// label nor the count width of a table, so they are compiled once per instruction set
// (countsum_block_loops.hpp) and a state reaches them through this table.
#pragma once
#include <cstdint>
#include <type_traits>

#include "countsum_fuse.hpp"
#include "countsum_loss.hpp"
#include "simd.hpp"

namespace salsox {

// f(W) with W the narrowest of 4, 8, 16, 32 that holds Q values, as a compile-time constant
// (Q <= kMaxRowWidth): a row loop of fixed width unrolls into whole vectors. Four widths only:
// every width is compiled for every operation and instruction set.
constexpr std::int64_t kMaxRowWidth = 32;

template <class F>
inline void cs_with_row_width(std::int64_t Q, F f) {
  if (Q <= 4) return f(std::integral_constant<std::int64_t, 4>{});
  if (Q <= 8) return f(std::integral_constant<std::int64_t, 8>{});
  if (Q <= 16) return f(std::integral_constant<std::int64_t, 16>{});
  f(std::integral_constant<std::int64_t, 32>{});
}

struct CsBlockOps {
  // Node x over `len` elements: fused with the node of operation inner_op when f says so, its
  // operands in the order of cs_effective_operands (countsum_fuse.hpp).
  void (*node)(const CsNode& x, CsOp inner_op, const CsFused& f, std::int64_t len, const CsArg* args, double* out);
  // out[r * Q + k] = op(a[r], b[k]) for r < nb, k < Q when a_draw, else op(a[k], b[r]); with
  // Q <= kMaxRowWidth the per-slot operand and out hold kMaxRowWidth - 1 values of slack.
  void (*outer)(CsOp op, std::int64_t nb, std::int64_t Q, const double* a, bool a_draw, const double* b,
                double* out);
  // acc[k] += f[b * Q + k] for b < nb, k < Q (op null), else acc[k] += s op f[b * Q + k]
  // (scalar_left) or f[b * Q + k] op s; acc and f hold kMaxRowWidth - 1 values of slack. Each
  // slot adds its rows in order.
  void (*accumulate)(std::int64_t nb, std::int64_t Q, const double* f, double* acc, const CsOp* op, double s,
                     bool scalar_left);
};

// The operations compiled for `path` (baseline or AVX2): every
// operation is elementwise IEEE arithmetic, so every path gives the same bits.
const CsBlockOps& cs_block_ops(SimdPath path, bool row_widths);

}  // namespace salsox
