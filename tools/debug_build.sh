#!/usr/bin/env bash
# Build the C++ extension as a debug build with assertions on and run the test suite with it.
#
#   tools/debug_build.sh                   # whole test suite
#   tools/debug_build.sh tests/test_search.py   # any pytest arguments
#
# CMake build type Debug (-O0 -g, no NDEBUG, so every assert() is checked) plus libstdc++'s
# checked containers and iterators (_GLIBCXX_ASSERTIONS: bounds-checked operator[]). Builds into
# build/debug and installs into a separate virtualenv (default /tmp/venv-debug; set
# SALSOX_DEBUG_VENV to change it), leaving an editable development install alone.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${SALSOX_DEBUG_VENV:-/tmp/venv-debug}"
. tools/_sanitizer_venv.sh
make_instrumented_venv "$venv" build/debug \
  -Ccmake.build-type=Debug \
  "-Ccmake.define.CMAKE_CXX_FLAGS_DEBUG=-O0 -g -D_GLIBCXX_ASSERTIONS" \
  -Ccmake.define.CMAKE_EXPORT_COMPILE_COMMANDS=ON

# Check that the extension really was compiled without NDEBUG and with the checks.
python - <<'PY'
import json, pathlib, sys
cmds = json.loads(pathlib.Path("build/debug/compile_commands.json").read_text())
flags = [c.get("command", " ".join(c.get("arguments", []))) for c in cmds]
if not flags or any("-DNDEBUG" in f for f in flags) or not all("_GLIBCXX_ASSERTIONS" in f for f in flags):
    sys.exit("debug_build.sh: the extension was not compiled with assertions on")
print(f"== {len(flags)} translation units compiled with assertions on (no NDEBUG, _GLIBCXX_ASSERTIONS)")
PY
export SALSOX_SLOW_BUILD=1
echo "== pytest against the debug build"
pytest -p no:cacheprovider -q "$@"
