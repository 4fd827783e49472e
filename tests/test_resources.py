"""Resource bounds: thread counts, memory limits and batch sizes are checked up front with
errors that name the setting, instead of exhausting the process."""

from __future__ import annotations

from typing import Any, List

import numpy as np
import pytest

import salsox
from salsox import plots, plugins
from salsox.engine import callback
from salsox.plots import mds


@pytest.fixture(scope="module")
def draws() -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(0, 5, size=(30, 200))


def test_inner_jobs_is_bounded(draws: np.ndarray) -> None:
    with pytest.raises(ValueError, match=r"inner_jobs must be in \[1, \d+\], got 100000"):
        salsox.salso(draws, "VI", seed=1, n_runs=1, inner_jobs=100_000)
    est = salsox.salso(draws, "VI", seed=1, n_runs=1, inner_jobs=2)
    assert est.labels.shape == (200,)


@pytest.mark.parametrize("loss", ["VI.lb", "omARI.approx"])
def test_memory_limit_covers_the_psm_engine(draws: np.ndarray, loss: str) -> None:
    # 200 x 200 float64 PSM = 320,000 bytes.
    with pytest.raises(MemoryError, match=r"engine='psm' needs .* more than memory_limit=100000 bytes"):
        salsox.salso(draws, loss, seed=1, n_runs=1, memory_limit=100_000)
    assert salsox.salso(draws, loss, seed=1, n_runs=1, memory_limit=10**6).labels.shape == (200,)


def test_memory_limit_covers_the_coclustering_engine(draws: np.ndarray) -> None:
    with pytest.raises(MemoryError, match=r"engine='coclustering' needs .* more than memory_limit=100000 bytes"):
        salsox.salso(draws, "binder", engine="coclustering", seed=1, n_runs=1, memory_limit=100_000)


def test_initializer_partitions_are_bounded_by_memory_limit(draws: np.ndarray) -> None:
    def first_draw(d: np.ndarray, k: int, rng: Any) -> np.ndarray:
        return d[0]

    with pytest.raises(MemoryError, match=r"initializer with n_runs=1000000000 needs .* memory_limit="):
        salsox.salso(draws, "VI", seed=1, n_runs=10**9, seconds=0.5, initializer=first_draw)
    with pytest.raises(MemoryError, match=r"n_runs=100 needs .* more than memory_limit=50000 bytes"):
        salsox.salso(draws, "VI", seed=1, n_runs=100, initializer=first_draw, memory_limit=50_000)
    est = salsox.salso(draws, "VI", seed=1, n_runs=4, initializer=first_draw, memory_limit=10**6)
    assert est.info["initializer"] == "first_draw"


class _RecordingVI(plugins.ContingencyLoss):
    """VI from tables (the generic path), recording each batch's size in cells."""

    name = "test-recording-vi"

    def __init__(self) -> None:
        self.batches: List[int] = []

    def loss(self, tables: np.ndarray) -> np.ndarray:
        self.batches.append(int(tables.size))

        def xlogx(x: np.ndarray) -> np.ndarray:
            x = np.asarray(x, dtype=float)
            return np.where(x > 0, x * np.log2(np.where(x > 0, x, 1)), 0.0)

        m = tables.sum(axis=(1, 2)).astype(float)
        D = xlogx(tables.sum(axis=2)).sum(axis=1)
        E = xlogx(tables.sum(axis=1)).sum(axis=1)
        J = xlogx(tables).sum(axis=(1, 2))
        return np.where(m > 0, (D + E - 2 * J) / np.where(m > 0, m, 1), 0.0)


def test_generic_path_batches_stay_under_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    # Draws of ~30 clusters, estimates with ~30 slots: one draw's 31 candidate tables hold
    # ~30 x 31 x 31 cells, more than the cap set here, so a draw's tables must be split.
    cap = 10_000
    monkeypatch.setattr(callback, "MAX_BATCH_CELLS", cap)
    rng = np.random.default_rng(1)
    d = rng.integers(0, 30, size=(3, 120))
    loss = _RecordingVI()
    capped = salsox.salso(d, loss, seed=2, n_runs=1, n_jobs=1, max_clusters=30, max_scans=1, prob_sequential=0.0)
    assert loss.batches and max(loss.batches) <= cap
    # The same search with the default cap: the same estimate.
    monkeypatch.undo()
    again = salsox.salso(d, _RecordingVI(), seed=2, n_runs=1, n_jobs=1, max_clusters=30, max_scans=1,
                         prob_sequential=0.0)
    assert np.array_equal(capped.labels, again.labels)
    assert capped.expected_loss == pytest.approx(again.expected_loss, rel=1e-12)


def test_mds_refuses_up_front_with_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mds, "_MDS_MEMORY_LIMIT", 10_000)
    with pytest.raises(MemoryError, match=r"classical MDS of 100 items needs .* plot a subset"):
        plots.classical_mds(np.ones((100, 100)) - np.eye(100))
    monkeypatch.undo()
    assert plots.classical_mds(np.ones((100, 100)) - np.eye(100)).shape == (100, 2)
