// Per-run search state for the built-in and tabulated count losses: a count table
// (count_storage.hpp) it holds, the running sums of the non-additive losses, which it updates
// through the table's visit hooks, and the scorer of the loss's family (table_scorer.hpp), which
// reads them.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "count_loss.hpp"
#include "count_storage.hpp"
#include "count_types.hpp"
#include "draws.hpp"
#include "options.hpp"
#include "table_scorer.hpp"

namespace salsox {

template <class Label, class Count = std::int32_t>
class CountTableState {
  using Table = CountTable<Label, Count>;

 public:
  static constexpr std::int64_t kDrawGrain = Table::kDrawGrain;

  // `opts`: the search's settings (options.hpp).
  CountTableState(const DrawsView<Label>& draws, const CountLoss& loss, std::int32_t max_clusters,
                  const EngineOptions& opts)
      : table_(draws, max_clusters, !loss.additive()), d_(draws), loss_(loss), track_stats_(!loss.additive()) {
    if (track_stats_) {
      D_.assign(d_.H, 0.0);
      J_.assign(d_.H, 0.0);
      release_D_.assign(d_.H, 0.0);
      release_J_.assign(d_.H, 0.0);
    }
    for (std::size_t x = 0; x + 1 < loss_.g_cell.size(); ++x) {
      dcell_.push_back(loss_.g_cell[x + 1] - loss_.g_cell[x]);
      dest_.push_back(loss_.g_est[x + 1] - loss_.g_est[x]);
      ddraw_.push_back(loss_.g_draw[x + 1] - loss_.g_draw[x]);
    }
    switch (loss_.kind) {
      case LossKind::Binder:
      case LossKind::VI:
      case LossKind::Tabulated: scorer_ = make_scorer<CellSumScorer>(*this, opts); break;
      case LossKind::OMARI: scorer_ = make_scorer<OmariScorer>(*this, opts); break;
      default: scorer_ = make_scorer<EntropyScorer>(*this, opts); break;  // NVI, ID and NID
    }
  }

  CountTableState(const CountTableState&) = delete;
  CountTableState& operator=(const CountTableState&) = delete;

  // The table, as the search and the scorers read it (count_storage.hpp).
  std::int64_t n() const { return table_.n(); }
  std::int32_t max_clusters() const { return table_.max_clusters(); }
  std::int32_t slots() const { return table_.slots(); }
  std::int64_t allocated() const { return table_.allocated(); }
  std::int64_t size(std::int32_t k) const { return table_.size(k); }
  std::int32_t label(std::int64_t i) const { return table_.label(i); }
  const std::vector<std::int32_t>& labels() const { return table_.labels(); }
  const Count* counts() const { return table_.counts(); }
  std::int64_t stride() const { return table_.stride(); }
  std::int32_t allocated_column() const { return table_.allocated_column(); }
  const DrawsView<Label>& draws() const { return table_.draws(); }
  std::uint64_t column_version(std::int32_t k) const { return table_.column_version(k); }
  void set_threads(int threads) { table_.set_threads(threads); }
  int threads_used() const { return table_.threads_used(); }
  template <class F>
  int parallel_for(std::int64_t count, const F& f, std::int64_t min_grain = 1) const {
    return table_.parallel_for(count, f, min_grain);
  }
  int shared_threads() const { return table_.shared_threads(); }
  template <class F>
  SALSOX_INLINE static void for_each_nonzero(const Count* row, std::int32_t q, std::int32_t dec, std::int32_t* nz,
                                             F f) {
    Table::for_each_nonzero(row, q, dec, nz, f);
  }
  static double table_bytes(std::int64_t rows, std::int32_t max_clusters, bool alloc_column) {
    return Table::table_bytes(rows, max_clusters, alloc_column);
  }
  void close_slot(std::int32_t k) { table_.close_slot(k); }
  bool prefers_table_pass(std::int64_t members) const { return table_.prefers_table_pass(members); }

  // The cell sums cache (cell_sums_cache.hpp): its bytes, and whether a state keeps it beside
  // a table of `table` bytes: while it takes no more than 4 MiB or the table itself.
  static double cell_cache_bytes(std::int64_t n, std::int32_t max_clusters) {
    return 16.0 * static_cast<double>(n) * static_cast<double>(max_clusters);
  }
  static bool cell_cache_fits(std::int64_t n, std::int32_t max_clusters, double table) {
    return cell_cache_bytes(n, max_clusters) <= std::max(4.0 * 1024 * 1024, table);
  }

  // Bytes a state takes for `rows` draw clusters over H draws of n items and `max_clusters`
  // slots (tracked: with per-draw sums; cell_sums: the loss scores through cell sums).
  static double footprint(std::int64_t rows, std::int64_t H, std::int64_t n, std::int32_t max_clusters,
                          bool tracked, bool cell_sums = false) {
    const double cells = table_bytes(rows, max_clusters, tracked), table = cells + 2.0 * Table::kCacheLine;
    const double chunk = TableScorer<Label, Count>::kDrawChunk;
    const double chunks = std::ceil(static_cast<double>(H) / chunk) * (max_clusters + 2.0) * 44.0;
    // The tracked losses' per-draw sums and entropies (12 words a draw, release_slot's 2 among
    // them) and order_by_key's scratch (4).
    const double per_draw = tracked ? 16.0 * 8.0 * static_cast<double>(H) + chunks : 0.0;
    const double cache = cell_sums && cell_cache_fits(n, max_clusters, cells) ? cell_cache_bytes(n, max_clusters) : 0.0;
    return 2 * table + 2 * 4.0 * static_cast<double>(n) + 2 * 8.0 * (max_clusters + 1) + per_draw + cache;
  }

  // The most threads a pass (a score pass) over the draws had since reset_threads_used.
  void reset_threads_used() {
    table_.reset_threads_used();
    scorer_->reset_threads_used();
  }
  int score_threads_used() const { return scorer_->threads_used(); }

  void clear() {
    draw_sums_changed();
    table_.clear();
    std::fill(D_.begin(), D_.end(), 0.0);  // (empty without per-draw sums)
    std::fill(J_.begin(), J_.end(), 0.0);
    E_ = 0.0;
  }

  // Replaces the state by the complete allocation `labels` (slots 0..max). With per-draw sums,
  // item by item (CountTable::rebuild's visit), to keep add's rounding.
  void rebuild(const std::vector<std::int32_t>& labels) {
    if (!track_stats_) return table_.rebuild(labels);
    draw_sums_changed();  // as clear() does: the table clears itself in rebuild
    std::fill(D_.begin(), D_.end(), 0.0);
    std::fill(J_.begin(), J_.end(), 0.0);
    E_ = 0.0;
    std::vector<std::int64_t> sizes(static_cast<std::size_t>(max_clusters()) + 1, 0);
    for (std::int64_t i = 0; i < d_.n; ++i) {
      draw_sums_changed();  // as add does, item by item
      E_ += dest_[sizes[static_cast<std::size_t>(labels[i])]++];
    }
    table_.rebuild(labels, sums_visit<true>());
  }

  // Puts unallocated item i into slot k (k <= slots(); k == slots() opens a new slot).
  void add(std::int64_t i, std::int32_t k) {
    draw_sums_changed();
    if (!track_stats_) return table_.add(i, k);
    E_ += dest_[size(k)];
    table_.add(i, k, sums_visit<true>());
  }

  // Takes item i out of its slot; the slot may be left empty (see close_slot).
  void remove(std::int64_t i) {
    draw_sums_changed();
    if (!track_stats_) return table_.remove(i);
    E_ -= dest_[size(label(i)) - 1];
    table_.remove(i, sums_visit<false>());
  }

  // CountTable::move, with the per-draw cell sums (the item stays in its draw clusters).
  void move(std::int64_t i, std::int32_t k) {
    if (!track_stats_) return table_.move(i, k);
    const std::int32_t old = label(i);
    if (k == old) return;
    const double dE = dest_[size(k)] - dest_[size(old) - 1];
    double* J = J_.data();
    const double* dcell = dcell_.data();
    table_.move(i, k, [J, dcell](std::int64_t h, Count gone, Count came) { J[h] += dcell[came] - dcell[gone]; });
    E_ += dE;
  }

  // CountTable's zealous table pass, with the per-draw sums: each draw's changes summed apart
  // first (in release_D_, release_J_), then added, as one term.
  void release_slot(std::int32_t k) {
    draw_sums_changed();
    if (!track_stats_) return table_.release_slot(k);
    E_ += loss_.g_est[0] - loss_.g_est[size(k)];
    const double* g_draw = loss_.g_draw.data();
    const double* g_cell = loss_.g_cell.data();
    double* dD = release_D_.data();
    double* dJ = release_J_.data();
    std::fill(release_D_.begin(), release_D_.end(), 0.0);
    std::fill(release_J_.begin(), release_J_.end(), 0.0);
    table_.release_slot(k, [=](std::int64_t h, Count x, Count s) {
      dD[h] += g_draw[s - x] - g_draw[s];
      dJ[h] += g_cell[0] - g_cell[x];
    });
    double* D = D_.data();
    double* J = J_.data();
    parallel_for(d_.H, [=](std::int64_t h) {
      D[h] += dD[h];
      J[h] += dJ[h];
    }, kDrawGrain);
  }
  void snapshot() {
    table_.snapshot();
    snap_D_ = D_;
    snap_J_ = J_;
    snap_E_ = E_;
  }
  void restore() {
    draw_sums_changed();
    table_.restore();
    D_ = snap_D_;
    J_ = snap_J_;
    E_ = snap_E_;
  }

  // Recomputes the running sums from the table, so that their rounding does not build up.
  void refresh_sums();

  // The largest relative difference between a kept sum and its recomputation (for tests).
  double sums_drift() const;

  // Scores putting unallocated item i in each slot 0..q-1 (out[k]) and in a new cluster
  // (out[q]); lower is better. Scores of one call are comparable with each other only.
  void score(std::int64_t i, double* out) { scorer_->score(i, -1, out); }

  // The same for allocated item i, as if removed first, without touching the table.
  void score_move(std::int64_t i, double* out) { scorer_->score(i, label(i), out); }

  // The expected loss of the current allocation, from scratch (no incremental rounding).
  double expected_loss() const;

  // What the scorers read besides the table: the loss, its tabulated differences dcell(x) =
  // g_cell(x + 1) - g_cell(x) (and of g_est, g_draw), and with per-draw sums the sums kept as
  // items come and go: each draw's D_h and J_h, the estimate's E, and a version that changes
  // whenever a D_h may have.
  const CountLoss& loss() const { return loss_; }
  const double* cell_diffs() const { return dcell_.data(); }
  std::size_t cell_diffs_size() const { return dcell_.size(); }
  const double* est_diffs() const { return dest_.data(); }
  const double* draw_diffs() const { return ddraw_.data(); }
  const double* draw_sums() const { return D_.data(); }
  const double* joint_sums() const { return J_.data(); }
  double est_sum() const { return E_; }
  std::uint64_t draw_sums_version() const { return draw_sums_version_; }

 private:
  // The table's visitor of add (kAdd) and remove: each draw's sums moved by the differences
  // at the lower of the cell's two counts (c) and of the row's allocated items (s).
  template <bool kAdd>
  auto sums_visit() {
    double* D = D_.data();
    double* J = J_.data();
    const double* ddraw = ddraw_.data();
    const double* dcell = dcell_.data();
    return [=](std::int64_t h, Count c, Count s) {
      D[h] += kAdd ? ddraw[s] : -ddraw[s];
      J[h] += kAdd ? dcell[c] : -dcell[c];
    };
  }

  // The sums kept in E_ and, for draw h, D_[h] and J_[h], from scratch: every term relative to
  // an empty cell, as the incremental updates count them from a cleared table.
  double fresh_est_sum() const;
  void fresh_draw_sums(std::int64_t h, double& D, double& J) const;
  void draw_sums_changed() { ++draw_sums_version_; }

  Table table_;
  const DrawsView<Label> d_;
  const CountLoss& loss_;
  bool track_stats_;  // a non-additive loss: per-draw sums, and the allocated items' column
  std::vector<double> dcell_, dest_, ddraw_;
  // Running per-draw sums for non-additive losses.
  std::vector<double> D_, J_;
  std::vector<double> release_D_, release_J_;  // release_slot's per-draw changes
  double E_ = 0.0;
  std::uint64_t draw_sums_version_ = 1;
  // Each draw's loss, for a shared expected_loss.
  mutable std::vector<double> draw_loss_;
  // The sums saved by snapshot() (the table saves its own).
  std::vector<double> snap_D_, snap_J_;
  double snap_E_ = 0.0;
  // The loss family's scorer (table_scorer.hpp).
  std::unique_ptr<TableScorer<Label, Count>> scorer_;
};

// CountTableState::footprint with the count width the engine picks for n items.
inline double count_table_bytes(std::int64_t rows, std::int64_t H, std::int64_t n, std::int32_t max_clusters,
                                bool tracked, bool cell_sums = false) {
  return with_count_type(n, [&](auto count) {
    return CountTableState<std::uint8_t, decltype(count)>::footprint(rows, H, n, max_clusters, tracked, cell_sums);
  });
}

}  // namespace salsox

// The state's own passes; the scores are in their families' scorers (table_scorer.hpp).
#include "count_table_sums.hpp"
