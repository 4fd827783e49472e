// Runtime choice of the instruction set for the compute-bound scores (omARI, NVI, ID, NID; see
// scores_omari.hpp and scores_entropy.hpp). The build takes no -march flag, so that a wheel
// runs on any x86-64 CPU: the kernels are compiled once per path from the same source, the
// wider ones under __attribute__((target(...))), and each count-table state picks the path
// when it is built.
//
// Every path gives the same bits: each SIMD lane is a different candidate slot, so a slot's
// sums are accumulated in the same order as on the baseline path, and the build passes
// -ffp-contract=off so that no path fuses a multiply and an add (AVX-512F brings FMA).
//
// SALSOX_SIMD=baseline|avx2|avx512 forces a path (for tests and measurements); unset, empty
// or "auto" takes the widest the CPU supports. A path the CPU lacks, or another value, is an
// error (std::invalid_argument, a ValueError in Python).
#pragma once
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define SALSOX_SIMD_X86 1
#define SALSOX_TARGET_AVX2 __attribute__((target("avx2")))
#define SALSOX_TARGET_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2")))
#else
#define SALSOX_SIMD_X86 0
#endif

namespace salsox {

enum class SimdPath : int { Baseline = 0, AVX2 = 1, AVX512 = 2 };

// Slots per vector on each path (the scratch arrays of the scores are padded to kSimdPad).
constexpr int simd_width(SimdPath p) { return p == SimdPath::AVX512 ? 8 : p == SimdPath::AVX2 ? 4 : 2; }
constexpr int kSimdPad = 8;

inline const char* simd_name(SimdPath p) {
  switch (p) {
    case SimdPath::AVX2: return "avx2";
    case SimdPath::AVX512: return "avx512";
    default: return "baseline";
  }
}

inline bool simd_supported(SimdPath p) {
  if (p == SimdPath::Baseline) return true;
#if SALSOX_SIMD_X86
  __builtin_cpu_init();
  if (p == SimdPath::AVX2) return __builtin_cpu_supports("avx2");
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

// The paths this CPU (and this build) can run, narrowest first.
inline std::vector<SimdPath> simd_paths() {
  std::vector<SimdPath> out;
  for (SimdPath p : {SimdPath::Baseline, SimdPath::AVX2, SimdPath::AVX512})
    if (simd_supported(p)) out.push_back(p);
  return out;
}

// The path to use now: SALSOX_SIMD if set, else the widest supported. A value it cannot honour
// throws when `strict` (the entry points check it so, before any thread starts) and otherwise
// gives the widest supported path (the states, which may be built on any thread).
inline SimdPath simd_path(bool strict = true) {
  const char* env = std::getenv("SALSOX_SIMD");
  const std::string want = env ? env : "";
  if (want.empty() || want == "auto") return simd_paths().back();
  for (SimdPath p : {SimdPath::Baseline, SimdPath::AVX2, SimdPath::AVX512}) {
    if (want != simd_name(p)) continue;
    if (simd_supported(p)) return p;
    if (!strict) return simd_paths().back();
    throw std::invalid_argument("SALSOX_SIMD=" + want + ": this CPU (or build) cannot run that path");
  }
  if (!strict) return simd_paths().back();
  throw std::invalid_argument("SALSOX_SIMD must be one of auto, baseline, avx2, avx512; got '" + want + "'");
}

}  // namespace salsox
