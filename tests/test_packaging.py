"""Cheap packaging checks: one version, typed package, build configuration.

The slow end-to-end check (wheel and sdist built, installed in fresh virtualenvs, smoke
tested) is tools/check_wheel.sh.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import re
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import salsox

ROOT = Path(__file__).resolve().parents[1]

try:  # Python 3.11+
    import tomllib
except ImportError:  # pragma: no cover - Python 3.9, 3.10
    tomllib = None  # type: ignore[assignment]


def _pyproject() -> dict:
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def test_version_is_single_sourced() -> None:
    """salsox/_version.py is the only place the version is written."""
    text = (ROOT / "salsox" / "_version.py").read_text()
    match = re.fullmatch(r'__version__ = "(\d+\.\d+\.\d+(?:[a-z]+\d+)?)"\n', text)
    assert match, text
    assert salsox.__version__ == match.group(1)
    assert importlib.metadata.version("salsox") == salsox.__version__
    meta = _pyproject()
    assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"]
    provider = meta["tool"]["scikit-build"]["metadata"]["version"]
    assert provider == {"provider": "scikit_build_core.metadata.regex", "input": "salsox/_version.py"}
    # No other copy of the number in the sources, build files or docs configuration.
    for path in [ROOT / "CMakeLists.txt", ROOT / "docs" / "conf.py", *sorted((ROOT / "salsox").glob("*.py"))]:
        if path.name != "_version.py":
            assert salsox.__version__ not in path.read_text(encoding="utf-8"), path


def test_cli_reports_the_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "salsox", "--version"],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        timeout=120,
        # An editable development install otherwise announces its rebuild check on stdout.
        env=dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0"),
    )
    assert proc.returncode == 0 and proc.stdout.strip() == f"salsox {salsox.__version__}", proc


def test_typed_package_ships_marker_and_stub() -> None:
    package = importlib.resources.files("salsox")
    assert package.joinpath("py.typed").is_file()
    assert package.joinpath("_core.pyi").is_file()
    assert (ROOT / "salsox" / "py.typed").is_file()


def test_public_api_is_annotated() -> None:
    """Every public function has annotated parameters and a return annotation."""
    import inspect

    for name in salsox.__all__:
        obj = getattr(salsox, name)
        if not inspect.isfunction(obj):
            continue
        sig = inspect.signature(obj)
        assert sig.return_annotation is not inspect.Signature.empty, name
        for p in sig.parameters.values():
            assert p.annotation is not inspect.Parameter.empty, f"{name}({p.name})"


def test_build_configuration() -> None:
    meta = _pyproject()
    extras = meta["project"]["optional-dependencies"]
    # CI runs `pip install ".[test]" && pytest`: the docs build and its tools must come along.
    docs = {re.split(r"[<>=!~ ]", r)[0] for r in extras["docs"]}
    assert {"sphinx", "myst-parser"} <= docs
    assert docs <= {re.split(r"[<>=!~ ]", r)[0] for r in extras["test"]}
    cibw = meta["tool"]["cibuildwheel"]
    assert cibw["test-command"] and cibw["test-requires"]
    for platform in ("macos", "windows"):
        assert platform in cibw
    assert "build" in meta["tool"]["scikit-build"]["sdist"]["exclude"]
    for section in ("ruff", "mypy"):
        assert section in meta["tool"]
    # ... and so must the linter and type checker, so that tests/test_lint.py runs there.
    assert {"ruff", "mypy"} <= {re.split(r"[<>=!~ ]", r)[0] for r in extras["test"]}


def test_license_file_is_declared_and_shipped_in_the_sdist(tmp_path: Path) -> None:
    """LICENSE exists, pyproject declares it (so the wheel's dist-info carries it), and the
    sdist holds it with a License-File line in its metadata (building an sdist compiles nothing)."""
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    project = _pyproject()["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    build = "import sys; from scikit_build_core.build import build_sdist; print(build_sdist(sys.argv[1]))"
    proc = subprocess.run(
        [sys.executable, "-c", build, str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    import tarfile

    with tarfile.open(tmp_path / proc.stdout.strip().splitlines()[-1]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        pkg_info = tar.extractfile(next(m for m in tar.getmembers() if m.name.endswith("/PKG-INFO")))
        assert pkg_info is not None
        metadata = pkg_info.read().decode()
    assert "LICENSE" in names
    assert "License-File: LICENSE" in metadata and "License-Expression: MIT" in metadata


def test_import_from_the_source_tree_without_the_extension_says_so() -> None:
    """``import salsox`` where ./salsox has no compiled extension (a source checkout, run
    without site-packages so no installed or editable copy can step in) fails with a message
    saying what is missing and what to do, not Python's circular-import complaint."""
    proc = subprocess.run(
        [sys.executable, "-S", "-c", "import salsox"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: salsox's compiled extension (salsox._core) is missing"), last
    assert "pip install" in last and "circular" not in proc.stderr


def _quick_start_commands() -> list:
    """The shell commands of the README's Quick start section, in order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_ci_runs_the_readme_commands_in_order() -> None:
    """.ci/run runs the README's quick start, then its test command, as written; the test command
    installs the test group and the plugins beside the installed package, so it names no local
    build of salsox itself (pip would compile the engine again)."""
    commands = _quick_start_commands()
    assert len(commands) == 2, commands
    install, test = commands
    assert install.startswith("pip install . ") and "salsox demo" in install
    assert test.startswith("pip install --group test ") and test.endswith("&& pytest")
    args = test.split("&&")[0].split()[2:]
    assert not any(a.strip("'\"") == "." or a.strip("'\"").startswith(".[") for a in args), test
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    at = [ci.index(c) for c in commands if c in ci]
    assert len(at) == 2 and at[0] < at[1], (commands, ci)


def test_test_group_is_the_test_extra() -> None:
    """The README's test command installs the `test` dependency group; `pip install ".[test]"`
    the extra: the two lists stay the same."""
    meta = _pyproject()
    assert meta["dependency-groups"]["test"] == meta["project"]["optional-dependencies"]["test"]
