// Scores of the additive count losses for CountTableState (count_table.hpp): Binder, VI and
// tabulated losses, summed in integers (counts, or differences in fixed point): thread-independent.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cell_lanes.hpp"
#include "count_table.hpp"
#include "count_table_cache.hpp"
#include "line_rows.hpp"

namespace salsox {

// Paper's shortcut: b H n_.k - (a + b) sum_h n_{c_h(i) k}; a new cluster scores 0. With
// item i virtually removed from slot `old_`, every one of its cells there is one less.
template <class Label, class Count>
void CountTableState<Label, Count>::score_binder(std::int64_t i, double* out) {
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
      // Eight slots' sums in registers. Counts past q are read (inside the row, or the next rows
      // and the table's spare line) and dropped.
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
void CountTableState<Label, Count>::score_additive(std::int64_t i, double* out) {
  const double* acc = cell_sums(i);
  const double H = static_cast<double>(d_.H);
  const double we = loss_.est_weight(), wc = loss_.cell_weight();
  for (std::int32_t k = 0; k < q_; ++k) out[k] = we * H * dest_[sz(k)] + wc * acc[k];
  out[q_] = H * (we * dest_[0] + wc * dcell_[0]);
}

// acc[k] = sum_h dcell(x_hk) for the slots k < q, slot old_'s cells read one lower. Returns
// acc_ (valid until the next score).
template <class Label, class Count>
const double* CountTableState<Label, Count>::cell_sums(std::int64_t i) {
  if (cache_cells_) cell_sums_cached(i);
  else all_cell_sums(i, acc_.data());
  return acc_.data();
}

// The same into out without the cache: one pass over every slot.
template <class Label, class Count>
inline void CountTableState<Label, Count>::all_cell_sums(std::int64_t i, double* out) {
  if (old_ < 0) return fresh_cell_sums<true>(i, nullptr, q_, out);
  cell_sums_pass<true, true>(i, nullptr, q_, out);
  out[old_] = out[q_];
}

// add(i, k) then score(next, out). For VI and the tabulated losses, add's table update is left
// due and made by the score's pass draw by draw, just before it reads that draw's row of `next`.
template <class Label, class Count>
void CountTableState<Label, Count>::add_score(std::int64_t i, std::int32_t k, std::int64_t next, double* out) {
  if (track_stats_ || (loss_.kind != LossKind::VI && loss_.kind != LossKind::Tabulated)) {
    add(i, k);
    score(next, out);
    return;
  }
  grow(k + 1);
  touch(k);
  this->place(i, k);
  add_lab_ = d_.item(i);
  add_k_ = k;
  score(next, out);
  if (add_lab_ != nullptr) {  // a score that made no pass (every sum cached): the update alone
    add_lab_ = nullptr;
    this->template shift_item<true>(i, k, NoVisit{});
  }
}

template <class Label, class Count>
template <bool kAll>
inline void CountTableState<Label, Count>::fresh_cell_sums(std::int64_t i, const std::int32_t* ks,
                                                           std::int32_t width, double* out) {
  if (add_lab_ == nullptr) return cell_sums_pass<kAll, false, false>(i, ks, width, out);
  cell_sums_pass<kAll, false, true>(i, ks, width, out);
  add_lab_ = nullptr;
}

// out[j] = sum_h dcell(x_hk) for slot k = ks[j] (kAll: k = j), j < width, and with kOwn
// out[width] = the same for slot old_ read one lower (with kAll, out[old_] is left 0). The terms
// are in fixed point, so the sums are exact: the same bits whatever the split of the draws and
// the slots taken. With kAdd, the pass first makes add_score's due update in each draw.
template <class Label, class Count>
template <bool kAll, bool kOwn, bool kAdd>
inline void CountTableState<Label, Count>::cell_sums_pass(std::int64_t i, const std::int32_t* ks, std::int32_t width,
                                                          double* out) {
  static_assert(!(kAdd && kOwn), "add_score scores an unallocated item");
  const Label* lab = d_.item(i);
  const Label* add_lab = add_lab_;
  const std::int32_t add_k = add_k_;
  const std::int64_t* dc = dcell_fixed_.data();
  const std::int32_t q = width;
  const std::int32_t old = old_ >= 0 ? old_ : 0;
  const std::int64_t blocks = exact_blocks();
  std::int64_t pw = 0;
  std::int64_t* part = line_rows(part_int_, blocks, q + 1, pw);
  // On the AVX-512 path, every slot as a lane (cell_lanes.hpp) where they number 5 to 32 and at
  // most four, besides the item's own, hold 16 items or more.
  std::int32_t vectors = 0, nbig = 0;
  alignas(64) std::int64_t dc16[16] = {};
  std::int32_t big[4] = {};
#if SALSOX_SIMD_X86
  if constexpr (kAll && !kAdd) {
    if (lane_cells_ && simd_ == SimdPath::AVX512 && q - (kOwn ? 1 : 0) > kFewSlots && q <= 32) {
      for (std::int32_t k = 0; k < q && nbig <= 4; ++k)
        if (size_[k] >= 16 && !(kOwn && k == old)) {
          if (nbig < 4) big[nbig] = k;
          ++nbig;
        }
      if (nbig <= 4) {
        vectors = (q + 7) / 8;
        for (std::int32_t u = nbig; u < 4; ++u) big[u] = big[0];
        std::copy(dc, dc + std::min<std::size_t>(16, dcell_fixed_.size()), dc16);
      }
    }
  }
#endif
  const int team = parallel_for(blocks, [&](std::int64_t c) {
    // Locals, not captures: with kAdd every char-sized count store may alias anything whose
    // address has escaped, and these stay in registers only if theirs has not.
    const Label* const il = lab;
    const Label* const al = add_lab;
    const std::int32_t ak = add_k;
    const std::int64_t* const d = dc;
    const std::int64_t* const base = d_.base;
    const std::int64_t stride = stride_;
    Count* const cnt = cnt_;
    auto row = [=](std::int64_t h) SALSOX_INLINE { return cnt + (base[h] + il[h]) * stride; };
    auto add_one = [=](std::int64_t h) SALSOX_INLINE {
      if constexpr (kAdd) ++cnt[(base[h] + al[h]) * stride + ak];
    };
    std::int64_t* acc = part + c * pw;
    std::fill(acc, acc + q, 0);
    std::int64_t own = 0;  // the old slot's cells, one lower
    // Four draws per step: one add to memory per slot instead of four.
    const std::int64_t lo = block_begin(c, blocks);
    std::int64_t h = block_begin(c + 1, blocks) - 1;
#if SALSOX_SIMD_X86
    if (vectors > 0) {
      alignas(64) std::int64_t lane[32];
      std::int64_t bsum[4];
      auto run = [&](auto g, auto b) {
        cell_lanes_avx512<decltype(g)::value, decltype(b)::value, kOwn>(il, base, stride, cnt, lo, h + 1, dc16, d, big,
                                                                       old, lane, bsum, own);
      };
      with_constant<1, 4>(vectors, [&](auto g) {
        if (nbig > 0) run(g, std::true_type{});
        else run(g, std::false_type{});
      });
      std::copy(lane, lane + q, acc);
      for (std::int32_t u = 0; u < nbig; ++u) acc[big[u]] = bsum[u];
      if constexpr (kOwn) acc[old] = 0;
      acc[q] = own;
      return;
    }
#endif
    // With kAll and kOwn, the own slot's plain cells are skipped (`own` takes its place).
    const std::int32_t skip = kAll && kOwn ? old : q;
    const std::int32_t resume = kAll && kOwn ? old + 1 : q;
    // Few slots: their sums in registers (adds to memory chain every step on the last store).
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
          add_one(h), add_one(h - 1), add_one(h - 2), add_one(h - 3);
          const Count* r0 = row(h);
          const Count* r1 = row(h - 1);
          const Count* r2 = row(h - 2);
          const Count* r3 = row(h - 3);
          for (std::int32_t u = 0; u < N; ++u) {
            const std::int32_t k = col[u];
            a[u] += (d[r0[k]] + d[r1[k]]) + (d[r2[k]] + d[r3[k]]);
          }
          if constexpr (kOwn) own += (d[r0[old] - 1] + d[r1[old] - 1]) + (d[r2[old] - 1] + d[r3[old] - 1]);
        }
        for (; h >= lo; --h) {
          add_one(h);
          const Count* r = row(h);
          for (std::int32_t u = 0; u < N; ++u) a[u] += d[r[col[u]]];
          if constexpr (kOwn) own += d[r[old] - 1];
        }
        for (std::int32_t u = 0; u < N; ++u) acc[pos[u]] = a[u];
      };
      with_constant<0, kFewSlots>(taken, few);
      acc[q] = own;
      return;
    }
    for (; h >= lo + 3; h -= 4) {
      add_one(h), add_one(h - 1), add_one(h - 2), add_one(h - 3);
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
      add_one(h);
      const Count* r = row(h);
      for (std::int32_t j = 0; j < skip; ++j) acc[j] += d[r[kAll ? j : ks[j]]];
      for (std::int32_t j = resume; j < q; ++j) acc[j] += d[r[kAll ? j : ks[j]]];
      if constexpr (kOwn) own += d[r[old] - 1];
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

// dcell_fixed_[x] = dcell_[x] 2^s rounded, s the largest shift for which H terms of any size
// sum within 2^62. Rounding each term by at most 2^-(s+1) loses about what summing H doubles
// does, but the same in every order.
template <class Label, class Count>
void CountTableState<Label, Count>::fix_cell_table() {
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
