"""Property-based tests (hypothesis) of salso, partition_loss and psm on small random draws.

For random draws (any integer labels), losses (with random costs) and search parameters:

* nothing crashes;
* ``est.expected_loss == partition_loss(est.labels, draws, loss)`` exactly;
* labels are canonical (0..k-1 in order of first appearance) and ``n_clusters`` agrees;
* ``n_clusters <= max_clusters``;
* losses are >= 0, and exactly 0 when (and only when) the estimate equals every draw;
* results are identical for every ``n_jobs``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import salsox
from reference import psm_naive

# The profile conftest.py loads (derandomised unless SALSOX_HYPOTHESIS_PROFILE says otherwise).
PROFILE = settings()

COUNT_FAMILIES = ("binder", "VI", "omARI", "NVI", "ID", "NID")
PSM_FAMILIES = ("VI.lb", "omARI.approx")

# Hypothesis favours simple floats; arbitrary ratios exercise rounding too.
costs = st.floats(min_value=0.05, max_value=20.0, allow_nan=False, allow_infinity=False) | st.integers(50, 20000).map(
    lambda i: i / 997
)


@st.composite
def losses(draw, families=COUNT_FAMILIES + PSM_FAMILIES):
    """A loss: a name, or an instance (with random costs for binder and VI)."""
    family = draw(st.sampled_from(families))
    if family == "binder":
        return draw(st.sampled_from(["binder", salsox.Binder()]) | st.builds(salsox.Binder, costs, costs))
    if family == "VI":
        return draw(st.sampled_from(["VI", salsox.VI()]) | st.builds(salsox.VI, costs, costs))
    return family


@st.composite
def label_matrices(draw, max_h=8, max_n=9, min_n=1):
    """An H x n matrix of labels: few clusters, arbitrary offsets and values, any int dtype."""
    H = draw(st.integers(1, max_h))
    n = draw(st.integers(min_n, max_n))
    k = draw(st.integers(1, n))
    style = draw(st.sampled_from(["noisy", "random", "identical"]))
    base = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), dtype=np.int64)
    if style == "identical":
        # Every draw the same partition, each under its own labelling.
        rows = []
        for _ in range(H):
            perm = np.array(draw(st.permutations(range(k))), dtype=np.int64)
            rows.append(perm[base])
        mat = np.array(rows)
    elif style == "noisy":
        mat = np.tile(base, (H, 1))
        flips = draw(
            st.lists(st.tuples(st.integers(0, H - 1), st.integers(0, n - 1), st.integers(0, k)), max_size=2 * n)
        )
        for h, i, c in flips:
            mat[h, i] = c
    else:
        flat = draw(st.lists(st.integers(0, k), min_size=H * n, max_size=H * n))
        mat = np.array(flat, dtype=np.int64).reshape(H, n)
    # Labels need not start at 0, be small or be contiguous.
    offset = draw(st.sampled_from([0, 1, -5, 1000, 2**40, -(2**31)]))
    scale = draw(st.sampled_from([1, 3, 7919]))
    mat = mat * scale + offset
    dtype = draw(st.sampled_from([np.int64, np.int32] if abs(offset) < 2**30 else [np.int64]))
    return mat.astype(dtype)


def canonical(labels: np.ndarray) -> np.ndarray:
    """Labels relabelled 0..k-1 in order of first appearance (for comparing partitions)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first))
    return rank[inverse.reshape(-1)]


def is_canonical(labels: np.ndarray) -> bool:
    return labels.ndim == 1 and np.array_equal(labels, canonical(labels))


def all_draws_equal(estimate: np.ndarray, draws: np.ndarray) -> bool:
    c = canonical(estimate)
    return all(np.array_equal(c, canonical(row)) for row in draws)


def read_only(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


search_params = st.fixed_dictionaries(
    {},
    optional={
        "max_clusters": st.integers(1, 12),
        "n_runs": st.integers(1, 5),
        "max_zealous": st.integers(0, 4),
        "prob_sequential": st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0, 1),
        "max_scans": st.integers(1, 3),
    },
)


@PROFILE
@given(draws=label_matrices(), loss=losses(), params=search_params, seed=st.integers(0, 2**64 - 1))
def test_salso_properties(draws, loss, params, seed):
    draws = read_only(draws)
    before = draws.copy()
    n = draws.shape[1]
    est = salsox.salso(draws, loss, seed=seed, n_jobs=1, **params)

    # The input is untouched.
    np.testing.assert_array_equal(draws, before)
    # Labels: canonical, n entries, and n_clusters agrees with them.
    labels = np.asarray(est.labels)
    assert labels.shape == (n,)
    assert np.issubdtype(labels.dtype, np.integer)
    assert is_canonical(labels)
    assert est.n_clusters == int(labels.max()) + 1
    assert est.sizes.sum() == n and np.all(est.sizes > 0)
    # The cap is never exceeded (default: the most clusters in any draw).
    cap = params.get("max_clusters")
    if cap is None:
        cap = max(len(np.unique(row)) for row in draws)
    assert est.n_clusters <= min(cap, n)
    assert est.info["max_clusters"] <= n
    assert est.n_clusters <= est.info["max_clusters"]
    # The reported loss is exactly the loss of the reported labels.
    assert est.expected_loss == salsox.partition_loss(est.labels, draws, loss)
    assert np.isfinite(est.expected_loss)
    assert est.expected_loss >= 0.0
    # Zero exactly when the estimate equals every draw.
    assert (est.expected_loss == 0.0) == all_draws_equal(labels, draws)
    # Every completed run's loss is finite and none beats the reported best.
    run_losses = [r["loss"] for r in est.info["runs"]]
    assert len(run_losses) == est.info["runs_done"] >= 1
    assert all(np.isfinite(run_losses))


@PROFILE
@given(draws=label_matrices(), loss=losses(), params=search_params, seed=st.integers(0, 2**32))
def test_salso_identical_for_any_n_jobs(draws, loss, params, seed):
    params.setdefault("n_runs", 4)
    results = [salsox.salso(draws, loss, seed=seed, n_jobs=j, **params) for j in (1, 2, 3)]
    first = results[0]
    for other in results[1:]:
        np.testing.assert_array_equal(other.labels, first.labels)
        assert other.expected_loss == first.expected_loss
        assert [r["loss"] for r in other.info["runs"]] == [r["loss"] for r in first.info["runs"]]
        assert other.info["best_run"] == first.info["best_run"]


@PROFILE
@given(draws=label_matrices(max_n=8), loss=losses(COUNT_FAMILIES), seed=st.integers(0, 2**32))
def test_salso_on_identical_draws_finds_them_at_zero_loss(draws, loss, seed):
    """When every draw is the same partition, that partition is the unique zero-loss estimate."""
    draws = np.tile(draws[0], (draws.shape[0], 1))
    est = salsox.salso(draws, loss, seed=seed, n_jobs=1, n_runs=2)
    assert est.expected_loss == 0.0
    np.testing.assert_array_equal(est.labels, canonical(draws[0]))


@PROFILE
@given(draws=label_matrices(), data=st.data())
def test_partition_loss_properties(draws, data):
    draws = read_only(draws)
    H, n = draws.shape
    loss = data.draw(losses())
    m = data.draw(st.integers(1, 6))
    estimates = np.array(
        data.draw(st.lists(st.lists(st.integers(-3, 3), min_size=n, max_size=n), min_size=m, max_size=m))
    )
    estimates = np.vstack([estimates, draws[:1]])  # include a draw itself
    estimates = read_only(estimates)
    before = estimates.copy()
    values = salsox.partition_loss(estimates, draws, loss, n_jobs=1)
    np.testing.assert_array_equal(estimates, before)
    assert isinstance(values, np.ndarray) and values.shape == (m + 1,) and values.dtype == np.float64
    assert np.all(np.isfinite(values))
    assert np.all(values >= 0.0)
    for est, v in zip(estimates, values):
        assert (v == 0.0) == all_draws_equal(est, draws)
        # One estimate at a time gives the same value; so do other thread counts and relabellings.
        assert salsox.partition_loss(est, draws, loss, n_jobs=1) == v
        assert salsox.partition_loss(canonical(est) * 5 - 7, draws, loss, n_jobs=1) == v
    np.testing.assert_array_equal(salsox.partition_loss(estimates, draws, loss, n_jobs=2), values)
    # A Draws object is the same as the matrix it was built from.
    np.testing.assert_array_equal(salsox.partition_loss(estimates, salsox.Draws(draws), loss), values)


@PROFILE
@given(
    x=st.lists(st.integers(0, 5), min_size=1, max_size=10),
    loss=losses(),
    relabel=st.sampled_from([1, -1, 13]),
    offset=st.integers(-(2**40), 2**40),
    data=st.data(),
)
def test_loss_between_partitions_is_zero_exactly_when_equal(x, loss, relabel, offset, data):
    x = np.array(x)
    same = canonical(x) * relabel + offset  # the same partition under other labels
    assert salsox.partition_loss(x, same, loss) == 0.0
    assert salsox.partition_loss(x, np.tile(same, (3, 1)), loss) == 0.0
    y = np.array(data.draw(st.lists(st.integers(0, 5), min_size=len(x), max_size=len(x))))
    value = salsox.partition_loss(y, x, loss)
    assert value >= 0.0
    assert (value == 0.0) == np.array_equal(canonical(x), canonical(y))


@PROFILE
@given(draws=label_matrices())
def test_psm_properties(draws):
    draws = read_only(draws)
    p = salsox.psm(draws, n_jobs=1)
    n = draws.shape[1]
    assert p.shape == (n, n) and p.dtype == np.float64
    np.testing.assert_array_equal(p, p.T)
    np.testing.assert_array_equal(np.diag(p), np.ones(n))
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p, psm_naive(draws), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(salsox.psm(draws, n_jobs=2), p)


@PROFILE
@given(draws=label_matrices(max_h=3))
def test_draws_round_trip(draws):
    d = salsox.Draws(read_only(draws))
    assert (d.n_draws, d.n_items) == draws.shape
    assert d.max_clusters == max(len(np.unique(row)) for row in draws)
    for h in range(d.n_draws):
        # The same partition, labelled 0..k-1 (in an order of the engine's choosing).
        row = d.draw(h)
        assert sorted(set(row.tolist())) == list(range(len(np.unique(draws[h]))))
        np.testing.assert_array_equal(canonical(row), canonical(draws[h]))
    np.testing.assert_array_equal(d.clusters_per_draw, [len(np.unique(row)) for row in draws])


@PROFILE
@given(
    x=st.lists(st.integers(-(2**62), 2**62), min_size=1, max_size=12),
    data=st.data(),
)
def test_ri_ari_properties(x, data):
    y = data.draw(st.lists(st.integers(0, 4), min_size=len(x), max_size=len(x)))
    ri, ari = salsox.RI(x, y), salsox.ARI(x, y)
    assert 0.0 <= ri <= 1.0 + 1e-15
    assert ari <= 1.0 + 1e-15
    assert salsox.RI(y, x) == pytest.approx(ri, abs=1e-14)
    assert salsox.ARI(y, x) == pytest.approx(ari, abs=1e-14)
    same = np.array_equal(canonical(np.array(x)), canonical(np.array(y)))
    if same:
        assert ri == 1.0 and ari == 1.0
