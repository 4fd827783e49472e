// The engine's settings: every optional path a search may take, read from the environment once
// per search (from_env) unless the caller passes them (tests: _core.EngineOptions), for tests and
// measurements: the searches give the same bits whatever they are. A value not allowed is an error (std::invalid_argument) naming the variable.
#pragma once
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "simd.hpp"

namespace salsox {

struct EngineOptions {
  // SALSOX_SIMD=baseline|avx2: the instruction set of the compute-bound scores (simd.hpp);
  // unset, empty or auto: the widest this CPU runs. A path the CPU lacks is an error.
  SimdPath simd = simd_paths().back();
  // SALSOX_CELL_CACHE=off: no cell sums cache (cell_sums_cache.hpp).
  bool cell_cache = true;
  // SALSOX_CELL_LANES=off: NVI's and NID's scores visit only the nonzero cells instead of taking
  // every slot as a SIMD lane (entropy_scorer.hpp).
  bool cell_lanes = true;
  // Binder's count-table scores: up to eight slots' sums in registers, more slots four draws a
  // step; false: one draw at a time, every sum in memory (the portable loop they are tested
  // against). No environment variable: only a test sets it, through this struct.
  bool binder_unrolled = true;
  // The count-sum scores' paths (countsum_*.hpp), no environment variable either: the formula's
  // llvmlite kernel when the loss carries one, against the node loops; fused node pairs, against
  // one node a loop; rows of fixed width 4, 8, 16 or 32, against loops of the runtime width.
  bool countsum_jit = true;
  bool countsum_fused = true;
  bool countsum_row_widths = true;

  // The settings the environment gives. `strict`: a value it cannot honour throws (the entry
  // points read it so, before any thread starts); otherwise that setting keeps its default.
  static EngineOptions from_env(bool strict = true) {
    EngineOptions o;
    auto fail = [strict](const std::string& what) {
      if (strict) throw std::invalid_argument(what);
    };
    const std::string simd = value("SALSOX_SIMD");
    if (!simd.empty() && simd != "auto") {
      bool named = false;
      for (SimdPath p : {SimdPath::Baseline, SimdPath::AVX2}) {
        if (simd != simd_name(p)) continue;
        named = true;
        if (simd_supported(p))
          o.simd = p;
        else
          fail("SALSOX_SIMD=" + simd + ": this CPU (or build) cannot run that path");
      }
      if (!named) fail("SALSOX_SIMD must be one of auto, baseline, avx2; got '" + simd + "'");
    }
    o.cell_cache = on_off("SALSOX_CELL_CACHE", fail);
    o.cell_lanes = on_off("SALSOX_CELL_LANES", fail);
    return o;
  }

 private:
  static std::string value(const char* name) {
    const char* env = std::getenv(name);
    return env ? env : "";
  }
  template <class Fail>
  static bool on_off(const char* name, Fail& fail) {
    const std::string want = value(name);
    if (want.empty() || want == "auto") return true;
    if (want == "off") return false;
    fail(std::string(name) + " must be one of auto, off; got '" + want + "'");
    return true;
  }
};

}  // namespace salsox
