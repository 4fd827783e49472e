"""The engine's SIMD paths and table layout (issue 15): every instruction-set path this CPU can
run gives the same bits, SALSOX_SIMD forces a path or fails clearly, and count tables that
grow with the clusters in use keep the counts right. The tests that compare paths force each
one through the options struct (_core.EngineOptions, the engine= argument), not the environment.

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


def _engine(**settings: Any) -> Any:
    """The engine's settings with some paths forced (the options struct, not the environment)."""
    engine = _core.EngineOptions()
    for name, value in settings.items():
        setattr(engine, name, value)
    return engine


def _record(x: np.ndarray, kind: str, max_clusters: int, n_runs: int, seed: int,
            n_jobs: int = 1, engine: Any = None, **options: Any) -> List[Dict[str, Any]]:
    draws = _core.CompactDraws(np.ascontiguousarray(x, dtype=np.int32))
    loss = _core.CountLoss.builtin(kind, 1.0, 1.0, draws.n)
    raw = _core.salso_counts(draws, loss, max_clusters, n_runs, seed=seed, engine=engine,
                             **{**OPTIONS, "n_jobs": n_jobs, **options})
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
def test_every_path_gives_the_same_runs(kind: str) -> None:
    problems = [(np.asarray(load_draws("iris")[:300]), 20, 4), (np.asarray(load_draws("galaxy")[:400]), 20, 4),
                (_random_draws(1), 30, 4), (_random_draws(2, n=70, k=20), 40, 2)]
    paths = _core.simd_paths()
    for x, cap, runs in problems:
        found = {}
        for path in paths:
            found[path] = _record(x, kind, cap, runs, seed=7, engine=_engine(simd=path))
        for path in paths[1:]:
            assert found[path] == found["baseline"], (kind, path)


@pytest.mark.parametrize("kind", ["NVI", "NID"])
def test_slots_as_lanes_give_the_same_runs_as_visiting_the_nonzero_cells(kind: str) -> None:
    # On the AVX2 path NVI and NID take up to 32 slots as lanes, the zero cells
    # masked out; cell_lanes=False (SALSOX_CELL_LANES=off) visits the nonzero cells instead. Same cells, same
    # order: every run the same to the bit, on 8- and 32-bit counts, in scans and in
    # unallocated items' scores (sequential starts, zealous updates), at 4 to 40 slots, and
    # with a second thread helping the run over 1,200 draws.
    if "avx2" not in _core.simd_paths():
        pytest.skip("the entropy lanes run on the AVX2 path only, which this CPU (or build) lacks")
    problems = [(np.asarray(load_draws("iris")[:300]), 25, 4, 1), (_random_draws(2, n=70, k=20), 40, 2, 1),
                (_random_draws(4, H=40, n=300, k=12), 30, 2, 1), (np.asarray(load_draws("galaxy")[:1200]), 20, 1, 2)]
    for x, cap, runs, jobs in problems:
        found = {}
        for lanes in (True, False):
            found[lanes] = _record(x, kind, cap, runs, seed=7, n_jobs=jobs,
                                   engine=_engine(simd="avx2", cell_lanes=lanes))
        assert found[True] == found[False], (kind, x.shape)


def test_a_bad_cell_lanes_setting_is_a_value_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SALSOX_CELL_LANES", "sometimes")
    with pytest.raises(ValueError, match="SALSOX_CELL_LANES"):
        _record(_random_draws(0, H=10, n=12), "NVI", 5, 1, seed=0)


# Tables count in 8 bits up to 255 items and 32 bits beyond (count_types.hpp): (H, n, threads, runs).
COUNT_WIDTHS = {"uint8": (300, 120, 2, 2), "int32": (300, 300, 2, 2)}
# The AVX2 kernels take the slots as lanes, V = 1 .. 8 vectors of four (with_constant): NVI up to
# 32 slots in use, NID up to 31 and the new slot, omARI eight vectors at a time. (max_clusters,
# the fewest clusters of an estimate whose scans take V = 8: for omARI, and then another vector.)
LANE_CAPS = {"omARI": (40, 32), "NVI": (32, 29), "NID": (31, 28), "ID": (32, 1)}


@pytest.mark.parametrize("width", list(COUNT_WIDTHS))
@pytest.mark.parametrize("kind", SIMD_LOSSES)
def test_every_lane_count_and_count_width_gives_the_portable_runs(kind: str, width: str) -> None:
    # Every AVX2 path of the count-table scorers against the portable one, run for run: the lanes
    # (and for NVI and NID the visit of the nonzero cells instead; for ID its cell sums with and
    # without their cache) on tables of each count width, on two threads sharing the draws where
    # there are enough of them. The runs start sequentially from no cluster, opening one at a
    # time, so the unallocated items' scores take every V up to the estimate's.
    if "avx2" not in _core.simd_paths():
        pytest.skip("the AVX2 path: this CPU (or build) lacks it")
    H, n, jobs, runs = COUNT_WIDTHS[width]
    cap, fewest = LANE_CAPS[kind]
    x = _random_draws(3, H=H, n=n, k=36)
    variants = {"avx2": _engine(simd="avx2")}
    if kind in ("NVI", "NID"):
        variants["avx2, nonzero cells"] = _engine(simd="avx2", cell_lanes=False)
    if kind == "ID":
        variants["avx2, no cell cache"] = _engine(simd="avx2", cell_cache=False)
    found = {name: _record(x, kind, cap, runs, seed=5, n_jobs=jobs, engine=engine, prob_sequential=1.0)
             for name, engine in {"baseline": _engine(simd="baseline"), **variants}.items()}
    for name in variants:
        assert found[name] == found["baseline"], (kind, width, name)
    assert max(found["baseline"][-1]["labels"]) + 1 >= fewest


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


def _binder_record(x: np.ndarray, a: float, cap: int, runs: int, unrolled: bool, n_jobs: int) -> List[Dict[str, Any]]:
    draws = _core.CompactDraws(np.ascontiguousarray(x, dtype=np.int32))
    loss = _core.CountLoss.builtin("binder", a, 2.0 - a, draws.n)
    raw = _core.salso_counts(draws, loss, cap, runs, seed=9, engine=_engine(binder_unrolled=unrolled),
                             **{**OPTIONS, "n_jobs": n_jobs})
    out = [{key: (float(v).hex() if key == "loss" else v) for key, v in r.items() if key not in ("seconds", "threads")}
           for r in raw["runs"]]
    return out + [{"best": raw["best"], "labels": np.asarray(raw["labels"]).tolist()}]


@pytest.mark.parametrize("H, n, k, cap, a, jobs", [
    (60, 80, 20, 40, 0.4, 1),    # 8-bit counts
    (40, 300, 16, 30, 0.3, 1),   # 32-bit counts (more than 255 items)
    (1201, 60, 14, 24, 0.5, 2),  # a second thread helping, over blocks of draws
    (120, 40, 5, 8, 1.0, 1),     # never more than eight slots
])
def test_binder_count_table_paths_give_the_same_runs_as_one_draw_at_a_time(H: int, n: int, k: int, cap: int,
                                                                          a: float, jobs: int) -> None:
    # Binder on count tables (its route where the co-clustering matrix is too large) sums up to
    # eight slots in registers and more slots four draws a step; EngineOptions.binder_unrolled =
    # False takes one draw at a time. Integer sums, so every run is the same to the bit, on
    # estimates of more than 8 clusters (a < b: cheap to split) and of at most 8.
    x = _random_draws(k, H=H, n=n, k=k)
    fast = _binder_record(x, a, cap, 3, unrolled=True, n_jobs=jobs)
    plain = _binder_record(x, a, cap, 3, unrolled=False, n_jobs=jobs)
    assert fast == plain
    clusters = max(fast[-1]["labels"]) + 1
    assert clusters > 8 if cap > 8 else clusters <= 8, clusters


def test_engine_options_are_checked_and_taken_only_where_a_search_reads_them() -> None:
    engine = _core.EngineOptions()
    assert engine.simd == _core.simd_paths()[-1] and engine.binder_unrolled and engine.cell_cache
    with pytest.raises(ValueError, match="simd"):
        engine.simd = "avx512"
    x = _random_draws(0, H=10, n=12)
    co = _core.coclustering(_core.CompactDraws(x))
    with pytest.raises(ValueError, match="takes no engine options"):
        _core.salso_coclustering_binder(co, 10, 1.0, 1.0, 5, 1, seed=0, engine=engine, **OPTIONS)
