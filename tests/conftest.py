"""Shared test fixtures: where the shared/ reference data lives, and loading it.

The repository is cloned beside ``shared/`` (locally /work/main next to
/work/shared; in CI a fresh clone next to a copy of shared/), so the data is
found relative to this file, never copied into the repository.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, List

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Hypothesis: derandomised by default, so that CI runs the same examples every time (a
# failure is reproducible, and a run cannot pass by luck). SALSOX_HYPOTHESIS_PROFILE=explore
# draws fresh random examples (more of them) for local bug hunting. Instrumented builds
# (tools/sanitize.sh, tools/debug_build.sh) set SALSOX_SLOW_BUILD and run fewer examples.
_SLOW = bool(os.environ.get("SALSOX_SLOW_BUILD"))
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
               print_blob=True)
settings.register_profile("salsox", derandomize=True, max_examples=40 if _SLOW else 150, **_COMMON)
settings.register_profile("explore", derandomize=False, max_examples=40 if _SLOW else 1000, **_COMMON)
settings.load_profile(os.environ.get("SALSOX_HYPOTHESIS_PROFILE", "salsox"))

SHARED_DIR = Path(__file__).resolve().parents[1].parent / "shared"


def _require_shared() -> Path:
    if not SHARED_DIR.is_dir():
        pytest.fail(
            f"shared data directory not found at {SHARED_DIR}: the repository must be "
            "checked out beside shared/ (with data/*_draws.npz and reference/r_salso.csv)",
            pytrace=False,
        )
    return SHARED_DIR


@pytest.fixture(scope="session", autouse=True)
def _python_handles_ctrl_c() -> Iterator[None]:
    """Python's own SIGINT handler for the session. The Ctrl-C tests simulate one with
    ``_thread.interrupt_main``, which does nothing while SIGINT is ignored, and a job that a
    non-interactive shell starts in the background (``pytest &``) begins with it ignored."""
    main = threading.current_thread() is threading.main_thread()
    ignored = main and signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    if ignored:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """Path of the shared/ directory beside the repository."""
    return _require_shared()


@functools.lru_cache(maxsize=None)
def _load_draws_cached(name: str) -> np.ndarray:
    path = _require_shared() / "data" / f"{name}_draws.npz"
    if not path.is_file():
        pytest.fail(f"draws file not found: {path}", pytrace=False)
    with np.load(path) as npz:
        draws = np.asarray(npz["draws"])
    draws.setflags(write=False)
    return draws


def load_draws(name: str) -> np.ndarray:
    """H x n draws matrix (read-only) of shared/data/{name}_draws.npz, key "draws"."""
    return _load_draws_cached(name)


@pytest.fixture
def runtime() -> Iterator[Callable[..., str]]:
    """Registers plugins for one test (``runtime(plugin, name=None)``) and removes them afterwards."""
    from salsox import plugins

    names: List[str] = []

    def add(plugin: Any, name: Any = None) -> str:
        names.append(plugins.register(plugin, name=name))
        return names[-1]

    yield add
    for name in names:
        if plugins.registry()._pm.get_plugin(name) is not None:
            plugins.unregister(name=name)
