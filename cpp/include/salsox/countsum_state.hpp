// Search state for count-sum losses (countsum_loss.hpp): a CountTable (count_storage.hpp) and
// the running sums (countsum_sums.hpp), per draw (cell and draw sums) and of the estimate. Moving
// item i into slot k changes a cell sum by g(n_ck + 1) - g(n_ck). A score runs the formula's
// per-item nodes here, then its per-draw ones through the dense scorer, as the search's plan
// says (countsum_plan.hpp, built once per search and shared by its threads).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "count_storage.hpp"
#include "countsum_dense.hpp"
#include "countsum_loss.hpp"
#include "countsum_plan.hpp"
#include "countsum_sums.hpp"
#include "draws.hpp"
#include "simd.hpp"

namespace salsox {

template <class Label, class Count = std::int32_t>
class CountSumState {
 public:
  // `plan` (for this loss and max_clusters) outlives the state.
  CountSumState(const DrawsView<Label>& draws, const CountSumPlan& plan)
      : d_(draws), plan_(plan), loss_(plan.loss), table_(draws, plan.slots - 1),
        sums_(plan.n_cell, plan.n_est, plan.n_draw, draws.H, draws.rows), val_(plan), dense_(plan, draws, val_) {}

  CountSumState(const CountSumState&) = delete;
  CountSumState& operator=(const CountSumState&) = delete;

  std::int64_t n() const { return d_.n; }
  std::int32_t max_clusters() const { return table_.max_clusters(); }
  std::int32_t slots() const { return table_.slots(); }
  std::int64_t size(std::int32_t k) const { return table_.size(k); }
  std::int32_t label(std::int64_t i) const { return table_.label(i); }
  const std::vector<std::int32_t>& labels() const { return table_.labels(); }

  void clear() {
    table_.clear();
    sums_.clear();
  }

  void rebuild(const std::vector<std::int32_t>& labels) {
    table_.rebuild(labels);
    recompute_sums();
  }

  void add(std::int64_t i, std::int32_t k) {
    ++sums_.draw_epoch;
    const std::int64_t s = table_.size(k);
    for (std::int32_t j = 0; j < plan_.n_est; ++j) sums_.est[j] += plan_.diff[1][j][s];
    with_sums_visitor<true>(i, [&](const auto& visit) { table_.add(i, k, visit); });
  }

  void remove(std::int64_t i) {
    ++sums_.draw_epoch;
    const std::int64_t s = table_.size(table_.label(i)) - 1;
    for (std::int32_t j = 0; j < plan_.n_est; ++j) sums_.est[j] -= plan_.diff[1][j][s];
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
    for (std::int32_t j = 0; j < plan_.n_cell; ++j) {
      const double* dc = plan_.diff[0][j].data();
      double* S = sums_.cell.data() + j * d_.H;
      for (std::int64_t h = 0; h < d_.H; ++h) {
        const Count* row = cnt + table_.row_index(h, lab[h]) * stride;
        S[h] += dc[row[k]] - dc[row[old] - 1];
      }
    }
    const std::int64_t sk = table_.size(k), so = table_.size(old);
    for (std::int32_t j = 0; j < plan_.n_est; ++j) sums_.est[j] += plan_.diff[1][j][sk] - plan_.diff[1][j][so - 1];
    table_.move(i, k);
  }

  void release_slot(std::int32_t k) {
    ++sums_.draw_epoch;
    const Count* cnt = table_.counts();
    const std::int64_t stride = table_.stride();
    for (std::int64_t h = 0; h < d_.H; ++h) {
      for (std::int64_t r = d_.base[h]; r < d_.base[h + 1]; ++r) {
        const std::int64_t x = cnt[table_.row_index(h, r - d_.base[h]) * stride + k];
        if (x == 0) continue;
        const std::int64_t s = sums_.alloc[r];
        sums_.alloc[r] = static_cast<std::int32_t>(s - x);
        for (std::int32_t j = 0; j < plan_.n_cell; ++j)
          sums_.cell[j * d_.H + h] += loss_.g[0][j][0] - loss_.g[0][j][x];
        for (std::int32_t j = 0; j < plan_.n_draw; ++j)
          sums_.draw[j * d_.H + h] += loss_.g[2][j][s - x] - loss_.g[2][j][s];
      }
    }
    const std::int64_t s = table_.size(k);
    for (std::int32_t j = 0; j < plan_.n_est; ++j) sums_.est[j] += loss_.g[1][j][0] - loss_.g[1][j][s];
    table_.release_slot(k);
  }

  bool prefers_table_pass(std::int64_t members) const { return table_.prefers_table_pass(members); }

  void snapshot() {
    table_.snapshot();
    sums_.snapshot();
  }
  void restore() {
    table_.restore();
    sums_.restore();
  }

  void score(std::int64_t i, double* out) { score_as(i, -1, out); }
  void score_move(std::int64_t i, double* out) { score_as(i, table_.label(i), out); }

  // The formula's value in every draw for the current allocation, from scratch (sums in a
  // fixed order, so no incremental rounding leaks into reported values).
  void draw_losses(double* out) const {
    std::vector<double> est(static_cast<std::size_t>(plan_.n_est) + 1, 0.0),
        cell(static_cast<std::size_t>(plan_.n_cell) + 1), draw(static_cast<std::size_t>(plan_.n_draw) + 1), scratch;
    estimate_sums(est.data());
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
    ++sums_.draw_epoch;
    for (std::int64_t h = 0; h < d_.H; ++h)
      table_sums(h, sums_.cell.data() + h, sums_.draw.data() + h, d_.H, sums_.alloc.data());
    estimate_sums(sums_.est.data());
  }

  // Draw h's cell and draw sums from the table into cell[j * step] and draw[j * step], rows in
  // order, each row's cells in slot order; each row's allocated items into alloc[r] unless alloc
  // is null. g(0) is +-0 (checked when tabulated) and a sum from +0 adding it keeps its bits, so
  // zero cells may be skipped: in the usual shape (one cell and one draw sum, kept in registers)
  // they are found sixteen at a time from 8 slots, else one at a time.
  void table_sums(std::int64_t h, double* cell, double* draw, std::int64_t step, std::int32_t* alloc) const {
    const std::int32_t q = table_.slots();
    const Count* cnt = table_.counts();
    const std::int64_t stride = table_.stride();
    auto row_at = [&](std::int64_t r) SALSOX_INLINE { return cnt + table_.row_index(h, r) * stride; };
    if (plan_.n_cell == 1 && plan_.n_draw == 1) {
      const double* gc = loss_.g[0][0].data();
      const double* gd = loss_.g[2][0].data();
      double c = 0.0, e = 0.0;
      auto add_cell = [&](Count x) SALSOX_INLINE { c += gc[x]; };
      auto add_row = [&](std::int64_t r, std::int64_t s) SALSOX_INLINE {
        if (alloc) alloc[d_.base[h] + r] = static_cast<std::int32_t>(s);
        e += gd[s];
      };
      if (q >= 8 && q <= 64) sum_draw_rows<Cells::NonzeroMask, Label, Count>(d_.k[h], q, row_at, add_cell, add_row);
      else sum_draw_rows<Cells::All, Label, Count>(d_.k[h], q, row_at, add_cell, add_row);
      cell[0] = c;
      draw[0] = e;
      return;
    }
    for (std::int32_t j = 0; j < plan_.n_cell; ++j) cell[j * step] = 0.0;
    for (std::int32_t j = 0; j < plan_.n_draw; ++j) draw[j * step] = 0.0;
    sum_draw_rows<Cells::Nonzero, Label, Count>(
        d_.k[h], q, row_at,
        [&](Count x) SALSOX_INLINE {
          for (std::int32_t j = 0; j < plan_.n_cell; ++j) cell[j * step] += loss_.g[0][j][x];
        },
        [&](std::int64_t r, std::int64_t s) SALSOX_INLINE {
          if (alloc) alloc[d_.base[h] + r] = static_cast<std::int32_t>(s);
          for (std::int32_t j = 0; j < plan_.n_draw; ++j) draw[j * step] += loss_.g[2][j][s];
        });
  }

  // The estimate sums of the current allocation into est[j].
  void estimate_sums(double* est) const {
    for (std::int32_t j = 0; j < plan_.n_est; ++j) {
      est[j] = 0.0;
      for (std::int32_t k = 0; k < table_.slots(); ++k) est[j] += loss_.g[1][j][table_.size(k)];
    }
  }

  // Calls f(visit) with the visitor that the table's add (kAdd) or remove of item i calls per
  // draw with the item's cell count x before the change, so that the sums follow in the table's
  // own pass. Each draw's sums are its own: the pass may be shared between threads.
  template <bool kAdd, class F>
  void with_sums_visitor(std::int64_t i, const F& f) {
    const Label* lab = d_.item(i);
    const std::int64_t* base = d_.base;
    std::int32_t* alloc = sums_.alloc.data();
    double* cell = sums_.cell.data();
    double* draw = sums_.draw.data();
    if (plan_.n_cell == 1 && plan_.n_draw == 1) {  // the usual shape, with the tables' pointers in registers
      const double* dc = plan_.diff[0][0].data();
      const double* dd = plan_.diff[2][0].data();
      f([=](std::int64_t h, std::int64_t x) {
        const std::int64_t c = kAdd ? x : x - 1;
        const std::int64_t r = base[h] + lab[h];
        const std::int64_t s = kAdd ? alloc[r]++ : --alloc[r];
        cell[h] += kAdd ? dc[c] : -dc[c];
        draw[h] += kAdd ? dd[s] : -dd[s];
      });
      return;
    }
    const std::vector<double>* dcs = plan_.diff[0].data();
    const std::vector<double>* dds = plan_.diff[2].data();
    const std::int32_t nc = plan_.n_cell, nd = plan_.n_draw;
    const std::int64_t H = d_.H;
    f([=](std::int64_t h, std::int64_t x) {
      const std::int64_t c = kAdd ? x : x - 1;
      const std::int64_t r = base[h] + lab[h];
      const std::int64_t s = kAdd ? alloc[r]++ : --alloc[r];
      for (std::int32_t j = 0; j < nc; ++j) cell[j * H + h] += kAdd ? dcs[j][c] : -dcs[j][c];
      for (std::int32_t j = 0; j < nd; ++j) draw[j * H + h] += kAdd ? dds[j][s] : -dds[j][s];
    });
  }

  // out[k] (k = 0..q, q a new cluster) = sum over draws of the formula with item i in slot k,
  // item i being virtually removed from slot `old` first (-1: unallocated).
  void score_as(std::int64_t i, std::int32_t old, double* out) {
    const std::int32_t q = table_.slots();
    const std::int64_t Q = q + 1;
    const double m = static_cast<double>(old >= 0 ? table_.allocated() : table_.allocated() + 1);
    // Scalars and per-slot values, once per item.
    for (std::int32_t v : plan_.scalar_prog) {
      const CsNode& x = loss_.nodes[v];
      if (x.op == CsOp::Const) val_.scal[v] = x.value;
      else if (x.op == CsOp::N) val_.scal[v] = m;
      else plan_.run_node(v, 1, [&](std::int32_t u) { return val_.arg(loss_, u, kScalar); }, &val_.scal[v]);
    }
    for (std::int32_t v : plan_.slot_prog) {
      const CsNode& x = loss_.nodes[v];
      double* o = val_.slotv[v].data();
      if (x.op == CsOp::Est) {
        const double* de = plan_.diff[1][x.a].data();
        const double base = old >= 0 ? sums_.est[x.a] - de[table_.size(old) - 1] : sums_.est[x.a];
        for (std::int32_t k = 0; k < q; ++k) o[k] = base + de[table_.size(k) - (k == old ? 1 : 0)];
        o[q] = base + de[0];
      } else {
        plan_.run_node(v, Q, [&](std::int32_t u) { return val_.arg(loss_, u, kSlot); }, o);
      }
    }
    dense_.score(table_, sums_, i, old, out);
  }

  DrawsView<Label> d_;
  const CountSumPlan& plan_;
  const CountSumLoss& loss_;
  CountTable<Label, Count> table_;
  CsRunningSums sums_;
  CsValues val_;  // the per-item values of a score, read by the scorers
  CsDenseScorer<Label, Count> dense_;
};

}  // namespace salsox
