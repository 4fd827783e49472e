"""The CHIPS path stored compactly (issue 39, item 4): rows rebuilt from the runs' steps on
demand, against an independent numpy replay of ``info["runs"]`` and brute force on tiny
problems; the array-like's behaviour; memory O(n) per run, not O(n^2)."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

import salsox
from salsox.uncertainty.chips import chips_bytes
from salsox.uncertainty.chips_path import PathLabels
from reference_chips import consistent, probability
from reference import noisy_draws


def _noisy(seed: int, H: int = 40, n: int = 9, k: int = 3, p: float = 0.25) -> np.ndarray:
    return noisy_draws(seed, H=H, n=n, k=k, p=p)


def _canonical(labels: np.ndarray) -> tuple:
    seen: dict = {}
    return tuple(-1 if v < 0 else seen.setdefault(int(v), len(seen)) for v in labels)


def _state(start: np.ndarray, run: dict, steps: int) -> tuple:
    """Canonical labels of ``run`` after ``steps`` steps from ``start``, replayed item by item."""
    lab = np.array(start)
    for j, item in enumerate(run["items"][:steps]):
        lab[item] = run["labels"][j]
    return _canonical(lab)


def _path_by_brute_force(draws: np.ndarray, res: salsox.ChipsResult, start: np.ndarray) -> list:
    """For every size, the runs' states recounted against the draws: the most probable, ties to
    the smallest canonical labels (what chips.hpp's chips_path chooses), largest size first."""
    k0 = int((start >= 0).sum())
    runs = res.info["runs"]
    top = k0 + max(len(r["items"]) for r in runs)
    rows = []
    for size in range(top, k0 - 1, -1):
        states = [_state(start, r, size - k0) for r in runs if k0 + len(r["items"]) >= size]
        best = max(probability(draws, np.array(s)) for s in states)
        rows.append(min(s for s in states if probability(draws, np.array(s)) == best))
    return rows


@pytest.mark.parametrize("seed", range(5))
def test_rows_rebuilt_on_demand_are_the_brute_force_path(seed: int) -> None:
    draws = _noisy(seed, H=30, n=8)
    res = salsox.chips(draws, seed=seed, n_runs=6, n_jobs=2)
    assert isinstance(res.labels, PathLabels)
    want = _path_by_brute_force(draws, res, np.full(8, -1))
    assert [tuple(row) for row in res.labels] == want
    np.testing.assert_array_equal(np.asarray(res.labels), np.array(want, dtype=np.int32))
    for row, p in zip(res.labels, res.probability):
        assert p == probability(draws, row)


def test_rows_with_an_initial_sub_partition_replay_from_it() -> None:
    draws = _noisy(3, H=60, n=9)
    initial = np.full(9, -1)
    initial[[0, 3, 1]] = [5, 5, 2]
    res = salsox.chips(draws, 0.0, n_runs=5, seed=2, initial=initial, n_jobs=1)
    start = np.array(_canonical(initial))
    assert [tuple(row) for row in res.labels] == _path_by_brute_force(draws, res, start)
    assert tuple(res.labels[-1]) == tuple(start)


def test_each_row_is_its_run_replayed_from_info_runs() -> None:
    # A bigger path, each row against the replay of the run it names (res.run), up to its size.
    draws = _noisy(5, H=200, n=60, k=5, p=0.3)
    res = salsox.chips(draws, seed=4, n_runs=16, n_jobs=2)
    runs = {r["run"]: r for r in res.info["runs"]}
    full = np.asarray(res.labels)
    assert full.shape == (61, 60) and full.dtype == np.int32
    for i, (m, r) in enumerate(zip(res.n_items, res.run)):
        want = _state(np.full(60, -1), runs[int(r)], int(m))
        assert tuple(full[i]) == want
        assert tuple(res.labels[i]) == want
    n_clusters = res.to_dataframe()["n_clusters"].to_numpy()
    np.testing.assert_array_equal(n_clusters, full.max(axis=1) + 1)


def test_the_labels_behave_as_a_read_only_array() -> None:
    draws = _noisy(1, H=40, n=7)
    res = salsox.chips(draws, seed=1, n_runs=4)
    lab = res.labels
    full = np.asarray(lab)
    assert lab.shape == (8, 7) == full.shape and lab.dtype == np.int32 and len(lab) == 8 and lab.ndim == 2
    np.testing.assert_array_equal(lab[3], full[3])
    np.testing.assert_array_equal(lab[-1], full[-1])
    np.testing.assert_array_equal(lab[np.int64(2)], full[2])
    np.testing.assert_array_equal(lab[2:6], full[2:6])
    np.testing.assert_array_equal(lab[::-2], full[::-2])
    np.testing.assert_array_equal(lab[[0, 5, 5]], full[[0, 5, 5]])
    np.testing.assert_array_equal(lab[np.array([[1, 2], [3, 4]])], full[np.array([[1, 2], [3, 4]])])
    np.testing.assert_array_equal(lab[full[:, 0] >= 0], full[full[:, 0] >= 0])
    assert lab[2, 3] == full[2, 3]
    np.testing.assert_array_equal(lab[:, [0, 4]], full[:, [0, 4]])
    np.testing.assert_array_equal(lab[1:3, 2:], full[1:3, 2:])
    assert isinstance(lab[0], np.ndarray) and isinstance(lab[:2], np.ndarray)
    assert lab.tolist() == full.tolist()
    np.testing.assert_array_equal(np.stack(list(lab)), full)
    np.testing.assert_array_equal(np.array(lab, dtype=np.int64), full)
    with pytest.raises(IndexError):
        lab[8]
    with pytest.raises(TypeError):
        lab[0] = full[0]  # type: ignore[index]
    # The steps it replays cannot be changed under it.
    with pytest.raises(ValueError, match="read-only"):
        res.info["runs"][0]["items"][0] = 0


def test_consistent_draws_text_and_threshold_use_the_rebuilt_rows() -> None:
    draws = _noisy(2, H=80, n=12)
    res = salsox.chips(draws, seed=3, n_runs=8)
    full = np.asarray(res.labels)
    np.testing.assert_array_equal(res.consistent_draws, np.array([consistent(draws, r) for r in full]))
    assert len(res.cluster_probability) == 13
    assert "13 states of 12 items" in res.to_text()
    th = res.threshold(0.5, complete=False)
    row = int(np.flatnonzero(res.probability >= 0.5)[np.argmax(res.n_items[res.probability >= 0.5])])
    kept = full[row] >= 0
    assert np.all(th.labels[kept] >= 0)


def test_the_cli_streams_the_path_as_json(tmp_path) -> None:
    from salsox import cli

    draws = _noisy(4, H=30, n=10)
    path = tmp_path / "draws.csv"
    np.savetxt(path, draws, fmt="%d", delimiter=",")
    out = tmp_path / "path.json"
    assert cli.main(["chips", str(path), "--seed", "2", "--runs", "4", "--json", "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    res = salsox.chips(draws, seed=2, n_runs=4)
    assert got["mode"] == "path" and got["seed"] == 2 and got["auc"] == pytest.approx(res.auc)
    assert [r["labels"] for r in got["path"]] == np.asarray(res.labels).tolist()
    assert [r["n_items"] for r in got["path"]] == res.n_items.tolist()


def test_the_path_of_50000_items_holds_a_few_mib_beyond_the_runs_steps() -> None:
    # 4 n^2 bytes (10 GB) as full rows; rebuilt on demand, the path itself holds O(n).
    n, H = 50_000, 12
    rng = np.random.default_rng(0)
    d = salsox.Draws(rng.integers(0, 3, size=(H, n)).astype(np.int8))
    tracemalloc.start()
    try:
        res = salsox.chips(d, seed=1, n_runs=2, n_jobs=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    steps = sum(a.nbytes for r in res.info["runs"] for a in r.values() if isinstance(a, np.ndarray))
    assert res.labels.shape == (n + 1, n)
    assert peak - steps < 8 * 2**20, (peak, steps)
    assert chips_bytes(n, H, 2, 2, "path") < 64 * 2**20
    # Any row on request, e.g. the full partition and one half way.
    assert (res.labels[0] >= 0).all() and (res.labels[n // 2] >= 0).sum() == n - n // 2


def test_memory_limit_one_byte_below_the_path_estimate_is_refused_up_front(monkeypatch) -> None:
    from salsox import _core

    draws = _noisy(6, H=50, n=300, k=4)
    need = chips_bytes(300, 50, 8, 2, "path")
    assert need < 2 * 4 * 300 * 301  # no longer the rows' n (n + 1) labels, held twice
    calls: list = []
    real = _core.chips
    monkeypatch.setattr(_core, "chips", lambda *a, **k: calls.append(1) or real(*a, **k))
    with pytest.raises(MemoryError, match="memory_limit"):
        salsox.chips(draws, n_runs=8, n_jobs=2, seed=1, memory_limit=need - 1)
    assert calls == []
    assert salsox.chips(draws, n_runs=8, n_jobs=2, seed=1, memory_limit=need).labels.shape == (301, 300)


def test_text_and_html_views_show_the_head_and_tail_of_a_long_path() -> None:
    """A path of n + 1 states prints its first and last ones and a line saying how many are
    not shown, not n + 1 lines (issue 47); max_rows=None prints them all."""
    draws = _noisy(5, H=60, n=40)
    res = salsox.chips(draws, seed=1, n_runs=4)
    frame = res.to_dataframe()
    rows = [f"{m:>6d} {k:>8d} {p:>11.4g}" for m, k, p in zip(frame["n_items"], frame["n_clusters"],
                                                               frame["probability"])]
    lines = res.to_text().splitlines()
    assert lines[0].startswith("CHIPS path: 41 states of 40 items")
    assert lines[2:12] == rows[:10] and lines[13:] == rows[-5:]
    assert lines[12] == "... 26 states not shown (to_text(max_rows=None) or to_dataframe() has them all) ..."
    assert str(res) == res.to_text()
    assert res.to_text(max_rows=None).splitlines()[2:] == rows  # every state
    three = res.to_text(max_rows=3).splitlines()
    assert three[2:4] == rows[:2] and "38 states not shown" in three[4] and three[5:] == rows[-1:]
    page = res._repr_html_()
    assert page.count("<tr>") == 1 + 15 + 1  # the header, 15 states and the "..." row
    assert "26 states not shown" in page
    for m in (40, 39, 31, 4, 0):  # the first ten and last five states' sizes
        assert f"<tr><td>{m}</td>" in page
    assert "<tr><td>30</td>" not in page and "<tr><td>5</td>" not in page
    with pytest.raises(ValueError, match="max_rows must be >= 1"):
        res.to_text(max_rows=0)


def test_a_short_path_is_shown_whole() -> None:
    draws = _noisy(2, H=80, n=12)
    res = salsox.chips(draws, seed=3, n_runs=8)
    lines = res.to_text().splitlines()
    assert len(lines) == 2 + 13 and "not shown" not in res.to_text()
    assert res._repr_html_().count("<tr>") == 1 + 13 and "not shown" not in res._repr_html_()
