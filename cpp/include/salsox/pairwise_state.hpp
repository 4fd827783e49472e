// Search state for losses that need only pairwise similarities: Binder from integer
// co-clustering counts (exact; O(n) per move whatever H is, used when n^2 counts fit and H is
// large), and the PSM-based Binder, VI lower bound (Wade & Ghahramani) and omARI approximation
// (PEAR, Fritsch & Ickstadt). `T` is int32 for co-clustering counts, double for a PSM.
#pragma once
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "count_loss.hpp"
#include "threads.hpp"

namespace salsox {

enum class PairwiseKind { Binder, VILowerBound, OMARIApprox };

template <class T>
class PairwiseState {
 public:
  // `sim` is n x n; `scale` is the diagonal (H for counts, 1 for a PSM). The row sums are
  // O(n^2): with `interrupt`, polled every 256 rows, they stop early (the caller checks it).
  PairwiseState(const T* sim, std::int64_t n, double scale, PairwiseKind kind, double a, double b,
                std::int32_t max_clusters, Interrupt* interrupt = nullptr)
      : sim_(sim), n_(n), scale_(scale), kind_(kind), a_(a), b_(b), kd_(max_clusters) {
    assert(n > 0 && scale > 0 && max_clusters >= 1);  // every sum is divided by scale
    est_.assign(n, -1);
    size_.assign(kd_ + 1, 0);
    acc_.assign(kd_ + 2, 0.0);
    lg_.assign(kd_ + 2, 0.0);
    own_.assign(n, 0.0);
    row_sum_.assign(n, 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
      if (interrupt && i % 256 == 0 && interrupt->poll()) return;
      double s = 0;
      for (std::int64_t j = 0; j < n; ++j) s += static_cast<double>(sim_[i * n + j]);
      row_sum_[i] = s / scale_;
    }
  }

  std::int64_t n() const { return n_; }
  std::int32_t max_clusters() const { return kd_; }
  std::int32_t slots() const { return q_; }
  std::int64_t size(std::int32_t k) const { return size_[k]; }
  std::int32_t label(std::int64_t i) const { return est_[i]; }
  const std::vector<std::int32_t>& labels() const { return est_; }

  void clear() {
    std::fill(est_.begin(), est_.end(), -1);
    std::fill(size_.begin(), size_.end(), 0);
    std::fill(own_.begin(), own_.end(), 0.0);
    q_ = 0;
    m_ = 0;
    within_ = all_ = size_sq_ = est_pairs_ = 0.0;
  }

  // O(n^2): with `interrupt`, polled every 256 items, it stops early (the state is then
  // incomplete: the caller checks the interrupt).
  void rebuild(const std::vector<std::int32_t>& labels, Interrupt* interrupt = nullptr) {
    assert(static_cast<std::int64_t>(labels.size()) == n_);
    clear();
    q_ = labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end()) + 1;
    for (std::int64_t i = 0; i < n_; ++i) {
      if (interrupt && i % 256 == 0 && interrupt->poll()) return;
      add(i, labels[i]);
    }
  }

  void add(std::int64_t i, std::int32_t k) {
    // i is unallocated; k is an open slot or the next one, within the cluster cap.
    assert(est_[i] < 0 && k >= 0 && k <= q_ && k < kd_);
    const auto [in_k, total] = similarities(i, k, +1.0);
    const double diag = static_cast<double>(sim_[i * n_ + i]);
    own_[i] = (in_k + diag) / scale_;
    within_ += 2 * in_k + diag;
    all_ += 2 * total + diag;
    size_sq_ += 2.0 * static_cast<double>(size_[k]) + 1;
    est_pairs_ += static_cast<double>(size_[k]);
    if (k == q_) ++q_;
    ++size_[k];
    ++m_;
    est_[i] = k;
  }

  void remove(std::int64_t i) {
    const std::int32_t k = est_[i];
    assert(k >= 0 && size_[k] > 0 && m_ > 0);  // i is allocated
    est_[i] = -1;
    --size_[k];
    --m_;
    const auto [in_k, total] = similarities(i, k, -1.0);
    const double diag = static_cast<double>(sim_[i * n_ + i]);
    own_[i] = 0;
    within_ -= 2 * in_k + diag;
    all_ -= 2 * total + diag;
    size_sq_ -= 2.0 * static_cast<double>(size_[k]) + 1;
    est_pairs_ -= static_cast<double>(size_[k]);
  }

  void close_slot(std::int32_t k) {
    assert(k >= 0 && k < q_ && size_[k] == 0);  // only an empty slot is closed
    const std::int32_t last = q_ - 1;
    if (k != last) {
      size_[k] = size_[last];
      size_[last] = 0;
      for (auto& e : est_)
        if (e == last) e = k;
    }
    --q_;
  }

  void score(std::int64_t i, double* out) {
    const T* row = sim_ + i * n_;
    std::fill(acc_.begin(), acc_.begin() + q_, 0.0);
    if (kind_ == PairwiseKind::VILowerBound) std::fill(lg_.begin(), lg_.begin() + q_, 0.0);
    double total = 0;
    for (std::int64_t j = 0; j < n_; ++j) {
      const std::int32_t e = est_[j];
      if (e < 0) continue;
      const double s = static_cast<double>(row[j]);
      acc_[e] += s;
      total += s;
      if (kind_ == PairwiseKind::VILowerBound && s > 0) lg_[e] += std::log2(1.0 + s / (scale_ * own_[j]));
    }
    switch (kind_) {
      case PairwiseKind::Binder:  // the paper's shortcut; a new cluster scores 0
        for (std::int32_t k = 0; k < q_; ++k)
          out[k] = b_ * scale_ * static_cast<double>(size_[k]) - (a_ + b_) * acc_[k];
        out[q_] = 0.0;
        break;
      case PairwiseKind::VILowerBound:  // change of n * VI.lb (its item-constant part dropped)
        for (std::int32_t k = 0; k < q_; ++k) {
          const double s = static_cast<double>(size_[k]);
          out[k] = xlog2x(s + 1) - xlog2x(s) - 2 * lg_[k] - 2 * std::log2(1.0 + acc_[k] / scale_);
        }
        out[q_] = 0.0;
        break;
      case PairwiseKind::OMARIApprox: {
        const double m1 = static_cast<double>(m_ + 1);
        const double pairs = (all_ - (static_cast<double>(m_) * scale_)) / 2 / scale_ + total / scale_;
        const double within = (within_ - static_cast<double>(m_) * scale_) / 2 / scale_;
        for (std::int32_t k = 0; k < q_; ++k)
          out[k] = CountLoss::omari(m1, pairs, est_pairs_ + static_cast<double>(size_[k]), within + acc_[k] / scale_);
        out[q_] = CountLoss::omari(m1, pairs, est_pairs_, within);
        break;
      }
    }
  }

  // Loss of the current allocation (of all n items once the search is past initialisation).
  double expected_loss() const {
    const double m = static_cast<double>(m_);
    switch (kind_) {
      case PairwiseKind::Binder:
        // a (all - within) + b (H sizes^2 - within): terms >= 0, exact for integer counts.
        return (a_ * std::max(0.0, all_ - within_) + b_ * std::max(0.0, scale_ * size_sq_ - within_)) /
               (scale_ * m * m);
      case PairwiseKind::VILowerBound: {
        double total = 0;
        for (std::int64_t i = 0; i < n_; ++i) {
          if (est_[i] < 0) continue;
          total += std::log2(static_cast<double>(size_[est_[i]])) + std::log2(row_sum_[i]) -
                   2 * std::log2(own_[i]);
        }
        return total / m;
      }
      case PairwiseKind::OMARIApprox: {
        const double pairs = (all_ - m * scale_) / 2 / scale_;
        const double within = (within_ - m * scale_) / 2 / scale_;
        return CountLoss::omari(m, pairs, est_pairs_, within);  // 1 - PEAR
      }
    }
    return 0.0;
  }

 private:
  // Sums of item i's similarities to the allocated items of slot k and to all allocated
  // items; moves those items' own-cluster sums by `sign` times their similarity to i.
  std::pair<double, double> similarities(std::int64_t i, std::int32_t k, double sign) {
    const T* row = sim_ + i * n_;
    double in_k = 0, total = 0;
    for (std::int64_t j = 0; j < n_; ++j) {
      const std::int32_t e = est_[j];
      if (e < 0) continue;
      const double s = static_cast<double>(row[j]);
      total += s;
      if (e == k) {
        in_k += s;
        own_[j] += sign * s / scale_;
      }
    }
    return {in_k, total};
  }

  const T* sim_;
  std::int64_t n_;
  double scale_;
  PairwiseKind kind_;
  double a_, b_;
  std::int32_t kd_;
  std::vector<std::int32_t> est_;
  std::vector<std::int64_t> size_;
  std::vector<double> acc_, lg_;
  std::vector<double> own_;      // VI.lb: sum of similarities of item i to its own cluster
  std::vector<double> row_sum_;  // VI.lb: sum_j psm_ij
  // Running sums over allocated items, in units of `sim`: sum over ordered pairs (with the
  // diagonal) within estimate clusters, over all pairs; and sum of squared cluster sizes,
  // number of within-cluster unordered pairs.
  double within_ = 0, all_ = 0, size_sq_ = 0, est_pairs_ = 0;
  std::int32_t q_ = 0;
  std::int64_t m_ = 0;
};

}  // namespace salsox
