// The contingency tables between the estimate and every draw, as storage: one row per draw
// cluster (draw h's clusters are rows base[h] onwards), one count per estimate slot, with the
// estimate's labels and slot sizes, the columns' versions, and a snapshot; no loss.
// Every step touches one random row per draw, and H rows rarely fit in L2, so the table is kept
// small: the narrowest count type, rows padded to straddle as few cache lines as they can, and
// only as wide as the slots in use (grow, shrink).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "count_types.hpp"
#include "draws.hpp"
#include "simd.hpp"
#include "threads.hpp"
#if SALSOX_SIMD_X86
#include <immintrin.h>
#endif

namespace salsox {

template <class Label, class Count = std::int32_t>
class CountTable {
 public:
  // `alloc_column`: each row also counts its allocated items, in the column after the slots.
  CountTable(const DrawsView<Label>& draws, std::int32_t max_clusters, bool alloc_column = false)
      : d_(draws), kd_(max_clusters), alloc_col_(alloc_column),
        full_stride_(row_stride(kd_ + (alloc_column ? 1 : 0))) {
    constexpr std::size_t line = kCacheLine / sizeof(Count);
    // Room for the widest layout (all max_clusters slots; see grow), one line for the alignment
    // below, one so that word reads past a short last row stay inside.
    cnt_store_.assign(static_cast<std::size_t>(d_.rows * full_stride_) + 2 * line, 0);
    set_layout(kFirstSlots);
    const auto misalign = reinterpret_cast<std::uintptr_t>(cnt_store_.data()) % kCacheLine;
    cnt_ = cnt_store_.data() + (misalign ? (kCacheLine - misalign) / sizeof(Count) : 0);
    est_.assign(d_.n, -1);
    size_.assign(kd_ + 1, 0);
    col_ver_.assign(kd_ + 1, 1);
  }
  CountTable(const CountTable&) = delete;
  CountTable& operator=(const CountTable&) = delete;

  // Bytes of the counts of `rows` draw clusters over `max_clusters` slots.
  static double table_bytes(std::int64_t rows, std::int32_t max_clusters, bool alloc_column) {
    return static_cast<double>(rows) * static_cast<double>(row_stride(max_clusters + (alloc_column ? 1 : 0))) *
           sizeof(Count);
  }

  std::int64_t n() const { return d_.n; }
  std::int32_t max_clusters() const { return kd_; }
  std::int32_t slots() const { return q_; }
  std::int64_t allocated() const { return m_; }
  std::int64_t size(std::int32_t k) const { return size_[k]; }
  std::int32_t label(std::int64_t i) const { return est_[i]; }
  const std::vector<std::int32_t>& labels() const { return est_; }
  // Row r (a draw cluster) at counts() + r * stride(); draw h's cluster l is row row_index(h, l).
  const Count* counts() const { return cnt_; }
  std::int64_t stride() const { return stride_; }
  std::int64_t row_index(std::int64_t h, std::int64_t l) const { return d_.base[h] + l; }
  // With the allocated items' column, row[allocated_column()] counts the row's allocated items.
  std::int32_t allocated_column() const { return cap_; }
  const DrawsView<Label>& draws() const { return d_; }
  // Slot k's column version: it changes whenever the column does (see touch).
  std::uint64_t column_version(std::int32_t k) const { return col_ver_[k]; }

  // Threads used inside one run, over draws (DrawThreads, threads.hpp). Results do not depend on it.
  void set_threads(int threads) { loop_.set_threads(threads); }
  int threads_used() const { return loop_.threads_used(); }
  void reset_threads_used() { loop_.reset(); }
  // f(i) for i < count on this run's threads (DrawThreads, threads.hpp); returns the threads that took part.
  template <class F>
  int parallel_for(std::int64_t count, const F& f, std::int64_t min_grain = 1) const {
    return loop_.run(d_.H, count, f, min_grain);
  }
  // Threads parallel_for may run a pass over the draws on now (a hint: the result never depends on it).
  int shared_threads() const { return loop_.shared_threads(d_.H); }
  // Draws per shared block of a table update (a few nanoseconds a draw; see Crew::share_here).
  static constexpr std::int64_t kDrawGrain = 512;
  static constexpr std::size_t kCacheLine = 64;
  static constexpr std::int32_t kFirstSlots = 7;  // slots of a fresh layout (8-byte rows of uint8)

  void clear() {
    touch_all();
    std::fill(cnt_store_.begin(), cnt_store_.end(), 0);
    set_layout(kFirstSlots);
    std::fill(est_.begin(), est_.end(), -1);
    std::fill(size_.begin(), size_.end(), 0);
    q_ = 0;
    m_ = 0;
  }

  // Replaces the allocation by the complete allocation `labels` (slots 0..max), a block of draws
  // at a time for every item, so that the block's rows stay in cache. With the allocated items'
  // column, item by item in order, visit as add's, so that sums kept by the visitor round as
  // they do when the items are added one by one.
  template <class Visit = NoVisit>
  void rebuild(const std::vector<std::int32_t>& labels, Visit visit = {}) {
    clear();
    q_ = labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end()) + 1;
    set_layout(std::max(q_, kFirstSlots));  // the table is all zeros: no rows to move
    if (alloc_col_) {
      for (std::int64_t i = 0; i < d_.n; ++i) {
        shift_item<true>(i, labels[i], visit);
        place(i, labels[i]);
      }
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

  // Widens the table so that slot k exists (count-sum states read it before add or move).
  void fit_slot(std::int32_t k) { grow(k + 1); }

  // Narrows the layout when the slots in use fit in half the stride, moving the rows in place,
  // first first: with the stride at least halved, row r's new place ends before its old one starts.
  void shrink() {
    const std::int64_t extra = alloc_col_ ? 1 : 0;
    const std::int32_t slots = std::max(q_, kFirstSlots);
    if (2 * row_stride(std::min(slots, kd_) + extra) > stride_) return;
    const std::int64_t old_stride = stride_;
    const std::int32_t old_cap = cap_;
    set_layout(slots);
    for (std::int64_t r = 0; r < d_.rows; ++r) {
      const Count* from = cnt_ + r * old_stride;
      Count* row = cnt_ + r * stride_;
      const Count allocated = alloc_col_ ? from[old_cap] : Count{0};
      std::memmove(row, from, static_cast<std::size_t>(cap_) * sizeof(Count));
      std::fill(row + cap_, row + stride_, Count{0});
      if (alloc_col_) row[cap_] = allocated;
    }
  }

  // Puts unallocated item i into slot k (k == slots() opens a new slot), calling visit(h, x) in
  // each draw h, x the count before. With the allocated items' column, the row's count there
  // moves too and visit(h, c, s) has the lower of the two values of the cell (c) and of that
  // count (s): before an add, after a remove.
  template <class Visit = NoVisit>
  void add(std::int64_t i, std::int32_t k, Visit visit = {}) {
    grow(k + 1);
    shift_item<true>(i, k, visit);
    place(i, k);
  }

  // Takes item i out of its slot; the slot may be left empty (see close_slot). visit: see add.
  template <class Visit = NoVisit>
  void remove(std::int64_t i, Visit visit = {}) {
    shift_item<false>(i, est_[i], visit);
    unplace(i);
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

  // Moves allocated item i to slot k (k == slots() opens a new slot); the old slot may be left
  // empty. Calls visit(h, gone, came) in each draw h: the old slot's count after, the new one's before.
  template <class Visit = NoVisit>
  void move(std::int64_t i, std::int32_t k, Visit visit = {}) {
    const std::int32_t old = est_[i];
    if (k == old) return;
    grow(k + 1);
    touch(old);
    touch(k);
    const Label* lab = d_.item(i);
    const std::int64_t* base = d_.base;
    const std::int64_t stride = stride_;
    Count* cnt = cnt_;
    parallel_for(d_.H, [=](std::int64_t h) {
      Count* row = cnt + (base[h] + lab[h]) * stride;
      const Count gone = --row[old];
      const Count came = row[k]++;
      visit(h, gone, came);
    }, kDrawGrain);
    moved(i, k);
  }

  // Takes every item out of slot k in one pass over the table; the slot is left empty. With the
  // allocated items' column, its counts drop too and visit(h, x, s) is called for each nonzero
  // cell x of draw h's rows in order, s the row's allocated items before.
  template <class Visit = NoVisit>
  void release_slot(std::int32_t k, Visit visit = {}) {
    touch(k);
    Count* cnt = cnt_;
    const std::int64_t* base = d_.base;
    const std::int32_t* kh = d_.k;
    const std::int64_t stride = stride_;
    if (alloc_col_) {
      const std::int32_t cap = cap_;
      parallel_for(d_.H, [=](std::int64_t h) {
        for (std::int32_t l = 0; l < kh[h]; ++l) {
          Count* row = cnt + (base[h] + l) * stride;
          const Count x = row[k];
          if (x == 0) continue;
          row[k] = 0;
          const Count s = row[cap];
          row[cap] = static_cast<Count>(s - x);
          visit(h, x, s);
        }
      }, kDrawGrain);
    } else {
      parallel_for(d_.H, [=](std::int64_t h) {
        for (std::int32_t l = 0; l < kh[h]; ++l) cnt[(base[h] + l) * stride + k] = 0;
      }, kDrawGrain);
    }
    released(k);
  }

  // Whether release_slot and restore beat item-by-item moves for a slot of `members` items: each
  // item costs one random row per draw, the table pass every row once. With the widest stride,
  // whatever the layout now, so that the choice (and the sums' rounding) never depends on it.
  bool prefers_table_pass(std::int64_t members) const {
    return static_cast<double>(d_.rows) * static_cast<double>(full_stride_) * sizeof(Count) <=
           8.0 * static_cast<double>(members) * static_cast<double>(d_.H) * kCacheLine;
  }

  // Saves the table and the allocation for restore(), which gives the columns their snapshot
  // versions back: values read before it are valid again, those since never (the clock goes on).
  void snapshot() {
    // Room for the widest layout, once: a later snapshot of a wider layout would otherwise
    // allocate its copy while the narrower one is still held (two snapshots at the peak).
    snap_cnt_.reserve(static_cast<std::size_t>(d_.rows * full_stride_));
    snap_cnt_.assign(cnt_, cnt_ + static_cast<std::size_t>(d_.rows * stride_));
    snap_stride_ = stride_;
    snap_cap_ = cap_;
    snap_est_ = est_;
    snap_size_ = size_;
    snap_q_ = q_;
    snap_m_ = m_;
    snap_col_ver_ = col_ver_;
  }
  void restore() {
    col_ver_ = snap_col_ver_;
    std::copy(snap_cnt_.begin(), snap_cnt_.end(), cnt_);
    stride_ = snap_stride_;
    cap_ = snap_cap_;
    est_ = snap_est_;
    size_ = snap_size_;
    q_ = snap_q_;
    m_ = snap_m_;
  }

  // Calls f(k) for each slot k < q whose cell row[k] - (k == dec) is nonzero, found as a bit
  // mask up to 64 slots (they are few, at unpredictable places). `nz`: scratch for q > 64.
  template <class F>
  SALSOX_INLINE static void for_each_nonzero(const Count* row, std::int32_t q, std::int32_t dec, std::int32_t* nz,
                                             F f) {
    if (q > 64) {
      std::int32_t m = 0;
      for (std::int32_t k = 0; k < q; ++k) {
        nz[m] = k;
        m += (row[k] - (k == dec)) != 0;
      }
      for (std::int32_t t = 0; t < m; ++t) f(nz[t]);
      return;
    }
    std::uint64_t mask = 0;
#if defined(__SSE2__)
    if constexpr (sizeof(Count) <= 2) {
      // Sixteen counts at a time (SSE2). Reads past q stay inside the row, or the table (the next
      // rows, or its spare line after the last): at most 64 bytes from the row's start.
      const __m128i zero = _mm_setzero_si128();
      for (std::int32_t w = 0; w * 16 < q; ++w) {
        std::uint32_t is_zero;
        if constexpr (sizeof(Count) == 1) {
          const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * w));
          is_zero = static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, zero)));
        } else {
          const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * w));
          const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * w + 8));
          is_zero = static_cast<std::uint32_t>(
              _mm_movemask_epi8(_mm_packs_epi16(_mm_cmpeq_epi16(lo, zero), _mm_cmpeq_epi16(hi, zero))));
        }
        mask |= static_cast<std::uint64_t>(~is_zero & 0xFFFFu) << (16 * w);
      }
      if (q < 64) mask &= (std::uint64_t{1} << q) - 1;
    } else
#endif
    if constexpr (sizeof(Count) == 1) {
      // Reads whole words: past q they stay inside the row when it has >= 8 bytes, and inside
      // the table (the next rows, or its spare line after the last) when rows are shorter.
      constexpr std::uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL, high = 0x8080808080808080ULL;
      for (std::int32_t w = 0; w * 8 < q; ++w) {
        std::uint64_t x;
        std::memcpy(&x, row + 8 * w, 8);
        const std::uint64_t nonzero = (((x & low7) + low7) | x) & high;  // top bit of each nonzero byte
        mask |= ((nonzero * 0x0002040810204081ULL) >> 56) << (8 * w);   // gathered into 8 bits
      }
      if (q < 64) mask &= (std::uint64_t{1} << q) - 1;
    } else {
      for (std::int32_t k = 0; k < q; ++k) mask |= static_cast<std::uint64_t>(row[k] != 0) << k;
    }
    if (dec >= 0 && row[dec] == 1) mask &= ~(std::uint64_t{1} << dec);
    while (mask != 0) {
      f(static_cast<std::int32_t>(ctz64(mask)));
      mask &= mask - 1;
    }
  }

 protected:
  // The allocation's bookkeeping of add, remove, move and release_slot (the table passes aside).
  void place(std::int64_t i, std::int32_t k) {
    if (k == q_) ++q_;
    ++size_[k];
    ++m_;
    est_[i] = k;
  }
  void unplace(std::int64_t i) {
    --size_[est_[i]];
    --m_;
    est_[i] = -1;
  }
  void moved(std::int64_t i, std::int32_t k) {
    if (k == q_) ++q_;
    --size_[est_[i]];
    ++size_[k];
    est_[i] = k;
  }
  void released(std::int32_t k) {
    m_ -= size_[k];
    size_[k] = 0;
    for (auto& e : est_)
      if (e == k) e = -1;
  }

  // The table side of add (kAdd) and remove; [=] keeps the pointers in registers (DrawThreads::run).
  template <bool kAdd, class Visit>
  void shift_item(std::int64_t i, std::int32_t k, Visit visit) {
    touch(k);
    const Label* lab = d_.item(i);
    const std::int64_t* base = d_.base;
    const std::int64_t stride = stride_;
    if (alloc_col_) {
      Count* cnt = cnt_;
      const std::int32_t kd = cap_;
      parallel_for(d_.H, [=](std::int64_t h) {
        Count* row = cnt + (base[h] + lab[h]) * stride;
        const Count c = kAdd ? row[k]++ : --row[k];
        const Count s = kAdd ? row[kd]++ : --row[kd];
        if constexpr (std::is_invocable_v<const Visit&, std::int64_t, Count, Count>) visit(h, c, s);
        else visit(h, static_cast<std::int64_t>(kAdd ? c : c + 1));  // the count before, as below
      }, kDrawGrain);
      return;
    }
    Count* col = cnt_ + k;
    parallel_for(d_.H, [=](std::int64_t h) {
      Count& x = col[(base[h] + lab[h]) * stride];
      // (A visitor of the allocated items' column is never handed a table without one.)
      if constexpr (std::is_invocable_v<const Visit&, std::int64_t, std::int64_t>) visit(h, static_cast<std::int64_t>(x));
      x = static_cast<Count>(kAdd ? x + 1 : x - 1);
    }, kDrawGrain);
  }


  // Elements per row for `elems` used ones: a power of two bytes up to a cache line, whole lines beyond.
  static std::int64_t row_stride(std::int64_t elems) {
    const auto bytes = static_cast<std::size_t>(elems) * sizeof(Count);
    std::size_t padded = sizeof(Count);
    if (bytes > kCacheLine) padded = (bytes + kCacheLine - 1) / kCacheLine * kCacheLine;
    else
      while (padded < bytes) padded *= 2;
    return static_cast<std::int64_t>(padded / sizeof(Count));
  }

  // Sets an empty table's layout to the narrowest stride holding `slots` slots, and as many as it holds.
  void set_layout(std::int32_t slots) {
    const std::int64_t extra = alloc_col_ ? 1 : 0;
    stride_ = row_stride(std::min(slots, kd_) + extra);
    cap_ = static_cast<std::int32_t>(std::min<std::int64_t>(kd_, stride_ - extra));
  }

  // Widens the layout, when slots 0..slots-1 do not fit, to at least twice as many slots, moving
  // the rows in place (last first: a row only moves up).
  void grow(std::int32_t slots) {
    if (slots <= cap_) return;
    const std::int64_t old_stride = stride_;
    const std::int32_t old_cap = cap_;
    set_layout(std::max(slots, 2 * old_cap));
    std::vector<Count> tmp(static_cast<std::size_t>(old_stride));
    for (std::int64_t r = d_.rows - 1; r >= 0; --r) {
      std::copy(cnt_ + r * old_stride, cnt_ + (r + 1) * old_stride, tmp.begin());
      Count* row = cnt_ + r * stride_;
      std::fill(row, row + stride_, Count{0});
      std::copy(tmp.begin(), tmp.begin() + old_cap, row);
      if (alloc_col_) row[cap_] = tmp[old_cap];
    }
  }

  // Each slot's column version: a new clock_ value whenever the column changes, so that a value
  // computed from it is valid while its version is.
  void touch(std::int32_t k) { col_ver_[k] = ++clock_; }
  void touch_all() {
    for (auto& v : col_ver_) v = ++clock_;
  }

  DrawsView<Label> d_;
  std::int32_t kd_;
  bool alloc_col_;
  // Row r holds draw cluster r's counts in slots 0..cap_-1 and, with the allocated items'
  // column, its allocated items at cap_; rows are stride_ apart, at most full_stride_.
  std::int64_t full_stride_, stride_ = 0;
  std::int32_t cap_ = 0;
  std::vector<Count> cnt_store_;
  Count* cnt_ = nullptr;  // line-aligned start of the rows within cnt_store_
  std::vector<std::int32_t> est_;
  std::vector<std::int64_t> size_;
  std::int32_t q_ = 0;
  std::int64_t m_ = 0;
  DrawThreads loop_;
  std::uint64_t clock_ = 1;
  std::vector<std::uint64_t> col_ver_;
  // The state saved by snapshot().
  std::vector<Count> snap_cnt_;
  std::vector<std::int32_t> snap_est_;
  std::vector<std::uint64_t> snap_col_ver_;
  std::vector<std::int64_t> snap_size_;
  std::int32_t snap_q_ = 0, snap_cap_ = 0;
  std::int64_t snap_stride_ = 0, snap_m_ = 0;
};

// How sum_draw_rows visits a row's cells: every one, or only the nonzero ones (where g(0) is +-0,
// so that adding a zero cell's term to a sum from +0 changes no bit), found one by one or, for
// 8 to 64 slots, as a bit mask (CountTable::for_each_nonzero).
enum class Cells { All, Nonzero, NonzeroMask };

// Sums a draw's table rows, the loop every from-scratch sum shares (the losses' expected loss and
// running sums): for each of `rows` rows row_at(r), r in order, cell(x) for its cells x in slot
// order, then row_done(r, s) with the row's count s. One loop, so that they all add in one order.
template <Cells V, class Label, class Count, class RowAt, class Cell, class RowDone>
SALSOX_INLINE inline void sum_draw_rows(std::int64_t rows, std::int32_t q, RowAt row_at, Cell cell, RowDone row_done) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const Count* row = row_at(r);
    std::int64_t s = 0;
    if constexpr (V == Cells::NonzeroMask) {
      CountTable<Label, Count>::for_each_nonzero(row, q, -1, nullptr, [&](std::int32_t k) SALSOX_INLINE {
        s += row[k];
        cell(row[k]);
      });
    } else {
      for (std::int32_t k = 0; k < q; ++k) {
        s += row[k];
        if (V == Cells::Nonzero && row[k] == 0) continue;
        cell(row[k]);
      }
    }
    row_done(r, s);
  }
}

#if SALSOX_SIMD_X86
// Four counts of a row as 32-bit integers, and as doubles (counts are below 2^31).
template <class Count>
SALSOX_TARGET_AVX2 inline __m128i counts4_epi32(const Count* p) {
  if constexpr (sizeof(Count) == 1) {
    std::int32_t w;
    std::memcpy(&w, p, sizeof w);
    return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(w));
  } else if constexpr (sizeof(Count) == 2) {
    return _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  } else {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
}
template <class Count>
SALSOX_TARGET_AVX2 inline __m256d counts4_pd(const Count* p) {
  return _mm256_cvtepi32_pd(counts4_epi32(p));
}
#endif

}  // namespace salsox
