"""CHIPS (salsox.chips) against the numpy implementation in reference_chips.py, brute force on
tiny problems, and the properties the issue asks for (issue 16)."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import salsox
from reference_chips import best_by_size, chips_run, consistent, probability, replay
from reference import noisy_draws


def _noisy(seed: int, H: int = 40, n: int = 9, k: int = 3, p: float = 0.25) -> np.ndarray:
    return noisy_draws(seed, H=H, n=n, k=k, p=p)


def _canonical(labels: np.ndarray) -> np.ndarray:
    out = np.full(labels.shape, -1)
    seen: dict = {}
    for i, v in enumerate(labels):
        if v >= 0:
            out[i] = seen.setdefault(int(v), len(seen))
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threshold", [0.0, 0.3])
def test_every_run_matches_the_reference_given_the_same_ties(seed: int, threshold: float) -> None:
    draws = _noisy(seed)
    res = salsox.chips(draws, threshold, n_runs=8, seed=seed, path=False, all_candidates=True, n_jobs=1)
    for run in res.info["runs"]:
        ref = chips_run(draws, threshold, choose=replay(run["items"], run["labels"]))
        np.testing.assert_array_equal(ref["items"], run["items"])
        np.testing.assert_array_equal(ref["counts"], run["counts"])
        np.testing.assert_array_equal(ref["unallocated"], run["unallocated"])
        np.testing.assert_array_equal(ref["unallocated_counts"], run["unallocated_counts"])
        assert run["stopped"] == (threshold > 0 and len(run["items"]) < draws.shape[1])


def test_initial_sub_partition_matches_the_reference() -> None:
    draws = _noisy(3, H=60)
    initial = np.full(9, -1)
    initial[[0, 3, 1]] = [5, 5, 2]
    res = salsox.chips(draws, 0.0, n_runs=4, seed=0, initial=initial, n_jobs=1)
    start = _canonical(initial)
    assert res.info["start_count"] == consistent(draws, start).sum()
    assert np.all(res.labels[:, [0, 3, 1]] >= 0)
    assert res.n_items[-1] == 3
    for run in res.info["runs"]:
        ref = chips_run(draws, initial=start, choose=replay(run["items"], run["labels"]))
        np.testing.assert_array_equal(ref["counts"], run["counts"])


def test_path_rows_recount_exactly_and_shrink_one_item_at_a_time() -> None:
    draws = _noisy(11, H=80, n=12)
    res = salsox.chips(draws, seed=5, n_runs=16)
    assert res.mode == "path"
    n = draws.shape[1]
    np.testing.assert_array_equal(res.n_items, np.arange(n, -1, -1))
    for row, p, m in zip(res.labels, res.probability, res.n_items):
        assert (row >= 0).sum() == m
        assert p == probability(draws, row)
        np.testing.assert_array_equal(row, _canonical(row))
    assert np.all(np.diff(res.probability) >= 0)  # never falls as the subset shrinks
    assert res.probability[-1] == 1.0
    assert res.auc == pytest.approx(res.probability[1:].sum() / n)
    # Each row is the best any run reached at that size.
    for m, p in zip(res.n_items, res.probability):
        for run in res.info["runs"]:
            counts = [draws.shape[0]] + list(run["counts"])
            assert counts[m] / draws.shape[0] <= p
    mask = res.consistent_draws
    for row, msk in zip(res.labels, mask):
        np.testing.assert_array_equal(msk, consistent(draws, row))


def test_identical_draws_give_the_full_partition_with_probability_one() -> None:
    draws = np.tile([3, 3, 1, 2, 2, 2, 7], (25, 1))
    res = salsox.chips(draws, seed=0)
    np.testing.assert_array_equal(res.probability, 1.0)
    np.testing.assert_array_equal(res.labels[0], [0, 0, 1, 2, 2, 2, 3])
    assert res.auc == 1.0
    single = salsox.chips(draws, 0.99, seed=0)
    assert single.n_items == 7 and single.probability == 1.0 and single.unallocated.items.size == 0
    np.testing.assert_array_equal(single.cluster_probability, 1.0)


def test_greedy_path_is_optimal_with_one_uncertain_item_brute_force() -> None:
    # Items 0..4 always form the same partition; item 5 wanders. A run that does not start
    # with item 5 allocates the stable items first (count H each) and is optimal at every size.
    rng = np.random.default_rng(2)
    H = 30
    draws = np.tile([0, 0, 1, 1, 2, 0], (H, 1))
    draws[:, 5] = rng.choice([0, 1, 2, 3], size=H, p=[0.5, 0.2, 0.2, 0.1])
    best = best_by_size(draws)
    res = salsox.chips(draws, seed=1, n_runs=16)
    np.testing.assert_allclose(res.probability[::-1], best)
    for run in res.info["runs"]:
        if run["items"][0] != 5:
            np.testing.assert_allclose(run["counts"] / H, best[1:])


def test_single_best_and_threshold_from_the_path() -> None:
    draws = _noisy(4, H=100, n=10)
    best = salsox.chips(draws, 0.5, seed=2, n_runs=16)
    assert best.mode == "single" and best.probability >= 0.5
    assert best.probability == probability(draws, best.labels)
    finals = salsox.chips(draws, 0.5, seed=2, n_runs=16, all_candidates=True)
    assert np.all(np.diff(finals.n_items) <= 0)
    assert best.n_items == finals.n_items[0] and best.probability == finals.probability[0]
    # Unallocated items: q_i = c_i / H, each below the threshold, and adding one gives q_i.
    u = best.unallocated
    np.testing.assert_array_equal(u.items, np.flatnonzero(best.labels < 0))
    assert np.all(u.q < 0.5) and np.all(u.q == u.counts / draws.shape[0])
    for i, c in zip(u.items, u.counts):
        options = [probability(draws, np.where(np.arange(10) == i, lab, best.labels)) for lab in range(11)]
        assert max(options) * draws.shape[0] == pytest.approx(c)
    # Cluster probability: members share a label.
    for c, p in enumerate(best.cluster_probability):
        members = np.flatnonzero(best.labels == c)
        assert p == np.mean([len(set(d[members])) == 1 for d in draws])
    path = salsox.chips(draws, seed=2, n_runs=16)
    th = path.threshold(0.5)
    row = np.flatnonzero(path.probability >= 0.5)[0]
    assert th.n_items >= path.n_items[row] and th.probability >= path.probability[row]
    kept = path.labels[row] >= 0
    assert np.all(th.labels[kept] >= 0)
    np.testing.assert_array_equal(_canonical(th.labels[kept]), _canonical(path.labels[row][kept]))


def test_results_do_not_depend_on_threads() -> None:
    draws = _noisy(7, H=200, n=30, k=4, p=0.15)
    for kwargs in ({}, {"threshold": 0.4}, {"threshold": 0.4, "all_candidates": True}):
        a = salsox.chips(draws, seed=9, n_runs=24, n_jobs=1, **kwargs)
        b = salsox.chips(draws, seed=9, n_runs=24, n_jobs=3, **kwargs)
        np.testing.assert_array_equal(a.labels, b.labels)
        np.testing.assert_array_equal(a.probability, b.probability)
        np.testing.assert_array_equal(a.run, b.run)


def test_path_ties_go_to_the_smallest_canonical_labels_not_run_order() -> None:
    draws = np.tile(np.arange(6) % 2, (10, 1))  # every state has probability 1: all runs tie
    res = salsox.chips(draws, seed=3, n_runs=12)
    for m, row in zip(res.n_items, res.labels):
        candidates = []
        for run in res.info["runs"]:
            lab = np.full(6, -1)
            lab[run["items"][:m]] = run["labels"][:m]
            candidates.append(tuple(_canonical(lab)))
        assert tuple(row) == min(candidates)


@pytest.mark.parametrize("n, k", [(8, 3), (9, 3), (12, 4)])
def test_path_ties_over_many_comparisons_go_to_the_smallest_canonical_labels(n: int, k: int) -> None:
    # Identical draws: every state of every run has probability 1, so each row is chosen among
    # all runs by comparing canonical labels, hundreds of comparisons in a row. Each comparison
    # must leave no trace for the next (chips.hpp, ChipsStates::canonical_less: its relabelling
    # maps are reset up to and including the first position that differs).
    draws = np.tile(np.arange(n) % k, (10, 1))
    for seed in range(5):
        res = salsox.chips(draws, seed=seed, n_runs=32, n_jobs=1)
        for m, row in zip(res.n_items, res.labels):
            candidates = []
            for run in res.info["runs"]:
                lab = np.full(n, -1)
                lab[run["items"][:m]] = run["labels"][:m]
                candidates.append(tuple(_canonical(lab)))
            assert tuple(row) == min(candidates), (seed, m)


def test_every_item_of_a_tie_can_be_chosen() -> None:
    # Identical draws: at every step every unallocated item reaches the same count (all draws),
    # and the tie set must hold them all, also when the pruned search stops at an item whose
    # bound only equals the best count. The first item of the runs is then uniform over the
    # items: over 70 runs every one of them comes first at least once.
    n = 7
    draws = np.tile([0, 0, 1, 1, 2, 2, 3], (20, 1))
    res = salsox.chips(draws, 0.0, seed=1, n_runs=70, path=False, all_candidates=True, n_jobs=1)
    runs = res.info["runs"]
    assert sorted({int(run["items"][0]) for run in runs}) == list(range(n))
    for step in range(n - 1):  # and after the first step: more than one item at each step
        assert len({int(run["items"][step]) for run in runs}) > 1, step
    for run in runs:
        ref = chips_run(draws, choose=replay(run["items"], run["labels"]))
        np.testing.assert_array_equal(ref["counts"], run["counts"])


def test_many_clusters_and_wide_draw_labels() -> None:
    # 600 items: 500 singletons and 50 pairs in every draw (550 draw labels, 16-bit; 550
    # CHIPS clusters), plus one item that sometimes joins a pair.
    n = 600
    base = np.concatenate([np.arange(500), 500 + np.repeat(np.arange(50), 2)])
    draws = np.tile(base, (6, 1))
    draws[:, -1] = np.arange(6) * 1000 + 700  # the last item: its own cluster
    draws[:2, -1] = 549  # ... or with the last pair
    d = salsox.Draws(draws)
    assert d.label_bits == 16
    res = salsox.chips(d, 0.5, seed=0, n_runs=2)
    assert res.n_items == n and res.probability == pytest.approx(4 / 6)
    assert res.labels.max() == 550
    single = salsox.chips(d, 0.9, seed=0, n_runs=2)
    assert single.n_items == n - 1 and single.probability == 1.0
    np.testing.assert_array_equal(single.unallocated.items, [n - 1])
    np.testing.assert_array_equal(single.unallocated.counts, [4])


def test_initial_below_the_threshold_is_returned_as_it_is() -> None:
    draws = np.array([[0, 0, 1, 1], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 0, 1]])
    initial = [4, 4, -1, 9]  # consistent with the first draw only
    res = salsox.chips(draws, 0.5, seed=0, initial=initial)
    np.testing.assert_array_equal(res.labels, [0, 0, -1, 1])
    assert res.probability == 0.25 and res.n_items == 3
    np.testing.assert_array_equal(res.unallocated.items, [2])
    np.testing.assert_array_equal(res.unallocated.counts, [1])
    np.testing.assert_array_equal(res.consistent_draws, [True, False, False, False])
    # No consistent draw at all: still returned, with probability 0, in any mode.
    none = salsox.chips(draws, 0.5, seed=0, initial=[0, 0, 0, -1])
    assert none.probability == 0.0 and none.n_items == 3
    path = salsox.chips(draws, seed=0, initial=[0, 0, 0, -1])
    np.testing.assert_array_equal(path.probability, [0.0, 0.0])


def test_consistency_of_rows_with_an_unused_label() -> None:
    # The engine's check of sub-partitions called directly: label 1 has no item. Its cluster has
    # no representative, which the engine once read as item -1, out of the draws' bounds.
    draws = salsox.Draws(np.array([[0, 0, 1, 1], [0, 1, 1, 1], [0, 0, 0, 1]]))
    gap = np.array([[0, 0, -1, 2], [2, -1, 0, 0]], dtype=np.int32)
    dense = np.array([[0, 0, -1, 1], [1, -1, 0, 0]], dtype=np.int32)
    mask, together = salsox._core.chips_consistency(draws._core, gap, 2)
    dense_mask, dense_together = salsox._core.chips_consistency(draws._core, dense, 2)
    np.testing.assert_array_equal(mask, dense_mask)
    np.testing.assert_array_equal(mask, [[1, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(together[0], [2, 0, 3])
    np.testing.assert_array_equal(together[1], [2, 0, 3])
    np.testing.assert_array_equal(dense_together[0], [2, 3])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"threshold": 1.5}, ValueError, "threshold"),
        ({"threshold": "0.5"}, TypeError, "threshold"),
        ({"n_runs": 0}, ValueError, "n_runs"),
        ({"n_runs": 2.5}, TypeError, "n_runs"),
        ({"path": "yes"}, TypeError, "path"),
        ({"path": True, "all_candidates": True}, ValueError, "all_candidates"),
        ({"initial": [0, 1]}, ValueError, "initial"),
        ({"initial": [[0, 1, 2, 3]]}, ValueError, "initial"),
        ({"initial": [0, -2, 1, 1]}, ValueError, "-1"),
        ({"initial": [0.5, 1, 1, 1]}, ValueError, "initial"),
        ({"n_jobs": 0}, ValueError, "n_jobs"),
        ({"seed": -1}, ValueError, "seed"),
    ],
)
def test_bad_inputs_raise_clear_errors(kwargs: dict, error: type, match: str) -> None:
    draws = np.array([[0, 0, 1, 1], [0, 1, 1, 1]])
    with pytest.raises(error, match=match):
        salsox.chips(draws, **kwargs)


def test_bad_draws_and_threshold_calls_raise() -> None:
    with pytest.raises(ValueError, match="draws"):
        salsox.chips(np.zeros((0, 3), dtype=int))
    single = salsox.chips(np.array([[0, 0, 1], [0, 1, 1]]), 0.5, seed=0)
    with pytest.raises(ValueError, match="path"):
        single.threshold(0.5)
    path = salsox.chips(np.array([[0, 0, 1], [0, 1, 1]]), seed=0, initial=[0, 1, -1])
    with pytest.raises(ValueError, match="gamma"):
        path.threshold(0.9)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_stops_the_runs(shared_dir, n_jobs: int) -> None:
    import _thread
    import threading

    from conftest import load_draws

    draws = salsox.Draws(load_draws("ex1"))
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        # Thousands of runs: minutes of work unless the monitor's poll stops them.
        with pytest.raises(KeyboardInterrupt) as excinfo:
            salsox.chips(draws, n_runs=5000, n_jobs=n_jobs, seed=0)
    finally:
        timer.cancel()
    # Raised by the engine call itself, not by Python code after the runs had finished.
    assert "_core.chips(" in str(excinfo.traceback[-1].statement)


class _Stop(Exception):
    """Raised by a test's own signal handler."""


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="SIGUSR1 is POSIX-only")
def test_a_signal_handlers_own_exception_comes_back_not_keyboard_interrupt(shared_dir) -> None:
    # A handler that raises something else (a timeout, a job scheduler's SIGTERM) stops the
    # runs as Ctrl-C does; the caller must get that exception, not a KeyboardInterrupt.
    import threading

    from conftest import load_draws

    def handler(signum, frame):
        raise _Stop("stopped by SIGUSR1")

    draws = salsox.Draws(load_draws("ex1"))
    previous = signal.signal(signal.SIGUSR1, handler)
    timer = threading.Timer(0.3, os.kill, args=(os.getpid(), signal.SIGUSR1))
    timer.start()
    try:
        with pytest.raises(_Stop) as excinfo:
            salsox.chips(draws, n_runs=5000, n_jobs=2, seed=0)
    except KeyboardInterrupt:  # left to itself, it would stop pytest
        pytest.fail("KeyboardInterrupt in place of the signal handler's own exception")
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)
    # Raised out of the engine call itself, while the runs were going.
    assert any("_core.chips(" in str(entry.statement) for entry in excinfo.traceback)

