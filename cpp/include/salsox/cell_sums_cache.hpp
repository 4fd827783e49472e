// The cell sums cache of CellSumScorer (cell_sum_scorer.hpp; docs/architecture.md).
#pragma once
#include <algorithm>
#include <cstdint>

#include "cell_sum_scorer.hpp"

namespace salsox {

// cell_sums from the sums cached at item i's last score for the slots whose column has not
// changed since: after a move, a scan recomputes two slots of each item. Recomputed sums come
// from the same pass as without the cache: the same bits. An item's own slot caches its sum one
// lower (`own`); an item cannot leave or join a slot without its version changing.
template <class Label, class Count>
inline void CellSumScorer<Label, Count>::cell_sums_cached(std::int64_t i) {
  const std::int64_t kd = s_.max_clusters();
  if (cache_val_.empty()) {
    cache_val_.assign(static_cast<std::size_t>(d_.n * kd), 0.0);
    cache_ver_.assign(static_cast<std::size_t>(d_.n * kd), 0);  // column versions start at 1
    dirty_.assign(static_cast<std::size_t>(kd) + 1, 0);
    fresh_.assign(static_cast<std::size_t>(kd) + 1, 0.0);
  }
  const std::int32_t q = s_.slots(), old = old_;
  double* val = cache_val_.data() + i * kd;
  std::uint64_t* ver = cache_ver_.data() + i * kd;
  std::int32_t* ks = dirty_.data();
  std::int32_t nd = 0;
  for (std::int32_t k = 0; k < q; ++k)
    if ((k != old) & (ver[k] != s_.column_version(k))) ks[nd++] = k;
  const bool own_dirty = old >= 0 && ver[old] != s_.column_version(old);
  double* fresh = fresh_.data();
  if (nd + (own_dirty ? 1 : 0) == q) {
    all_cell_sums(i, fresh);  // every slot changed: the plain pass, as without the cache
    for (std::int32_t k = 0; k < q; ++k) ks[k] = k;
    nd = q;
  } else if (own_dirty) {
    cell_sums_pass<false, true>(i, ks, nd, fresh);
    ks[nd] = old;
    ++nd;
  } else if (nd > 0) {
    cell_sums_pass<false, false>(i, ks, nd, fresh);
  }
  for (std::int32_t j = 0; j < nd; ++j) {
    val[ks[j]] = fresh[j];
    ver[ks[j]] = s_.column_version(ks[j]);
  }
  std::copy(val, val + q, acc_.data());
}

}  // namespace salsox
