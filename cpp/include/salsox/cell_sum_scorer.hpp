// The scorer of the cell-sum losses (table_scorer.hpp): Binder, VI and the tabulated losses, whose
// scores are sums over draws of one cell each per slot, and the cell sums ID's score takes. The sums
// are of integers (counts, or differences in fixed point), so thread-independent.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "count_loss.hpp"
#include "count_table.hpp"
#include "line_rows.hpp"
#include "table_scorer.hpp"

namespace salsox {

template <class Label, class Count>
class CellSumScorer : public TableScorer<Label, Count> {
  using Base = TableScorer<Label, Count>;
  using Base::s_, Base::d_, Base::old_, Base::sz, Base::begin, Base::exact_blocks, Base::block_begin,
      Base::count_team;

 public:
  CellSumScorer(const typename Base::State& state, const EngineOptions& opts);

  void score(std::int64_t i, std::int32_t old, double* out) override;

  // acc[k] = sum_h dcell(x_hk) for the slots k < q, with item i as in score (slot old's cells
  // read one lower). Returns acc_ (valid until the next score).
  const double* cell_sums(std::int64_t i, std::int32_t old);

 private:
  void score_binder(std::int64_t i, double* out);
  void score_additive(std::int64_t i, double* out);
  void all_cell_sums(std::int64_t i, double* out);
  void cell_sums_cached(std::int64_t i);  // cell_sums_cache.hpp
  template <bool kAll, bool kOwn>
  void cell_sums_pass(std::int64_t i, const std::int32_t* ks, std::int32_t width, double* out);
  // dcell in fixed point, for the exact cell sums (see fix_cell_table).
  void fix_cell_table();

  // Binder's count sums over up to this many slots stay in registers (score_binder).
  static constexpr std::int32_t kBinderLanes = 8;

  const CountLoss& loss_;
  const bool binder_unrolled_;  // EngineOptions::binder_unrolled
  std::vector<double> acc_;
  std::vector<std::int64_t> acc_int_, part_int_;
  // dcell in units of 2^-cell_shift_ (see fix_cell_table).
  std::vector<std::int64_t> dcell_fixed_;
  int cell_shift_ = 0;
  // The cell sums cache (cell_sums_cache.hpp): per item i and slot k, at i * max_clusters + k,
  // the sum and the column version it was computed at (0: never); dirty_ and fresh_ are its scratch.
  bool cache_cells_ = false;  // whether cell_sums caches (allocated at its first call)
  std::vector<double> cache_val_;
  std::vector<std::uint64_t> cache_ver_;
  std::vector<std::int32_t> dirty_;
  std::vector<double> fresh_;
};

template <class Label, class Count>
CellSumScorer<Label, Count>::CellSumScorer(const typename Base::State& state, const EngineOptions& opts)
    : Base(state, opts), loss_(state.loss()), binder_unrolled_(opts.binder_unrolled) {
  const std::int32_t kd = state.max_clusters();
  acc_.assign(kd + 1 + kSimdPad, 0.0);
  acc_int_.assign(kd + 1, 0);
  if (scores_by_cell_sums(loss_.kind)) fix_cell_table();
  const bool tracked = !loss_.additive();
  cache_cells_ = scores_by_cell_sums(loss_.kind) && opts.cell_cache &&
                 state.cell_cache_fits(d_.n, kd, state.table_bytes(d_.rows, kd, tracked));
}

template <class Label, class Count>
void CellSumScorer<Label, Count>::score(std::int64_t i, std::int32_t old, double* out) {
  begin(old);
  if (loss_.kind == LossKind::Binder) score_binder(i, out);
  else score_additive(i, out);
}

// Paper's shortcut: b H n_.k - (a + b) sum_h n_{c_h(i) k}; a new cluster scores 0. With
// item i virtually removed from slot `old_`, every one of its cells there is one less.
template <class Label, class Count>
void CellSumScorer<Label, Count>::score_binder(std::int64_t i, double* out) {
  const Label* lab = d_.item(i);
  const std::int32_t q = s_.slots();
  const Count* cnt = s_.counts();
  const std::int64_t stride = s_.stride();
  const std::int64_t* base = d_.base;
  const std::int64_t chunks = exact_blocks();
  std::int64_t pw = 0;
  std::int64_t* part = line_rows(part_int_, chunks, q, pw);
  const int team = s_.parallel_for(chunks, [&](std::int64_t c) {
    std::int64_t* acc = part + c * pw;
    const std::int64_t lo = block_begin(c, chunks);  // a local: the stores to acc may alias d_.H
    std::int64_t h = block_begin(c + 1, chunks) - 1;
    if (binder_unrolled_ && q <= kBinderLanes) {
      // Eight slots' sums in registers. Counts past q are read (inside the row, or the next rows
      // and the table's spare line) and dropped.
      std::int64_t a[kBinderLanes] = {};
      for (; h >= lo; --h) {
        const Count* row = cnt + (base[h] + lab[h]) * stride;
        for (std::int32_t k = 0; k < kBinderLanes; ++k) a[k] += row[k];
      }
      std::copy(a, a + q, acc);
      return;
    }
    std::fill(acc, acc + q, 0);
    // Four draws per step: one add to memory per slot instead of four.
    for (; binder_unrolled_ && h >= lo + 3; h -= 4) {
      const Count* r0 = cnt + (base[h] + lab[h]) * stride;
      const Count* r1 = cnt + (base[h - 1] + lab[h - 1]) * stride;
      const Count* r2 = cnt + (base[h - 2] + lab[h - 2]) * stride;
      const Count* r3 = cnt + (base[h - 3] + lab[h - 3]) * stride;
      for (std::int32_t k = 0; k < q; ++k)
        acc[k] += (std::int64_t{r0[k]} + r1[k]) + (std::int64_t{r2[k]} + r3[k]);
    }
    for (; h >= lo; --h) {
      const Count* row = cnt + (base[h] + lab[h]) * stride;
      for (std::int32_t k = 0; k < q; ++k) acc[k] += row[k];
    }
  });
  count_team(team);
  std::fill(acc_int_.begin(), acc_int_.begin() + q, 0);
  for (std::int64_t c = 0; c < chunks; ++c)
    for (std::int32_t k = 0; k < q; ++k) acc_int_[k] += part[c * pw + k];
  if (old_ >= 0) acc_int_[old_] -= d_.H;
  const double H = static_cast<double>(d_.H);
  for (std::int32_t k = 0; k < q; ++k)
    out[k] = loss_.b * H * static_cast<double>(sz(k)) -
             (loss_.a + loss_.b) * static_cast<double>(acc_int_[k]);
  out[q] = 0.0;
}

// H dE(n_.k) + sum_h dJ(n_{c_h(i) k}), dE and dJ tabulated differences (for VI the paper's
// f(n) = n log n - (n - 1) log(n - 1)), the cell sums from cell_sums.
template <class Label, class Count>
void CellSumScorer<Label, Count>::score_additive(std::int64_t i, double* out) {
  const double* acc = cell_sums(i, old_);
  const double H = static_cast<double>(d_.H);
  const double we = loss_.est_weight(), wc = loss_.cell_weight();
  const double* dest = s_.est_diffs();
  const std::int32_t q = s_.slots();
  for (std::int32_t k = 0; k < q; ++k) out[k] = we * H * dest[sz(k)] + wc * acc[k];
  out[q] = H * (we * dest[0] + wc * s_.cell_diffs()[0]);
}

template <class Label, class Count>
const double* CellSumScorer<Label, Count>::cell_sums(std::int64_t i, std::int32_t old) {
  begin(old);
  if (cache_cells_) cell_sums_cached(i);
  else all_cell_sums(i, acc_.data());
  return acc_.data();
}

// The same into out without the cache: one pass over every slot.
template <class Label, class Count>
inline void CellSumScorer<Label, Count>::all_cell_sums(std::int64_t i, double* out) {
  const std::int32_t q = s_.slots();
  if (old_ < 0) return cell_sums_pass<true, false>(i, nullptr, q, out);
  cell_sums_pass<true, true>(i, nullptr, q, out);
  out[old_] = out[q];
}

// out[j] = sum_h dcell(x_hk) for slot k = ks[j] (kAll: k = j), j < width, and with kOwn
// out[width] = the same for slot old_ read one lower (with kAll, out[old_] is left 0). The terms
// are in fixed point, so the sums are exact: the same bits whatever the split of the draws and
// the slots taken.
template <class Label, class Count>
template <bool kAll, bool kOwn>
inline void CellSumScorer<Label, Count>::cell_sums_pass(std::int64_t i, const std::int32_t* ks, std::int32_t width,
                                                        double* out) {
  const Label* lab = d_.item(i);
  const Count* const counts = s_.counts();
  const std::int64_t row_stride = s_.stride();
  const std::int64_t* dc = dcell_fixed_.data();
  const std::int32_t q = width;
  const std::int32_t old = old_ >= 0 ? old_ : 0;
  const std::int64_t blocks = exact_blocks();
  std::int64_t pw = 0;
  std::int64_t* part = line_rows(part_int_, blocks, q + 1, pw);
  const int team = s_.parallel_for(blocks, [&](std::int64_t c) {
    // Locals, not captures: the stores to acc may alias anything whose address has escaped, and
    // these stay in registers only if theirs has not.
    const Label* const il = lab;
    const std::int64_t* const d = dc;
    const std::int64_t* const base = d_.base;
    const std::int64_t stride = row_stride;
    const Count* const cnt = counts;
    auto row = [=](std::int64_t h) SALSOX_INLINE { return cnt + (base[h] + il[h]) * stride; };
    std::int64_t* acc = part + c * pw;
    std::fill(acc, acc + q, 0);
    std::int64_t own = 0;  // the old slot's cells, one lower
    const std::int64_t lo = block_begin(c, blocks);
    std::int64_t h = block_begin(c + 1, blocks) - 1;
    // With kAll and kOwn, the own slot's plain cells are skipped (`own` takes its place).
    const std::int32_t skip = kAll && kOwn ? old : q;
    const std::int32_t resume = kAll && kOwn ? old + 1 : q;
    // Four draws per step: one add to memory per slot instead of four.
    for (; h >= lo + 3; h -= 4) {
      const Count* r0 = row(h);
      const Count* r1 = row(h - 1);
      const Count* r2 = row(h - 2);
      const Count* r3 = row(h - 3);
      auto four = [&](std::int32_t j) SALSOX_INLINE {
        const std::int32_t k = kAll ? j : ks[j];
        acc[j] += (d[r0[k]] + d[r1[k]]) + (d[r2[k]] + d[r3[k]]);
      };
      for (std::int32_t j = 0; j < skip; ++j) four(j);
      for (std::int32_t j = resume; j < q; ++j) four(j);
      if constexpr (kOwn) own += (d[r0[old] - 1] + d[r1[old] - 1]) + (d[r2[old] - 1] + d[r3[old] - 1]);
    }
    for (; h >= lo; --h) {
      const Count* r = row(h);
      for (std::int32_t j = 0; j < skip; ++j) acc[j] += d[r[kAll ? j : ks[j]]];
      for (std::int32_t j = resume; j < q; ++j) acc[j] += d[r[kAll ? j : ks[j]]];
      if constexpr (kOwn) own += d[r[old] - 1];
    }
    acc[q] = own;
  });
  count_team(team);
  for (std::int32_t j = 0; j <= q; ++j) {
    std::int64_t sum = 0;
    for (std::int64_t c = 0; c < blocks; ++c) sum += part[c * pw + j];
    out[j] = std::ldexp(static_cast<double>(sum), -cell_shift_);
  }
}

// dcell_fixed_[x] = dcell(x) 2^s rounded, s the largest shift for which H terms of any size
// sum within 2^62. Rounding each term by at most 2^-(s+1) loses about what summing H doubles
// does, but the same in every order.
template <class Label, class Count>
void CellSumScorer<Label, Count>::fix_cell_table() {
  double big = 0.0;
  const double* dcell = s_.cell_diffs();
  const std::size_t cells = s_.cell_diffs_size();
  for (std::size_t x = 0; x < cells; ++x) big = std::max(big, std::fabs(dcell[x]));
  const double bound = big * static_cast<double>(d_.H);
  if (!std::isfinite(bound))
    throw std::invalid_argument("the loss's cell table has differences too large to sum over the draws (" +
                                std::to_string(big) + ")");
  int e = 0;
  std::frexp(bound, &e);  // bound < 2^e
  cell_shift_ = bound > 0.0 ? 62 - e : 0;
  dcell_fixed_.clear();
  for (std::size_t x = 0; x < cells; ++x) dcell_fixed_.push_back(std::llround(std::ldexp(dcell[x], cell_shift_)));
}

}  // namespace salsox

#include "cell_sums_cache.hpp"
