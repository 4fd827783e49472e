// Per-run search state for count-based losses: the contingency tables between the estimate and
// every draw, laid out [draw][draw cluster][estimate cluster]. Scoring an item reads, for each
// draw, one short contiguous row holding the counts for all estimate clusters at once (the
// reference reads one scattered cell per draw per candidate).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "count_loss.hpp"
#include "draws.hpp"

namespace salsox {

template <class Label>
class CountTableState {
 public:
  using Count = std::int32_t;

  CountTableState(const DrawsView<Label>& draws, const CountLoss& loss, std::int32_t max_clusters)
      : d_(draws), loss_(loss), kd_(max_clusters), stride_(max_clusters),
        track_stats_(!loss.additive()) {
    cnt_.assign(static_cast<std::size_t>(d_.rows * stride_), 0);
    est_.assign(d_.n, -1);
    size_.assign(stride_ + 1, 0);
    acc_.assign(stride_ + 1, 0.0);
    acc_int_.assign(stride_ + 1, 0);
    e_new_.assign(stride_ + 1, 0.0);
    if (track_stats_) {
      alloc_.assign(d_.rows, 0);
      D_.assign(d_.H, 0.0);
      J_.assign(d_.H, 0.0);
    }
    for (std::size_t x = 0; x + 1 < loss_.g_cell.size(); ++x) {
      dcell_.push_back(loss_.g_cell[x + 1] - loss_.g_cell[x]);
      dest_.push_back(loss_.g_est[x + 1] - loss_.g_est[x]);
      ddraw_.push_back(loss_.g_draw[x + 1] - loss_.g_draw[x]);
    }
  }

  std::int64_t n() const { return d_.n; }
  std::int32_t max_clusters() const { return kd_; }
  std::int32_t slots() const { return q_; }
  std::int64_t allocated() const { return m_; }
  std::int64_t size(std::int32_t k) const { return size_[k]; }
  std::int32_t label(std::int64_t i) const { return est_[i]; }
  const std::vector<std::int32_t>& labels() const { return est_; }

  void clear() {
    std::fill(cnt_.begin(), cnt_.end(), 0);
    std::fill(est_.begin(), est_.end(), -1);
    std::fill(size_.begin(), size_.end(), 0);
    if (track_stats_) {
      std::fill(alloc_.begin(), alloc_.end(), 0);
      std::fill(D_.begin(), D_.end(), 0.0);
      std::fill(J_.begin(), J_.end(), 0.0);
    }
    E_ = 0.0;
    q_ = 0;
    m_ = 0;
  }

  // Replaces the state by the complete allocation `labels` (slots 0..max).
  void rebuild(const std::vector<std::int32_t>& labels) {
    clear();
    q_ = labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end()) + 1;
    for (std::int64_t i = 0; i < d_.n; ++i) add(i, labels[i]);
  }

  // Puts unallocated item i into slot k (k <= slots(); k == slots() opens a new slot).
  void add(std::int64_t i, std::int32_t k) {
    const Label* lab = d_.item(i);
    Count* col = cnt_.data() + k;
    if (track_stats_) {
      for (std::int64_t h = 0; h < d_.H; ++h) {
        const std::int64_t r = d_.base[h] + lab[h];
        const Count c = col[r * stride_]++;
        const Count s = alloc_[r]++;
        D_[h] += ddraw_[s];
        J_[h] += dcell_[c];
      }
      E_ += dest_[size_[k]];
    } else {
      for (std::int64_t h = 0; h < d_.H; ++h) ++col[(d_.base[h] + lab[h]) * stride_];
    }
    if (k == q_) ++q_;
    ++size_[k];
    ++m_;
    est_[i] = k;
  }

  // Takes item i out of its slot; the slot may be left empty (see close_slot).
  void remove(std::int64_t i) {
    const std::int32_t k = est_[i];
    const Label* lab = d_.item(i);
    Count* col = cnt_.data() + k;
    if (track_stats_) {
      for (std::int64_t h = 0; h < d_.H; ++h) {
        const std::int64_t r = d_.base[h] + lab[h];
        const Count c = --col[r * stride_];
        const Count s = --alloc_[r];
        D_[h] -= ddraw_[s];
        J_[h] -= dcell_[c];
      }
      E_ -= dest_[size_[k] - 1];
    } else {
      for (std::int64_t h = 0; h < d_.H; ++h) --col[(d_.base[h] + lab[h]) * stride_];
    }
    --size_[k];
    --m_;
    est_[i] = -1;
  }

  // Removes empty slot k by moving the last slot into it, keeping slots 0..q-1 occupied.
  void close_slot(std::int32_t k) {
    const std::int32_t last = q_ - 1;
    if (k != last) {
      for (std::int64_t r = 0; r < d_.rows; ++r) {
        Count* row = cnt_.data() + r * stride_;
        row[k] = row[last];
        row[last] = 0;
      }
      size_[k] = size_[last];
      size_[last] = 0;
      for (auto& e : est_)
        if (e == last) e = k;
    }
    --q_;
  }

  // Scores putting unallocated item i in each slot 0..q-1 (out[k]) and in a new cluster
  // (out[q]); lower is better. Scores of one call are comparable with each other only.
  void score(std::int64_t i, double* out) {
    switch (loss_.kind) {
      case LossKind::Binder: score_binder(i, out); break;
      case LossKind::VI:
      case LossKind::Tabulated: score_additive(i, out); break;
      case LossKind::OMARI: score_general(i, out, &CountLoss::omari); break;
      case LossKind::NVI: score_general(i, out, &CountLoss::nvi); break;
      case LossKind::ID: score_general(i, out, &CountLoss::id); break;
      case LossKind::NID: score_general(i, out, &CountLoss::nid); break;
    }
  }

  // The Monte Carlo expected loss of the current (complete or partial) allocation, from
  // scratch so that no incremental rounding leaks into reported values.
  double expected_loss() const {
    double E = 0.0;
    for (std::int32_t k = 0; k < q_; ++k) E += loss_.g_est[size_[k]];
    double total = 0.0;
    for (std::int64_t h = 0; h < d_.H; ++h) {
      double D = 0.0, J = 0.0;
      for (std::int64_t r = d_.base[h]; r < d_.base[h + 1]; ++r) {
        const Count* row = cnt_.data() + r * stride_;
        std::int64_t s = 0;
        for (std::int32_t k = 0; k < q_; ++k) {
          s += row[k];
          J += loss_.g_cell[row[k]];
        }
        D += loss_.g_draw[s];
      }
      total += loss_.combine(static_cast<double>(m_), D, E, J);
    }
    return total / static_cast<double>(d_.H);
  }

 private:
  // Paper's shortcut: b H n_.k - (a + b) sum_h n_{c_h(i) k}; a new cluster scores 0.
  void score_binder(std::int64_t i, double* out) {
    const Label* lab = d_.item(i);
    std::fill(acc_int_.begin(), acc_int_.begin() + q_, 0);
    for (std::int64_t h = 0; h < d_.H; ++h) {
      const Count* row = cnt_.data() + (d_.base[h] + lab[h]) * stride_;
      for (std::int32_t k = 0; k < q_; ++k) acc_int_[k] += row[k];
    }
    const double H = static_cast<double>(d_.H);
    for (std::int32_t k = 0; k < q_; ++k)
      out[k] = loss_.b * H * static_cast<double>(size_[k]) -
               (loss_.a + loss_.b) * static_cast<double>(acc_int_[k]);
    out[q_] = 0.0;
  }

  // H dE(n_.k) + sum_h dJ(n_{c_h(i) k}), dE and dJ tabulated differences (for VI the paper's
  // f(n) = n log n - (n - 1) log(n - 1)).
  void score_additive(std::int64_t i, double* out) {
    const Label* lab = d_.item(i);
    std::fill(acc_.begin(), acc_.begin() + q_, 0.0);
    const double* dc = dcell_.data();
    for (std::int64_t h = 0; h < d_.H; ++h) {
      const Count* row = cnt_.data() + (d_.base[h] + lab[h]) * stride_;
      for (std::int32_t k = 0; k < q_; ++k) acc_[k] += dc[row[k]];
    }
    const double H = static_cast<double>(d_.H);
    for (std::int32_t k = 0; k < q_; ++k) out[k] = H * dest_[size_[k]] + acc_[k];
    out[q_] = H * (dest_[0] + dc[0]);
  }

  // Losses that are not additive: evaluate combine per draw with the running sums.
  template <class Combine>
  void score_general(std::int64_t i, double* out, Combine combine) {
    const Label* lab = d_.item(i);
    std::fill(acc_.begin(), acc_.begin() + q_ + 1, 0.0);
    for (std::int32_t k = 0; k < q_; ++k) e_new_[k] = E_ + dest_[size_[k]];
    const double e_open = E_ + dest_[0];
    const double m1 = static_cast<double>(m_ + 1);
    const double* dc = dcell_.data();
    double open = 0.0;
    for (std::int64_t h = 0; h < d_.H; ++h) {
      const std::int64_t r = d_.base[h] + lab[h];
      const Count* row = cnt_.data() + r * stride_;
      const double Dn = D_[h] + ddraw_[alloc_[r]];
      const double Jh = J_[h];
      for (std::int32_t k = 0; k < q_; ++k) acc_[k] += combine(m1, Dn, e_new_[k], Jh + dc[row[k]]);
      open += combine(m1, Dn, e_open, Jh + dc[0]);
    }
    for (std::int32_t k = 0; k < q_; ++k) out[k] = acc_[k];
    out[q_] = open;
  }

  DrawsView<Label> d_;
  const CountLoss& loss_;
  std::int32_t kd_, stride_;
  bool track_stats_;
  std::vector<Count> cnt_;
  std::vector<std::int32_t> est_;
  std::vector<std::int64_t> size_;
  std::vector<double> acc_, e_new_;
  std::vector<std::int64_t> acc_int_;
  std::vector<double> dcell_, dest_, ddraw_;
  // Running per-draw sums for non-additive losses.
  std::vector<Count> alloc_;
  std::vector<double> D_, J_;
  double E_ = 0.0;
  std::int32_t q_ = 0;
  std::int64_t m_ = 0;
};

}  // namespace salsox
