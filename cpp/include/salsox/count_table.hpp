// Per-run search state for count-based losses: the contingency tables between the estimate and
// every draw, laid out [draw][draw cluster][estimate cluster]. Scoring an item reads, for each
// draw, one short contiguous row holding the counts for all estimate clusters at once (the
// reference reads one scattered cell per draw per candidate).
//
// Every step touches one row per draw, at random, and H rows rarely fit in L2, so the table is
// kept small and cache-friendly: counts are uint8 when n < 256 and uint16 when n < 65536 (see with_count_type), rows
// are padded so that a row never straddles more cache lines than it must, and scoring walks the
// draws in the opposite direction to add and remove, so it starts on the rows they touched last.
//
// This header holds the storage and its updates; the scores of each loss family are member
// functions defined in scores_binder_vi.hpp, scores_omari.hpp and scores_entropy.hpp.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "count_loss.hpp"
#include "count_types.hpp"
#include "draws.hpp"
#include "order_by_key.hpp"
#include "options.hpp"
#include "threads.hpp"
#include "simd.hpp"

// The per-draw bodies of the scores are lambdas called once per draw; compilers that would
// otherwise call them out of line (GCC did, for the entropy losses) are told to inline them.
#if defined(__GNUC__) || defined(__clang__)
#define SALSOX_INLINE __attribute__((always_inline))
#else
#define SALSOX_INLINE
#endif

namespace salsox {

template <class Label, class Count = std::int32_t>
class CountTableState {
 public:
  // `opts`: the search's settings (options.hpp).
  CountTableState(const DrawsView<Label>& draws, const CountLoss& loss, std::int32_t max_clusters,
                  const EngineOptions& opts = EngineOptions::from_env(false))
      : d_(draws), loss_(loss), kd_(max_clusters), track_stats_(!loss.additive()),
        full_stride_(row_stride(kd_ + (track_stats_ ? 1 : 0))), simd_(opts.simd) {
    lane_cells_ = opts.cell_lanes;
    constexpr std::size_t line = kCacheLine / sizeof(Count);
    // Room for the widest layout (all max_clusters slots; see grow), one line for the alignment
    // below, one so that word reads past a short last row stay inside.
    cnt_store_.assign(static_cast<std::size_t>(d_.rows * full_stride_) + 2 * line, 0);
    set_layout(kFirstSlots);
    const auto misalign = reinterpret_cast<std::uintptr_t>(cnt_store_.data()) % kCacheLine;
    cnt_ = cnt_store_.data() + (misalign ? (kCacheLine - misalign) / sizeof(Count) : 0);
    est_.assign(d_.n, -1);
    size_.assign(kd_ + 1, 0);
    acc_.assign(kd_ + 1 + kSimdPad, 0.0);
    acc_int_.assign(kd_ + 1, 0);
    e_new_.assign(kd_ + 1 + kSimdPad, 0.0);
    e_norm_.assign(kd_ + 1 + kSimdPad, 0.0);
    e_x_.assign(kd_ + 1 + kSimdPad, 0.0);
    he_.assign(kd_ + 1 + kSimdPad, 0.0);
    inv_he_.assign(kd_ + 1 + kSimdPad, 0.0);
    sorted_he_.assign(kd_ + 1, 0.0);
    order_.assign(kd_ + 1, 0);
    bucket_a_.assign(kd_ + 2, 0.0);
    bucket_b_.assign(kd_ + 2, 0.0);
    bucket_c_.assign(kd_ + 2, 0.0);
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
    col_ver_.assign(kd_ + 1, 1);
    cache_cells_ = scores_by_cell_sums(loss_.kind) && opts.cell_cache &&
                   cell_cache_fits(d_.n, kd_, table_bytes(d_.rows, kd_, track_stats_));
  }

  // The cell sums cache (count_table_cache.hpp): its bytes, and whether it fits next to a
  // table of `table` bytes.
  static double cell_cache_bytes(std::int64_t n, std::int32_t max_clusters);
  static bool cell_cache_fits(std::int64_t n, std::int32_t max_clusters, double table);

  // Bytes a state takes for `rows` draw clusters over H draws of n items and `max_clusters`
  // slots (tracked: a non-additive loss, with per-draw sums): the table and its snapshot, the
  // labels and sizes (and theirs), the per-draw sums (and theirs), the draw entropies of
  // draw_entropies and score_nid, and the chunk sums of draw_chunks (per chunk, four sums,
  // omARI's gathered joint sums and a 4-byte index per slot). (cell_sums: the loss scores
  // through cell sums, which may add their cache, see cell_cache_fits.)
  static double footprint(std::int64_t rows, std::int64_t H, std::int64_t n, std::int32_t max_clusters,
                          bool tracked, bool cell_sums = false);  // count_table_rows.hpp
  static double table_bytes(std::int64_t rows, std::int32_t max_clusters, bool tracked) {
    return static_cast<double>(rows) * static_cast<double>(row_stride(max_clusters + (tracked ? 1 : 0))) * sizeof(Count);
  }

  CountTableState(const CountTableState&) = delete;
  CountTableState& operator=(const CountTableState&) = delete;
  std::int64_t n() const { return d_.n; }
  std::int64_t draws() const { return d_.H; }
  std::int32_t max_clusters() const { return kd_; }
  SimdPath simd() const { return simd_; }  // the path of the omARI and entropy scores
  std::int32_t slots() const { return q_; }
  std::int64_t allocated() const { return m_; }
  std::int64_t size(std::int32_t k) const { return size_[k]; }
  std::int32_t label(std::int64_t i) const { return est_[i]; }
  const std::vector<std::int32_t>& labels() const { return est_; }
  // Threads used inside one run, over draws: add, remove and every score pass (the ID and NID
  // scans' sorting of the draw entropies excepted). Results do not depend on it.
  void set_threads(int threads) { threads_ = threads > 0 ? threads : 1; }
  // The most threads a pass over the draws had since reset_threads_used (fewer than asked for
  int threads_used() const { return team_max_; }  // when the runtime would not nest a region)
  void reset_threads_used() { team_max_ = score_team_max_ = 1; }
  int score_threads_used() const { return score_team_max_; }  // the same for the score passes
  // Raw count table, row r (a draw cluster) at counts() + r * stride(), for callback and
  // count-sum states: draw h's rows are d.base[h] onwards.
  const Count* counts() const { return cnt_; }
  // The row of draw h's cluster l (counts() + row_index(h, l) * stride()).
  std::int64_t row_index(std::int64_t h, std::int64_t l) const { return d_.base[h] + l; }
  std::int64_t stride() const { return stride_; }
  // Calls f(k) for each slot k < q whose cell row[k] - (k == dec) is nonzero (count_table_rows.hpp).
  template <class F>
  SALSOX_INLINE static void for_each_nonzero(const Count* row, std::int32_t q, std::int32_t dec, std::int32_t* nz, F f);

  void clear() {
    hr_valid_ = false;
    touch_all();
    std::fill(cnt_store_.begin(), cnt_store_.end(), 0);
    set_layout(kFirstSlots);
    std::fill(est_.begin(), est_.end(), -1);
    std::fill(size_.begin(), size_.end(), 0);
    if (track_stats_) {
      std::fill(D_.begin(), D_.end(), 0.0);
      std::fill(J_.begin(), J_.end(), 0.0);
    }
    E_ = 0.0;
    q_ = 0;
    m_ = 0;
  }

  // Replaces the state by the complete allocation `labels` (slots 0..max; count_table_snapshot.hpp).
  void rebuild(const std::vector<std::int32_t>& labels);

  // Widens the table, if need be, so that slot k exists (count-sum states read a slot's counts
  // before add or move would widen it).
  void fit_slot(std::int32_t k) { grow(k + 1); }
  // Narrows the rows again when the slots in use fit in half of them (count_table_rows.hpp);
  // called between scans (refresh_sums, and the count-sum states' own).
  void shrink();

  // Puts unallocated item i into slot k (k <= slots(); k == slots() opens a new slot).
  template <class Visit = NoVisit>  // untracked: visit(h, x) in each draw, x the count before
  void add(std::int64_t i, std::int32_t k, Visit visit = {}) {
    grow(k + 1);
    shift_item<true>(i, k, visit);
    if (track_stats_) E_ += dest_[size_[k]];
    if (k == q_) ++q_;
    ++size_[k];
    ++m_;
    est_[i] = k;
  }

  // Takes item i out of its slot; the slot may be left empty (see close_slot). visit: see add.
  template <class Visit = NoVisit>
  void remove(std::int64_t i, Visit visit = {}) {
    const std::int32_t k = est_[i];
    shift_item<false>(i, k, visit);
    if (track_stats_) E_ -= dest_[size_[k] - 1];
    --size_[k];
    --m_;
    est_[i] = -1;
  }

  // Removes empty slot k by moving the last slot into it, keeping slots 0..q-1 occupied.
  void close_slot(std::int32_t k) {
    const std::int32_t last = q_ - 1;
    if (k != last) {
      touch(k);
      touch(last);
      Count* cnt = cnt_;
      const std::int64_t stride = stride_;
      parallel_for(d_.rows, [=](std::int64_t r) {
        Count* row = cnt + r * stride;
        row[k] = row[last];
        row[last] = 0;
      }, kDrawGrain);
      size_[k] = size_[last];
      size_[last] = 0;
      for (auto& e : est_)
        if (e == last) e = k;
    }
    --q_;
  }

  // Moves allocated item i from its slot to slot k (k == slots() opens a new slot) in one pass
  // over the draws; the old slot may be left empty (see close_slot). The draw-side sums do not
  // change: the item stays in its draw clusters.
  void move(std::int64_t i, std::int32_t k) {
    const std::int32_t old = est_[i];
    if (k == old) return;
    grow(k + 1);
    touch(old);
    touch(k);
    const Label* lab = d_.item(i);
    const std::int64_t* base = d_.base;
    const std::int64_t stride = stride_;
    Count* cnt = cnt_;
    if (track_stats_) {
      double* J = J_.data();
      const double* dcell = dcell_.data();
      parallel_for(d_.H, [=](std::int64_t h) {
        Count* row = cnt + (base[h] + lab[h]) * stride;
        const Count gone = --row[old];
        const Count came = row[k]++;
        J[h] += dcell[came] - dcell[gone];
      }, kDrawGrain);
      E_ += dest_[size_[k]] - dest_[size_[old] - 1];
    } else {
      parallel_for(d_.H, [=](std::int64_t h) {
        Count* row = cnt + (base[h] + lab[h]) * stride;
        --row[old];
        ++row[k];
      }, kDrawGrain);
    }
    if (k == q_) ++q_;
    --size_[old];
    ++size_[k];
    est_[i] = k;
  }

  // The table side of add (kAdd) and remove: in every draw, item i's row gains (loses) one count
  // in slot k and in the allocated-items column, and the per-draw sums follow. Values are
  // captured ([=]) so that the pointers stay in registers (see parallel_for).
  template <bool kAdd, class Visit>
  void shift_item(std::int64_t i, std::int32_t k, Visit visit) {
    hr_valid_ = false;
    touch(k);
    const Label* lab = d_.item(i);
    const std::int64_t* base = d_.base;
    const std::int64_t stride = stride_;
    Count* cnt = cnt_;
    if (track_stats_) {
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
    } else {
      Count* col = cnt + k;
      parallel_for(d_.H, [=](std::int64_t h) {
        Count& x = col[(base[h] + lab[h]) * stride];
        visit(h, static_cast<std::int64_t>(x));
        x = static_cast<Count>(kAdd ? x + 1 : x - 1);
      }, kDrawGrain);
    }
  }

  // Zealous updates by table passes (count_table_snapshot.hpp): release_slot takes every item
  // out of slot k in one sequential pass, prefers_table_pass says when that beats item-by-item
  // moves, snapshot saves the whole state and restore puts it back.
  void release_slot(std::int32_t k);
  bool prefers_table_pass(std::int64_t members) const;
  void snapshot();
  void restore();

  // Recomputes the running per-draw sums and the estimate sum from the table and the slot
  // sizes, so that the rounding of incremental updates does not build up over a long run
  // (the search calls it after each scan and zealous round that changed them).
  void refresh_sums();

  // The largest difference between a kept sum and its recomputation, relative to the larger
  // of 1 and the recomputed value (0 for additive losses, which keep none). For tests.
  double sums_drift() const;

  // Scores putting unallocated item i in each slot 0..q-1 (out[k]) and in a new cluster
  // (out[q]); lower is better. Scores of one call are comparable with each other only.
  void score(std::int64_t i, double* out) { score_as(i, -1, out); }

  // The same for allocated item i, as if it had been removed first (its own slot scores
  // staying), without touching the table: a scan step costs one pass over the draws, and a
  // second only when the item moves.
  void score_move(std::int64_t i, double* out) { score_as(i, est_[i], out); }

  // add(i, k), then score(next, out): the same table and scores. For VI and the tabulated
  // losses the table update is made in the score's pass over the draws (scores_binder_vi.hpp).
  void add_score(std::int64_t i, std::int32_t k, std::int64_t next, double* out);

  // The Monte Carlo expected loss of the current (complete or partial) allocation, from
  // scratch so that no incremental rounding leaks into reported values.
  double expected_loss() const;

 private:
  // A row's allocated items and cell sum g_cell, and whether its zero cells may be skipped
  // (count_table_sums.hpp).
  void row_cell_sums(const Count* row, bool skip_zeros, std::int64_t& s, double& J) const;
  bool skip_zero_cells() const;
  // The sums kept in E_ and, for draw h, D_[h] and J_[h], from scratch: every term relative to
  // an empty cell, as the incremental updates count them from a cleared table.
  double fresh_est_sum() const;
  void fresh_draw_sums(std::int64_t h, double& D, double& J) const;

  // Scoring context: `old_` is the slot item i is virtually removed from (-1: i unallocated);
  // Es_ and ms_ are the estimate sum and item count once i is placed; sz(k) is slot k's size
  // without i.
  void score_as(std::int64_t i, std::int32_t old, double* out) {
    old_ = old;
    Es_ = old >= 0 ? E_ - dest_[size_[old] - 1] : E_;
    ms_ = old >= 0 ? m_ : m_ + 1;
    switch (loss_.kind) {
      case LossKind::Binder: score_binder(i, out); break;
      case LossKind::VI:
      case LossKind::Tabulated: score_additive(i, out); break;
      default: score_simd(i, out); break;  // omARI and the entropy losses (scores_dispatch.hpp)
    }
  }
  std::int64_t sz(std::int32_t k) const { return size_[k] - (k == old_ ? 1 : 0); }

  // The scores of each loss family, defined in scores_binder_vi.hpp (Binder, VI, tabulated),
  // scores_omari.hpp and scores_entropy.hpp (NVI, ID, NID).
  void score_binder(std::int64_t i, double* out);
  void score_additive(std::int64_t i, double* out);
  const double* cell_sums(std::int64_t i);
  void cell_sums_cached(std::int64_t i);
  template <bool kAll, bool kOwn, bool kAdd = false>
  void cell_sums_pass(std::int64_t i, const std::int32_t* ks, std::int32_t width, double* out);
  template <bool kAll>  // cell_sums_pass of an unallocated item, with add_score's update if one is due
  void fresh_cell_sums(std::int64_t i, const std::int32_t* ks, std::int32_t width, double* out);
  // Path P's kernels are inlined into one function per path, compiled for its instruction set.
  void score_simd(std::int64_t i, double* out);
  template <SimdPath P>
  SALSOX_INLINE void score_on(std::int64_t i, double* out);
  void score_baseline(std::int64_t i, double* out);
#if SALSOX_SIMD_X86
  SALSOX_TARGET_AVX2 void score_avx2(std::int64_t i, double* out);
#endif
  template <SimdPath P>
  static std::int32_t padded_slots(std::int32_t s) {
    return P == SimdPath::Baseline ? s : (s + simd_width(P) - 1) / simd_width(P) * simd_width(P);
  }
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
  // Whether NVI's and NID's scores take every slot as a lane on the AVX2 and AVX-512 paths,
  // up to kLaneVectors vectors of four slots (scores_entropy.hpp), and the cell sums on the
  // AVX-512 path (cell_lanes.hpp; EngineOptions::cell_lanes).
  static constexpr std::int32_t kLaneVectors = 8;
  bool lane_cells_ = true;
#if SALSOX_SIMD_X86
  template <int V>
  SALSOX_TARGET_AVX2 void nvi_draws_avx2(std::int64_t, std::int64_t, std::int64_t, const EntropyScale&, double*) const;
  template <bool kAlloc>
  void nid_lanes(std::int32_t vectors, std::int64_t, std::int64_t, std::int64_t, const EntropyScale&, double*,
                 double*) const;
  template <int V, bool kAlloc>
  SALSOX_TARGET_AVX2 void nid_draws_avx2(std::int64_t, std::int64_t, std::int64_t, const EntropyScale&, double*,
                                         double*) const;
#endif

  // The non-additive losses evaluate combine(m + 1, D'_h, E'_k, J'_hk) for every draw h and
  // slot k. Most cells of item i's row are 0, and g(1) = g(0) for every built-in loss, so in a
  // zero cell J'_hk = J_h: the loss depends on k only through E'_k. The entropy losses then
  // split into per-draw sums, evaluated once per item for all slots, plus a correction for
  // the few nonzero cells (their true value minus their zero-cell value).

  // Calls f(draw_sum, joint_sum, row, dec) for each draw (last to first): D_h with item i in
  // its draw cluster, J_h without item i, and the counts of item i's draw cluster across the
  // slots, of which cell `dec` (the slot item i is virtually removed from, or -1) is to be read
  // one lower: cell k holds row[k] - (k == dec).
  template <class F>
  SALSOX_INLINE void for_each_draw(std::int64_t i, F f) const;
  // The same over draws hi-1 down to lo, with the draw as a fifth argument (count_table_rows.hpp).
  template <class F>
  SALSOX_INLINE void for_draws(std::int64_t i, std::int64_t lo, std::int64_t hi, F f) const;
  // A score pass's loop over blocks, and its sums over fixed chunks of draws (scores_shared.hpp).
  template <SimdPath P, class F>
  SALSOX_INLINE void share_score(std::int64_t count, const F& f);
  template <SimdPath P, class Body>
  SALSOX_INLINE const double* draw_chunks(std::int32_t width, const Body& body);

  // for (i = 0; i < count; ++i) f(i), over threads_ threads or shared with the search's idle
  // threads (Crew; the same result either way). With one thread the loop runs inline:
  // entering even a one-thread OpenMP region per item costs more than a short pass.
  // The table updates pass lambdas that capture plain values ([=]): run on a private copy
  // whose address never escapes, their pointers stay in registers even though every count
  // store, being a char-sized store, may alias anything in memory.
  // Returns the threads that took part.
  // `min_grain`: the fewest iterations a shared block takes (kDrawGrain for per-draw updates).
  template <class F>
  int parallel_for(std::int64_t count, const F& f, std::int64_t min_grain = 1) const {
    if (const int joined = d_.H >= kShareDraws ? Crew::share_here(count, f, min_grain) : 0) {
      team_max_ = std::max(team_max_, joined);
      return joined;
    }
#ifdef _OPENMP
    if (threads_ > 1) {
      int team = 1;
#pragma omp parallel num_threads(threads_)
      {
        if (omp_get_thread_num() == 0) team = omp_get_num_threads();
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < count; ++i) f(i);
      }
      // A static schedule leaves threads past the count without an iteration.
      team = static_cast<int>(std::min<std::int64_t>(team, count));
      team_max_ = std::max(team_max_, team);
      return team;
    }
#endif
    F local = f;
    for (std::int64_t i = 0; i < count; ++i) local(i);
    return 1;
  }

  // Threads parallel_for may run a pass over the draws on now (a hint: the result never depends on it).
  int shared_threads() const { return d_.H >= kShareDraws ? std::max(threads_, Crew::team_here()) : 1; }
  // Passes over fewer draws take less time than handing blocks to another core: not shared.
  static constexpr std::int64_t kShareDraws = 1024;
  // Draws per shared block of a table update (a few nanoseconds a draw; see Crew::share_here).
  static constexpr std::int64_t kDrawGrain = 512;

  static constexpr std::size_t kCacheLine = 64;
  static constexpr std::int32_t kFirstSlots = 7;  // slots of a fresh layout (8-byte rows of uint8)

  // The row layout (count_table_rows.hpp): set_layout for an empty table, grow to fit slots.
  void set_layout(std::int32_t slots);
  void grow(std::int32_t slots);

  // Draws per chunk of the entropy scores' sums (see draw_chunks: enough chunks for a few
  // threads from 1,000 draws on).
  static constexpr std::int64_t kDrawChunk = 256;
  // The integer sums of Binder's and the cell-sum losses' scores (score_binder,
  // cell_sums_pass) are exact, so any split of the draws gives the same bits: one block when
  // the pass has one thread, blocks of kExactBlock draws when others may help.
  static constexpr std::int64_t kExactBlock = 512;
  // Passes over up to this many slots keep their sums in registers (cell_sums_pass).
  static constexpr std::int32_t kFewSlots = 4;
  // Binder's count sums over up to this many slots stay in registers (score_binder).
  static constexpr std::int32_t kBinderLanes = 8;
  std::int64_t exact_blocks() const { return shared_threads() > 1 ? (d_.H + kExactBlock - 1) / kExactBlock : 1; }
  std::int64_t block_begin(std::int64_t c, std::int64_t blocks) const { return c * d_.H / blocks; }
  // dcell_ in fixed point, for the exact cell sums (see fix_cell_table).
  void fix_cell_table();

  // Elements per row for `elems` used ones: a power of two bytes up to a cache line, whole
  // cache lines beyond, so that (with the table line-aligned) a row spans as few lines as it can.
  static std::int64_t row_stride(std::int64_t elems) {
    const auto bytes = static_cast<std::size_t>(elems) * sizeof(Count);
    std::size_t padded = sizeof(Count);
    if (bytes > kCacheLine) padded = (bytes + kCacheLine - 1) / kCacheLine * kCacheLine;
    else
      while (padded < bytes) padded *= 2;
    return static_cast<std::int64_t>(padded / sizeof(Count));
  }

  DrawsView<Label> d_;
  const CountLoss& loss_;
  std::int32_t kd_;
  bool track_stats_;
  // Row r holds the counts of draw cluster r in slots 0..cap_-1 and, for non-additive losses,
  // the number of its items allocated so far at index cap_; rows are stride_ apart. The layout
  // holds the slots in use (see grow), at most full_stride_ (max_clusters slots) wide.
  std::int64_t full_stride_, stride_ = 0;
  std::int32_t cap_ = 0;
  SimdPath simd_;
  std::vector<Count> cnt_store_;
  Count* cnt_ = nullptr;  // line-aligned start of the rows within cnt_store_
  std::vector<std::int32_t> est_;
  std::vector<std::int64_t> size_;
  std::vector<double> acc_, e_new_;
  // Scratch for the non-additive scores, indexed by slot (0..q) or bucket (0..q+1).
  std::vector<double> e_norm_, e_x_, he_, inv_he_, sorted_he_;
  std::vector<std::int32_t> order_;
  std::vector<double> bucket_a_, bucket_b_, bucket_c_;
  std::vector<std::int64_t> acc_int_, part_int_;
  int threads_ = 1;  // threads inside one run (over draws)
  mutable int team_max_ = 1, score_team_max_ = 1;  // see threads_used
  std::vector<double> dcell_, dest_, ddraw_;
  // dcell_ in units of 2^-cell_shift_ (see fix_cell_table).
  std::vector<std::int64_t> dcell_fixed_;
  int cell_shift_ = 0;
  bool cells_are_counts_ = false;  // dcell_[x] == x (pair counts: omARI's fused score)
  // Running per-draw sums for non-additive losses.
  std::vector<double> D_, J_;
  // Each draw's loss, for expected_loss when it is shared; a row of zeros for its other path.
  static constexpr std::int32_t kZeroRow = 8;
  mutable std::vector<double> draw_loss_;
  double E_ = 0.0;
  std::int32_t q_ = 0;
  std::int64_t m_ = 0;
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
  // Each slot's column version: a new value of clock_ whenever a count in the slot changes
  // (or the slot is renumbered), so that a value computed from the column is still valid while
  // its version is. The cell sums cache (see cell_sums): per item i and slot k, at i * kd_ + k,
  // the sum and the column version it was computed at (0: never); dirty_ and fresh_ are
  // scratch (the slots a score recomputes, and their sums).
  std::uint64_t clock_ = 1;
  std::vector<std::uint64_t> col_ver_;
  bool cache_cells_ = false;  // whether cell_sums caches (allocated at its first call)
  std::vector<double> cache_val_;
  std::vector<std::uint64_t> cache_ver_;
  std::vector<std::int32_t> dirty_;
  std::vector<double> fresh_;
  void touch(std::int32_t k) { col_ver_[k] = ++clock_; }
  void touch_all() {
    for (auto& v : col_ver_) v = ++clock_;
  }
  // The state saved by snapshot().
  std::vector<Count> snap_cnt_;
  std::vector<std::int32_t> snap_est_;
  std::vector<std::uint64_t> snap_col_ver_;
  std::vector<std::int64_t> snap_size_;
  std::vector<double> snap_D_, snap_J_;
  double snap_E_ = 0.0;
  std::int32_t snap_q_ = 0, snap_cap_ = 0;
  std::int64_t snap_stride_ = 0;
  std::int64_t snap_m_ = 0;
};

}  // namespace salsox

// The scoring member functions (declared above), one header per loss family.
#include "count_table_rows.hpp"
#include "count_table_sums.hpp"
#include "count_table_snapshot.hpp"
#include "count_table_cache.hpp"
#include "scores_binder_vi.hpp"
#include "scores_shared.hpp"
#include "scores_entropy.hpp"
#include "scores_omari.hpp"
#include "scores_dispatch.hpp"
