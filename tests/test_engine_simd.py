"""The engine's SIMD paths and table layout (issue 15): every instruction-set path this CPU can
run gives the same bits, SALSOX_SIMD forces a path or fails clearly, and count tables that
grow with the clusters in use keep the counts right.

The paths are compared run by run through the engine call (each run's expected loss as
float.hex, its labels, scans and zealous counts), so that a difference in any score, not
only in the best run, shows.
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

import salsox
from conftest import load_draws
from salsox import _core

OPTIONS: Dict[str, Any] = dict(max_zealous=10, prob_sequential=0.5, max_scans=0, seconds=0.0, n_jobs=1)
SIMD_LOSSES = ["omARI", "NVI", "ID", "NID"]


def _random_draws(seed: int, H: int = 120, n: int = 40, k: int = 12) -> np.ndarray:
    """Draws around a k-cluster truth, each item moved at random with probability 0.3."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n)
    draws = np.tile(truth, (H, 1))
    moved = rng.random((H, n)) < 0.3
    draws[moved] = rng.integers(0, k + 3, moved.sum())
    return draws.astype(np.int32)


def _record(x: np.ndarray, kind: str, max_clusters: int, n_runs: int, seed: int,
            n_jobs: int = 1) -> List[Dict[str, Any]]:
    draws = _core.CompactDraws(np.ascontiguousarray(x, dtype=np.int32))
    loss = _core.CountLoss.builtin(kind, 1.0, 1.0, draws.n)
    raw = _core.salso_counts(draws, loss, max_clusters, n_runs, seed=seed, **{**OPTIONS, "n_jobs": n_jobs})
    runs = [{key: (float(v).hex() if key == "loss" else v) for key, v in r.items() if key not in ("seconds", "threads")}
            for r in raw["runs"]]
    return runs + [{"best": raw["best"], "labels": np.asarray(raw["labels"]).tolist()}]


def test_paths_are_listed_and_the_default_is_the_widest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SALSOX_SIMD", raising=False)
    paths = _core.simd_paths()
    assert paths[0] == "baseline" and set(paths) <= {"baseline", "avx2"}
    assert _core.simd_path() == paths[-1]
    for path in paths:
        monkeypatch.setenv("SALSOX_SIMD", path)
        assert _core.simd_path() == path


def test_a_path_that_cannot_run_is_a_value_error(monkeypatch: pytest.MonkeyPatch) -> None:
    x = _random_draws(0, H=10, n=12)
    draws = _core.CompactDraws(x)
    loss = _core.CountLoss.builtin("NVI", 1.0, 1.0, draws.n)
    # avx512 too: no path needs AVX-512 since its cell-sum lanes went (issue 48).
    wrong = ["sse9", "avx512"] + [p for p in ("avx2",) if p not in _core.simd_paths()]
    for value in wrong:
        monkeypatch.setenv("SALSOX_SIMD", value)
        with pytest.raises(ValueError, match="SALSOX_SIMD"):
            _core.simd_path()
        with pytest.raises(ValueError, match="SALSOX_SIMD"):
            _core.salso_counts(draws, loss, 5, 1, seed=0, **OPTIONS)


@pytest.mark.parametrize("kind", SIMD_LOSSES)
def test_every_path_gives_the_same_runs(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    problems = [(np.asarray(load_draws("iris")[:300]), 20, 4), (np.asarray(load_draws("galaxy")[:400]), 20, 4),
                (_random_draws(1), 30, 4), (_random_draws(2, n=70, k=20), 40, 2)]
    paths = _core.simd_paths()
    for x, cap, runs in problems:
        found = {}
        for path in paths:
            monkeypatch.setenv("SALSOX_SIMD", path)
            found[path] = _record(x, kind, cap, runs, seed=7)
        for path in paths[1:]:
            assert found[path] == found["baseline"], (kind, path)


@pytest.mark.parametrize("kind", ["NVI", "NID"])
def test_slots_as_lanes_give_the_same_runs_as_visiting_the_nonzero_cells(kind: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # On the AVX2 path NVI and NID take up to 32 slots as lanes, the zero cells
    # masked out; SALSOX_CELL_LANES=off visits the nonzero cells instead. Same cells, same
    # order: every run the same to the bit, on 8- and 16-bit counts, in scans and in
    # unallocated items' scores (sequential starts, zealous updates), at 4 to 40 slots, and
    # with a second thread helping the run over 1,200 draws.
    if "avx2" not in _core.simd_paths():
        pytest.skip("the entropy lanes run on the AVX2 path only, which this CPU (or build) lacks")
    problems = [(np.asarray(load_draws("iris")[:300]), 25, 4, 1), (_random_draws(2, n=70, k=20), 40, 2, 1),
                (_random_draws(4, H=40, n=300, k=12), 30, 2, 1), (np.asarray(load_draws("galaxy")[:1200]), 20, 1, 2)]
    for x, cap, runs, jobs in problems:
        found = {}
        for setting in ("auto", "off"):
            monkeypatch.setenv("SALSOX_CELL_LANES", setting)
            found[setting] = _record(x, kind, cap, runs, seed=7, n_jobs=jobs)
        assert found["auto"] == found["off"], (kind, x.shape)


def test_a_bad_cell_lanes_setting_is_a_value_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SALSOX_CELL_LANES", "sometimes")
    with pytest.raises(ValueError, match="SALSOX_CELL_LANES"):
        _record(_random_draws(0, H=10, n=12), "NVI", 5, 1, seed=0)


@pytest.mark.parametrize("H, n, k, cap", [(40, 300, 8, 12), (3, 66000, 3, 6)])
def test_every_path_gives_the_same_runs_with_wider_counts(H: int, n: int, k: int, cap: int,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Tables count in 8 bits up to 255 items, 16 bits up to 65,535 and 32 bits beyond; the fused
    # omARI score reads the counts as vectors of each width.
    x = _random_draws(5, H=H, n=n, k=k)
    found = {}
    for path in _core.simd_paths():
        monkeypatch.setenv("SALSOX_SIMD", path)
        found[path] = _record(x, "omARI", cap, 2, seed=1)
    assert all(runs == found["baseline"] for runs in found.values())


def test_every_path_gives_the_same_public_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.asarray(load_draws("iris")[:200])
    out = {}
    for path in _core.simd_paths():
        monkeypatch.setenv("SALSOX_SIMD", path)
        est = salsox.salso(x, "omARI", n_runs=2, seed=3, n_jobs=1)
        out[path] = (est.expected_loss.hex(), tuple(est.labels.tolist()))
    assert len(set(out.values())) == 1


@pytest.mark.parametrize("kind", ["VI", "NVI", "omARI", "binder"])
@pytest.mark.parametrize("prob_sequential", [1.0, 0.0])
def test_tables_that_grow_keep_their_counts(kind: str, prob_sequential: float) -> None:
    # A 20-cluster truth: the tables start narrow (seven slots) and widen as clusters open,
    # in sequential allocation (VI: each item's count added in the next item's score pass),
    # random starts (counted in one blocked pass), zealous updates and their undos; every run's
    # reported loss must still be the expected loss of its estimate recomputed from scratch.
    x = _random_draws(5, H=60, n=80, k=20)
    draws = _core.CompactDraws(x)
    loss = _core.CountLoss.builtin(kind, 1.0, 1.0, draws.n)
    raw = _core.salso_counts(draws, loss, 40, 3, seed=11, **{**OPTIONS, "prob_sequential": prob_sequential})
    labels = np.asarray(raw["labels"], dtype=np.int32)
    assert labels.max() + 1 > 7
    again = _core.expected_losses(draws, loss, labels[None, :], 1)
    assert float(again[0]) == pytest.approx(min(r["loss"] for r in raw["runs"]), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("kind", ["binder", "VI", "omARI", "NVI", "ID", "NID"])
def test_a_helping_thread_gives_the_same_runs(kind: str) -> None:
    x = np.asarray(load_draws("galaxy")[:1200])
    one, two = (_record(x, kind, 20, 1, seed=7, n_jobs=jobs) for jobs in (1, 2))
    assert two == one
