// A count-sum formula's dense part as native code (salsox/engine/countsum_jit.py, llvmlite):
// the Full nodes run as one loop over a block, every intermediate value in registers. It
// performs the node loops' operations and sums each slot's draws in the same order, so the
// scores are the same bits.
#pragma once
#include <cstdint>
#include <vector>

#include "countsum_loss.hpp"

namespace salsox {

// for each group of 4 slots k, then each draw b < nb: acc[k] += the result at (b, k), reading a
// Cell leaf v at full[v][b * Q + k], a per-draw node at draw[v][b], a per-slot node at
// slot[v][k] and a scalar at scal[v]. The last group reads and writes up to 3 slots past Q.
using CsDenseKernel = void (*)(std::int64_t nb, std::int64_t Q, const double* const* full, const double* const* draw,
                               const double* const* slot, const double* scal, double* acc);

// The dense kernel's arguments in a count-sum state: per node, the array the kernel reads.
struct CsKernelCall {
  CsDenseKernel fn = nullptr;
  std::vector<std::vector<double>> cells;  // the Cell leaves' values over a block (gathered)
  std::vector<const double*> full, draw, slot;

  // Buffers for kernel fn (none when null) of `loss`: `elems` values per block, plus `slack`
  // past them; drawv and slotv: the scorer's per-node buffers, read in place.
  void prepare(const CountSumLoss& loss, CsDenseKernel kernel, std::int64_t elems, std::int64_t slack,
               const std::vector<std::vector<double>>& drawv, const std::vector<std::vector<double>>& slotv) {
    fn = kernel;
    if (fn == nullptr) return;
    const auto V = loss.nodes.size();
    cells.assign(V, {});
    full.assign(V, nullptr);
    draw.assign(V, nullptr);
    slot.assign(V, nullptr);
    for (std::size_t v = 0; v < V; ++v) {
      if (loss.nodes[v].op == CsOp::Cell) {
        cells[v].assign(static_cast<std::size_t>(elems + slack), 0.0);
        full[v] = cells[v].data();
      }
      if (!drawv[v].empty()) draw[v] = drawv[v].data();
      if (!slotv[v].empty()) slot[v] = slotv[v].data();
    }
  }

  void operator()(std::int64_t nb, std::int64_t Q, const double* scal, double* acc) const {
    fn(nb, Q, full.data(), draw.data(), slot.data(), scal, acc);
  }
};

}  // namespace salsox
