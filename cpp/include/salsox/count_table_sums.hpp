// CountTableState's sums from scratch: its expected loss and its running sums (count_table.hpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "count_table.hpp"

namespace salsox {

template <class Label, class Count>
inline void CountTableState<Label, Count>::refresh_sums() {
  table_.shrink();  // after a scan or a zealous round: a good time to narrow the rows (see shrink)
  if (!track_stats_) return;
  draw_sums_changed();
  E_ = fresh_est_sum();
  for (std::int64_t h = 0; h < d_.H; ++h) fresh_draw_sums(h, D_[h], J_[h]);
}

template <class Label, class Count>
inline double CountTableState<Label, Count>::sums_drift() const {
  if (!track_stats_) return 0.0;
  auto rel = [](double kept, double fresh) {
    return std::abs(kept - fresh) / std::max(1.0, std::abs(fresh));
  };
  double worst = rel(E_, fresh_est_sum());
  for (std::int64_t h = 0; h < d_.H; ++h) {
    double D = 0.0, J = 0.0;
    fresh_draw_sums(h, D, J);
    worst = std::max({worst, rel(D_[h], D), rel(J_[h], J)});
  }
  return worst;
}

// The mean over draws of the loss. When threads may help, the draws' losses are taken in
// parallel and then summed in draw order: the same bits as the plain loop.
template <class Label, class Count>
inline double CountTableState<Label, Count>::expected_loss() const {
  const std::int32_t q = slots();
  double E = 0.0;
  for (std::int32_t k = 0; k < q; ++k) E += loss_.g_est[size(k)];
  const double* g_cell = loss_.g_cell.data();
  const double* g_draw = loss_.g_draw.data();
  const Count* cnt = counts();
  const std::int64_t row_stride = stride();
  const double m = static_cast<double>(allocated());
  const auto draw_loss = [this, E, g_cell, g_draw, q, cnt, row_stride, m](std::int64_t h) SALSOX_INLINE {
    double D = 0.0, J = 0.0;
    const Count* rows = cnt + d_.base[h] * row_stride;
    sum_draw_rows<Cells::All, Label, Count>(
        d_.k[h], q, [&](std::int64_t l) SALSOX_INLINE { return rows + l * row_stride; },
        [&](Count x) SALSOX_INLINE { J += g_cell[x]; }, [&](std::int64_t, std::int64_t s) SALSOX_INLINE { D += g_draw[s]; });
    return loss_.combine(m, D, E, J);
  };
  double total = 0.0;
  if (shared_threads() > 1) {
    if (draw_loss_.size() < static_cast<std::size_t>(d_.H)) draw_loss_.resize(static_cast<std::size_t>(d_.H));
    double* out = draw_loss_.data();
    parallel_for(d_.H, [out, &draw_loss](std::int64_t h) { out[h] = draw_loss(h); }, kDrawGrain);
    for (std::int64_t h = 0; h < d_.H; ++h) total += out[h];
  } else {
    for (std::int64_t h = 0; h < d_.H; ++h) total += draw_loss(h);
  }
  return total / static_cast<double>(d_.H);
}

template <class Label, class Count>
inline double CountTableState<Label, Count>::fresh_est_sum() const {
  double E = 0.0;
  for (std::int32_t k = 0; k < slots(); ++k) E += loss_.g_est[size(k)] - loss_.g_est[0];
  return E;
}

template <class Label, class Count>
inline void CountTableState<Label, Count>::fresh_draw_sums(std::int64_t h, double& D, double& J) const {
  const double g_draw0 = loss_.g_draw[0], g_cell0 = loss_.g_cell[0];
  const double* g_draw = loss_.g_draw.data();
  const double* g_cell = loss_.g_cell.data();
  const std::int64_t row_stride = stride();
  const std::int32_t cap = allocated_column();
  const Count* rows = counts() + d_.base[h] * row_stride;
  double d = 0.0, j = 0.0;
  // A row's count is its allocated items (the allocated column), whatever the slots it is read over.
  sum_draw_rows<Cells::All, Label, Count>(
      d_.k[h], slots(), [&](std::int64_t l) SALSOX_INLINE { return rows + l * row_stride; },
      [&](Count x) SALSOX_INLINE { j += g_cell[x] - g_cell0; },
      [&](std::int64_t l, std::int64_t) SALSOX_INLINE { d += g_draw[rows[l * row_stride + cap]] - g_draw0; });
  D = d;
  J = j;
}

}  // namespace salsox
