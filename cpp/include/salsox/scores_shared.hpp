// Score passes of CountTableState (count_table.hpp) shared between threads, with the same bits
// whatever the thread count: sums over fixed chunks of draws, added in chunk order.
#pragma once
#include <algorithm>
#include <cstdint>

#include "count_table.hpp"
#include "line_rows.hpp"

namespace salsox {

// f(b) for b in [0, count) through parallel_for, compiled for path P (so that the kernels
// inlined into f use its instructions), counted in the threads the score passes had.
template <class Label, class Count>
template <SimdPath P, class F>
inline void CountTableState<Label, Count>::share_score(std::int64_t count, const F& f) {
  int team = 1;
#if SALSOX_SIMD_X86
  if constexpr (P == SimdPath::AVX2)
    team = parallel_for(count, [&f](std::int64_t b) SALSOX_TARGET_AVX2 { f(b); });
  else
#endif
    team = parallel_for(count, [&f](std::int64_t b) { f(b); });
  score_team_max_ = std::max(score_team_max_, team);
}

// Sums `width` values over the draws: body(lo, hi, sums, nz) adds the terms of draws hi-1 down
// to lo into sums[0..width) (zeroed; nz: for_each_nonzero's scratch), per chunk of kDrawChunk
// draws, added last chunk first (the draws' order). Returns the totals (valid until the next call).
template <class Label, class Count>
template <SimdPath P, class Body>
inline const double* CountTableState<Label, Count>::draw_chunks(std::int32_t width, const Body& body) {
  const std::int64_t H = d_.H, chunks = std::max<std::int64_t>(1, (H + kDrawChunk - 1) / kDrawChunk);
  const auto w = static_cast<std::size_t>(width);
  // Each chunk's sums and scratch on lines of their own (see line_rows).
  std::int64_t pw = 0, nzw = 0;
  double* part = line_rows(chunk_part_, chunks, width, pw);
  std::int32_t* nz = line_rows(chunk_nz_, chunks, static_cast<std::int64_t>(q_) + 1, nzw);
  if (chunk_sum_.size() < w) chunk_sum_.resize(w);
  auto chunk = [&](std::int64_t c) SALSOX_INLINE {
    double* sums = part + c * pw;
    std::fill(sums, sums + w, 0.0);
    body(c * kDrawChunk, std::min(H, (c + 1) * kDrawChunk), sums, nz + c * nzw);
  };
  if (chunks > 1 && shared_threads() > 1) {
    share_score<P>(chunks, chunk);
  } else {
    for (std::int64_t c = chunks - 1; c >= 0; --c) chunk(c);
  }
  if (chunks == 1) return part;
  double* total = chunk_sum_.data();
  std::copy(part + (chunks - 1) * pw, part + (chunks - 1) * pw + width, total);
  for (std::int64_t c = chunks - 2; c >= 0; --c) {
    const double* sums = part + c * pw;
    for (std::size_t j = 0; j < w; ++j) total[j] += sums[j];
  }
  return total;
}

}  // namespace salsox
