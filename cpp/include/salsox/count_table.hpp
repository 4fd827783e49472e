// Per-run search state for the built-in and tabulated count losses: the count tables
// (count_storage.hpp), the running sums of the non-additive losses, and the scorer of the loss's
// family (table_scorer.hpp), which reads them.
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
class CountTableState : public CountTable<Label, Count> {
  using Table = CountTable<Label, Count>;
  using Table::d_, Table::kd_, Table::cnt_, Table::stride_, Table::cap_, Table::q_, Table::m_, Table::est_,
      Table::size_, Table::loop_, Table::kCacheLine, Table::kFirstSlots, Table::grow, Table::touch;

 public:
  using Table::for_each_nonzero, Table::table_bytes, Table::parallel_for, Table::shared_threads, Table::kDrawGrain;

  // `opts`: the search's settings (options.hpp).
  CountTableState(const DrawsView<Label>& draws, const CountLoss& loss, std::int32_t max_clusters,
                  const EngineOptions& opts = EngineOptions::from_env(false))
      : Table(draws, max_clusters, !loss.additive()), loss_(loss), track_stats_(!loss.additive()) {
    if (track_stats_) {
      D_.assign(d_.H, 0.0);
      J_.assign(d_.H, 0.0);
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
    const double cells = table_bytes(rows, max_clusters, tracked), table = cells + 2.0 * kCacheLine;
    const double chunk = TableScorer<Label, Count>::kDrawChunk;
    const double chunks = std::ceil(static_cast<double>(H) / chunk) * (max_clusters + 2.0) * 44.0;
    // The tracked losses' per-draw sums and entropies (12 words a draw) and order_by_key's scratch (4).
    const double per_draw = tracked ? 16.0 * 8.0 * static_cast<double>(H) + chunks : 0.0;
    const double cache = cell_sums && cell_cache_fits(n, max_clusters, cells) ? cell_cache_bytes(n, max_clusters) : 0.0;
    return 2 * table + 2 * 4.0 * static_cast<double>(n) + 2 * 8.0 * (max_clusters + 1) + per_draw + cache;
  }

  // The most threads a pass (a score pass) over the draws had since reset_threads_used.
  void reset_threads_used() {
    loop_.reset();
    scorer_->reset_threads_used();
  }
  int score_threads_used() const { return scorer_->threads_used(); }

  void clear() {
    draw_sums_changed();
    Table::clear();
    std::fill(D_.begin(), D_.end(), 0.0);  // (empty without per-draw sums)
    std::fill(J_.begin(), J_.end(), 0.0);
    E_ = 0.0;
  }

  // Replaces the state by the complete allocation `labels` (slots 0..max). With per-draw sums,
  // item by item (add), to keep their rounding.
  void rebuild(const std::vector<std::int32_t>& labels) {
    if (!track_stats_) return Table::rebuild(labels);
    clear();
    q_ = labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end()) + 1;
    this->set_layout(std::max(q_, kFirstSlots));  // the table is all zeros: no rows to move
    for (std::int64_t i = 0; i < d_.n; ++i) add(i, labels[i]);
  }

  // Puts unallocated item i into slot k (k <= slots(); k == slots() opens a new slot).
  void add(std::int64_t i, std::int32_t k) {
    draw_sums_changed();
    if (!track_stats_) return Table::add(i, k);
    grow(k + 1);
    shift_tracked<true>(i, k);
    E_ += dest_[size_[k]];
    this->place(i, k);
  }

  // Takes item i out of its slot; the slot may be left empty (see close_slot).
  void remove(std::int64_t i) {
    draw_sums_changed();
    if (!track_stats_) return Table::remove(i);
    const std::int32_t k = est_[i];
    shift_tracked<false>(i, k);
    E_ -= dest_[size_[k] - 1];
    this->unplace(i);
  }

  // CountTable::move, with the per-draw cell sums (the item stays in its draw clusters).
  void move(std::int64_t i, std::int32_t k) {
    if (!track_stats_) return Table::move(i, k);
    const std::int32_t old = est_[i];
    if (k == old) return;
    const double dE = dest_[size_[k]] - dest_[size_[old] - 1];
    double* J = J_.data();
    const double* dcell = dcell_.data();
    Table::move(i, k, [J, dcell](std::int64_t h, Count gone, Count came) { J[h] += dcell[came] - dcell[gone]; });
    E_ += dE;
  }

  // CountTable::shift_item with the allocated-items column and the per-draw sums.
  template <bool kAdd>
  void shift_tracked(std::int64_t i, std::int32_t k) {
    touch(k);
    const Label* lab = d_.item(i);
    const std::int64_t* base = d_.base;
    const std::int64_t stride = stride_;
    Count* cnt = cnt_;
    const std::int32_t kd = cap_;  // the allocated-items column
    double* D = D_.data();
    double* J = J_.data();
    const double* ddraw = ddraw_.data();
    const double* dcell = dcell_.data();
    parallel_for(d_.H, [=](std::int64_t h) {
      Count* row = cnt + (base[h] + lab[h]) * stride;
      // The tabulated differences are taken at the lower of the two counts.
      const Count c = kAdd ? row[k]++ : --row[k];
      const Count s = kAdd ? row[kd]++ : --row[kd];
      D[h] += kAdd ? ddraw[s] : -ddraw[s];
      J[h] += kAdd ? dcell[c] : -dcell[c];
    }, kDrawGrain);
  }

  // CountTable's zealous table passes, with the per-draw sums (each draw's own, so the pass is
  // shared like the table updates).
  void release_slot(std::int32_t k) {
    draw_sums_changed();
    if (!track_stats_) return Table::release_slot(k);
    touch(k);
    Count* cnt = cnt_;
    const std::int64_t* base = d_.base;
    const std::int32_t* kh = d_.k;
    const std::int64_t stride = stride_;
    const std::int32_t cap = cap_;
    const double* g_draw = loss_.g_draw.data();
    const double* g_cell = loss_.g_cell.data();
    double* D = D_.data();
    double* J = J_.data();
    parallel_for(d_.H, [=](std::int64_t h) {
      double dD = 0.0, dJ = 0.0;
      for (std::int32_t l = 0; l < kh[h]; ++l) {
        Count* row = cnt + (base[h] + l) * stride;
        const Count x = row[k];
        if (x == 0) continue;
        row[k] = 0;
        const Count s = row[cap];
        row[cap] = static_cast<Count>(s - x);
        dD += g_draw[s - x] - g_draw[s];
        dJ += g_cell[0] - g_cell[x];
      }
      D[h] += dD;
      J[h] += dJ;
    }, kDrawGrain);
    E_ += loss_.g_est[0] - loss_.g_est[size_[k]];
    this->released(k);
  }
  void snapshot() {
    Table::snapshot();
    snap_D_ = D_;
    snap_J_ = J_;
    snap_E_ = E_;
  }
  void restore() {
    draw_sums_changed();
    Table::restore();
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
  void score_move(std::int64_t i, double* out) { scorer_->score(i, est_[i], out); }

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
  // The sums kept in E_ and, for draw h, D_[h] and J_[h], from scratch: every term relative to
  // an empty cell, as the incremental updates count them from a cleared table.
  double fresh_est_sum() const;
  void fresh_draw_sums(std::int64_t h, double& D, double& J) const;
  void draw_sums_changed() { ++draw_sums_version_; }

  const CountLoss& loss_;
  bool track_stats_;  // a non-additive loss: per-draw sums, and the allocated items' column
  std::vector<double> dcell_, dest_, ddraw_;
  // Running per-draw sums for non-additive losses.
  std::vector<double> D_, J_;
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
