"""The linter and the type checker, as configured in pyproject.toml, report nothing.

Same checks as tools/lint.sh (without caches in the checkout). ruff and mypy come with the
``test`` extra; the tests skip only where they are not installed (or outside a source checkout).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Every directory with Python files: the package, tests, benchmarks, helper scripts, the docs'
# conf.py and figure script, and the example plugin packages.
RUFF_PATHS = ["salsox", "tests", "benchmarks", "tools", "docs", "plugins"]

pytestmark = pytest.mark.skipif(
    not (ROOT / "pyproject.toml").is_file() or not (ROOT / "salsox" / "__init__.py").is_file(),
    reason="needs the source checkout (pyproject.toml and salsox/ beside tests/)",
)


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_ruff_check_is_clean():
    pytest.importorskip("ruff")
    paths = [p for p in RUFF_PATHS if (ROOT / p).is_dir()]
    # --no-cache: nothing written into the checkout.
    proc = _run(["ruff", "check", "--no-cache", *paths], timeout=120)
    assert proc.returncode == 0, f"ruff check {' '.join(paths)} failed:\n{proc.stdout}{proc.stderr}"


def test_mypy_is_clean(tmp_path_factory):
    pytest.importorskip("mypy")
    # Files and options from [tool.mypy]; a fresh cache outside the checkout (a cold run of
    # salsox/ takes about 10-20 s), so a stale cache can neither hide nor invent errors.
    cache = tmp_path_factory.mktemp("mypy_cache")
    proc = _run(["mypy", "--cache-dir", str(cache)], timeout=300)
    assert proc.returncode == 0, f"mypy failed:\n{proc.stdout}{proc.stderr}"
