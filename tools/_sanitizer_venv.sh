# Shared by tools/sanitize.sh and tools/debug_build.sh (sourced, not run): builds salsox in a
# separate virtualenv and build directory, so the developers' editable install is untouched.
#   make_instrumented_venv VENV BUILD_DIR [extra pip -C options...]
make_instrumented_venv() {
  local venv="$1" build_dir="$2"
  shift 2
  if [ ! -x "$venv/bin/python" ]; then
    echo "== creating $venv"
    "${PYTHON:-python3}" -m venv "$venv"
  fi
  # shellcheck disable=SC1091
  . "$venv/bin/activate"
  # salsox itself goes in with --no-deps (below): its runtime dependencies (pyproject.toml's
  # `dependencies`) are listed here with the build and test requirements.
  echo "== installing build, runtime and test requirements into $venv"
  python -m pip install --quiet --upgrade pip
  # --no-build-isolation below needs the build requirements installed here. dask: worker
  # buffers may be misaligned (UBSan found one); llvmlite: compiled count-sum formulas, whose
  # code the engine calls with its own buffers.
  python -m pip install --quiet --upgrade "scikit-build-core>=0.10" "pybind11>=2.12" "setuptools>=70.1" wheel \
    "numpy>=1.22" "pluggy>=1.0" "scipy>=1.7" "tqdm>=4.60" \
    "pytest>=7" "pytest-timeout>=2" "hypothesis>=6" "matplotlib>=3.5" xarray \
    "dask[distributed]" "llvmlite>=0.45"
  echo "== building salsox ($*) into $build_dir"
  python -m pip install --quiet --no-build-isolation --no-deps --force-reinstall . \
    -Cbuild-dir="$build_dir" "$@"
  # The example plugins the test suite expects (pure Python).
  python -m pip install --quiet --no-build-isolation --no-deps \
    ./plugins/salsox-example-losses ./plugins/salsox-hclust-init
}
