"""Credible balls (Wade & Ghahramani 2018) against a line-by-line port of mcclust.ext::credibleball."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import salsox
from conftest import load_draws


def _r_distance(c1: np.ndarray, c2: np.ndarray, kind: str) -> float:
    """mcclust.ext's dist.vi / dist.binder, written from their per-item definitions."""
    n = c1.shape[0]
    same1 = c1[:, None] == c1[None, :]
    same2 = c2[:, None] == c2[None, :]
    if kind == "Binder":
        return float(np.abs(same1.astype(int) - same2.astype(int)).sum() / n**2)
    s1 = same1.sum(1)
    s2 = same2.sum(1)
    s12 = (same1 & same2).sum(1)
    return float(np.sum((np.log2(s1) + np.log2(s2) - 2 * np.log2(s12)) / n))


def _r_credibleball(c_star: np.ndarray, draws: np.ndarray, kind: str, alpha: float):
    """mcclust.ext::credibleball, transcribed (R's 1-based max label = number of clusters)."""
    m = draws.shape[0]
    d = np.array([_r_distance(row, c_star, kind) for row in draws])
    ix = np.argsort(d, kind="stable")
    sd = d[ix]
    ind_star = math.ceil((1 - alpha) * m)
    cb = draws[ix[:ind_star]]
    cb_dist = sd[:ind_star]
    c_horiz = cb[cb_dist == cb_dist[ind_star - 1]]
    k_cb = np.array([len(np.unique(row)) for row in cb])
    min_ind = np.flatnonzero(k_cb == k_cb.min())
    c_upper = cb[min_ind[cb_dist[min_ind] == cb_dist[min_ind[-1]]]]
    max_ind = np.flatnonzero(k_cb == k_cb.max())
    c_lower = cb[max_ind[cb_dist[max_ind] == cb_dist[max_ind[-1]]]]
    return {
        "c_horiz": c_horiz,
        "c_uppervert": c_upper,
        "c_lowervert": c_lower,
        "dist_horiz": cb_dist[ind_star - 1],
        "dist_uppervert": cb_dist[min_ind[-1]],
        "dist_lowervert": cb_dist[max_ind[-1]],
        "distances": d,
    }


def _partitions(rows: np.ndarray) -> set:
    """Rows as a set of canonical partitions (label values do not matter)."""
    out = set()
    for row in rows:
        _, canon = np.unique(row, return_inverse=True)
        first = {}
        out.add(tuple(first.setdefault(v, len(first)) for v in canon.tolist()))
    return out


@pytest.fixture(scope="module")
def galaxy():
    return load_draws("galaxy")


@pytest.fixture(scope="module")
def galaxy_vi(galaxy):
    return salsox.salso(galaxy, "VI", n_runs=4, seed=11)


@pytest.mark.parametrize("kind,loss", [("VI", "VI"), ("Binder", "binder")])
def test_galaxy_matches_mcclust_ext(galaxy, galaxy_vi, kind, loss):
    # As in mcclust.ext's example: galaxy.draw, the VI estimate, alpha = 0.05.
    assert galaxy_vi.n_clusters == 3
    sample = galaxy[::4]  # 2500 draws: the slow reference port stays quick
    ref = _r_credibleball(galaxy_vi.labels, sample, kind, 0.05)
    ball = salsox.credible_ball(galaxy_vi, sample, loss, level=0.95)
    np.testing.assert_allclose(ball.distances, ref["distances"], rtol=1e-12, atol=1e-12)
    assert ball.n_in_ball == 2375
    assert ball.radius == pytest.approx(ref["dist_horiz"], rel=1e-12)
    assert ball.horizontal.distance == pytest.approx(ref["dist_horiz"], rel=1e-12)
    assert ball.upper_vertical.distance == pytest.approx(ref["dist_uppervert"], rel=1e-12)
    assert ball.lower_vertical.distance == pytest.approx(ref["dist_lowervert"], rel=1e-12)
    assert _partitions(ball.horizontal.labels) == _partitions(ref["c_horiz"])
    assert _partitions(ball.upper_vertical.labels) == _partitions(ref["c_uppervert"])
    assert _partitions(ball.lower_vertical.labels) == _partitions(ref["c_lowervert"])


@pytest.mark.parametrize("loss", ["VI", "binder"])
def test_galaxy_ball_structure(galaxy, galaxy_vi, loss):
    ball = salsox.credible_ball(galaxy_vi.labels, galaxy, loss, 0.95)
    h = galaxy.shape[0]
    assert ball.n_in_ball == 9500 and ball.in_ball.sum() == 9500 and ball.probability == 0.95
    inside = ball.distances[ball.in_ball]
    outside = ball.distances[~ball.in_ball]
    # The ball is the draws closest to the estimate.
    assert inside.max() == ball.radius and (outside.size == 0 or outside.min() >= ball.radius)
    # Horizontal bound: at the maximal distance in the ball.
    assert ball.horizontal.distance == ball.radius == inside.max()
    k_draws = np.array([len(np.unique(r)) for r in galaxy])
    k_inside = k_draws[ball.in_ball]
    for bound in (ball.horizontal, ball.upper_vertical, ball.lower_vertical):
        # Bounds are partitions within the radius, and really at their stated distance.
        assert bound.distance <= ball.radius
        assert np.all(ball.in_ball[bound.draws])
        for labels in bound.labels:
            d = salsox.partition_loss(labels, ball.estimate, loss)
            assert d == pytest.approx(bound.distance, abs=1e-12)
        assert bound.n_clusters.tolist() == [len(np.unique(r)) for r in bound.labels]
    assert set(ball.upper_vertical.n_clusters.tolist()) == {k_inside.min()}
    assert set(ball.lower_vertical.n_clusters.tolist()) == {k_inside.max()}
    assert ball.upper_vertical.n_clusters[0] <= galaxy_vi.n_clusters <= ball.lower_vertical.n_clusters[0]
    # Vertical bounds are the farthest among draws with that many clusters in the ball.
    fewest = ball.in_ball & (k_draws == k_inside.min())
    assert ball.upper_vertical.distance == ball.distances[fewest].max()
    assert h == ball.distances.shape[0]


def test_levels_and_extremes(galaxy, galaxy_vi):
    sample = galaxy[:1000]
    small = salsox.credible_ball(galaxy_vi, sample, "VI", 0.5)
    large = salsox.credible_ball(galaxy_vi, sample, "VI", 0.99)
    assert small.n_in_ball == 500 and large.n_in_ball == 990
    assert small.radius <= large.radius
    everything = salsox.credible_ball(galaxy_vi, sample, "VI", 1.0)
    assert everything.radius == everything.distances.max() and everything.in_ball.all()
    # A tiny level keeps at least the closest draw.
    tiny = salsox.credible_ball(galaxy_vi, sample, "VI", 1e-9)
    assert tiny.n_in_ball == 1 and tiny.radius == tiny.distances.min()
    # 0.95 * H is not rounded up by floating point error: 95 of 100 draws.
    assert salsox.credible_ball(galaxy_vi, sample[:100], "VI", 0.95).n_in_ball == 95


def test_small_example_ties_and_duplicates():
    # Distances to [0,0,1,1] (N-invariant Binder): 0 for the first six draws, 0.375 for
    # [0,0,0,1] (three copies) and 0.25 for all singletons.
    draws = np.array([[0, 0, 1, 1]] * 6 + [[0, 0, 0, 1]] * 3 + [[0, 1, 2, 3]])
    ball = salsox.credible_ball([5, 5, 7, 7], draws, "binder", 0.9)
    np.testing.assert_allclose(ball.distances, [0] * 6 + [0.375] * 3 + [0.25])
    assert ball.estimate.tolist() == [0, 0, 1, 1]
    # ceil(0.9 * 10) = 9 draws: six at 0, the singletons, then two of the three tied copies
    # (mcclust.ext admits ties in draw order up to the count).
    assert ball.n_in_ball == 9 and ball.in_ball.tolist() == [True] * 8 + [False, True]
    assert ball.radius == 0.375
    assert ball.horizontal.labels.tolist() == [[0, 0, 0, 1]]  # duplicates collapse to one partition
    assert ball.horizontal.draws.tolist() == [6, 7]
    assert ball.upper_vertical.labels.tolist() == [[0, 0, 0, 1]]  # fewest clusters (2), farthest
    assert ball.upper_vertical.distance == 0.375
    assert ball.lower_vertical.labels.tolist() == [[0, 1, 2, 3]]  # most clusters (4)
    assert ball.lower_vertical.distance == 0.25 and ball.lower_vertical.n_clusters.tolist() == [4]
    ref = _r_credibleball(np.array([5, 5, 7, 7]), draws, "Binder", 0.1)
    assert _partitions(ref["c_horiz"]) == {(0, 0, 0, 1)} and ref["dist_lowervert"] == 0.25


def test_text_and_json(galaxy, galaxy_vi):
    ball = salsox.credible_ball(galaxy_vi, galaxy[:500])
    payload = json.loads(json.dumps(ball.to_dict()))
    assert payload["level"] == 0.95 and payload["n_in_ball"] == 475
    assert set(payload) >= {"horizontal", "upper_vertical", "lower_vertical", "radius"}
    text = str(ball)
    assert "95% credible ball (VI distance)" in text and "upper vertical" in text
    assert "CredibleBall(loss='VI'" in repr(ball)


def test_accepts_draws_object(galaxy, galaxy_vi):
    sample = galaxy[:300]
    a = salsox.credible_ball(galaxy_vi, salsox.Draws(sample))
    b = salsox.credible_ball(galaxy_vi, sample)
    np.testing.assert_array_equal(a.distances, b.distances)


def test_bad_arguments(galaxy, galaxy_vi):
    sample = galaxy[:50]
    with pytest.raises(ValueError, match="computed from a PSM"):
        salsox.credible_ball(galaxy_vi, sample, "VI.lb")
    with pytest.raises(ValueError, match="equal costs"):
        salsox.credible_ball(galaxy_vi, sample, salsox.VI(a=0.5, b=1.0))
    for level in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="level must be in"):
            salsox.credible_ball(galaxy_vi, sample, "VI", level)
    with pytest.raises(TypeError, match="level must be"):
        salsox.credible_ball(galaxy_vi, sample, "VI", "0.9")
    with pytest.raises(ValueError, match="estimate has 3 items but the draws have 82"):
        salsox.credible_ball([0, 1, 1], sample)
    with pytest.raises(ValueError, match="draws must be 2-D"):
        salsox.credible_ball(galaxy_vi, sample[0])
