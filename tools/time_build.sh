#!/usr/bin/env bash
# How long the extension takes to build: (a) a fresh `pip wheel .` of a clean copy of the
# sources (what `pip install .` compiles), and (b) the rebuild after touching one scorer header
# (cpp/include/salsox/omari_scorer.hpp, scores_omari.hpp before issue 38's scorer types),
# reusing (a)'s build directory. Prints wall and CPU
# seconds (user + system, the compiler's children included) for each, and each translation
# unit's share of the fresh build's CPU (the compiler run under /usr/bin/time through CMake's
# compiler launcher), largest first.
#
#   tools/time_build.sh [REF ...]
#
# Each REF (a git commit, e.g. main or HEAD~3) is built from `git archive REF`; with no REF the
# working tree (tracked and untracked files git does not ignore) is built. Give two refs to
# print before and after in one run. PYTHON is the interpreter whose pip, scikit-build-core
# and pybind11 build the wheel (default: python3); nothing is installed into it.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
root=$(mktemp -d "${TMPDIR:-/tmp}/salsox-time-build.XXXXXX")
trap 'rm -rf "$root"' EXIT

timed() {  # timed LABEL CMD...: runs CMD, prints "LABEL wall cpu"
  local label=$1 wall user sys
  shift
  /usr/bin/time -o "$root/time" -f "%e %U %S" "$@" >"$root/log" 2>&1 || {
    cat "$root/log" >&2
    echo "$label: the build failed" >&2
    exit 1
  }
  read -r wall user sys <"$root/time"
  printf '%-28s %8.1f s wall %8.1f s CPU\n' "$label" "$wall" "$(echo "$user + $sys" | bc)"
}

# Runs a compile command, appending "user system source" to $SALSOX_UNIT_TIMES.
launcher="$root/launcher"
cat >"$launcher" <<'LAUNCH'
#!/usr/bin/env bash
src=$(printf '%s\n' "$@" | grep -m1 -E '\.(cpp|cxx)$' || echo link)
exec /usr/bin/time -a -o "$SALSOX_UNIT_TIMES" -f "%U %S $(basename "$src")" "$@"
LAUNCH
chmod +x "$launcher"

units() {  # units FILE: each unit's CPU seconds and share of the total, largest first
  awk '{cpu[$3] += $1 + $2; total += $1 + $2} END {for (u in cpu) printf "  %-32s %7.1f s CPU %5.1f%%\n", u, cpu[u], 100 * cpu[u] / total}' "$1" | sort -k2 -rn
}

measure() {  # measure NAME SRC
  local name=$1 src=$2
  export SALSOX_UNIT_TIMES="$src.units"
  (cd "$src" && CMAKE_ARGS="-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher" timed "$name fresh build" "$PYTHON" -m pip wheel --no-build-isolation --no-deps -q . -w "$src/dist")
  units "$SALSOX_UNIT_TIMES"
  local header="$src/cpp/include/salsox/omari_scorer.hpp"
  [ -e "$header" ] || header="$src/cpp/include/salsox/scores_omari.hpp"
  touch "$header"
  export SALSOX_UNIT_TIMES="$src.rebuild-units"
  (cd "$src" && timed "$name rebuild (one header)" "$PYTHON" -m pip wheel --no-build-isolation --no-deps -q . -w "$src/dist")
}

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ $# -eq 0 ]; then
  src="$root/worktree"
  mkdir -p "$src"
  git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$src"
  measure "worktree" "$src"
else
  for ref in "$@"; do
    src="$root/$(echo "$ref" | tr -c 'A-Za-z0-9_.\n-' '_')"
    mkdir -p "$src"
    git archive "$ref" | tar -x -C "$src"
    measure "$ref" "$src"
  done
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
