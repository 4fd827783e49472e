"""The engine's search loop against its specification (issue 15): threads inside a run when
there are several runs, zealous updates that skip singletons and follow each cluster through a
round, max_scans as a cap per run, and running sums that stay equal to the tables.

The zealous rounds and the drift of the kept sums are read from the engine's debug record
(``debug=True`` on the engine call), which the public ``salso`` does not expose.
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

import salsox
from conftest import load_draws
from salsox import _core

OPTIONS: Dict[str, Any] = dict(max_zealous=10, prob_sequential=0.5, max_scans=0, seconds=0.0, n_jobs=1)


def _search(name: str, kind: str, H: int, n_runs: int, seed: int, max_clusters: int = 30,
            **options: Any) -> Dict[str, Any]:
    draws = _core.CompactDraws(np.ascontiguousarray(load_draws(name)[:H], dtype=np.int32))
    loss = _core.CountLoss.builtin(kind, 1.0, 1.0, draws.n)
    return _core.salso_counts(draws, loss, max_clusters, n_runs, seed=seed, debug=True, **{**OPTIONS, **options})


def _check_rounds(run: Dict[str, Any], max_zealous: int) -> int:
    """Checks every zealous round of one run; returns the number of clusters tried."""
    tried_total = 0
    for rnd in run["zealous_rounds"]:
        labels = np.asarray(rnd["labels"])
        start = [set(np.flatnonzero(labels == c).tolist()) for c in range(labels.max() + 1)]
        done: List[int] = []
        for members in rnd["tried"]:
            members = set(np.asarray(members).tolist())
            # Sweetening already moves single items: a tried cluster has at least two.
            assert len(members) >= 2
            # The tried cluster is a start cluster, grown only by the items of clusters tried
            # before it in the round: exactly one start cluster not yet tried lies inside it.
            inside = [c for c, s in enumerate(start) if c not in done and s <= members]
            assert len(inside) == 1, "a cluster tried twice in a round, or not a cluster of the round"
            done.append(inside[0])
        if len(done) < max_zealous:
            # No cluster skipped: every start cluster of two or more items was tried.
            assert {c for c, s in enumerate(start) if len(s) >= 2} <= set(done)
        tried_total += len(done)
    return tried_total


@pytest.mark.parametrize("kind", ["binder", "NVI", "NID"])
def test_zealous_rounds_try_each_cluster_once_and_skip_singletons(kind: str) -> None:
    # Many small clusters (ex1 under Binder, NVI and NID leaves singletons), and a round long
    # enough to try them all, so that accepted updates and undos renumber slots mid-round.
    res = _search("ex1", kind, H=300, n_runs=6, seed=3, max_zealous=1000)
    tried = sum(_check_rounds(run, 1000) for run in res["runs"])
    assert tried == sum(r["zealous_attempts"] for r in res["runs"]) > 0


def test_zealous_attempts_are_capped_by_max_zealous_over_clusters_of_two_or_more() -> None:
    res = _search("ex1", "NVI", H=300, n_runs=4, seed=5, max_zealous=3)
    for run in res["runs"]:
        _check_rounds(run, 3)
        assert all(len(rnd["tried"]) <= 3 for rnd in run["zealous_rounds"])


def test_max_scans_caps_each_run_including_after_zealous_updates() -> None:
    draws = load_draws("iris")
    est = salsox.salso(draws, "VI", max_scans=1, n_runs=8, seed=0, engine="counts")
    assert sum(r["zealous_accepts"] for r in est.info["runs"]) > 0  # sweetening would start again
    assert [r["scans"] for r in est.info["runs"]] == [1] * 8
    three = salsox.salso(draws, "VI", max_scans=3, n_runs=8, seed=0, engine="counts")
    assert max(r["scans"] for r in three.info["runs"]) <= 3


@pytest.mark.parametrize("kind", ["NVI", "ID", "NID"])
def test_running_sums_equal_the_tables_after_a_long_run(kind: str) -> None:
    # Random starts on many draws: long runs, hundreds of thousands of incremental updates of
    # the per-draw entropy sums (without recomputation they drift by several ulps).
    res = _search("ex1", kind, H=2000, n_runs=2, seed=7, prob_sequential=0.0)
    for run in res["runs"]:
        assert run["scans"] >= 3
        assert run["sums_drift"] <= 2.5e-16


@pytest.mark.parametrize("kind", ["VI", "omARI", "NVI", "NID"])
def test_rows_narrowed_after_random_starts_keep_their_counts(kind: str) -> None:
    # Random starts over 60 labels widen the rows to 64 slots (65 with the allocated-items
    # column of NVI and NID); once a run keeps a few clusters its rows are narrowed again, in
    # place. A count or column moved wrongly derails the search (with the allocated-items
    # column left behind, NVI kept all 60 clusters) or shows in the final loss.
    res = _search("iris", kind, H=400, n_runs=4, seed=11, max_clusters=60, prob_sequential=0.0)
    for run in res["runs"]:
        assert run["sums_drift"] <= 2.5e-16
        assert run["scans"] >= 3
    best = res["runs"][res["best"]]
    assert max(res["labels"]) + 1 <= 31  # few enough clusters for rows of half the width
    want = float(salsox.partition_loss(np.asarray(res["labels"]), load_draws("iris")[:400], kind))
    assert best["loss"] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_threads_inside_runs_are_used_with_several_runs() -> None:
    # Two runs on two threads, each asking for two threads inside: the passes over the draws
    # must have them (libgomp runs a nested region on one thread unless told otherwise).
    draws = load_draws("galaxy")[:2000]
    est = salsox.salso(draws, "VI", n_runs=2, n_jobs=2, inner_jobs=2, seed=1, engine="counts")
    expected = 2 if _core.has_openmp() else 1
    assert [r["threads"] for r in est.info["runs"]] == [expected, expected]
    one = salsox.salso(draws, "VI", n_runs=2, n_jobs=1, inner_jobs=1, seed=1, engine="counts")
    assert [r["threads"] for r in one.info["runs"]] == [1, 1]
    # Threads change nothing in the result.
    assert np.array_equal(est.labels, one.labels)
    assert [r["loss"] for r in est.info["runs"]] == [r["loss"] for r in one.info["runs"]]
    assert [r["scans"] for r in est.info["runs"]] == [r["scans"] for r in one.info["runs"]]



@pytest.mark.parametrize("loss", ["VI", "NVI", "binder"])
def test_threads_helping_stragglers_change_nothing(loss: str) -> None:
    # 5,000 draws: the passes are long enough to be shared with idle threads (VI's and Binder's
    # scores in blocks of draws, table updates and zealous updates' passes for every loss), and
    # a run left alone is helped.
    draws = load_draws("galaxy")[:5000]
    results = [
        salsox.salso(draws, loss, n_runs=7, n_jobs=jobs, seed=11, engine="counts") for jobs in (1, 2, 3, 5)
    ]
    # Runs of one to four scans (and zealous rounds after each accepted update): threads run
    # out of runs at different times, and the long runs are helped for a while.
    scans = [r["scans"] for r in results[0].info["runs"]]
    assert max(scans) >= 3 * min(scans)

    def record(est: Any) -> List[Dict[str, Any]]:
        return [{k: v for k, v in r.items() if k not in ("seconds", "threads")} for r in est.info["runs"]]

    for other in results[1:]:
        assert np.array_equal(other.labels, results[0].labels)
        assert other.expected_loss == results[0].expected_loss
        assert record(other) == record(results[0])


def test_a_run_left_alone_gets_the_idle_threads() -> None:
    # Three runs on two threads: the last run goes on alone for a while, and the thread with
    # no run left helps it (its passes over 10,000 draws are shared); with no helping
    # (inner_jobs=1) every run keeps one thread. One run on two threads: helped throughout.
    # NID, whose runs take about 0.1 s here: an idle thread that a loaded machine leaves
    # unscheduled for a few milliseconds still joins some pass (VI's runs took 12 ms).
    draws = load_draws("galaxy")
    helped = salsox.salso(draws, "NID", n_runs=3, n_jobs=2, seed=2)
    expected = 2 if _core.has_openmp() else 1
    assert max(r["threads"] for r in helped.info["runs"]) == expected
    alone = salsox.salso(draws, "NID", n_runs=3, n_jobs=2, inner_jobs=1, seed=2)
    assert [r["threads"] for r in alone.info["runs"]] == [1, 1, 1]
    assert np.array_equal(helped.labels, alone.labels)
    one = salsox.salso(draws, "NID", n_runs=1, n_jobs=2, seed=2)
    assert one.info["runs"][0]["threads"] == expected


def test_omari_score_passes_are_shared() -> None:
    # The omARI score is split by slots, so a lone run on two threads has both in its score
    # passes (not only in its table updates), as does a run left alone with an idle thread;
    # every run's record stays that of one thread.
    expected = 2 if _core.has_openmp() else 1
    # A team of two inside the run: whether the default's idle helpers join a given pass depends
    # on timing (a loaded CI machine made "some run was helped" fail once), a team does not.
    inner = _search("galaxy", "omARI", H=2000, n_runs=1, seed=4, n_jobs=1, inner_threads=2)
    assert inner["runs"][0]["score_threads"] == expected
    helped = _search("galaxy", "omARI", H=2000, n_runs=3, seed=4, n_jobs=2)
    one = _search("galaxy", "omARI", H=2000, n_runs=3, seed=4, n_jobs=1)
    assert [r["score_threads"] for r in one["runs"]] == [1, 1, 1]

    def record(res: Dict[str, Any]) -> List[Dict[str, Any]]:
        skip = ("seconds", "threads", "score_threads", "zealous_rounds")  # rounds: arrays, checked by the labels
        return [{k: v for k, v in r.items() if k not in skip} for r in res["runs"]]

    assert record(helped) == record(one)
    assert np.array_equal(helped["labels"], one["labels"])
    assert record(inner) == record(one)[:1]


def test_omari_score_passes_split_the_draws() -> None:
    # The omARI passes are split by chunks of draws, so a team of three shares a search of at
    # most two clusters (three slots with the new one: two vectors on the two-wide baseline
    # path, all that a split by slots could share), and equals one thread's run.
    engine = _core.EngineOptions()
    engine.simd = "baseline"
    team = _search("galaxy", "omARI", H=2000, n_runs=1, seed=4, max_clusters=2, n_jobs=1, inner_threads=3,
                   engine=engine)
    alone = _search("galaxy", "omARI", H=2000, n_runs=1, seed=4, max_clusters=2, n_jobs=1, engine=engine)
    assert team["runs"][0]["score_threads"] == (3 if _core.has_openmp() else 1)
    assert alone["runs"][0]["score_threads"] == 1
    assert team["runs"][0]["loss"] == alone["runs"][0]["loss"]
    assert np.array_equal(team["labels"], alone["labels"])


@pytest.mark.parametrize("kind", ["VI", "binder", "ID"])
def test_exact_score_passes_split_the_draws(kind: str) -> None:
    # Binder's count sums and the cell sums of VI and ID are exact (integers; fixed point for
    # VI and ID), so their passes split 2,000 draws into blocks of 512 for a team of three
    # (fixed chunks of 2,048 draws gave one block: one thread) and still equal one thread's.
    team = _search("galaxy", kind, H=2000, n_runs=2, seed=6, n_jobs=1, inner_threads=3)
    alone = _search("galaxy", kind, H=2000, n_runs=2, seed=6, n_jobs=1)
    assert [r["score_threads"] for r in team["runs"]] == ([3, 3] if _core.has_openmp() else [1, 1])
    assert [r["score_threads"] for r in alone["runs"]] == [1, 1]

    def record(res: Dict[str, Any]) -> List[Dict[str, Any]]:
        skip = ("seconds", "threads", "score_threads", "zealous_rounds")  # rounds: arrays, checked by the labels
        return [{k: v for k, v in r.items() if k not in skip} for r in res["runs"]]

    assert record(team) == record(alone)
    assert np.array_equal(team["labels"], alone["labels"])


@pytest.mark.parametrize("kind", ["NVI", "NID", "ID"])
def test_entropy_score_passes_are_shared(kind: str) -> None:
    # The entropy scores sum fixed chunks of draws (each chunk on one thread, the chunks' sums
    # added in chunk order), so a lone run with two threads inside has both in its score
    # passes, as do runs helped by idle threads; every run's record stays that of one thread.
    expected = 2 if _core.has_openmp() else 1
    one = _search("galaxy", kind, H=2000, n_runs=1, seed=5, n_jobs=1)
    assert one["runs"][0]["score_threads"] == 1
    # A team of two inside the run (the helpers of the default may be late on a busy machine).
    inner = _search("galaxy", kind, H=2000, n_runs=1, seed=5, n_jobs=1, inner_threads=2)
    assert inner["runs"][0]["score_threads"] == expected
    lone = _search("galaxy", kind, H=2000, n_runs=1, seed=5, n_jobs=2)
    alone = _search("galaxy", kind, H=2000, n_runs=4, seed=5, n_jobs=1)
    helped = _search("galaxy", kind, H=2000, n_runs=4, seed=5, n_jobs=3)

    def record(res: Dict[str, Any]) -> List[Dict[str, Any]]:
        skip = ("seconds", "threads", "score_threads", "zealous_rounds")  # rounds: arrays, checked by the labels
        return [{k: v for k, v in r.items() if k not in skip} for r in res["runs"]]

    for res in (inner, lone):
        assert record(res) == record(one)
        assert np.array_equal(res["labels"], one["labels"])
    assert record(helped) == record(alone)
    assert np.array_equal(helped["labels"], alone["labels"])


def test_cell_table_too_large_to_sum_is_refused() -> None:
    # The cell sums are exact integers in fixed point: a table whose differences, summed over
    # the draws, would not fit a double is refused with a clear error (not NaN scores).
    draws = _core.CompactDraws(np.ascontiguousarray(np.random.default_rng(0).integers(0, 3, (50, 8)), dtype=np.int32))
    g_cell = [0.0] + [1e308 if x % 2 else -1e308 for x in range(1, 9)]
    loss = _core.CountLoss.tabulated([0.0] * 9, [0.0] * 9, g_cell)
    with pytest.raises(ValueError, match="cell table has differences too large"):
        _core.salso_counts(draws, loss, 5, 4, seed=0, **OPTIONS)
