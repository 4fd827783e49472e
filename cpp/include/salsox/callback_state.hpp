// Search state for losses written outside the engine (Python plugins): any function of the
// contingency table of the estimate and one draw. Scoring an item builds, for every draw and
// candidate slot, the table the move would produce and hands them in batches to a callback.
#pragma once
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

#include "count_storage.hpp"
#include "draws.hpp"

namespace salsox {

// Tables handed to a callback. Shared so that a callee may keep a batch alive after the call;
// the state then writes the next batch into a fresh buffer.
using TableBuffer = std::shared_ptr<std::vector<std::int64_t>>;

// Room for `cells` cells in `buffer`: a fresh buffer when the callee kept the last one alive.
inline std::int64_t* reserve_tables(TableBuffer& buffer, std::int64_t cells) {
  if (!buffer || buffer.use_count() > 1) buffer = std::make_shared<std::vector<std::int64_t>>();
  if (static_cast<std::int64_t>(buffer->size()) < cells) buffer->resize(static_cast<std::size_t>(cells));
  return buffer->data();
}

// Losses of B contingency tables, each R x C (draw clusters x estimate clusters, row-major, int64),
// held in `tables`; writes out[0..B). Zero rows and columns are padding. May throw.
using TableLossFn = std::function<void(const TableBuffer& tables, std::int64_t B, std::int32_t R,
                                       std::int32_t C, double* out)>;

// How draws are batched for a callback: sorted by cluster count and cut into groups, each
// draw's tables padded to the largest draw of its group. Finer groups pad less but cost more
// calls, so groupings into 1..kMaxGroups groups are prepared and each batch picks the cheapest
// for its table size.
class TableLayout {
 public:
  static constexpr std::size_t kMaxGroups = 16;
  // Cost of one callback call, in table cells (a Python call with a few numpy operations costs
  // as much as some 10^4 cells of numpy work).
  static constexpr double kCallCells = 16384.0;

  struct Group {
    std::int64_t begin, end;  // range of order()
    std::int32_t rows;        // rows per table
  };

  TableLayout(const std::int32_t* clusters, std::int64_t H) {
    order_.resize(static_cast<std::size_t>(H));
    std::iota(order_.begin(), order_.end(), std::int64_t{0});
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::int64_t x, std::int64_t y) { return clusters[x] < clusters[y]; });
    // Distinct cluster counts (ascending) and where each run of them ends in order_.
    std::vector<std::int32_t> value;
    std::vector<std::int64_t> end;
    for (std::int64_t j = 0; j < H; ++j) {
      const std::int32_t k = clusters[order_[j]];
      if (value.empty() || value.back() != k) {
        value.push_back(k);
        end.push_back(j + 1);
      } else {
        end.back() = j + 1;
      }
    }
    plan(value, end);
    // Every grouping covers all H draws, in order.
    for ([[maybe_unused]] const auto& p : plans_)
      assert(!p.empty() && p.front().begin == 0 && p.back().end == H);
  }

  const std::vector<std::int64_t>& order() const { return order_; }

  // The grouping minimising padded rows + call_rows per call, where call_rows is the cost of
  // one callback call expressed in table rows.
  const std::vector<Group>& groups(double call_rows) const {
    std::size_t best = 0;
    double best_cost = std::numeric_limits<double>::infinity();
    for (std::size_t g = 0; g < plans_.size(); ++g) {
      const double c = static_cast<double>(padded_rows_[g]) + call_rows * static_cast<double>(plans_[g].size());
      if (c < best_cost) {
        best_cost = c;
        best = g;
      }
    }
    return plans_[best];
  }

  // Calls f(lo, hi, R) over ranges of order() when every draw's table is R x C: group by group
  // (for one table a draw), each range of at most max_cells cells (at least one draw).
  template <class F>
  void for_each_batch(std::int32_t C, std::int64_t max_cells, F&& f) const {
    for (const auto& g : groups(kCallCells / static_cast<double>(C))) {
      const std::int64_t step = std::max<std::int64_t>(1, max_cells / (static_cast<std::int64_t>(g.rows) * C));
      for (std::int64_t lo = g.begin; lo < g.end; lo += step) f(lo, std::min(g.end, lo + step), g.rows);
    }
  }

 private:
  // plans_[g]: the grouping into g + 1 groups with the fewest padded rows (sum H_g * rows_g).
  void plan(const std::vector<std::int32_t>& value, const std::vector<std::int64_t>& end) {
    const std::size_t K = value.size();
    const std::size_t G = std::min(kMaxGroups, K);
    auto add_plan = [&](const std::vector<std::size_t>& cuts) {
      std::vector<Group> groups;
      std::int64_t begin = 0, padded = 0;
      for (std::size_t c : cuts) {
        groups.push_back({begin, end[c], value[c]});
        padded += (end[c] - begin) * value[c];
        begin = end[c];
      }
      plans_.push_back(std::move(groups));
      padded_rows_.push_back(padded);
    };
    if (K > 2048) {  // many distinct counts: groups of equal numbers of draws
      const std::int64_t H = end.back();
      for (std::size_t g = 1; g <= G; ++g) {
        std::vector<std::size_t> cuts;
        std::size_t c = 0;
        for (std::size_t j = 1; j <= g; ++j) {
          const std::int64_t target = H * static_cast<std::int64_t>(j) / static_cast<std::int64_t>(g);
          while (end[c] < target) ++c;
          if (cuts.empty() || cuts.back() != c) cuts.push_back(c);
        }
        add_plan(cuts);
      }
      return;
    }
    auto count = [&](std::size_t from, std::size_t to) {  // draws with value index in [from, to]
      return static_cast<double>(end[to] - (from ? end[from - 1] : 0));
    };
    // cost[g][t]: fewest padded rows covering values 0..t with g + 1 groups; start[g][t]: where
    // the last of them starts.
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<std::vector<double>> cost(G, std::vector<double>(K, inf));
    std::vector<std::vector<std::size_t>> start(G, std::vector<std::size_t>(K, 0));
    for (std::size_t t = 0; t < K; ++t) cost[0][t] = count(0, t) * value[t];
    for (std::size_t g = 1; g < G; ++g)
      for (std::size_t t = g; t < K; ++t)
        for (std::size_t s = g; s <= t; ++s) {
          const double c = cost[g - 1][s - 1] + count(s, t) * value[t];
          if (c < cost[g][t]) {
            cost[g][t] = c;
            start[g][t] = s;
          }
        }
    for (std::size_t g = 0; g < G; ++g) {
      std::vector<std::size_t> cuts(g + 1);
      std::size_t t = K - 1;
      for (std::size_t level = g + 1; level-- > 0;) {
        cuts[level] = t;
        if (level > 0) t = start[level][t] - 1;
      }
      add_plan(cuts);
    }
  }

  std::vector<std::int64_t> order_;
  std::vector<std::vector<Group>> plans_;
  std::vector<std::int64_t> padded_rows_;
};

template <class Label>
class CallbackState {
 public:
  using Count = std::int32_t;

  // `max_cells` caps the int64 cells of one batch (memory per thread); larger batches are split.
  CallbackState(const DrawsView<Label>& draws, const TableLayout& layout, TableLossFn loss,
                std::int32_t max_clusters, std::int64_t max_cells)
      : d_(draws), layout_(layout), fn_(std::move(loss)), max_cells_(std::max<std::int64_t>(max_cells, 1)),
        table_(draws, max_clusters) {}

  CallbackState(const CallbackState&) = delete;
  CallbackState& operator=(const CallbackState&) = delete;

  std::int64_t n() const { return table_.n(); }
  std::int32_t max_clusters() const { return table_.max_clusters(); }
  std::int32_t slots() const { return table_.slots(); }
  std::int64_t size(std::int32_t k) const { return table_.size(k); }
  std::int32_t label(std::int64_t i) const { return table_.label(i); }
  const std::vector<std::int32_t>& labels() const { return table_.labels(); }
  void clear() { table_.clear(); }
  void rebuild(const std::vector<std::int32_t>& labels) { table_.rebuild(labels); }
  void add(std::int64_t i, std::int32_t k) { table_.add(i, k); }
  void remove(std::int64_t i) { table_.remove(i); }
  void close_slot(std::int32_t k) { table_.close_slot(k); }

  // out[k] (k = 0..q, q = slots(); q is a new cluster) = mean over draws of the loss of the
  // table with unallocated item i put in slot k. Each draw contributes C = q + 1 tables; a
  // batch holds whole draws while one draw's tables fit in max_cells_, and otherwise splits a
  // draw's tables across batches, so no batch exceeds max_cells_ (unless one table does).
  void score(std::int64_t i, double* out) {
    const std::int32_t q = table_.slots();
    const std::int32_t C = q + 1;
    std::fill(out, out + C, 0.0);
    const Label* lab = d_.item(i);
    const double per_row = static_cast<double>(C) * C;
    for (const auto& g : layout_.groups(TableLayout::kCallCells / per_row)) {
      const std::int32_t R = g.rows;
      const std::int64_t cells = static_cast<std::int64_t>(R) * C;  // of one table
      const std::int64_t per_draw = C * cells;
      const std::int64_t step = per_draw <= max_cells_ ? (max_cells_ / per_draw) * C
                                                       : std::max<std::int64_t>(1, max_cells_ / cells);
      // Tables x = g.begin * C .. g.end * C - 1: draw order()[x / C], item in slot x % C.
      for (std::int64_t lo = g.begin * C; lo < g.end * C; lo += step) {
        const std::int64_t hi = std::min(g.end * C, lo + step);
        std::int64_t* t = reserve_tables(buffer_, (hi - lo) * cells);
        for (std::int64_t x = lo; x < hi; ++x, t += cells) {
          const std::int64_t h = layout_.order()[x / C];
          const std::int32_t k = static_cast<std::int32_t>(x % C);
          const std::int64_t cell = static_cast<std::int64_t>(lab[h]) * C;
          if (x > lo && k > 0) {  // the previous table is the same draw's, with the item in k - 1
            std::memcpy(t, t - cells, sizeof(std::int64_t) * cells);
            --t[cell + k - 1];
          } else {
            copy_table(h, R, q, C, t);
          }
          ++t[cell + k];
        }
        evaluate(hi - lo, R, C);
        for (std::int64_t b = 0; b < hi - lo; ++b) out[(lo + b) % C] += losses_[b];
      }
    }
    const double H = static_cast<double>(d_.H);
    for (std::int32_t k = 0; k < C; ++k) out[k] /= H;
  }

  // Mean over draws of the loss of the current allocation.
  double expected_loss() {
    const std::int32_t q = table_.slots();
    const std::int32_t C = std::max(q, 1);
    double total = 0.0;
    layout_.for_each_batch(C, max_cells_, [&](std::int64_t lo, std::int64_t hi, std::int32_t R) {
      std::int64_t* t = reserve_tables(buffer_, (hi - lo) * R * C);
      for (std::int64_t j = lo; j < hi; ++j, t += static_cast<std::int64_t>(R) * C)
        copy_table(layout_.order()[j], R, q, C, t);
      evaluate(hi - lo, R, C);
      for (std::int64_t b = 0; b < hi - lo; ++b) total += losses_[b];
    });
    return total / static_cast<double>(d_.H);
  }

 private:
  // Draw h's table, padded to R x C (estimate slots 0..q-1, zero beyond), into t.
  void copy_table(std::int64_t h, std::int32_t R, std::int32_t q, std::int32_t C, std::int64_t* t) const {
    const std::int32_t stride = table_.stride();
    const std::int32_t k = d_.k[h];
    assert(k <= R && q <= C);  // draw h's group pads to at least its clusters
    const Count* row = table_.counts() + d_.base[h] * stride;
    for (std::int32_t r = 0; r < k; ++r, row += stride, t += C) {
      for (std::int32_t c = 0; c < q; ++c) t[c] = row[c];
      for (std::int32_t c = q; c < C; ++c) t[c] = 0;
    }
    std::fill(t, t + static_cast<std::int64_t>(R - k) * C, std::int64_t{0});
  }

  void evaluate(std::int64_t B, std::int32_t R, std::int32_t C) {
    losses_.resize(static_cast<std::size_t>(B));
    fn_(buffer_, B, R, C, losses_.data());
  }

  DrawsView<Label> d_;
  const TableLayout& layout_;
  TableLossFn fn_;
  std::int64_t max_cells_;
  CountTable<Label> table_;
  TableBuffer buffer_;
  std::vector<double> losses_;
};

}  // namespace salsox
