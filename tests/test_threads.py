"""Thread safety: concurrent calls from several Python threads give the serial results.

The engine releases the GIL while it searches, so Python threads really run searches at the
same time (each with its own OpenMP team when n_jobs > 1). Every concurrent result must equal
the result of the same call made alone: same labels, same expected loss, same per-run losses.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import pytest

import salsox
from conftest import load_draws
from salsox.plugins import ContingencyLoss, DecomposableLoss


class SquaredCells(DecomposableLoss):
    """Binder as a decomposable plugin loss (tabulated, searched at native speed)."""

    name = "test-threads-binder"

    def draw_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return (counts / n) ** 2

    def estimate_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return (counts / n) ** 2

    def cell_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return -2 * (counts / n) ** 2


class TableBinder(ContingencyLoss):
    """Binder from whole contingency tables: the generic path, called back from the engine."""

    name = "test-threads-table-binder"

    def loss(self, tables: np.ndarray) -> np.ndarray:
        t = tables.astype(np.float64)
        n = t.sum(axis=(1, 2))
        n = np.where(n > 0, n, 1.0)
        rows = (t.sum(axis=2) ** 2).sum(axis=1)
        cols = (t.sum(axis=1) ** 2).sum(axis=1)
        cells = (t**2).sum(axis=(1, 2))
        return (rows + cols - 2 * cells) / n**2


def _tasks() -> List[Tuple[str, Callable[[], Any]]]:
    iris = load_draws("iris")[::4]  # 250 x 150
    galaxy = load_draws("galaxy")[::50]  # 200 x 82
    shared = salsox.Draws(iris)  # one Draws object used by several threads at once
    small = iris[:60, :40]
    tasks: List[Tuple[str, Callable[[], Any]]] = []
    for n_jobs in (1, 2):
        tasks += [
            (f"VI-iris-j{n_jobs}", lambda j=n_jobs: salsox.salso(iris, "VI", seed=1, n_runs=6, n_jobs=j)),
            (f"VI-shared-j{n_jobs}", lambda j=n_jobs: salsox.salso(shared, "VI", seed=2, n_runs=6, n_jobs=j)),
            (
                f"binder-counts-j{n_jobs}",
                lambda j=n_jobs: salsox.salso(
                    shared, salsox.Binder(a=1.5, b=0.5), seed=3, n_runs=6, n_jobs=j, engine="counts"
                ),
            ),
            (
                f"binder-cocl-j{n_jobs}",
                lambda j=n_jobs: salsox.salso(galaxy, "binder", seed=4, n_runs=6, n_jobs=j, engine="coclustering"),
            ),
            (f"omARI-j{n_jobs}", lambda j=n_jobs: salsox.salso(galaxy, "omARI", seed=5, n_runs=6, n_jobs=j)),
            (f"NID-j{n_jobs}", lambda j=n_jobs: salsox.salso(galaxy, "NID", seed=6, n_runs=6, n_jobs=j)),
            (f"VI.lb-j{n_jobs}", lambda j=n_jobs: salsox.salso(galaxy, "VI.lb", seed=7, n_runs=6, n_jobs=j)),
            (
                f"plugin-decomposable-j{n_jobs}",
                lambda j=n_jobs: salsox.salso(galaxy, SquaredCells(), seed=8, n_runs=4, n_jobs=j),
            ),
            (
                f"plugin-contingency-j{n_jobs}",
                lambda j=n_jobs: salsox.salso(small, TableBinder(), seed=9, n_runs=2, n_jobs=j, max_clusters=4),
            ),
            (f"partition_loss-j{n_jobs}", lambda j=n_jobs: salsox.partition_loss(iris[:40], shared, "VI", n_jobs=j)),
            (f"psm-j{n_jobs}", lambda j=n_jobs: salsox.psm(shared, n_jobs=j)),
            (f"dlso-j{n_jobs}", lambda j=n_jobs: salsox.dlso(galaxy[:80], "binder", n_jobs=j)),
        ]
    return tasks


def _fingerprint(result: Any) -> Any:
    if isinstance(result, salsox.Estimate):
        runs = [(r["loss"], r.get("scans"), r.get("initialization")) for r in result.info.get("runs", [])]
        return ("estimate", result.labels.tolist(), result.expected_loss, runs)
    return ("array", np.asarray(result).tolist())


def _run_concurrently(calls: List[Callable[[], Any]]) -> List[Any]:
    """Start every call at once (a barrier), one Python thread each; re-raise any error."""
    barrier = threading.Barrier(len(calls))
    results: List[Any] = [None] * len(calls)
    errors: Dict[int, BaseException] = {}

    def work(i: int) -> None:
        barrier.wait()
        try:
            results[i] = calls[i]()
        except BaseException as err:
            errors[i] = err

    threads = [threading.Thread(target=work, args=(i,), name=f"salso-{i}") for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
        assert not t.is_alive(), f"{t.name} did not finish (deadlock?)"
    if errors:
        i, err = next(iter(errors.items()))
        raise AssertionError(f"call {i} raised {type(err).__name__}: {err}") from err
    return results


@pytest.fixture(scope="module")
def serial() -> Dict[str, Any]:
    return {name: _fingerprint(fn()) for name, fn in _tasks()}


def test_concurrent_calls_match_serial_calls(serial: Dict[str, Any]) -> None:
    tasks = _tasks()
    for _ in range(3):
        results = _run_concurrently([fn for _, fn in tasks])
        for (name, _), result in zip(tasks, results):
            assert _fingerprint(result) == serial[name], name


def test_many_threads_same_call_same_answer() -> None:
    """Eight threads run the identical search on one shared Draws: eight identical answers."""
    draws = salsox.Draws(load_draws("galaxy")[::20])
    expected = _fingerprint(salsox.salso(draws, "VI", seed=11, n_runs=4, n_jobs=2))
    results = _run_concurrently([lambda: salsox.salso(draws, "VI", seed=11, n_runs=4, n_jobs=2)] * 8)
    assert all(_fingerprint(r) == expected for r in results)


def test_deterministic_across_thread_counts_under_concurrency() -> None:
    """n_jobs 1 and 2, run concurrently, still agree with each other (same seed, same estimate)."""
    draws = load_draws("iris")[::5]
    calls = [lambda j=j: salsox.salso(draws, "binder", seed=12, n_runs=6, n_jobs=j) for j in (1, 2, 1, 2)]
    results = _run_concurrently(calls)
    assert len({str(_fingerprint(r)) for r in results}) == 1
