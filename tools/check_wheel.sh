#!/usr/bin/env bash
# Packaging check, too slow for the test suite (two full builds):
#   1. `pip wheel .` builds a wheel (in a clean build directory); it must contain the
#      extension, py.typed and the stub, and no tests;
#   2. the wheel installs into a fresh virtualenv and passes tools/smoke_test.py;
#   3. `python -m build --sdist` builds an sdist; a wheel built from that sdist alone installs
#      into another fresh virtualenv and passes the smoke test too.
#
#   tools/check_wheel.sh            # work directory: a new temporary directory
#   KEEP=1 tools/check_wheel.sh     # keep the work directory (printed at the end)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
cleanup() { if [ -z "${KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work"; fi; }
trap cleanup EXIT
quiet=(--quiet --disable-pip-version-check)

echo "== tools venv ($work/tools)"
"$python" -m venv "$work/tools"
"$work/tools/bin/python" -m pip install "${quiet[@]}" --upgrade pip build

echo "== pip wheel . (fresh build directory)"
t0=$SECONDS
"$work/tools/bin/python" -m pip wheel "${quiet[@]}" --no-deps -w "$work/dist" . -Cbuild-dir="$work/build-wheel"
wheel="$(ls "$work"/dist/salsox-*.whl)"
echo "   $(basename "$wheel") in $((SECONDS - t0)) s"
"$work/tools/bin/python" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["salsox/__init__.py", "salsox/py.typed", "salsox/_core.pyi", "salsox/_version.py"]
missing = [n for n in need if n not in names]
if not any(n.startswith("salsox/_core.") and n.endswith((".so", ".pyd")) for n in names):
    missing.append("salsox/_core extension")
if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
    missing.append("*.dist-info/licenses/LICENSE")
bad = [n for n in names if n.startswith(("tests/", "cpp/", "build/", "benchmarks/"))]
if missing or bad:
    sys.exit(f"wheel contents: missing {missing}, unexpected {bad}")
print(f"   contents OK ({len(names)} files)")
PY

smoke() {  # smoke VENV: run the smoke test from outside the source tree
  (cd "$work" && "$1/bin/python" "$root/tools/smoke_test.py" && "$1/bin/salsox" --version >/dev/null)
}

echo "== install the wheel into a fresh virtualenv"
"$python" -m venv "$work/venv-wheel"
"$work/venv-wheel/bin/python" -m pip install "${quiet[@]}" "$wheel"
smoke "$work/venv-wheel"

echo "== python -m build --sdist"
t0=$SECONDS
"$work/tools/bin/python" -m build --sdist --outdir "$work/sdist" . >/dev/null
sdist="$(ls "$work"/sdist/salsox-*.tar.gz)"
echo "   $(basename "$sdist") in $((SECONDS - t0)) s"
"$work/tools/bin/python" - "$sdist" <<'PY'
import sys, tarfile
names = [n.split("/", 1)[1] for n in tarfile.open(sys.argv[1]).getnames() if "/" in n]
need = ["pyproject.toml", "CMakeLists.txt", "README.md", "LICENSE", "salsox/__init__.py", "salsox/py.typed",
        "salsox/_core.pyi", "cpp/include/salsox/search.hpp", "cpp/bindings/module.cpp"]
missing = [n for n in need if n not in names]
bad = [n for n in names if n.startswith(("build/", ".ci/"))]
if missing or bad:
    sys.exit(f"sdist contents: missing {missing}, unexpected {bad}")
print(f"   contents OK ({len(names)} files)")
PY

echo "== build and install from the sdist alone, into another fresh virtualenv"
"$python" -m venv "$work/venv-sdist"
t0=$SECONDS
(cd "$work" && "$work/venv-sdist/bin/python" -m pip install "${quiet[@]}" "$sdist")
echo "   built and installed in $((SECONDS - t0)) s"
smoke "$work/venv-sdist"

echo "== packaging OK: $(basename "$wheel"), $(basename "$sdist")"
