// Expected loss of given estimates under a loss written outside the engine (a Python callback
// on contingency tables), without a search state: each batch's tables are counted straight from
// the draws, so no count tables of every draw are held (H x draw clusters x estimate clusters),
// and a call stops between batches on Ctrl-C.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "callback_state.hpp"
#include "draws.hpp"
#include "threads.hpp"

namespace salsox {

// The mean over draws of the loss of estimate `est` (n canonical labels 0..q-1): the draws in
// the layout's order, batched as CallbackState::expected_loss batches them (groups for its call
// cost, at most max_cells cells a batch), each table padded alike and the losses summed in the
// same order, so the same bits. NaN once `interrupt` stops (polled before each batch).
template <class Label>
double callback_expected_loss(const DrawsView<Label>& d, const TableLayout& layout, const TableLossFn& fn,
                              const std::int32_t* est, std::int64_t max_cells, Interrupt* interrupt) {
  std::int32_t q = 0;
  for (std::int64_t i = 0; i < d.n; ++i) q = std::max(q, est[i] + 1);
  const std::int32_t C = std::max(q, 1);
  max_cells = std::max<std::int64_t>(max_cells, 1);
  TableBuffer buffer;
  std::vector<double> losses;
  std::vector<std::int64_t> draws;
  double total = 0.0;
  bool stopped = false;
  layout.for_each_batch(C, max_cells, [&](std::int64_t lo, std::int64_t hi, std::int32_t R) {
    stopped = stopped || (interrupt && interrupt->poll());
    if (stopped) return;
    const std::int64_t B = hi - lo;
    const std::int64_t cells = static_cast<std::int64_t>(R) * C;
    std::int64_t* t = reserve_tables(buffer, B * cells);
    std::fill(t, t + B * cells, std::int64_t{0});
    draws.assign(layout.order().begin() + lo, layout.order().begin() + hi);
    for (std::int64_t i = 0; i < d.n; ++i) {
      const Label* l = d.item(i);
      std::int64_t* col = t + est[i];
      for (std::int64_t b = 0; b < B; ++b) ++col[b * cells + static_cast<std::int64_t>(l[draws[b]]) * C];
    }
    losses.resize(static_cast<std::size_t>(B));
    fn(buffer, B, R, C, losses.data());
    for (std::int64_t b = 0; b < B; ++b) total += losses[static_cast<std::size_t>(b)];
  });
  if (stopped) return std::numeric_limits<double>::quiet_NaN();
  return total / static_cast<double>(d.H);
}

}  // namespace salsox
