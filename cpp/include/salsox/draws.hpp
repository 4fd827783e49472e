// Posterior draws held once, compactly, item-major: the labels of item i in all H draws are
// contiguous, because every search step reads one item's labels across all draws.
#pragma once
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace salsox {

// Labels of one draw are 0..k_h-1. `Label` is uint8_t when every draw has <= 256 clusters,
// uint16_t otherwise.
template <class Label>
struct DrawsView {
  const Label* labels = nullptr;  // n x H, item-major
  std::int64_t n = 0;
  std::int64_t H = 0;
  const std::int32_t* k = nullptr;     // clusters per draw
  const std::int64_t* base = nullptr;  // first count-table row of draw h (prefix sum of k)
  std::int64_t rows = 0;               // sum of k
  std::int32_t kmax = 0;

  const Label* item(std::int64_t i) const { return labels + i * H; }
};

class CompactDraws {
 public:
  static constexpr std::int64_t kMaxClustersPerDraw = 65536;

  // `raw` is H x n row-major with arbitrary integer labels; each draw is relabelled 0..k-1.
  // Draws of at most 256 clusters (nearly all) are relabelled once, straight into 8-bit labels;
  // a draw with more sends them all through two passes (count, then write 16-bit labels), so
  // that no H x n temporary is ever held.
  template <class Int>
  CompactDraws(const Int* raw, std::int64_t H, std::int64_t n) : n_(n), H_(H) {
    if (H <= 0 || n <= 0) throw std::invalid_argument("draws must have at least one draw and one item");
    k_.resize(H);
    Relabeller<Int> relabel(n);
    wide_ = !fill(raw, relabel, narrow_labels_);
    if (wide_) {
      std::vector<std::uint8_t>().swap(narrow_labels_);
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t k = relabel(raw + h * n);
        assert(k >= 1 && k <= n);  // a non-empty row has 1..n distinct labels
        if (k > kMaxClustersPerDraw)
          throw std::invalid_argument("draw " + std::to_string(h) + " has " + std::to_string(k) +
                                      " clusters; at most 65536 clusters per draw are supported");
      }
      [[maybe_unused]] const bool fits = fill(raw, relabel, wide_labels_);
      assert(fits);
    }
    kmax_ = *std::max_element(k_.begin(), k_.end());
    base_.resize(H + 1);
    base_[0] = 0;
    for (std::int64_t h = 0; h < H; ++h) base_[h + 1] = base_[h] + k_[h];
  }

  std::int64_t n() const { return n_; }
  std::int64_t H() const { return H_; }
  std::int32_t kmax() const { return kmax_; }
  bool wide() const { return wide_; }
  const std::vector<std::int32_t>& clusters_per_draw() const { return k_; }
  std::int64_t rows() const { return base_[H_]; }  // count-table rows: the clusters of all draws
  std::size_t label_bytes() const { return wide_ ? wide_labels_.size() * 2 : narrow_labels_.size(); }

  template <class Label>
  DrawsView<Label> view() const {
    assert((sizeof(Label) == 2) == wide_);  // only the stored width has labels
    DrawsView<Label> v;
    if constexpr (sizeof(Label) == 1) v.labels = narrow_labels_.data();
    else v.labels = wide_labels_.data();
    v.n = n_;
    v.H = H_;
    v.k = k_.data();
    v.base = base_.data();
    v.rows = base_[H_];
    v.kmax = kmax_;
    return v;
  }

  // Calls f(view) with the view of the stored label width.
  template <class F>
  decltype(auto) visit(F&& f) const {
    if (wide_) return f(view<std::uint16_t>());
    return f(view<std::uint8_t>());
  }

  // Draw h's labels (0..k_h-1) as a row of n values.
  std::vector<std::int32_t> draw(std::int64_t h) const {
    assert(h >= 0 && h < H_);
    std::vector<std::int32_t> out(n_);
    visit([&](auto v) {
      for (std::int64_t i = 0; i < n_; ++i) out[i] = v.item(i)[h];
    });
    return out;
  }

 private:
  // Relabels one draw to 0..k-1 (first appearance for dense labels, value order for sparse
  // ones: only label identity matters to the engine), returns k.
  template <class Int>
  struct Relabeller {
    explicit Relabeller(std::int64_t n) : n(n), out(n) {}
    std::int64_t operator()(const Int* row) {
      Int lo = row[0], hi = row[0];
      for (std::int64_t i = 1; i < n; ++i) {  // min and max without branches: vectorised
        lo = std::min(lo, row[i]);
        hi = std::max(hi, row[i]);
      }
      const long double span = static_cast<long double>(hi) - static_cast<long double>(lo);
      std::int64_t k = 0;
      if (span < 4.0L * n + 16) {  // dense labels: direct lookup
        lookup.assign(static_cast<std::size_t>(span) + 1, -1);
        for (std::int64_t i = 0; i < n; ++i) {
          auto& slot = lookup[static_cast<std::size_t>(row[i] - lo)];
          if (slot < 0) slot = static_cast<std::int32_t>(k++);
          out[i] = slot;
        }
      } else {  // sparse or huge label values: sort
        sorted.resize(n);
        for (std::int64_t i = 0; i < n; ++i) sorted[i] = {row[i], i};
        std::sort(sorted.begin(), sorted.end());
        for (std::int64_t j = 0; j < n; ++j) {
          if (j > 0 && sorted[j].first != sorted[j - 1].first) ++k;
          out[sorted[j].second] = static_cast<std::int32_t>(k);
        }
        ++k;
      }
      return k;
    }
    std::int64_t n;
    std::vector<std::int32_t> out, lookup;
    std::vector<std::pair<Int, std::int64_t>> sorted;
  };

  // Writes item-major labels, a block of draws at a time for cache-friendly stores, and each
  // draw's clusters into k_; false (and dst incomplete) when a draw has more clusters than a
  // Label holds.
  template <class Int, class Label>
  bool fill(const Int* raw, Relabeller<Int>& relabel, std::vector<Label>& dst) {
    constexpr std::int64_t kBlock = 16;
    constexpr std::int64_t kMostClusters = std::int64_t{1} << (8 * sizeof(Label));
    dst.resize(static_cast<std::size_t>(H_ * n_));
    std::vector<Label> block(static_cast<std::size_t>(kBlock * n_));
    for (std::int64_t h0 = 0; h0 < H_; h0 += kBlock) {
      const std::int64_t nb = std::min(kBlock, H_ - h0);
      for (std::int64_t b = 0; b < nb; ++b) {
        const std::int64_t k = relabel(raw + (h0 + b) * n_);
        if (k > kMostClusters) return false;
        k_[h0 + b] = static_cast<std::int32_t>(k);
        for (std::int64_t i = 0; i < n_; ++i) block[b * n_ + i] = static_cast<Label>(relabel.out[i]);
      }
      for (std::int64_t i = 0; i < n_; ++i)
        for (std::int64_t b = 0; b < nb; ++b) dst[i * H_ + h0 + b] = block[b * n_ + i];
    }
    return true;
  }

  std::int64_t n_, H_;
  std::int32_t kmax_ = 0;
  bool wide_ = false;
  std::vector<std::int32_t> k_;
  std::vector<std::int64_t> base_;
  std::vector<std::uint8_t> narrow_labels_;
  std::vector<std::uint16_t> wide_labels_;
};

}  // namespace salsox
