"""The SALSO search: optimality on small problems, reproducibility, caps, phases, validation."""

from __future__ import annotations

import numpy as np
import pytest

import salsox
from conftest import load_draws
from salsox.enumeration import set_partitions

LOSSES = [
    salsox.Binder(),
    salsox.Binder(a=1.5, b=0.5),
    salsox.VI(),
    salsox.VI(a=0.6, b=1.4),
    salsox.OMARI(),
    salsox.NVI(),
    salsox.ID(),
    salsox.NID(),
]


def noisy_draws(rng: np.random.Generator, n: int, H: int) -> np.ndarray:
    """Draws scattered around a random base partition: some items move, clusters merge/split."""
    base = rng.integers(0, rng.integers(1, 4), size=n)
    draws = np.tile(base, (H, 1))
    moves = rng.random((H, n)) < rng.uniform(0.05, 0.4)
    draws[moves] = rng.integers(0, 5, size=moves.sum())
    return draws + rng.integers(-3, 4)  # labels need not start at 0


def minimum_by_enumeration(draws: np.ndarray, loss, max_clusters: int) -> float:
    parts = set_partitions(draws.shape[1])
    parts = parts[parts.max(axis=1) < max_clusters]
    return float(np.min(salsox.partition_loss(parts, draws, loss)))


def test_salso_finds_the_enumeration_minimiser_on_small_problems():
    rng = np.random.default_rng(20261125)
    trials = hits = 0
    misses = []
    for t in range(25):
        n = int(rng.integers(3, 9))
        draws = noisy_draws(rng, n, int(rng.integers(5, 40)))
        kd = int(max(len(np.unique(row)) for row in draws))
        for loss in LOSSES:
            best = minimum_by_enumeration(draws, loss, kd)
            est = salsox.salso(draws, loss, seed=t, n_jobs=1)
            trials += 1
            if est.expected_loss <= best + 1e-12 * max(1.0, abs(best)):
                hits += 1
            else:
                misses.append((t, loss, est.expected_loss, best))
            assert est.expected_loss >= best - 1e-12 * max(1.0, abs(best))  # nothing beats the optimum
    assert hits >= 0.99 * trials, misses


@pytest.mark.parametrize("loss", LOSSES + [salsox.VILowerBound(), salsox.OMARIApprox()], ids=repr)
def test_expected_loss_equals_partition_loss(loss):
    draws = load_draws("iris")
    est = salsox.salso(draws, loss, seed=3, n_runs=4)
    assert est.expected_loss == salsox.partition_loss(est.labels, draws, loss)
    # Canonical labels: 0..k-1 in order of first appearance.
    first = [int(np.argmax(est.labels == k)) for k in range(est.n_clusters)]
    assert first == sorted(first)
    assert set(est.labels.tolist()) == set(range(est.n_clusters))


@pytest.mark.parametrize("loss", ["VI", "binder", "NVI", "omARI", "VI.lb"])
def test_same_seed_same_estimate_for_any_thread_count(loss):
    draws = load_draws("galaxy")[::10]
    results = [salsox.salso(draws, loss, seed=11, n_runs=8, n_jobs=j) for j in (1, 2, 4)]
    for r in results[1:]:
        np.testing.assert_array_equal(r.labels, results[0].labels)
        assert r.expected_loss == results[0].expected_loss
        assert [x["loss"] for x in r.info["runs"]] == [x["loss"] for x in results[0].info["runs"]]


def test_different_seeds_explore_differently():
    draws = load_draws("iris")
    a = salsox.salso(draws, "NVI", seed=1, n_runs=2)
    b = salsox.salso(draws, "NVI", seed=2, n_runs=2)
    assert [r["loss"] for r in a.info["runs"]] != [r["loss"] for r in b.info["runs"]]


@pytest.mark.parametrize("loss", ["binder", "VI", "NID", "omARI", "VI.lb"])
@pytest.mark.parametrize("cap", [1, 2, 3])
def test_max_clusters_is_never_exceeded(loss, cap):
    draws = load_draws("iris")
    est = salsox.salso(draws, salsox.Binder(a=0.2, b=1.8) if loss == "binder" else loss,
                       max_clusters=cap, seed=0, n_runs=4, prob_sequential=0.5)
    assert est.n_clusters <= cap
    assert est.info["max_clusters"] == cap


def test_default_cap_is_the_largest_number_of_clusters_among_draws():
    draws = load_draws("iris")
    est = salsox.salso(draws, "binder", n_runs=1, seed=0)
    assert est.info["max_clusters"] == max(len(np.unique(r)) for r in draws)


def is_local_minimum(labels: np.ndarray, draws: np.ndarray, loss, cap: int) -> bool:
    """No single item can move to another cluster or a new one and lower the expected loss."""
    k = labels.max() + 1
    current = salsox.partition_loss(labels, draws, loss)
    moves = []
    for i in range(len(labels)):
        for c in range(k + (1 if k < cap else 0)):
            if c != labels[i]:
                moved = labels.copy()
                moved[i] = c
                moves.append(moved)
    values = salsox.partition_loss(np.array(moves), draws, loss)
    return bool(np.all(values >= current - 1e-12))


# Every count-table score (each loss has its own) must rank moves as the true loss does.
@pytest.mark.parametrize("loss", ["VI", "binder", "NID", "ID", "NVI", "omARI", salsox.VI(a=2 / 3, b=4 / 3)], ids=str)
def test_rastelli_friel_mode_is_a_greedy_search_to_a_local_minimum(loss):
    draws = load_draws("iris")[::5]
    kd = max(len(np.unique(r)) for r in draws)
    est = salsox.salso(draws, loss, prob_sequential=0, max_zealous=0, n_runs=1, seed=5)
    run = est.info["runs"][0]
    assert run["initialization"] == "random"
    assert run["zealous_attempts"] == 0
    assert is_local_minimum(est.labels, draws, loss, kd)
    full = salsox.salso(draws, loss, seed=5)
    assert full.expected_loss <= est.expected_loss


def _numpy_entropies(tables):
    """Entropies (bits) of the draw clusters, the estimate's and the joint, per table."""
    t = tables.astype(float)
    m = np.maximum(t.sum(axis=(1, 2)), 1.0)

    def entropy(counts, axes):
        return np.log2(m) - (counts * np.log2(np.where(counts > 0, counts, 1.0))).sum(axis=axes) / m

    return entropy(t.sum(axis=2), 1), entropy(t.sum(axis=1), 1), entropy(t, (1, 2))


class _NumpyID(salsox.plugins.ContingencyLoss):
    """ID from the contingency tables in plain numpy: Hj - min(Hr, He)."""

    name = "numpy-ID"

    def loss(self, tables):
        hr, he, hj = _numpy_entropies(tables)
        return np.maximum(0.0, hj - np.minimum(hr, he))


class _NumpyNID(salsox.plugins.ContingencyLoss):
    """NID from the contingency tables in plain numpy: (Hj - min(Hr, He)) / max(Hr, He)."""

    name = "numpy-NID"

    def loss(self, tables):
        hr, he, hj = _numpy_entropies(tables)
        top = np.maximum(hr, he)
        return np.where(top > 0, np.maximum(0.0, hj - np.minimum(hr, he)) / np.where(top > 0, top, 1.0), 0.0)


# Sequential allocation and zealous updates score items not yet allocated, through passes of
# their own in ID and NID (the draws' entropies depend on the item): every run must take the
# steps that the loss computed from scratch takes.
@pytest.mark.parametrize("loss, numpy_loss", [("ID", _NumpyID()), ("NID", _NumpyNID())])
def test_unallocated_items_are_scored_as_the_loss_from_scratch(loss, numpy_loss):
    for draws in (load_draws("iris")[::10], load_draws("galaxy")[::100]):
        options = dict(seed=3, n_runs=4, n_jobs=1, prob_sequential=1.0)
        got = salsox.salso(draws, loss, engine="counts", **options)
        want = salsox.salso(draws, numpy_loss, **options)
        assert want.info["engine"] == "python"
        np.testing.assert_array_equal(got.labels, want.labels)
        for g, w in zip(got.info["runs"], want.info["runs"]):
            assert (g["run"], g["scans"], g["zealous_accepts"]) == (w["run"], w["scans"], w["zealous_accepts"])
            assert g["loss"] == pytest.approx(w["loss"], rel=1e-12)
        assert sum(r["zealous_attempts"] for r in got.info["runs"]) > 0


def test_sweetening_alone_reaches_a_local_minimum_after_sequential_allocation():
    draws = load_draws("galaxy")[::20]
    est = salsox.salso(draws, "VI", prob_sequential=1, max_zealous=0, n_runs=3, seed=2)
    assert all(r["initialization"] == "sequential" for r in est.info["runs"])
    assert is_local_minimum(est.labels, draws, "VI", draws.max())


def test_max_scans_caps_sweetening():
    draws = load_draws("iris")
    est = salsox.salso(draws, "VI", max_scans=1, max_zealous=0, n_runs=3, seed=0)
    assert all(r["scans"] == 1 for r in est.info["runs"])


def test_binder_engines_agree_exactly():
    draws = load_draws("galaxy")[::10]
    for a in (1.0, 1.5):
        loss = salsox.Binder(a=a, b=2 - a)
        co = salsox.salso(draws, loss, seed=4, n_runs=6, engine="coclustering")
        counts = salsox.salso(draws, loss, seed=4, n_runs=6, engine="counts")
        assert co.info["engine"] == "coclustering" and counts.info["engine"] == "counts"
        np.testing.assert_array_equal(co.labels, counts.labels)
        assert co.expected_loss == counts.expected_loss


def test_psm_input_for_psm_losses_and_binder():
    draws = load_draws("iris")
    p = salsox.PSM(salsox.psm(draws))
    for loss in ("VI.lb", "omARI.approx", "binder"):
        from_psm = salsox.salso(p, loss, seed=1, n_runs=4, max_clusters=25)
        from_draws = salsox.salso(draws, loss, seed=1, n_runs=4, max_clusters=25,
                                  **({"engine": "coclustering"} if loss == "binder" else {}))
        assert from_psm.expected_loss == pytest.approx(from_draws.expected_loss, rel=1e-12)
    with pytest.raises(ValueError, match="needs draws"):
        salsox.salso(p, "VI")


def test_time_budget_stops_starting_runs():
    draws = load_draws("ex1")
    est = salsox.salso(draws, "NID", n_runs=64, seconds=0.5, n_jobs=1, seed=0)
    assert 1 <= est.info["runs_done"] < 64
    assert est.info["budget_exhausted"]
    assert len(est.info["runs"]) == est.info["runs_done"]


def test_info_reports_the_search():
    draws = load_draws("iris")
    est = salsox.salso(draws, salsox.VI(a=0.7, b=1.3), seed=9, n_runs=5)
    info = est.info
    assert info["loss"] == "VI" and info["loss_params"] == {"a": 0.7, "b": 1.3}
    assert info["runs_done"] == info["runs_requested"] == 5
    assert info["initialization"] in ("sequential", "random")
    assert info["seed"] == 9 and info["seconds"] > 0
    assert min(r["loss"] for r in info["runs"]) == pytest.approx(est.expected_loss, rel=1e-12)
    assert est.sizes.sum() == draws.shape[1]
    assert "Estimate(n_clusters=" in repr(est)


def test_random_seed_is_reported_and_reproduces():
    draws = load_draws("iris")
    first = salsox.salso(draws, "NVI", n_runs=3)
    again = salsox.salso(draws, "NVI", n_runs=3, seed=first.info["seed"])
    np.testing.assert_array_equal(first.labels, again.labels)


def test_dlso_returns_the_best_draw():
    draws = load_draws("iris")[:200]
    est = salsox.dlso(draws, "VI")
    values = salsox.partition_loss(draws, draws, "VI")
    assert est.expected_loss == pytest.approx(values.min(), rel=1e-12)
    assert salsox.ARI(est.labels, draws[est.info["draw"]]) == 1.0
    assert salsox.salso(draws, "VI", seed=0).expected_loss <= est.expected_loss


def test_tiny_inputs():
    assert salsox.salso([[5]], "VI", seed=0).labels.tolist() == [0]
    est = salsox.salso([[1, 1, 2]], "binder", seed=0)
    assert est.labels.tolist() == [0, 0, 1] and est.expected_loss == 0.0
    est = salsox.salso([[3, 3, 3, 3]], "NVI", seed=0)
    assert est.n_clusters == 1 and est.expected_loss == 0.0


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"n_runs": 0}, ValueError),
        ({"n_runs": 2.5}, TypeError),
        ({"max_zealous": -1}, ValueError),
        ({"prob_sequential": 1.5}, ValueError),
        ({"prob_sequential": "half"}, TypeError),
        ({"max_scans": 0}, ValueError),
        ({"seconds": -1}, ValueError),
        ({"seconds": float("nan")}, ValueError),
        ({"n_jobs": 0}, ValueError),
        ({"seed": -1}, ValueError),
        ({"seed": 1.5}, TypeError),
        ({"max_clusters": 0}, ValueError),
        ({"max_clusters": True}, TypeError),
        ({"engine": "gpu"}, ValueError),
        ({"memory_limit": 0}, ValueError),
    ],
)
def test_bad_parameters_raise_clear_errors(kwargs, error):
    draws = load_draws("iris")[:50]
    name = next(iter(kwargs))
    with pytest.raises(error, match=name):
        salsox.salso(draws, "VI", **kwargs)


def test_memory_limit_refuses_up_front():
    draws = load_draws("ex1")
    with pytest.raises(MemoryError, match="MiB"):
        salsox.salso(draws, "VI", memory_limit=1000)


@pytest.mark.parametrize("loss, engine", [("VI", None), ("binder", "counts")])
def test_threads_inside_a_run_do_not_change_the_result(loss, engine):
    # Small n: a parallel region per item pass is slow when the machine is busy.
    draws = load_draws("galaxy")[:4000, :12]
    kw = dict(seed=8, n_runs=1, max_zealous=1, engine=engine)
    one = salsox.salso(draws, loss, n_jobs=1, **kw)
    inner = salsox.salso(draws, loss, n_jobs=2, inner_jobs=2, **kw)  # threads over draws
    forced = salsox.salso(draws, loss, n_jobs=1, inner_jobs=3, **kw)
    for other in (inner, forced):
        np.testing.assert_array_equal(one.labels, other.labels)
        assert one.info["runs"][0]["loss"] == other.info["runs"][0]["loss"]
    with pytest.raises(ValueError, match="inner_jobs"):
        salsox.salso(draws, loss, inner_jobs=0)


@pytest.mark.parametrize("loss", ["VI", "NID", "omARI", "ID"])
def test_zealous_updates_only_improve_each_run_and_keep_tables_exact(loss):
    # Many draw clusters and small estimate clusters: rejected zealous updates are undone both
    # by restoring a snapshot (large clusters) and by moving the members back (small ones).
    rng = np.random.default_rng(0)
    base = np.repeat(np.arange(6), 10)
    draws = np.tile(base, (40, 1))
    noisy = rng.random(draws.shape) < 0.3
    draws[noisy] = rng.integers(0, 40, size=int(noisy.sum()))
    plain = salsox.salso(draws, loss, max_zealous=0, n_runs=8, seed=11, n_jobs=1)
    zealous = salsox.salso(draws, loss, n_runs=8, seed=11, n_jobs=2)
    assert sum(r["zealous_attempts"] for r in zealous.info["runs"]) > 0
    for before, after in zip(plain.info["runs"], zealous.info["runs"]):
        # Same random stream up to the zealous phase, which only accepts improvements.
        assert after["loss"] <= before["loss"] + 1e-12
    best = zealous.info["runs"][zealous.info["best_run"]]
    assert best["loss"] == pytest.approx(zealous.expected_loss, rel=1e-9, abs=1e-12)
    assert zealous.expected_loss == pytest.approx(salsox.partition_loss(zealous.labels, draws, loss), rel=1e-12)
