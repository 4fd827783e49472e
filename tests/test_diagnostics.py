"""salsox.diagnose (issue 41): convergence diagnostics of partition-valued chains.

What must hold: chains of independent draws from one posterior pass (R-hat of every mapped
trace below 1.01 on average over 20 seeds); a chain sampling another mode is flagged by every
mapping and by the between-chain distances; an independent numpy implementation of the
reference-draw mapping, fed to arviz.rhat, agrees exactly. Plus the input layouts, the loss
traces behind the MCSE, seeds and threads, and every argument error.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import salsox
from salsox.datasets import example_draws

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    az = pytest.importorskip("arviz")

FAST = dict(n_runs=2, n_references=2, n_jobs=2)


def _draw_set() -> np.ndarray:
    """500 posterior draws of 100 items (the bundled example: a DP mixture's Gibbs sampler)."""
    return np.asarray(example_draws().draws)


def _iid_chains(seed: int, draws: np.ndarray, c: int = 4) -> np.ndarray:
    """One draw set shuffled and split in ``c``: chains of independent draws of one posterior."""
    rng = np.random.default_rng(seed)
    return draws[rng.permutation(len(draws))].reshape(c, -1, draws.shape[1])


def _numpy_vi(a: np.ndarray, b: np.ndarray) -> float:
    """VI (bits) between two partitions from their contingency table, in numpy."""
    n = a.size
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    table = np.zeros((ia.max() + 1, ib.max() + 1))
    np.add.at(table, (ia, ib), 1)
    p = table / n
    pa, pb = p.sum(axis=1), p.sum(axis=0)
    nz = p > 0
    h_ab = -np.sum(p[nz] * np.log2(p[nz]))
    h_a = -np.sum(pa * np.log2(pa))
    h_b = -np.sum(pb * np.log2(pb))
    return 2 * h_ab - h_a - h_b


def test_independent_chains_of_one_posterior_pass():
    draws = _draw_set()
    rhats = []
    for seed in range(20):
        diag = salsox.diagnose(_iid_chains(seed, draws), seed=seed, **FAST)
        assert diag.trace_names[0] == "n_clusters" and len(diag.trace_names) == 1 + 4 * 2
        rhats.append(diag.rhat)
    mean = np.mean(rhats, axis=0)
    assert np.all(mean < 1.01), mean


def _other_mode(rng: np.random.Generator, h: int, n: int) -> np.ndarray:
    """h draws near one partition of 8 clusters: each moves 3 random items elsewhere."""
    base = np.arange(n) % 8
    out = np.repeat(base[None, :], h, axis=0)
    for row in out:
        moved = rng.choice(n, size=3, replace=False)
        row[moved] = rng.integers(0, 8, size=3)
    return out


def test_a_chain_in_another_mode_is_flagged_by_every_mapping():
    draws = _draw_set()
    chains = _iid_chains(0, draws)
    chains[2] = _other_mode(np.random.default_rng(1), chains.shape[1], chains.shape[2])
    diag = salsox.diagnose(chains, seed=3, **FAST)
    assert not diag.converged
    assert np.all(diag.rhat > 1.1), dict(zip(diag.trace_names, diag.rhat))
    assert set(diag.flagged_rhat) == set(diag.trace_names)
    within = np.diag(diag.posterior_distance)
    others = [0, 1, 3]
    # Chain 2's draws are far from the others' (farther than draws of one chain from each other) ...
    assert np.all(diag.posterior_distance[2, others] > 2 * within.max())
    assert np.all(diag.posterior_distance[np.ix_(others, others)] < 1.2 * within[others].max())
    # ... and so is its estimate.
    assert np.all(diag.estimate_distance[2, others] > 5 * diag.estimate_distance[np.ix_(others, others)].max())
    assert "Not converged" in diag.verdict and "R-hat above 1.01" in diag.verdict


def test_reference_mapping_agrees_with_a_numpy_implementation_exactly():
    chains = _iid_chains(5, _draw_set())[:, :60, :40]  # 4 chains x 60 draws x 40 items
    diag = salsox.diagnose(chains, seed=11, n_runs=1, n_references=3)
    # The references are the draws the result names.
    refs = chains[diag.reference_chain, diag.reference_draw]
    for ref, given in zip(refs, diag.reference_draws):
        assert salsox.ARI(ref, given) == 1.0
    mapped = np.array([[[_numpy_vi(d, ref) for d in chain] for chain in chains] for ref in refs])
    mapped = np.round(mapped, 10)  # as diagnose rounds: exact ties whatever the summation order
    np.testing.assert_array_equal(mapped, diag.traces[1:])
    expected = [az.rhat(m, method="rank") for m in mapped]
    assert [float(x) for x in expected] == diag.rhat[1:].tolist()
    assert [float(az.ess(m, method="bulk")) for m in mapped] == diag.ess_bulk[1:].tolist()
    assert [float(az.ess(m, method="tail")) for m in mapped] == diag.ess_tail[1:].tolist()
    clusters = np.array([[len(np.unique(d)) for d in chain] for chain in chains], dtype=float)
    np.testing.assert_array_equal(clusters, diag.traces[0])
    assert float(az.rhat(clusters, method="rank")) == diag.rhat[0]
