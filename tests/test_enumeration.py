"""Tests of salsox.enumeration: Bell numbers, set partitions, exact minimisation."""

from __future__ import annotations

import numpy as np
import pytest

import salsox
from reference import contingency, expected_loss, loss_ct, table_stats
from salsox.metrics import evaluation
from salsox.enumeration import (
    EnumerationResult,
    bell,
    minimize_by_enumeration,
    set_partitions,
)

# OEIS A000110
BELL = [1, 1, 2, 5, 15, 52, 203, 877, 4140, 21147, 115975, 678570, 4213597, 27644437,
        190899322, 1382958545, 10480142147, 82864869804, 682076806159, 5832742205057]


def test_bell_known_sequence():
    assert [bell(n) for n in range(len(BELL))] == BELL
    assert bell(np.int64(5)) == 52
    assert isinstance(bell(30), int)
    assert bell(30) == 846749014511809332450147  # exact, beyond float precision


@pytest.mark.parametrize("bad", [-1, -10])
def test_bell_rejects_negative(bad):
    with pytest.raises(ValueError, match=r"n must be >= 0, got -"):
        bell(bad)


@pytest.mark.parametrize("bad", [2.0, 2.5, "3", None, True, np.float64(3)])
def test_bell_rejects_non_integer(bad):
    with pytest.raises(TypeError, match=r"n must be an integer, got "):
        bell(bad)


def _is_restricted_growth(row: np.ndarray) -> bool:
    seen_max = -1
    for v in row.tolist():
        if v < 0 or v > seen_max + 1:
            return False
        seen_max = max(seen_max, v)
    return True


@pytest.mark.parametrize("n", range(0, 9))
def test_set_partitions_rows_distinct_and_canonical(n):
    parts = set_partitions(n)
    assert parts.shape == (bell(n), n)
    assert np.issubdtype(parts.dtype, np.integer)
    assert len({row.tobytes() for row in parts}) == bell(n)
    assert all(_is_restricted_growth(row) for row in parts)
    if n:
        assert np.all(parts[0] == 0)
        assert np.array_equal(parts[-1], np.arange(n))
        # lexicographic order
        as_tuples = [tuple(r) for r in parts.tolist()]
        assert as_tuples == sorted(as_tuples)


def test_set_partitions_distinct_as_partitions():
    # canonical + distinct strings => distinct partitions; check via pair matrices too
    parts = set_partitions(6)
    adj = {(p[:, None] == p[None, :]).tobytes() for p in parts}
    assert len(adj) == bell(6)


def test_set_partitions_cluster_counts_are_stirling():
    # number of partitions of 7 items into k clusters: Stirling numbers of the 2nd kind
    parts = set_partitions(7)
    counts = np.bincount(parts.max(axis=1).astype(int) + 1, minlength=8)
    assert counts.tolist() == [0, 1, 63, 301, 350, 140, 21, 1]


def test_set_partitions_12():
    parts = set_partitions(12)
    assert parts.shape == (4213597, 12)
    assert parts.dtype.itemsize == 1  # int8: 51 MB
    assert np.all(parts[:, 0] == 0)
    # restricted growth, vectorised: c[i] <= max(c[:i]) + 1
    running_max = np.maximum.accumulate(parts, axis=1)
    assert np.all(parts[:, 1:] <= running_max[:, :-1] + 1)
    # distinct: lexicographically strictly increasing rows
    diff = parts[1:].astype(np.int16) - parts[:-1]
    first_nonzero = np.argmax(diff != 0, axis=1)
    assert np.all(diff[np.arange(diff.shape[0]), first_nonzero] > 0)


@pytest.mark.parametrize("bad", [13, 20])
def test_set_partitions_rejects_large_n(bad):
    with pytest.raises(ValueError, match=r"n must be <= 12 for set_partitions, got \d+"):
        set_partitions(bad)


def test_set_partitions_rejects_bad_n():
    with pytest.raises(ValueError):
        set_partitions(-1)
    with pytest.raises(TypeError):
        set_partitions(3.0)


# ---------------------------------------------------------------------------
# minimize_by_enumeration, chunking logic with a reference-based partition_loss
# (runs without the compiled core)
# ---------------------------------------------------------------------------


def _reference_partition_loss(estimate, truth, loss="VI"):
    """Stand-in for salsox.partition_loss built on tests/reference.py."""
    family = {"binder": "binder", "VI": "VI", "omARI": "omARI", "NVI": "NVI", "ID": "ID",
              "NID": "NID"}[loss]
    est = np.asarray(estimate)
    draws = np.atleast_2d(np.asarray(truth))

    def one(e):
        return float(np.mean([loss_ct(d, e, family) for d in draws]))

    if est.ndim == 1:
        return one(est)
    return np.array([one(e) for e in est])


def _brute_force(draws, family):
    parts = set_partitions(draws.shape[1])
    values = [expected_loss(p, draws, lambda d, e: loss_ct(d, e, family)) for p in parts]
    return parts, np.array(values)


@pytest.fixture
def fake_core(monkeypatch):
    monkeypatch.setattr(evaluation, "partition_loss", _reference_partition_loss)


@pytest.mark.parametrize("loss", ["binder", "VI", "omARI"])
@pytest.mark.parametrize("chunk_size", [1, 7, 50, 65536])
def test_minimize_chunking_with_reference_loss(fake_core, loss, chunk_size):
    rng = np.random.default_rng(11)
    draws = rng.integers(1, 4, size=(9, 5))
    parts, values = _brute_force(draws, loss)
    res = minimize_by_enumeration(draws, loss, chunk_size=chunk_size)
    assert isinstance(res, EnumerationResult)
    assert res.n_partitions == bell(5) == 52
    k = int(np.argmin(values))  # first minimiser
    assert np.array_equal(res.labels, parts[k])
    assert res.expected_loss == values[k]
    assert res.labels.dtype == np.int32
    assert not res.labels.flags.writeable


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 100])
def test_minimize_returns_first_minimiser_on_ties(fake_core, chunk_size):
    # By the symmetry swapping items 1 and 2, [0,0,1], [0,1,0] and [0,1,2] all
    # have expected VI 2/3 (bit-identical in the reference); the first one in
    # lexicographic order must win, also when the ties fall in different chunks.
    draws = np.array([[0, 0, 1], [0, 1, 0]])
    parts, values = _brute_force(draws, "VI")
    assert values[1] == values[2] == values[4] == values.min()
    res = minimize_by_enumeration(draws, "VI", chunk_size=chunk_size)
    assert res.labels.tolist() == [0, 0, 1]
    assert res.expected_loss == values[1]


def test_minimize_rejects_bad_arguments(fake_core):
    with pytest.raises(ValueError, match="truth"):
        minimize_by_enumeration(np.zeros((2, 13), dtype=int), "VI")
    with pytest.raises(ValueError, match="chunk_size"):
        minimize_by_enumeration(np.zeros((2, 3), dtype=int), "VI", chunk_size=0)
    with pytest.raises(TypeError, match="chunk_size"):
        minimize_by_enumeration(np.zeros((2, 3), dtype=int), "VI", chunk_size=2.5)
    with pytest.raises(ValueError):
        minimize_by_enumeration(np.zeros((2, 2, 3), dtype=int), "VI")


# ---------------------------------------------------------------------------
# minimize_by_enumeration with the compiled core (awaits salsox.partition_loss)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("loss", ["binder", "VI", "omARI", "NVI", "ID", "NID"])
def test_minimize_against_direct_loop_core(loss):
    rng = np.random.default_rng(3)
    draws = rng.integers(1, 4, size=(20, 6))
    res = minimize_by_enumeration(draws, loss, chunk_size=37)
    parts = set_partitions(6)
    direct = np.array([float(salsox.partition_loss(p, draws, loss)) for p in parts])
    assert res.n_partitions == 203
    assert res.expected_loss == pytest.approx(direct.min(), rel=1e-12, abs=1e-12)
    # the returned partition attains the minimum, also per the independent reference
    ref = [table_stats(contingency(d, res.labels)) for d in draws]
    from reference import expected_loss_from_stats

    ref_min = min(expected_loss(p, draws, lambda d, e: loss_ct(d, e, loss)) for p in parts)
    assert expected_loss_from_stats(ref, loss) == pytest.approx(ref_min, rel=1e-12, abs=1e-12)
    # chunk size does not change the answer
    res1 = minimize_by_enumeration(draws, loss, chunk_size=1)
    assert np.array_equal(res1.labels, res.labels)
    assert res1.expected_loss == res.expected_loss


def test_minimize_with_loss_objects_core():
    from salsox import losses

    rng = np.random.default_rng(4)
    draws = rng.integers(1, 3, size=(15, 5))
    for obj, fam, a, b in [(losses.Binder(a=1.5, b=0.5), "binder", 1.5, 0.5),
                           (losses.VI(a=0.5, b=1.5), "VI", 0.5, 1.5)]:
        res = minimize_by_enumeration(draws, obj)
        vals = [expected_loss(p, draws, lambda d, e, fam=fam, a=a, b=b: loss_ct(d, e, fam, a, b))
                for p in set_partitions(5)]
        assert res.expected_loss == pytest.approx(min(vals), rel=1e-12, abs=1e-12)


def test_minimize_vi_lb_with_psm_core():
    rng = np.random.default_rng(6)
    draws = rng.integers(1, 3, size=(15, 5))
    res_draws = minimize_by_enumeration(draws, "VI.lb")
    res_psm = minimize_by_enumeration(salsox.PSM(salsox.psm(draws)), "VI.lb")
    assert np.array_equal(res_draws.labels, res_psm.labels)
    assert res_draws.expected_loss == pytest.approx(res_psm.expected_loss, rel=1e-12)
