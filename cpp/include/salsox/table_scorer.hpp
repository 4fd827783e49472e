// What every count-table scorer shares: the interface a CountTableState (count_table.hpp) scores
// through, one scorer per loss family (cell_sum_scorer.hpp: Binder, VI and tabulated losses;
// omari_scorer.hpp; entropy_scorer.hpp: NVI, ID and NID), each compiled in a unit of its own
// (cpp/bindings/table_scores_*.cpp) and reading the state through its public interface. Also the
// score passes' shared parts: the walk over an item's rows, and the sums by fixed chunks of draws
// added in chunk order, so that the bits never depend on the thread count.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "draws.hpp"
#include "line_rows.hpp"
#include "options.hpp"
#include "simd.hpp"
#if SALSOX_SIMD_X86
#include <immintrin.h>
#endif

namespace salsox {

template <class Label, class Count>
class CountTableState;

template <class Label, class Count>
class TableScorer {
 public:
  using State = CountTableState<Label, Count>;

  TableScorer(const State& state, const EngineOptions& opts) : s_(state), d_(state.draws()), simd_(opts.simd) {}
  virtual ~TableScorer() = default;

  // Scores putting item i in each slot 0..q-1 (out[k]) and in a new cluster (out[q]), as if
  // taken out of slot `old` first (-1: i is unallocated); lower is better.
  virtual void score(std::int64_t i, std::int32_t old, double* out) = 0;

  // The most threads a score pass had since reset_threads_used.
  virtual void reset_threads_used() { team_max_ = 1; }
  virtual int threads_used() const { return team_max_; }

  // Draws per chunk of the sums over draws (draw_chunks): a few threads' worth from 1,000 draws.
  static constexpr std::int64_t kDrawChunk = 256;

 protected:
  // The score's context: `old_` as in score, Es_ and ms_ the estimate sum and item count once
  // i is placed, sz(k) slot k's size without i.
  void begin(std::int32_t old) {
    old_ = old;
    Es_ = old >= 0 ? s_.est_sum() - s_.est_diffs()[s_.size(old) - 1] : s_.est_sum();
    ms_ = old >= 0 ? s_.allocated() : s_.allocated() + 1;
  }
  std::int64_t sz(std::int32_t k) const { return s_.size(k) - (k == old_ ? 1 : 0); }

  // Calls f(draw_sum, joint_sum, row, dec, h) for draws hi-1 down to lo: D_h with item i in its
  // draw cluster, J_h without it, and item i's row, whose cell k holds row[k] - (k == dec). The
  // passes walk the draws opposite to the table updates, so they start on the rows touched last.
  // kAhead > 0 prefetches the row kAhead draws on: the rows are scattered, and the AVX2 lanes'
  // work per draw is short enough to wait on them (see slot_lanes). kOld: 1 when the caller is
  // compiled for an item in a slot (dec >= 0), -1 for one in none, 0 to test dec in each draw.
  template <int kAhead = 0, int kOld = 0, class F>
  SALSOX_INLINE void for_draws(std::int64_t i, std::int64_t lo, std::int64_t hi, F f) const;

  // f(b) for b in [0, count) on the state's threads, compiled for path P (so that the kernels
  // inlined into f use its instructions), counted in threads_used.
  template <SimdPath P, class F>
  SALSOX_INLINE void share_score(std::int64_t count, const F& f);
  void count_team(int team) { team_max_ = std::max(team_max_, team); }

  // Sums `width` values over the draws: body(lo, hi, sums, nz) adds the terms of draws hi-1 down
  // to lo into sums[0..width) (zeroed; nz: for_each_nonzero's scratch), per chunk of kDrawChunk
  // draws, added last chunk first (the draws' order). Returns the totals (valid until the next call).
  template <SimdPath P, class Body>
  SALSOX_INLINE const double* draw_chunks(std::int32_t width, const Body& body);

  // The integer sums over draws are exact, so any split of the draws gives the same bits: one
  // block on one thread, blocks of kExactBlock when others may help.
  static constexpr std::int64_t kExactBlock = 512;
  std::int64_t exact_blocks() const { return s_.shared_threads() > 1 ? (d_.H + kExactBlock - 1) / kExactBlock : 1; }
  std::int64_t block_begin(std::int64_t c, std::int64_t blocks) const { return c * d_.H / blocks; }

  const State& s_;
  const DrawsView<Label>& d_;
  const SimdPath simd_;
  std::int32_t old_ = -1;
  double Es_ = 0.0;
  std::int64_t ms_ = 0;

 private:
  int team_max_ = 1;
  // draw_chunks' scratch: each chunk's sums and nonzero-cell list, and their totals.
  std::vector<double> chunk_part_, chunk_sum_;
  std::vector<std::int32_t> chunk_nz_;
};

// The scorer of family Scorer for `state`, instantiated in that family's unit (the units that
// build states declare it extern, so that they need the interface only).
template <class, class>
class CellSumScorer;
template <class, class>
class OmariScorer;
template <class, class>
class EntropyScorer;
template <template <class, class> class Scorer, class Label, class Count>
std::unique_ptr<TableScorer<Label, Count>> make_scorer(const CountTableState<Label, Count>& state,
                                                       const EngineOptions& opts) {
  return std::make_unique<Scorer<Label, Count>>(state, opts);
}

template <class Label, class Count>
template <int kAhead, int kOld, class F>
inline void TableScorer<Label, Count>::for_draws(std::int64_t i, std::int64_t lo, std::int64_t hi, F f) const {
  const Label* lab = d_.item(i);
  const std::int32_t dec = old_, alloc = s_.allocated_column();
  const Count* cnt = s_.counts();
  const std::int64_t stride = s_.stride();
  const std::int64_t* base = d_.base;  // (a local: f's stores may alias what it reaches through s_)
  const double *D = s_.draw_sums(), *J = s_.joint_sums(), *ddraw = s_.draw_diffs(), *dcell = s_.cell_diffs();
  for (std::int64_t h = hi - 1; h >= lo; --h) {
    if (kAhead > 0 && h >= lo + kAhead) __builtin_prefetch(cnt + (base[h - kAhead] + lab[h - kAhead]) * stride);
    const Count* row = cnt + (base[h] + lab[h]) * stride;
    const bool out = kOld == 0 ? dec < 0 : kOld < 0;
    f(out ? D[h] + ddraw[row[alloc]] : D[h], out ? J[h] : J[h] - dcell[row[dec] - 1], row, dec, h);
  }
}

#if SALSOX_SIMD_X86
// The AVX2 lanes of slots first .. first + 3 (a slot per lane of the entropy and omARI kernels):
// keep is all ones where the slot is in use (below q), at_dec 1 where it is slot `dec`, whose
// cell reads one lower (for_draws). Those kernels take their rows from for_draws<8> with an f of
// the AVX2 target, which cannot be always_inline in for_draws: the kernels are flattened instead.
struct SlotLanes {
  __m128i keep, at_dec;
};
SALSOX_TARGET_AVX2 inline SlotLanes slot_lanes(std::int32_t first, std::int32_t q, std::int32_t dec) {
  const __m128i k = _mm_add_epi32(_mm_set1_epi32(first), _mm_set_epi32(3, 2, 1, 0));
  const __m128i at_dec = _mm_and_si128(_mm_cmpeq_epi32(k, _mm_set1_epi32(dec)), _mm_set1_epi32(1));
  return {_mm_cmplt_epi32(k, _mm_set1_epi32(q)), at_dec};
}
#endif

template <class Label, class Count>
template <SimdPath P, class F>
inline void TableScorer<Label, Count>::share_score(std::int64_t count, const F& f) {
  int team = 1;
#if SALSOX_SIMD_X86
  if constexpr (P == SimdPath::AVX2)
    team = s_.parallel_for(count, [&f](std::int64_t b) SALSOX_TARGET_AVX2 { f(b); });
  else
#endif
    team = s_.parallel_for(count, [&f](std::int64_t b) { f(b); });
  count_team(team);
}

template <class Label, class Count>
template <SimdPath P, class Body>
inline const double* TableScorer<Label, Count>::draw_chunks(std::int32_t width, const Body& body) {
  const std::int64_t H = d_.H, chunks = std::max<std::int64_t>(1, (H + kDrawChunk - 1) / kDrawChunk);
  const auto w = static_cast<std::size_t>(width);
  // Each chunk's sums and scratch on lines of their own (see line_rows).
  std::int64_t pw = 0, nzw = 0;
  double* part = line_rows(chunk_part_, chunks, width, pw);
  std::int32_t* nz = line_rows(chunk_nz_, chunks, static_cast<std::int64_t>(s_.slots()) + 1, nzw);
  if (chunk_sum_.size() < w) chunk_sum_.resize(w);
  auto chunk = [&](std::int64_t c) SALSOX_INLINE {
    double* sums = part + c * pw;
    std::fill(sums, sums + w, 0.0);
    body(c * kDrawChunk, std::min(H, (c + 1) * kDrawChunk), sums, nz + c * nzw);
  };
  if (chunks > 1 && s_.shared_threads() > 1) {
    share_score<P>(chunks, chunk);
  } else {
    for (std::int64_t c = chunks - 1; c >= 0; --c) chunk(c);
  }
  if (chunks == 1) return part;
  double* total = chunk_sum_.data();
  std::copy(part + (chunks - 1) * pw, part + (chunks - 1) * pw + width, total);
  for (std::int64_t c = chunks - 2; c >= 0; --c) {
    const double* sums = part + c * pw;
    for (std::size_t j = 0; j < w; ++j) total[j] += sums[j];
  }
  return total;
}

}  // namespace salsox
