// Passes over the whole table of CountTableState (count_table.hpp): a complete allocation
// counted in one pass (rebuild); for zealous updates, a slot's items released in one sequential
// pass, and the state saved and restored when the update did not help (instead of moving the
// items back one by one).
#pragma once
#include <algorithm>
#include <cstdint>

#include "count_table.hpp"

namespace salsox {

// Counts a complete allocation. Item by item (add), each item's pass would bring in one random
// row per draw; here the draws go in blocks, every item's count added for a block at a time, so
// that the block's rows and each item's labels for it stay in cache (iris: 150 items over 1,000
// draws, one random start). The counts are the same; the running sums of the non-additive
// losses are still added item by item, as add does, to keep their rounding.
template <class Label, class Count>
inline void CountTableState<Label, Count>::rebuild(const std::vector<std::int32_t>& labels) {
  clear();
  q_ = labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end()) + 1;
  set_layout(std::max(q_, kFirstSlots));  // the table is all zeros: no rows to move
  if (track_stats_) {
    for (std::int64_t i = 0; i < d_.n; ++i) add(i, labels[i]);
    return;
  }
  for (std::int64_t i = 0; i < d_.n; ++i) {
    ++size_[labels[i]];
    est_[i] = labels[i];
  }
  m_ = d_.n;
  for (std::int32_t k = 0; k < q_; ++k) touch(k);
  Count* cnt = cnt_;
  const Label* lab = d_.labels;
  const std::int32_t* to = labels.data();
  const std::int64_t* base = d_.base;
  const std::int64_t stride = stride_, n = d_.n, H = d_.H;
  constexpr std::int64_t kBlock = 64;  // draws: one cache line of each item's labels
  parallel_for((H + kBlock - 1) / kBlock, [=](std::int64_t b) {
    const std::int64_t lo = b * kBlock, hi = std::min(H, lo + kBlock);
    for (std::int64_t i = 0; i < n; ++i) {
      const Label* l = lab + i * H;
      const std::int32_t k = to[i];
      for (std::int64_t h = lo; h < hi; ++h) ++cnt[(base[h] + l[h]) * stride + k];
    }
  }, (kDrawGrain + kBlock - 1) / kBlock);
}

// Takes every item out of slot k in one pass over the table (cheaper than removing the items
// one by one when they are many); the slot is left empty (see close_slot). Each draw's rows and
// sums are its own, so the pass is shared like the table updates (parallel_for).
template <class Label, class Count>
inline void CountTableState<Label, Count>::release_slot(std::int32_t k) {
  hr_valid_ = false;
  touch(k);
  Count* cnt = cnt_;
  const std::int64_t* base = d_.base;
  const std::int32_t* kh = d_.k;
  const std::int64_t stride = stride_;
  if (track_stats_) {
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
  } else {
    parallel_for(d_.H, [=](std::int64_t h) {
      for (std::int32_t l = 0; l < kh[h]; ++l) cnt[(base[h] + l) * stride + k] = 0;
    }, kDrawGrain);
  }
  m_ -= size_[k];
  size_[k] = 0;
  for (auto& e : est_)
    if (e == k) e = -1;
}

// Whether releasing a slot of `members` items by one pass over the table (release_slot) and
// undoing a change by restoring a snapshot beat item-by-item moves: each item costs one random
// row per draw, the table pass costs every row once.
template <class Label, class Count>
inline bool CountTableState<Label, Count>::prefers_table_pass(std::int64_t members) const {
  // (With the widest layout's stride, whatever the layout now, so that the choice, and with it
  // the rounding of the running sums, is the same as when the tables were always that wide.)
  return static_cast<double>(d_.rows) * static_cast<double>(full_stride_) * sizeof(Count) <=
         8.0 * static_cast<double>(members) * static_cast<double>(d_.H) * kCacheLine;
}

// Saves the whole state, to be put back by restore() (a zealous update that did not help).
template <class Label, class Count>
inline void CountTableState<Label, Count>::snapshot() {
  const std::size_t used = static_cast<std::size_t>(d_.rows * stride_);
  snap_cnt_.assign(cnt_, cnt_ + used);
  snap_stride_ = stride_;
  snap_cap_ = cap_;
  snap_est_ = est_;
  snap_size_ = size_;
  snap_D_ = D_;
  snap_J_ = J_;
  snap_E_ = E_;
  snap_q_ = q_;
  snap_m_ = m_;
  snap_col_ver_ = col_ver_;
}
// The columns are again those of the snapshot, and so are their versions: sums cached before
// it are valid again, those cached since never will be (the clock does not go back).
template <class Label, class Count>
inline void CountTableState<Label, Count>::restore() {
  hr_valid_ = false;
  col_ver_ = snap_col_ver_;
  std::copy(snap_cnt_.begin(), snap_cnt_.end(), cnt_);
  stride_ = snap_stride_;
  cap_ = snap_cap_;
  est_ = snap_est_;
  size_ = snap_size_;
  D_ = snap_D_;
  J_ = snap_J_;
  E_ = snap_E_;
  q_ = snap_q_;
  m_ = snap_m_;
}

}  // namespace salsox
