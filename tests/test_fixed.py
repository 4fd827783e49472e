"""salso(..., fixed=, initial=): fixed items and warm starts (issue 16), in every engine."""

from __future__ import annotations

import numpy as np
import pytest

import salsox
from salsox.enumeration import minimize_by_enumeration, set_partitions
from reference import noisy_draws


def _noisy(seed: int, H: int = 60, n: int = 8, k: int = 3, p: float = 0.35) -> np.ndarray:
    return noisy_draws(seed, H=H, n=n, k=k, p=p)


def _respects(labels: np.ndarray, fixed: np.ndarray) -> bool:
    """Items with equal fixed labels together, different fixed labels apart."""
    on = np.flatnonzero(fixed >= 0)
    for a in on:
        for b in on:
            if (fixed[a] == fixed[b]) != (labels[a] == labels[b]):
                return False
    return True


def _best_respecting(draws: np.ndarray, loss: str, fixed: np.ndarray) -> float:
    parts = set_partitions(draws.shape[1]).astype(np.int32)
    ok = np.array([_respects(p, fixed) for p in parts])
    return float(np.min(salsox.partition_loss(parts[ok], draws, loss)))


# (loss, engine, extra salso arguments): every engine the search has.
ENGINES = [
    ("VI", "counts", {}),
    ("binder", "counts", {"engine": "counts"}),
    ("binder", "coclustering", {"engine": "coclustering"}),
    ("VI.lb", "psm", {}),
    ("omari-numpy", "python", {}),
    ("jaccard", "counts", {}),  # a CountSumLoss (example plugin): the count-sum engine
]


@pytest.mark.parametrize("loss,engine,extra", ENGINES)
def test_completion_matches_exhaustive_search_respecting_fixed(loss: str, engine: str, extra: dict) -> None:
    draws = _noisy(1)
    fixed = np.array([5, 5, -1, -1, 2, -1, -1, -1])  # items 0 and 1 together, 4 apart from them
    est = salsox.salso(draws, loss, fixed=fixed, n_runs=8, seed=3, n_jobs=1, **extra)
    assert est.info["engine"] == engine
    assert _respects(est.labels, fixed)
    assert est.expected_loss == pytest.approx(_best_respecting(draws, loss, fixed), abs=1e-9)
    # The unconstrained optimum puts 0 and 1 apart here, so the fixed labels did bind.
    free = salsox.salso(draws, loss, n_runs=8, seed=3, n_jobs=1, **extra)
    assert not _respects(free.labels, fixed)


@pytest.mark.parametrize("loss,engine,extra", ENGINES)
@pytest.mark.parametrize("prob_sequential", [0.0, 1.0])
def test_fixed_items_never_move_in_any_engine(loss: str, engine: str, extra: dict, prob_sequential: float) -> None:
    draws = _noisy(7, n=10, k=2, p=0.2)
    # Against the data: items 0 and 1 (true clusters 0 and 1) forced together, 2 and 4 (both
    # true cluster 0) forced apart, and as many fixed clusters as the draws' largest.
    fixed = np.array([0, 0, 1, -1, 2, -1, -1, -1, -1, -1])
    for seed in range(4):
        est = salsox.salso(
            draws, loss, fixed=fixed, n_runs=4, seed=seed, n_jobs=1, prob_sequential=prob_sequential,
            max_clusters=3, **extra,
        )
        assert _respects(est.labels, fixed), (seed, est.labels)


@pytest.mark.parametrize("loss,engine,extra", ENGINES)
def test_all_free_is_plain_salso(loss: str, engine: str, extra: dict) -> None:
    draws = _noisy(2, n=10)
    for seed in range(3):
        plain = salsox.salso(draws, loss, n_runs=6, seed=seed, n_jobs=1, **extra)
        free = salsox.salso(draws, loss, fixed=np.full(10, -1), n_runs=6, seed=seed, n_jobs=1, **extra)
        np.testing.assert_array_equal(plain.labels, free.labels)
        assert [r["loss"] for r in plain.info["runs"]] == [r["loss"] for r in free.info["runs"]]


def test_fixed_results_do_not_depend_on_threads() -> None:
    draws = _noisy(5, H=80, n=12)
    fixed = np.array([0, 1, -1, 0, -1, -1, 2, -1, -1, -1, -1, 1])
    got = [salsox.salso(draws, fixed=fixed, n_runs=12, seed=9, n_jobs=j) for j in (1, 2, 4)]
    for est in got[1:]:
        np.testing.assert_array_equal(est.labels, got[0].labels)
        assert [r["loss"] for r in est.info["runs"]] == [r["loss"] for r in got[0].info["runs"]]


def test_max_clusters_below_the_fixed_clusters_is_a_clear_error() -> None:
    draws = _noisy(3)
    fixed = np.array([0, 1, 2, -1, -1, -1, -1, -1])
    with pytest.raises(ValueError, match="max_clusters=2 is below the number of fixed clusters"):
        salsox.salso(draws, fixed=fixed, max_clusters=2)
    # Without max_clusters the cap is raised to the fixed clusters.
    many = np.arange(8)
    many[7] = -1
    est = salsox.salso(draws, fixed=many, n_runs=2, seed=0)
    assert est.n_clusters >= 7 and _respects(est.labels, many)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"fixed": [0, 1]}, "fixed has 2 labels"),
        ({"fixed": np.zeros((2, 8), dtype=int)}, "fixed must be a 1-D"),
        ({"fixed": [0, -2, 1, 1, 1, 1, 1, 1]}, "-1 for free items"),
        ({"fixed": [0.5] * 8}, "fixed"),
        ({"initial": [0, 1]}, "initial has 2 labels"),
        ({"initial": [0, -1, 1, 1, 1, 1, 1, 1]}, "every item allocated"),
        ({"initial": np.zeros((0, 8), dtype=int)}, "no partition"),
        ({"initial": np.arange(8), "max_clusters": 3}, "more than max_clusters=3"),
        ({"initial": np.zeros(8, dtype=int), "initializer": "psm-hclust"}, "not both"),
        ({"fixed": [0] + [-1] * 7, "initializer": "psm-hclust"}, "initializer"),
        ({"initial": np.zeros(8, dtype=int), "fixed": [0, 1] + [-1] * 6}, "does not agree with fixed"),
        ({"initial": np.arange(8) % 4, "fixed": [0, 0] + [-1] * 6}, "does not agree with fixed"),
    ],
)
def test_bad_fixed_and_initial_raise_clear_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        salsox.salso(_noisy(0), **kwargs)


@pytest.mark.parametrize("loss,engine,extra", ENGINES)
def test_a_warm_start_at_the_optimum_is_kept(loss: str, engine: str, extra: dict) -> None:
    draws = _noisy(4, n=8)
    best = minimize_by_enumeration(draws, loss)
    # One scan, no zealous updates: the runs stay close to where they start.
    args = dict(n_runs=3, seed=0, n_jobs=1, max_scans=1, max_zealous=0, **extra)
    bad_start = (np.asarray(best.labels) + np.arange(8) % 2) % 8
    warm = salsox.salso(draws, loss, initial=best.labels, **args)
    assert warm.expected_loss == pytest.approx(best.expected_loss, abs=1e-12)
    assert {r["initialization"] for r in warm.info["runs"]} == {"initial"}
    # Several starts: run r starts from row r % m (the optimum is row 1 of 2, runs 1 and 3).
    both = salsox.salso(draws, loss, initial=np.stack([bad_start, best.labels]), **dict(args, n_runs=4))
    losses = [r["loss"] for r in both.info["runs"]]
    assert losses[1] == pytest.approx(best.expected_loss, abs=1e-12)
    assert losses[3] == pytest.approx(best.expected_loss, abs=1e-12)


def test_warm_starts_with_fixed_items() -> None:
    draws = _noisy(6, n=8)
    fixed = np.array([3, 3, -1, -1, 7, -1, -1, -1])
    start = np.array([1, 1, 0, 0, 2, 2, 0, 1])  # agrees with fixed (labels differ: only grouping counts)
    optimum = np.array([0, 0, 1, 0, 2, 1, 0, 3])  # the best partition respecting fixed (checked below)
    assert salsox.partition_loss(optimum, draws) == pytest.approx(_best_respecting(draws, "VI", fixed), abs=1e-12)
    est = salsox.salso(draws, fixed=fixed, initial=start, n_runs=4, seed=0, n_jobs=2)
    assert _respects(est.labels, fixed)
    assert est.expected_loss < salsox.partition_loss(start, draws)
    # From `start` every run ends in a 3-cluster local optimum; a second start at the optimum wins.
    assert est.n_clusters == 3
    both = salsox.salso(draws, fixed=fixed, initial=np.stack([start, optimum]), n_runs=4, seed=0, n_jobs=2)
    np.testing.assert_array_equal(both.labels, optimum)
