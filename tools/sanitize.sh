#!/usr/bin/env bash
# Build the C++ extension with AddressSanitizer + UndefinedBehaviorSanitizer and run the test
# suite under them.
#
#   tools/sanitize.sh                      # whole test suite
#   tools/sanitize.sh tests/test_search.py -k seed   # any pytest arguments
#
# Builds into build/asan and installs into a separate virtualenv (default /tmp/venv-asan; set
# SALSOX_ASAN_VENV to change it), so an editable development install is not disturbed. The
# first run installs the test requirements from PyPI; later runs rebuild incrementally.
# Compiled at -O1 with assertions on (CMake build type Debug, no NDEBUG) and libstdc++'s
# bounds-checked containers (_GLIBCXX_ASSERTIONS). Any sanitizer report fails the run.
# Linux with GCC or Clang (the ASan runtime is preloaded into the uninstrumented Python).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${SALSOX_ASAN_VENV:-/tmp/venv-asan}"
. tools/_sanitizer_venv.sh
make_instrumented_venv "$venv" build/asan \
  -Ccmake.build-type=Debug \
  -Ccmake.define.SALSOX_SANITIZE=ON \
  "-Ccmake.define.CMAKE_CXX_FLAGS_DEBUG=-O1 -g -fno-omit-frame-pointer -D_GLIBCXX_ASSERTIONS"

cxx="${CXX:-c++}"
libasan="$("$cxx" -print-file-name=libasan.so)"
libstdcxx="$("$cxx" -print-file-name=libstdc++.so)"
if [ ! -e "$libasan" ]; then
  echo "error: $cxx has no libasan.so ($libasan); install the compiler's sanitizer runtime" >&2
  exit 2
fi
# Python itself is not instrumented: preload the runtime (and libstdc++, without which ASan's
# __cxa_throw interceptor fails on the first C++ exception of another extension, e.g.
# matplotlib's), and do not report CPython's deliberate allocations-at-exit as leaks.
# Reports go to files (pytest's output capture would swallow them when a test aborts),
# listed at the end; any report fails the run. UBSan stops at the first report.
logs="$(mktemp -d)"
export LD_PRELOAD="$libasan:$libstdcxx"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_init_order=1:check_initialization_order=1:detect_stack_use_after_return=1:log_path=$logs/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# Fewer hypothesis examples: instrumented code is slow.
export SALSOX_SLOW_BUILD=1
echo "== pytest under ASan + UBSan (LD_PRELOAD=$LD_PRELOAD)"
status=0
# `pytest` (not `python -m pytest`) so that the installed salsox, not ./salsox, is imported.
pytest -p no:cacheprovider -q "$@" || status=$?
if compgen -G "$logs/*" >/dev/null; then
  echo "== sanitizer reports ($logs)"
  for f in "$logs"/*; do echo "--- $f"; cat "$f"; done
  exit 1
fi
echo "== no sanitizer reports"
rm -rf "$logs"
exit $status
