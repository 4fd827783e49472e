// Runtime choice of the instruction set for the compute-bound scores. The build takes no -march
// flag, so that a wheel runs on any x86-64 CPU: the kernels are compiled once per path, the wider
// ones under __attribute__((target(...))). No path needs AVX-512: its kernels gained too little over
// AVX2 to keep code that half of the machines cannot run (CHANGELOG.md, earlier rounds).
//
// Every path gives the same bits: each SIMD lane is a different candidate slot, so a slot's
// sums are accumulated in the same order as on the baseline path, and the build passes
// -ffp-contract=off so that no path fuses a multiply and an add (AVX-512F brings FMA).
#pragma once
#include <type_traits>
#include <vector>

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define SALSOX_SIMD_X86 1
#define SALSOX_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define SALSOX_SIMD_X86 0
#endif

// The per-draw bodies of the passes are lambdas called once per draw: always inlined (GCC
// called them out of line for the entropy losses).
#if defined(__GNUC__) || defined(__clang__)
#define SALSOX_INLINE __attribute__((always_inline))
#else
#define SALSOX_INLINE
#endif

namespace salsox {

enum class SimdPath : int { Baseline = 0, AVX2 = 1 };

// Padding of the scores' scratch arrays past their slots: the vector loops read whole vectors.
constexpr int kSimdPad = 8;

inline const char* simd_name(SimdPath p) {
  switch (p) {
    case SimdPath::AVX2: return "avx2";
    default: return "baseline";
  }
}

inline bool simd_supported(SimdPath p) {
  if (p == SimdPath::Baseline) return true;
#if SALSOX_SIMD_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

// f(std::integral_constant<int, V>{}) for V = v clamped to [Lo, Hi]: a run-time count as a constant.
template <int Lo, int Hi, class F>
SALSOX_INLINE inline void with_constant(int v, const F& f) {
  if constexpr (Lo < Hi) {
    if (v > Lo) return with_constant<Lo + 1, Hi>(v, f);
  }
  f(std::integral_constant<int, Lo>{});
}

// The paths this CPU (and this build) can run, narrowest first.
inline std::vector<SimdPath> simd_paths() {
  std::vector<SimdPath> out;
  for (SimdPath p : {SimdPath::Baseline, SimdPath::AVX2})
    if (simd_supported(p)) out.push_back(p);
  return out;
}

}  // namespace salsox
