// The contingency tables of an estimate against a block of draws, counted in one pass over the
// items, for the one-estimate evaluators (DrawBlockLoss, CountSumBlockLoss): memory O(block).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "draws.hpp"

namespace salsox {

template <class Label, class Count>
class DrawBlockTables {
 public:
  // Bytes of one block's tables at most (a block holds one draw at least).
  static constexpr std::int64_t kBlockBytes = std::int64_t{1} << 20;
  static constexpr std::int64_t kMaxBlock = 64;  // draws: one cache line of each item's labels

  // Draws per block for estimates of up to q clusters.
  static std::int64_t block_draws(std::int64_t kmax, std::int64_t q) {
    const std::int64_t per_draw = std::max<std::int64_t>(1, kmax * q * static_cast<std::int64_t>(sizeof(Count)));
    return std::max<std::int64_t>(1, std::min<std::int64_t>(kMaxBlock, kBlockBytes / per_draw));
  }
  // Bytes one block's tables take for estimates of up to q clusters.
  static std::int64_t bytes(std::int64_t kmax, std::int64_t q) {
    return block_draws(kmax, q) * std::max<std::int64_t>(1, kmax) * q * static_cast<std::int64_t>(sizeof(Count));
  }

  DrawBlockTables(const DrawsView<Label>& d, std::int32_t q_max)
      : d_(d), block_(block_draws(d.kmax, q_max)),
        cnt_(static_cast<std::size_t>(block_ * std::max<std::int32_t>(1, d.kmax) * q_max)) {}

  std::int64_t block() const { return block_; }

  // Counts the tables of draws [lo, hi) (hi - lo <= block()) against estimate `est` with q
  // clusters. Draw h's table is table(h - lo, q): k[h] rows (its clusters) of q counts.
  void count(const std::int32_t* est, std::int32_t q, std::int64_t lo, std::int64_t hi) {
    const std::int64_t kq = static_cast<std::int64_t>(d_.kmax) * q;
    Count* cnt = cnt_.data();
    for (std::int64_t h = lo; h < hi; ++h)
      std::fill(cnt + (h - lo) * kq, cnt + (h - lo) * kq + static_cast<std::int64_t>(d_.k[h]) * q, Count{0});
    const std::int64_t B = hi - lo;
    for (std::int64_t i = 0; i < d_.n; ++i) {
      const Label* l = d_.item(i) + lo;
      Count* c = cnt + est[i];
      for (std::int64_t j = 0; j < B; ++j) ++c[j * kq + static_cast<std::int64_t>(l[j]) * q];
    }
  }
  const Count* table(std::int64_t j, std::int32_t q) const {
    return cnt_.data() + j * static_cast<std::int64_t>(d_.kmax) * q;
  }

 private:
  const DrawsView<Label>& d_;
  std::int64_t block_;
  std::vector<Count> cnt_;
};

}  // namespace salsox
