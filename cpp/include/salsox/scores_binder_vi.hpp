// Scores of the additive count losses for CountTableState (count_table.hpp): Binder, VI and
// tabulated losses, whose score of a slot is a sum over draws of one tabulated difference per
// cell, summed in integers (counts, or differences in fixed point) so that no split of the
// draws between threads changes them.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "count_table.hpp"
#include "line_rows.hpp"

namespace salsox {

// Paper's shortcut: b H n_.k - (a + b) sum_h n_{c_h(i) k}; a new cluster scores 0. With
// item i virtually removed from slot `old_`, every one of its cells there is one less.
template <class Label, class Count>
inline void CountTableState<Label, Count>::score_binder(std::int64_t i, double* out) {
  const Label* lab = d_.item(i);
  const std::int32_t q = q_;
  const std::int64_t chunks = exact_blocks();
  std::int64_t pw = 0;
  std::int64_t* part = line_rows(part_int_, chunks, q, pw);
  const int team = parallel_for(chunks, [&](std::int64_t c) {
    std::int64_t* acc = part + c * pw;
    const std::int64_t lo = block_begin(c, chunks);  // a local: the stores to acc may alias d_.H
    std::int64_t h = block_begin(c + 1, chunks) - 1;
    if (q <= kBinderLanes) {
      // Eight slots' sums in registers (an add to memory per slot and draw chains every draw on
      // the last one's store). Counts past q are read (inside the row, or the next rows and the
      // table's spare line) and dropped.
      std::int64_t a[kBinderLanes] = {};
      for (; h >= lo; --h) {
        const Count* row = cnt_ + (row_index(h, lab[h])) * stride_;
        for (std::int32_t k = 0; k < kBinderLanes; ++k) a[k] += row[k];
      }
      std::copy(a, a + q, acc);
      return;
    }
    std::fill(acc, acc + q, 0);
    // Four draws per step: one add to memory per slot instead of four.
    for (; h >= lo + 3; h -= 4) {
      const Count* r0 = cnt_ + (row_index(h, lab[h])) * stride_;
      const Count* r1 = cnt_ + (row_index(h - 1, lab[h - 1])) * stride_;
      const Count* r2 = cnt_ + (row_index(h - 2, lab[h - 2])) * stride_;
      const Count* r3 = cnt_ + (row_index(h - 3, lab[h - 3])) * stride_;
      for (std::int32_t k = 0; k < q; ++k)
        acc[k] += (std::int64_t{r0[k]} + r1[k]) + (std::int64_t{r2[k]} + r3[k]);
    }
    for (; h >= lo; --h) {
      const Count* row = cnt_ + (row_index(h, lab[h])) * stride_;
      for (std::int32_t k = 0; k < q; ++k) acc[k] += row[k];
    }
  });
  score_team_max_ = std::max(score_team_max_, team);
  std::fill(acc_int_.begin(), acc_int_.begin() + q, 0);
  for (std::int64_t c = 0; c < chunks; ++c)
    for (std::int32_t k = 0; k < q; ++k) acc_int_[k] += part[c * pw + k];
  if (old_ >= 0) acc_int_[old_] -= d_.H;
  const double H = static_cast<double>(d_.H);
  for (std::int32_t k = 0; k < q_; ++k)
    out[k] = loss_.b * H * static_cast<double>(sz(k)) -
             (loss_.a + loss_.b) * static_cast<double>(acc_int_[k]);
  out[q_] = 0.0;
}

// H dE(n_.k) + sum_h dJ(n_{c_h(i) k}), dE and dJ tabulated differences (for VI the paper's
// f(n) = n log n - (n - 1) log(n - 1)), the cell sums from cell_sums.
template <class Label, class Count>
inline void CountTableState<Label, Count>::score_additive(std::int64_t i, double* out) {
  const double* acc = cell_sums(i);
  const double H = static_cast<double>(d_.H);
  const double we = loss_.est_weight(), wc = loss_.cell_weight();
  for (std::int32_t k = 0; k < q_; ++k) out[k] = we * H * dest_[sz(k)] + wc * acc[k];
  out[q_] = H * (we * dest_[0] + wc * dcell_[0]);
}

// acc[k] = sum_h dcell(x_hk) for the slots k < q, x_hk the count of item i's draw cluster in
// slot k; with item i virtually removed from slot `old_`, that slot's cells are read one
// lower, on the side. Returns acc_ (valid until the next score).
template <class Label, class Count>
inline const double* CountTableState<Label, Count>::cell_sums(std::int64_t i) {
  double* acc = acc_.data();
  if (cache_cells_) {
    cell_sums_cached(i);
  } else if (old_ >= 0) {
    cell_sums_pass<true, true>(i, nullptr, q_, acc);
    acc[old_] = acc[q_];
  } else {
    cell_sums_pass<true, false>(i, nullptr, q_, acc);
  }
  return acc;
}

// out[j] = sum_h dcell(x_hk) for slot k = ks[j] (kAll: k = j), j < width, and with kOwn
// out[width] = the same for the item's slot old_ read one lower (with kAll too, out[old_] is
// then left 0: every caller puts out[width] there). The terms are dcell in fixed
// point (dcell_fixed_), so their sums are exact: the same whatever blocks of draws the pass is
// split into and whichever threads take them, and the same for a slot whichever other slots the
// pass takes. Only the final conversion to double rounds.
template <class Label, class Count>
template <bool kAll, bool kOwn>
inline void CountTableState<Label, Count>::cell_sums_pass(std::int64_t i, const std::int32_t* ks, std::int32_t width,
                                                          double* out) {
  const Label* lab = d_.item(i);
  const std::int64_t* dc = dcell_fixed_.data();
  const std::int32_t q = width;
  const std::int32_t old = old_ >= 0 ? old_ : 0;
  const std::int64_t blocks = exact_blocks();
  std::int64_t pw = 0;
  std::int64_t* part = line_rows(part_int_, blocks, q + 1, pw);
  const int team = parallel_for(blocks, [&](std::int64_t c) {
    std::int64_t* acc = part + c * pw;
    std::fill(acc, acc + q, 0);
    std::int64_t own = 0;  // the old slot's cells, one lower
    // Four draws per step: one add to memory per slot instead of four.
    const std::int64_t lo = block_begin(c, blocks);
    std::int64_t h = block_begin(c + 1, blocks) - 1;
    // Taking every slot and the item's own, the own slot's plain cells are not needed (the
    // caller puts `own` in its place): the slots before it, then those after it.
    const std::int32_t skip = kAll && kOwn ? old : q;
    const std::int32_t resume = kAll && kOwn ? old + 1 : q;
    // Few slots (a small estimate, or the few whose column changed): their sums in registers,
    // not added to memory, which chains every step on the last step's store.
    const std::int32_t taken = skip + (q - resume);
    if (taken <= kFewSlots) {
      std::int32_t pos[kFewSlots] = {}, col[kFewSlots] = {};
      std::int32_t t = 0;
      for (std::int32_t j = 0; j < q; ++j) {
        if (j >= skip && j < resume) continue;
        pos[t] = j;
        col[t++] = kAll ? j : ks[j];
      }
      auto few = [&](auto n) SALSOX_INLINE {
        constexpr std::int32_t N = decltype(n)::value;
        std::int64_t a[N > 0 ? N : 1] = {};
        for (; h >= lo + 3; h -= 4) {
          const Count* r0 = cnt_ + (row_index(h, lab[h])) * stride_;
          const Count* r1 = cnt_ + (row_index(h - 1, lab[h - 1])) * stride_;
          const Count* r2 = cnt_ + (row_index(h - 2, lab[h - 2])) * stride_;
          const Count* r3 = cnt_ + (row_index(h - 3, lab[h - 3])) * stride_;
          for (std::int32_t u = 0; u < N; ++u) {
            const std::int32_t k = col[u];
            a[u] += (dc[r0[k]] + dc[r1[k]]) + (dc[r2[k]] + dc[r3[k]]);
          }
          if constexpr (kOwn) own += (dc[r0[old] - 1] + dc[r1[old] - 1]) + (dc[r2[old] - 1] + dc[r3[old] - 1]);
        }
        for (; h >= lo; --h) {
          const Count* row = cnt_ + (row_index(h, lab[h])) * stride_;
          for (std::int32_t u = 0; u < N; ++u) a[u] += dc[row[col[u]]];
          if constexpr (kOwn) own += dc[row[old] - 1];
        }
        for (std::int32_t u = 0; u < N; ++u) acc[pos[u]] = a[u];
      };
      switch (taken) {
        case 0: few(std::integral_constant<std::int32_t, 0>{}); break;
        case 1: few(std::integral_constant<std::int32_t, 1>{}); break;
        case 2: few(std::integral_constant<std::int32_t, 2>{}); break;
        case 3: few(std::integral_constant<std::int32_t, 3>{}); break;
        default: few(std::integral_constant<std::int32_t, 4>{}); break;
      }
      acc[q] = own;
      return;
    }
    for (; h >= lo + 3; h -= 4) {
      const Count* r0 = cnt_ + (row_index(h, lab[h])) * stride_;
      const Count* r1 = cnt_ + (row_index(h - 1, lab[h - 1])) * stride_;
      const Count* r2 = cnt_ + (row_index(h - 2, lab[h - 2])) * stride_;
      const Count* r3 = cnt_ + (row_index(h - 3, lab[h - 3])) * stride_;
      auto four = [&](std::int32_t j) SALSOX_INLINE {
        const std::int32_t k = kAll ? j : ks[j];
        acc[j] += (dc[r0[k]] + dc[r1[k]]) + (dc[r2[k]] + dc[r3[k]]);
      };
      for (std::int32_t j = 0; j < skip; ++j) four(j);
      for (std::int32_t j = resume; j < q; ++j) four(j);
      if constexpr (kOwn) own += (dc[r0[old] - 1] + dc[r1[old] - 1]) + (dc[r2[old] - 1] + dc[r3[old] - 1]);
    }
    for (; h >= lo; --h) {
      const Count* row = cnt_ + (row_index(h, lab[h])) * stride_;
      for (std::int32_t j = 0; j < skip; ++j) acc[j] += dc[row[kAll ? j : ks[j]]];
      for (std::int32_t j = resume; j < q; ++j) acc[j] += dc[row[kAll ? j : ks[j]]];
      if constexpr (kOwn) own += dc[row[old] - 1];
    }
    acc[q] = own;
  });
  score_team_max_ = std::max(score_team_max_, team);
  for (std::int32_t j = 0; j <= q; ++j) {
    std::int64_t sum = 0;
    for (std::int64_t c = 0; c < blocks; ++c) sum += part[c * pw + j];
    out[j] = std::ldexp(static_cast<double>(sum), -cell_shift_);
  }
}

// dcell_fixed_[x] = dcell_[x] 2^s rounded, s the largest shift for which H terms of any size in
// the table sum within 2^62 (no overflow whatever the counts). The rounding moves each term by at
// most 2^-(s+1), a few ulps of the largest term times H: about what summing H doubles loses
// (ex1's VI: s = 45, under 1.5e-14 a term), but the same in every order.
template <class Label, class Count>
inline void CountTableState<Label, Count>::fix_cell_table() {
  double big = 0.0;
  for (double v : dcell_) big = std::max(big, std::fabs(v));
  const double bound = big * static_cast<double>(d_.H);
  if (!std::isfinite(bound))
    throw std::invalid_argument("the loss's cell table has differences too large to sum over the draws (" +
                                std::to_string(big) + ")");
  int e = 0;
  std::frexp(bound, &e);  // bound < 2^e
  cell_shift_ = bound > 0.0 ? 62 - e : 0;
  dcell_fixed_.clear();
  for (double v : dcell_) dcell_fixed_.push_back(std::llround(std::ldexp(v, cell_shift_)));
}

}  // namespace salsox
