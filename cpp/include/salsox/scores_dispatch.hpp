// The per-path entry points of the omARI and entropy scores (simd.hpp): the kernels of
// scores_omari.hpp and scores_entropy.hpp are inlined into one member function per path, each
// compiled for its instruction set (baseline and AVX2), and a state calls the one it picked
// when it was built.
#pragma once
#include <cstdint>

#include "count_table.hpp"

namespace salsox {

template <class Label, class Count>
template <SimdPath P>
inline void CountTableState<Label, Count>::score_on(std::int64_t i, double* out) {
  switch (loss_.kind) {
    case LossKind::OMARI: score_omari<P>(i, out); break;
    case LossKind::NVI: score_nvi<P>(i, out); break;
    case LossKind::ID: score_id<P>(i, out); break;
    case LossKind::NID: score_nid<P>(i, out); break;
    default: break;  // the other losses never come here (see score_as)
  }
}

template <class Label, class Count>
void CountTableState<Label, Count>::score_baseline(std::int64_t i, double* out) {
  score_on<SimdPath::Baseline>(i, out);
}

#if SALSOX_SIMD_X86
template <class Label, class Count>
SALSOX_TARGET_AVX2 void CountTableState<Label, Count>::score_avx2(std::int64_t i, double* out) {
  score_on<SimdPath::AVX2>(i, out);
}
#endif

template <class Label, class Count>
inline void CountTableState<Label, Count>::score_simd(std::int64_t i, double* out) {
#if SALSOX_SIMD_X86
  // The AVX-512 path runs the AVX2 scores: AVX-512 builds of them gained too little to keep
  // (benchmarks/bench_ablation.py, docs/performance.md).
  if (simd_ != SimdPath::Baseline) return score_avx2(i, out);
#endif
  score_baseline(i, out);
}

}  // namespace salsox
