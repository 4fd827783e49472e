"""The count-table search's cache of each item's cell sums per slot (VI, tabulated losses, ID).

A slot's cell sum for an item reads only that slot's column of the item's rows, so the search
keeps it from one score of the item to the next while the column is unchanged, and recomputes
only the slots that changed. Every recomputed sum is taken in the same order, so the cache must
not change a single bit of any run: these tests run the same searches with it on and off
(EngineOptions.cell_cache, which SALSOX_CELL_CACHE=off also sets) and compare every run. A stale
sum (a table change that did not mark its column) would send a run elsewhere.
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

from conftest import load_draws
from salsox import _core

OPTIONS: Dict[str, Any] = dict(max_zealous=10, prob_sequential=0.5, max_scans=0, seconds=0.0)


def _random_draws(seed: int, H: int, n: int, k: int, moved: float = 0.3) -> np.ndarray:
    """Draws around a k-cluster truth, each item relabelled at random with probability `moved`."""
    rng = np.random.default_rng(seed)
    draws = np.tile(rng.integers(0, k, n), (H, 1))
    move = rng.random((H, n)) < moved
    draws[move] = rng.integers(0, k + 3, move.sum())
    return draws.astype(np.int32)


def _loss(kind: str, n: int) -> Any:
    if kind == "VI(1, 0.5)":
        return _core.CountLoss.builtin("VI", 1.0, 0.5, n)
    if kind == "tabulated":
        # Binder's loss with a = 2, b = 1 plus an entropy-like cell term: nothing the engine
        # recognises, so it runs as a tabulated loss.
        c = np.arange(n + 2, dtype=float)
        xlx = np.where(c > 0, c * np.log(np.maximum(c, 1.0)), 0.0)
        return _core.CountLoss.tabulated(list(c**2 / n**2 + xlx / n), list(2 * c**2 / n**2 + xlx / n),
                                         list(-3 * c**2 / n**2 - 2 * xlx / n))
    return _core.CountLoss.builtin(kind, 1.0, 1.0, n)


def _cache(on: bool) -> Any:
    """The engine's settings with the cache on or off (the options struct, not the environment)."""
    engine = _core.EngineOptions()
    engine.cell_cache = on
    return engine


def _record(x: np.ndarray, kind: str, max_clusters: int, n_runs: int, seed: int, n_jobs: int = 1,
            **extra: Any) -> List[Dict[str, Any]]:
    draws = _core.CompactDraws(np.ascontiguousarray(x, dtype=np.int32))
    raw = _core.salso_counts(draws, _loss(kind, draws.n), max_clusters, n_runs, seed=seed,
                             **{**OPTIONS, "n_jobs": n_jobs, **extra})
    runs = [{key: (float(v).hex() if key == "loss" else v) for key, v in r.items() if key not in ("seconds", "threads")}
            for r in raw["runs"]]
    return runs + [{"best": raw["best"], "labels": np.asarray(raw["labels"]).tolist()}]


PROBLEMS = {
    # (draws, max_clusters, runs): tables that fit in L1 and in L2; few and many clusters; and
    # draws of many small clusters, whose zealous updates are undone item by item rather than
    # from a snapshot of the table (the table is large next to a cluster's rows).
    "iris": lambda: (np.asarray(load_draws("iris")[:300]), 20, 6),
    "galaxy": lambda: (np.asarray(load_draws("galaxy")[:1200]), 20, 3),
    "random": lambda: (_random_draws(1, H=120, n=40, k=12), 30, 8),
    "small clusters": lambda: (_random_draws(2, H=40, n=150, k=90, moved=0.1), 100, 4),
    # n >= 256: 32-bit counts.
    "wide counts": lambda: (_random_draws(3, H=40, n=300, k=10, moved=0.2), 20, 3),
}


@pytest.mark.parametrize("kind", ["VI", "VI(1, 0.5)", "ID", "tabulated"])
@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_cached_cell_sums_give_the_same_runs(kind: str, problem: str) -> None:
    x, cap, runs = PROBLEMS[problem]()
    found = {}
    for on in (False, True):
        found[on] = _record(x, kind, cap, runs, seed=11, engine=_cache(on))
    assert found[True] == found[False]
    # Zealous updates were tried and some accepted, so the snapshot and undo paths ran.
    assert sum(r["zealous_attempts"] for r in found[True][:-1]) > 0


@pytest.mark.parametrize("kind", ["VI", "ID"])
def test_cached_cell_sums_with_threads_in_the_run_and_warm_starts(kind: str) -> None:
    # One run with a helping thread (galaxy's 1,200 draws are shared between threads), and runs
    # from given starts with some items fixed (their clusters are never dissolved).
    x = np.asarray(load_draws("galaxy")[:1200])
    n = x.shape[1]
    rng = np.random.default_rng(5)
    fixed = np.full(n, -1, dtype=np.int32)
    fixed[:6] = [0, 0, 1, 1, 0, 1]
    initial = rng.integers(0, 4, size=(3, n)).astype(np.int32)
    initial[:, :6] = fixed[:6]
    used = np.array([True, False, True])  # the second run starts as usual
    found = {}
    for on in (False, True):
        found[on] = (_record(x, kind, 20, 1, seed=3, n_jobs=2, engine=_cache(on)),
                     _record(x, kind, 20, 3, seed=3, initial=initial, initial_used=used, fixed=fixed,
                             engine=_cache(on)))
    assert found[True] == found[False]


def test_cell_cache_is_counted_in_the_memory_estimate_and_a_bad_setting_is_a_value_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SALSOX_CELL_CACHE", raising=False)
    x = _random_draws(4, H=50, n=60, k=8)
    draws = _core.CompactDraws(x)
    cap = 12
    vi = _core.count_table_bytes(draws, cap, _loss("VI", draws.n))
    binder = _core.count_table_bytes(draws, cap, _loss("binder", draws.n))
    # Same table (both additive); VI adds a value and a version per item and slot.
    assert vi - binder == 16 * draws.n * cap
    monkeypatch.setenv("SALSOX_CELL_CACHE", "sometimes")
    with pytest.raises(ValueError, match="SALSOX_CELL_CACHE"):
        _core.salso_counts(draws, _loss("VI", draws.n), cap, 1, seed=0, **{**OPTIONS, "n_jobs": 1})
