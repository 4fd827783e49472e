// Per-run search state for the built-in and tabulated count losses: the count tables, the
// running sums of the non-additive losses, and the scores (scores_*.hpp). A score reads one row
// per draw, walking the draws opposite to add and remove: it starts on the rows they touched last.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "count_loss.hpp"
#include "count_storage.hpp"
#include "count_types.hpp"
#include "draws.hpp"
#include "order_by_key.hpp"
#include "options.hpp"
#include "simd.hpp"

namespace salsox {

template <class Label, class Count = std::int32_t>
class CountTableState : public CountTable<Label, Count> {
  using Table = CountTable<Label, Count>;
  using Table::d_, Table::kd_, Table::cnt_, Table::stride_, Table::cap_, Table::q_, Table::m_, Table::est_,
      Table::size_, Table::col_ver_, Table::loop_, Table::parallel_for, Table::shared_threads, Table::kDrawGrain,
      Table::kCacheLine, Table::kFirstSlots, Table::grow, Table::touch, Table::touch_all, Table::row_stride,
      Table::shift_item;

 public:
  using Table::for_each_nonzero, Table::row_index, Table::table_bytes;

  // `opts`: the search's settings (options.hpp).
  CountTableState(const DrawsView<Label>& draws, const CountLoss& loss, std::int32_t max_clusters,
                  const EngineOptions& opts = EngineOptions::from_env(false))
      : Table(draws, max_clusters, !loss.additive()), loss_(loss), track_stats_(!loss.additive()), simd_(opts.simd) {
    lane_cells_ = opts.cell_lanes;
    for (auto* v : {&acc_, &e_new_, &e_norm_, &e_x_, &he_, &inv_he_}) v->assign(kd_ + 1 + kSimdPad, 0.0);
    for (auto* v : {&bucket_a_, &bucket_b_, &bucket_c_}) v->assign(kd_ + 2, 0.0);
    acc_int_.assign(kd_ + 1, 0);
    sorted_he_.assign(kd_ + 1, 0.0);
    order_.assign(kd_ + 1, 0);
    if (track_stats_) {
      D_.assign(d_.H, 0.0);
      J_.assign(d_.H, 0.0);
    }
    for (std::size_t x = 0; x + 1 < loss_.g_cell.size(); ++x) {
      dcell_.push_back(loss_.g_cell[x + 1] - loss_.g_cell[x]);
      dest_.push_back(loss_.g_est[x + 1] - loss_.g_est[x]);
      ddraw_.push_back(loss_.g_draw[x + 1] - loss_.g_draw[x]);
    }
    if (scores_by_cell_sums(loss_.kind)) fix_cell_table();
    cells_are_counts_ = true;
    for (std::size_t x = 0; x < dcell_.size(); ++x) cells_are_counts_ &= dcell_[x] == static_cast<double>(x);
    cache_cells_ = scores_by_cell_sums(loss_.kind) && opts.cell_cache &&
                   cell_cache_fits(d_.n, kd_, table_bytes(d_.rows, kd_, track_stats_));
  }

  // The cell sums cache (count_table_cache.hpp): its bytes, and whether a state keeps it beside
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
                          bool tracked, bool cell_sums = false);  // count_table_rows.hpp

  // The most threads a pass (a score pass) over the draws had since reset_threads_used.
  void reset_threads_used() {
    loop_.reset();
    score_team_max_ = 1;
  }
  int score_threads_used() const { return score_team_max_; }

  void clear() {
    hr_valid_ = false;
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
    hr_valid_ = false;
    if (!track_stats_) return Table::add(i, k);
    grow(k + 1);
    shift_tracked<true>(i, k);
    E_ += dest_[size_[k]];
    this->place(i, k);
  }

  // Takes item i out of its slot; the slot may be left empty (see close_slot).
  void remove(std::int64_t i) {
    hr_valid_ = false;
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
    hr_valid_ = false;
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
    hr_valid_ = false;
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
  void score(std::int64_t i, double* out) { score_as(i, -1, out); }

  // The same for allocated item i, as if removed first, without touching the table.
  void score_move(std::int64_t i, double* out) { score_as(i, est_[i], out); }

  // add(i, k), then score(next, out), the table update made in the score's pass where it can.
  void add_score(std::int64_t i, std::int32_t k, std::int64_t next, double* out);

  // The expected loss of the current allocation, from scratch (no incremental rounding).
  double expected_loss() const;

 private:
  // A row's allocated items and cell sum g_cell, and whether its zero cells may be skipped.
  void row_cell_sums(const Count* row, bool skip_zeros, std::int64_t& s, double& J) const;
  bool skip_zero_cells() const;
  // The sums kept in E_ and, for draw h, D_[h] and J_[h], from scratch: every term relative to
  // an empty cell, as the incremental updates count them from a cleared table.
  double fresh_est_sum() const;
  void fresh_draw_sums(std::int64_t h, double& D, double& J) const;

  // Scoring context: `old_` is the slot item i is virtually removed from (-1: unallocated); Es_
  // and ms_ are the estimate sum and item count once i is placed; sz(k) is slot k's size without i.
  void score_as(std::int64_t i, std::int32_t old, double* out) {
    old_ = old;
    Es_ = old >= 0 ? E_ - dest_[size_[old] - 1] : E_;
    ms_ = old >= 0 ? m_ : m_ + 1;
    switch (loss_.kind) {
      case LossKind::Binder: score_binder(i, out); break;
      case LossKind::VI:
      case LossKind::Tabulated: score_additive(i, out); break;
      case LossKind::OMARI: score_omari_paths(i, out); break;
      default: score_entropy_paths(i, out); break;  // NVI, ID and NID
    }
  }
  std::int64_t sz(std::int32_t k) const { return size_[k] - (k == old_ ? 1 : 0); }

  // The scores of each loss family, compiled in a unit of its own (cpp/bindings/table_scores_*.cpp).
  void score_binder(std::int64_t i, double* out);
  void score_additive(std::int64_t i, double* out);
  const double* cell_sums(std::int64_t i);
  void all_cell_sums(std::int64_t i, double* out);
  void cell_sums_cached(std::int64_t i);
  template <bool kAll, bool kOwn, bool kAdd = false>
  void cell_sums_pass(std::int64_t i, const std::int32_t* ks, std::int32_t width, double* out);
  template <bool kAll>  // cell_sums_pass of an unallocated item, with add_score's update if one is due
  void fresh_cell_sums(std::int64_t i, const std::int32_t* ks, std::int32_t width, double* out);
  // The omARI and entropy scores on the state's path (simd_), inlined into one function per
  // path, compiled for its instruction set.
  void score_omari_paths(std::int64_t i, double* out);
  void score_entropy_paths(std::int64_t i, double* out);
  template <SimdPath P>
  SALSOX_INLINE void score_entropy_on(std::int64_t i, double* out);
#if SALSOX_SIMD_X86
  SALSOX_TARGET_AVX2 void score_omari_avx2(std::int64_t i, double* out);
  SALSOX_TARGET_AVX2 void score_entropy_avx2(std::int64_t i, double* out);
#endif
  template <SimdPath P>
  SALSOX_INLINE void score_omari(std::int64_t i, double* out);
#if SALSOX_SIMD_X86
  template <int V>
  SALSOX_TARGET_AVX2 void omari_draws_avx2(std::int64_t i, std::int64_t lo, std::int64_t hi, std::int32_t first,
                                           double* acc) const;
#endif
  struct EntropyScale;
  void slot_entropies(const EntropyScale& ent);
  void sort_slots();
  template <SimdPath P>
  SALSOX_INLINE void score_nvi(std::int64_t i, double* out);
  template <SimdPath P>
  SALSOX_INLINE void score_id(std::int64_t i, double* out);
  void draw_entropies(const EntropyScale& ent);
  template <SimdPath P>
  SALSOX_INLINE void score_nid(std::int64_t i, double* out);
  // Whether NVI's and NID's scores take every slot as a lane, up to kLaneVectors vectors of four
  // slots, and the cell sums on the AVX-512 path (EngineOptions::cell_lanes).
  static constexpr std::int32_t kLaneVectors = 8;
  bool lane_cells_ = true;
#if SALSOX_SIMD_X86
  template <int V>
  SALSOX_TARGET_AVX2 void nvi_draws_avx2(std::int64_t, std::int64_t, std::int64_t, const EntropyScale&, double*) const;
  template <int V, bool kAlloc>
  SALSOX_TARGET_AVX2 void nid_draws_avx2(std::int64_t, std::int64_t, std::int64_t, const EntropyScale&, double*,
                                         double*) const;
#endif

  // Calls f(draw_sum, joint_sum, row, dec, h) for draws hi-1 down to lo: D_h with item i in
  // its draw cluster, J_h without it, and item i's row, whose cell k holds row[k] - (k == dec).
  template <class F>
  SALSOX_INLINE void for_draws(std::int64_t i, std::int64_t lo, std::int64_t hi, F f) const;
  // A score pass's loop over blocks, and its sums over fixed chunks of draws (scores_shared.hpp).
  template <SimdPath P, class F>
  SALSOX_INLINE void share_score(std::int64_t count, const F& f);
  template <SimdPath P, class Body>
  SALSOX_INLINE const double* draw_chunks(std::int32_t width, const Body& body);

  // Draws per chunk of the entropy scores' sums (draw_chunks): a few threads' worth from 1,000 draws.
  static constexpr std::int64_t kDrawChunk = 256;
  // The integer sums of score_binder and cell_sums_pass are exact, so any split of the draws
  // gives the same bits: one block on one thread, blocks of kExactBlock when others may help.
  static constexpr std::int64_t kExactBlock = 512;
  // Passes over up to this many slots keep their sums in registers (cell_sums_pass).
  static constexpr std::int32_t kFewSlots = 4;
  // Binder's count sums over up to this many slots stay in registers (score_binder).
  static constexpr std::int32_t kBinderLanes = 8;
  std::int64_t exact_blocks() const { return shared_threads() > 1 ? (d_.H + kExactBlock - 1) / kExactBlock : 1; }
  std::int64_t block_begin(std::int64_t c, std::int64_t blocks) const { return c * d_.H / blocks; }
  // dcell_ in fixed point, for the exact cell sums (see fix_cell_table).
  void fix_cell_table();

  const CountLoss& loss_;
  bool track_stats_;  // a non-additive loss: per-draw sums, and the allocated items' column
  SimdPath simd_;
  std::vector<double> acc_, e_new_;
  // Scratch for the non-additive scores, indexed by slot (0..q) or bucket (0..q+1).
  std::vector<double> e_norm_, e_x_, he_, inv_he_, sorted_he_;
  std::vector<std::int32_t> order_;
  std::vector<double> bucket_a_, bucket_b_, bucket_c_;
  std::vector<std::int64_t> acc_int_, part_int_;
  int score_team_max_ = 1;  // see score_threads_used
  std::vector<double> dcell_, dest_, ddraw_;
  // dcell_ in units of 2^-cell_shift_ (see fix_cell_table).
  std::vector<std::int64_t> dcell_fixed_;
  int cell_shift_ = 0;
  bool cells_are_counts_ = false;  // dcell_[x] == x (pair counts: omARI's fused score)
  // Running per-draw sums for non-additive losses.
  std::vector<double> D_, J_;
  // Each draw's loss, for a shared expected_loss; a row of zeros for its other path.
  static constexpr std::int32_t kZeroRow = 8;
  mutable std::vector<double> draw_loss_;
  double E_ = 0.0;
  // Scoring context (see score_as); add_score's due update: item add_lab_'s draw labels, slot add_k_.
  std::int32_t old_ = -1, add_k_ = 0;
  const Label* add_lab_ = nullptr;
  double Es_ = 0.0;
  std::int64_t ms_ = 0;
  // Draw entropies for the ID and NID scans (see draw_entropies).
  std::vector<double> hr_draw_, inv_hr_draw_, hr_sorted_, inv_hr_sorted_, hr_prefix_;
  std::vector<std::int64_t> by_hr_, rank_;
  std::vector<KeyedIndex> sort_a_, sort_b_;  // order_by_key's scratch
  bool hr_valid_ = false;
  // Scratch for score_nid: each draw's joint entropy, at the draw's rank.
  std::vector<double> hj_by_rank_;
  // Scratch for draw_chunks: each chunk's sums and nonzero-cell list, and their totals.
  std::vector<double> chunk_part_, chunk_sum_;
  std::vector<std::int32_t> chunk_nz_;
  // The cell sums cache (count_table_cache.hpp): per item i and slot k, at i * kd_ + k, the sum
  // and the column version it was computed at (0: never); dirty_ and fresh_ are its scratch.
  bool cache_cells_ = false;  // whether cell_sums caches (allocated at its first call)
  std::vector<double> cache_val_;
  std::vector<std::uint64_t> cache_ver_;
  std::vector<std::int32_t> dirty_;
  std::vector<double> fresh_;
  // The sums saved by snapshot() (the table saves its own).
  std::vector<double> snap_D_, snap_J_;
  double snap_E_ = 0.0;
};

}  // namespace salsox

// The state's own passes; the scores are in their families' headers (see score_as).
#include "count_table_rows.hpp"
#include "count_table_sums.hpp"
