"""Checks that catch search-engine bugs the result-level tests let through.

Each check states a property of every SALSO result, verified against the independent numpy
references in tests/reference.py rather than against the engine itself:

* every estimate is a local minimum: no single-item move (to another cluster, or to a new
  singleton within the cluster cap) lowers the expected loss;
* ties keep an item where it is (so an estimate with tied moves is left alone);
* a round of zealous updates tries min(max_zealous, clusters) clusters;
* the best run is the lowest-indexed run among those with the smallest loss;
* the PSM losses' estimates are local minima too (1 - PEAR, VI.lb, Binder from the PSM).

tools/mutation_check.py plants engine bugs and runs these tests to show that they notice.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import salsox
from salsox import losses
from reference import expected_losses_batch, loss_ct

# (id, loss argument, reference family, a, b)
LOSSES = [
    ("binder", lambda: "binder", "binder", 1.0, 1.0),
    ("VI", lambda: "VI", "VI", 1.0, 1.0),
    ("omARI", lambda: "omARI", "omARI", 1.0, 1.0),
    ("NVI", lambda: "NVI", "NVI", 1.0, 1.0),
    ("ID", lambda: "ID", "ID", 1.0, 1.0),
    ("NID", lambda: "NID", "NID", 1.0, 1.0),
    ("Binder(1.5,0.5)", lambda: losses.Binder(a=1.5, b=0.5), "binder", 1.5, 0.5),
    ("VI(0.5,1.5)", lambda: losses.VI(a=0.5, b=1.5), "VI", 0.5, 1.5),
]
N_SEEDS = 200  # per zealous setting: 25 problems per loss


def random_problem(seed: int):
    """Noisy copies of a random partition: n in 8..30 items, H in 20..60 draws."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 31))
    H = int(rng.integers(20, 61))
    k0 = int(rng.integers(1, 5))
    truth = rng.integers(0, k0, n)
    noise = rng.uniform(0.05, 0.5)
    draws = np.tile(truth, (H, 1))
    flip = rng.random((H, n)) < noise
    draws[flip] = rng.integers(0, k0 + 1, int(flip.sum()))
    kmax = max(len(np.unique(row)) for row in draws)
    # A third of the problems cap the clusters below what the draws reach.
    cap = int(rng.integers(1, kmax + 1)) if seed % 3 == 0 else None
    return draws, cap


def single_moves(labels: np.ndarray, cap: int) -> np.ndarray:
    """Every partition one item move away from ``labels`` (0..q-1) with at most ``cap`` clusters."""
    q = int(labels.max()) + 1
    sizes = np.bincount(labels, minlength=q)
    out = []
    for i in range(labels.size):
        for k in range(q):
            if k != labels[i]:
                moved = labels.copy()
                moved[i] = k
                out.append(moved)
        if sizes[labels[i]] > 1 and q < cap:
            moved = labels.copy()
            moved[i] = q
            out.append(moved)
    return np.array(out, dtype=np.int64).reshape(-1, labels.size)


def test_batch_reference_agrees_with_the_per_table_reference():
    rng = np.random.default_rng(5)
    draws = rng.integers(0, 4, (7, 12))
    ests = np.vstack([rng.integers(0, k, 12) for k in (1, 2, 3, 5, 12)] + [np.arange(12)])
    for _, _, family, a, b in LOSSES:
        want = [np.mean([loss_ct(d, e, family, a, b) for d in draws]) for e in ests]
        np.testing.assert_allclose(expected_losses_batch(ests, draws, family, a, b), want, rtol=1e-12, atol=1e-14)


def test_hypothesis_runs_are_derandomised():
    # CI must run the same examples every time (conftest.py loads the "salsox" profile);
    # SALSOX_HYPOTHESIS_PROFILE=explore is for local bug hunts only.
    from hypothesis import settings

    if os.environ.get("SALSOX_HYPOTHESIS_PROFILE", "salsox") == "salsox":
        assert settings().derandomize and settings().database is None


def _pivot_problem(m: int = 3):
    """Two blocks of m items and a pivot (the last item) that joins block 0 in one draw and
    block 1 in the other: moving the pivot across is an exact tie, by symmetry, for every loss."""
    return np.array([[0] * m + [1] * m + [0], [0] * m + [1] * m + [1]])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("side", [0, 1], ids=["pivot-in-first-cluster", "pivot-in-second-cluster"])
def test_ties_keep_an_item_where_it_is(seed, side):
    # The engine's rule (search.hpp, pick): an item moves only for a strict improvement, so
    # a scan that meets only ties changes nothing and the search stops after one scan. The
    # pivot starts in either cluster: in the second, the tied alternative is the lower slot,
    # which a "lowest slot wins" rule without the stay-on-tie rule would pick.
    draws = _pivot_problem()
    start = draws[side].copy()
    moves = single_moves(start, 3)
    across = next(i for i, mv in enumerate(moves) if mv[-1] != start[-1] and (mv[:-1] == start[:-1]).all())
    kept = 0
    for name, make, family, a, b in LOSSES:
        values = expected_losses_batch(np.vstack([start, moves]), draws, family, a, b)
        assert values[1 + across] == pytest.approx(values[0], abs=1e-12), name  # the tie
        if values[1:].min() < values[0] - 1e-9:
            continue  # the start is not a local minimum for this loss (VI(0.5, 1.5))
        kept += 1
        est = salsox.salso(draws, make(), initializer=lambda d, k, rng: start, n_runs=4, max_zealous=0,
                           max_scans=3, seed=seed, n_jobs=1)
        assert est.labels.tolist() == start.tolist(), name
        assert all(r["initialization"] == "initializer" for r in est.info["runs"])
        assert all(r["scans"] == 1 for r in est.info["runs"]), (name, [r["scans"] for r in est.info["runs"]])
    assert kept >= 6


_CAP_SCRIPT = """
import numpy as np, salsox
worst = -10**9
for seed in range(40):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 25))
    draws = rng.integers(0, int(rng.integers(2, 7)), (int(rng.integers(3, 30)), n))
    for cap in (1, 2, 3):
        for loss in ("binder", "VI", "omARI", "NID"):
            est = salsox.salso(draws, loss, max_clusters=cap, n_runs=2, seed=seed, n_jobs=1)
            worst = max(worst, est.n_clusters - cap, int(est.labels.max()) + 1 - cap)
print("excess", worst)
"""


def test_cluster_cap_is_never_exceeded(tmp_path):
    # In a child process: an engine that opened one cluster too many would write past its
    # tables, and a crash there must fail this test, not end the test run.
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _CAP_SCRIPT], cwd=tmp_path, capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0, f"the capped searches crashed (status {proc.returncode}): {proc.stderr[-2000:]}"
    # (The last line: an editable install may print its rebuild first.)
    assert proc.stdout.strip().splitlines()[-1] == "excess 0", proc.stdout


def test_every_item_is_scanned():
    # A start one move from the optimum: two blocks of 3 with one item of block 1 put in
    # block 0. Only that item gains by moving, so one scan must reach it wherever the scan's
    # random order puts it (a scan that skipped an item would stop here about 1 run in 6).
    truth = np.repeat([0, 1], 3)
    draws = np.tile(truth, (5, 1))
    start = truth.copy()
    start[5] = 0
    for seed in range(60):
        name, make, _, _, _ = LOSSES[seed % len(LOSSES)]
        est = salsox.salso(draws, make(), initializer=lambda d, k, rng: start, n_runs=1, max_zealous=0,
                           seed=seed, n_jobs=1)
        assert est.labels.tolist() == truth.tolist(), (seed, name, est.labels.tolist())
        assert est.expected_loss == 0.0


@pytest.mark.parametrize("seed", range(6))
def test_best_run_is_the_lowest_run_among_equal_losses(seed):
    # Easy draws: every run finds the same partition. Runs finish in any order on several
    # threads; the best must still be the lowest run index with the smallest loss.
    rng = np.random.default_rng(seed)
    truth = np.repeat(np.arange(4), 15)
    draws = np.tile(truth, (80, 1))
    flip = rng.random(draws.shape) < 0.02
    draws[flip] = rng.integers(0, 4, int(flip.sum()))
    est = salsox.salso(draws, "VI", n_runs=24, seed=seed, n_jobs=4)
    runs = est.info["runs"]
    assert [r["run"] for r in runs] == list(range(24))
    best = min(r["loss"] for r in runs)
    assert est.info["best_run"] == min(r["run"] for r in runs if r["loss"] == best)


def test_best_run_is_the_lowest_run_even_when_a_later_run_finishes_first():
    # Runs 1..7 start at run 0's final partition, a fixed point of the scans (no zealous
    # updates), so they finish after one scan, while run 0 climbs from a random start: on two
    # threads, later runs finish before run 0 (tens of times faster; the test above leaves the
    # order to the scheduler).
    # All eight end at the same partition with the same loss (Binder's sums are exact), so the
    # best run must be run 0 whatever the order the runs finished in.
    rng = np.random.default_rng(11)
    truth = np.repeat(np.arange(6), 400)
    draws = np.tile(truth, (200, 1))
    flip = rng.random(draws.shape) < 0.1
    draws[flip] = rng.integers(0, 6, int(flip.sum()))
    start = rng.integers(0, 150, truth.size)
    first = salsox.salso(draws, "binder", initial=start, n_runs=1, max_clusters=150, max_zealous=0, seed=4,
                         n_jobs=1)
    starts = np.vstack([start] + [first.labels] * 7)
    for _ in range(3):
        est = salsox.salso(draws, "binder", initial=starts, n_runs=8, max_clusters=150, max_zealous=0, seed=4,
                           n_jobs=2)
        runs = est.info["runs"]
        assert [r["scans"] for r in runs[1:]] == [1] * 7 and runs[0]["scans"] > 1
        assert len({r["loss"] for r in runs}) == 1
        assert est.info["best_run"] == 0
        assert est.labels.tolist() == first.labels.tolist()


def _pear_losses(estimates: np.ndarray, psm: np.ndarray) -> np.ndarray:
    """1 - PEAR (Fritsch & Ickstadt) of each row of ``estimates``, vectorised over the rows;
    tests/reference.py's pear_naive is the same formula with loops."""
    n = psm.shape[0]
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    same = (estimates[:, :, None] == estimates[:, None, :]) & upper
    pairs = n * (n - 1) / 2
    s_ind = same.sum(axis=(1, 2)).astype(float)
    s_pi = psm[upper].sum()
    s_both = (same * psm).sum(axis=(1, 2))
    expected = s_ind * s_pi / pairs
    den = 0.5 * (s_ind + s_pi) - expected
    with np.errstate(divide="ignore", invalid="ignore"):
        pear = np.where(den == 0, 1.0, (s_both - expected) / np.where(den == 0, 1.0, den))
    return 1.0 - pear


def _vi_lb_losses(estimates: np.ndarray, psm: np.ndarray) -> np.ndarray:
    """Wade & Ghahramani's lower bound of VI, vectorised over the rows of ``estimates``."""
    n = psm.shape[0]
    same = estimates[:, :, None] == estimates[:, None, :]
    sizes = same.sum(axis=2)
    inside = (same * psm).sum(axis=2)
    return (np.log2(sizes) + np.log2(psm.sum(axis=1)) - 2 * np.log2(inside)).sum(axis=1) / n


def _binder_psm_losses(estimates: np.ndarray, psm: np.ndarray) -> np.ndarray:
    n = psm.shape[0]
    same = estimates[:, :, None] == estimates[:, None, :]
    return np.abs(same - psm).sum(axis=(1, 2)) / n**2


@pytest.mark.parametrize(
    "loss, reference",
    [("omARI.approx", _pear_losses), ("VI.lb", _vi_lb_losses), ("binder", _binder_psm_losses)],
    ids=["omARI.approx", "VI.lb", "binder"],
)
def test_every_psm_estimate_is_a_local_minimum(loss, reference):
    # The PSM route (pairwise_state.hpp) scores moves with its own formulas, the new cluster's
    # included: each estimate is checked against a numpy evaluation of every single move.
    checked = 0
    for seed in range(40):
        draws, cap = random_problem(seed)
        psm = salsox.psm(draws, n_jobs=1)
        est = salsox.salso(salsox.PSM(psm), loss, max_clusters=cap, n_runs=1, seed=seed, n_jobs=1)
        labels = np.asarray(est.labels, dtype=np.int64)
        kd = est.info["max_clusters"]
        where = f"seed {seed}, {loss}, max_clusters={cap}, estimate {labels.tolist()}"
        assert est.n_clusters <= kd, where
        moves = single_moves(labels, kd)
        values = reference(np.vstack([labels, moves]), psm)
        assert est.expected_loss == pytest.approx(values[0], rel=1e-9, abs=1e-12), where
        if moves.size:
            best = int(np.argmin(values[1:]))
            tol = 1e-10 + 1e-9 * abs(values[0])
            assert values[1 + best] >= values[0] - tol, (
                f"{where}: moving to {moves[best].tolist()} lowers the loss from {values[0]!r} to {values[1 + best]!r}"
            )
            checked += 1
    assert checked > 30


@pytest.mark.parametrize("max_zealous", [1, 2, 3])
def test_a_zealous_round_tries_max_zealous_clusters(max_zealous):
    # Draws around six clusters of four items: the estimate has more clusters of two or more
    # items than max_zealous, so a round that accepts no update tries exactly max_zealous of
    # them (the cap binds here, unlike in the small random problems below).
    rng = np.random.default_rng(max_zealous)
    truth = np.repeat(np.arange(6), 4)
    draws = np.tile(truth, (50, 1))
    flip = rng.random(draws.shape) < 0.05
    draws[flip] = rng.integers(0, 6, int(flip.sum()))
    checked = 0
    for seed in range(12):
        est = salsox.salso(draws, "VI", n_runs=1, max_zealous=max_zealous, seed=seed, n_jobs=1)
        if est.info["zealous_accepts"] == 0:
            assert np.count_nonzero(est.sizes >= 2) > max_zealous
            assert est.info["zealous_attempts"] == max_zealous, (seed, est.info["zealous_attempts"])
            checked += 1
    assert checked >= 3


# Last: the longest check (a few seconds); the quick ones above fail first under a mutant.
@pytest.mark.parametrize("max_zealous", [0, 10], ids=["no-zealous", "zealous"])
def test_every_estimate_is_a_local_minimum(max_zealous):
    checked = 0
    for seed in range(N_SEEDS):
        name, make, family, a, b = LOSSES[seed % len(LOSSES)]
        draws, cap = random_problem(seed)
        est = salsox.salso(draws, make(), max_clusters=cap, n_runs=1, max_zealous=max_zealous, seed=seed, n_jobs=1)
        labels = np.asarray(est.labels, dtype=np.int64)
        kd = est.info["max_clusters"]
        where = f"seed {seed}, {name}, max_clusters={cap}, estimate {labels.tolist()}"
        assert est.n_clusters <= kd, where
        moves = single_moves(labels, kd)
        values = expected_losses_batch(np.vstack([labels, moves]), draws, family, a, b)
        assert est.expected_loss == pytest.approx(values[0], rel=1e-9, abs=1e-12), where
        if moves.size:
            best = int(np.argmin(values[1:]))
            tol = 1e-10 + 1e-9 * abs(values[0])
            assert values[1 + best] >= values[0] - tol, (
                f"{where}: moving to {moves[best].tolist()} lowers the expected loss "
                f"from {values[0]!r} to {values[1 + best]!r}"
            )
            checked += 1
        if max_zealous and est.info["zealous_accepts"] == 0:
            # One round of zealous updates, over the clusters of the final partition that have two
            # or more items (sweetening already tries moving a singleton's item, as in R).
            tried = int(np.count_nonzero(est.sizes >= 2))
            assert est.info["zealous_attempts"] == min(max_zealous, tried), where
    assert checked > 0.8 * N_SEEDS
