"""salsox.diagnose's calibrated verdict (issue 50): the block-relabelling null of the largest
R-hat and of the between-chain gap, against ArviZ and numpy recomputations on the relabelled
chains; the statuses; and the thresholds the verdict applies (issue 49: a planted bug in the
per-chain ESS threshold must fail a unit test)."""

from __future__ import annotations

import doctest
import warnings

import numpy as np
import pytest

import salsox
from salsox.datasets import example_draws
from salsox.diagnostics import calibration

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    az = pytest.importorskip("arviz")

pytestmark = pytest.mark.filterwarnings("ignore::salsox.SalsoxWarning")


def _iid_chains(seed: int, c: int = 4) -> np.ndarray:
    draws = np.asarray(example_draws().draws)
    rng = np.random.default_rng(seed)
    return draws[rng.permutation(len(draws))].reshape(c, -1, draws.shape[1])


def test_the_module_examples_run():
    failures, tried = doctest.testmod(calibration, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried >= 5 and failures == 0


def test_blocks_tile_the_halves_arviz_compares():
    for n_draws in (4, 9, 40, 125, 4001):
        for tau in (0.5, 1.0, 3.0, 50.0, float("nan")):
            blocks = calibration.block_count(n_draws, tau)
            assert blocks % 2 == 0 and calibration.MIN_BLOCKS <= blocks <= calibration.MAX_BLOCKS
            edges = calibration.split_blocks(n_draws, blocks)
            half = n_draws // 2
            covered = np.concatenate([np.arange(a, b) for a, b in edges])
            assert all(b > a for a, b in edges)
            np.testing.assert_array_equal(covered, np.r_[np.arange(half), np.arange(n_draws - half, n_draws)])
    # About ten autocorrelation times a block.
    assert calibration.block_count(4000, 20.0) == 20 and calibration.block_count(1000, 1.0) == 64


@pytest.mark.parametrize("n_draws, blocks", [(40, 4), (40, 8), (60, 12)])
def test_relabelled_rhat_is_arviz_on_the_relabelled_chains(n_draws, blocks):
    rng = np.random.default_rng(n_draws + blocks)
    traces = rng.normal(size=(3, 4, n_draws)).round(1)  # rounded: ties, as distances have
    traces[1] = np.floor(traces[1] * 2)
    traces[2, 1] += 0.8  # one chain apart on one trace
    bulk, folded = calibration.rank_z(traces)
    orders = np.vstack([np.arange(4 * blocks), rng.permutation(4 * blocks), rng.permutation(4 * blocks)])
    got = calibration.split_rhat_blocks(bulk, folded, blocks, orders)
    size = n_draws // blocks  # equal blocks: the pseudo-chains' halves fall on block edges
    for p, order in enumerate(orders):
        for t in range(3):
            pieces = traces[t].reshape(4 * blocks, size)  # block b: chain b // blocks
            pseudo = pieces[order].reshape(4, n_draws)
            assert got[p, t] == pytest.approx(float(az.rhat(pseudo, method="rank")), abs=1e-9)


def test_observed_rhat_is_arviz_for_odd_lengths_and_constant_traces_are_left_out():
    rng = np.random.default_rng(3)
    traces = rng.normal(size=(3, 4, 41))
    traces[0] = 2.0  # constant: no information
    observed, null = calibration.rhat_null_max(traces, 6, 50, rng)
    assert np.isnan(observed[0])
    np.testing.assert_allclose(observed[1:], [az.rhat(t, method="rank") for t in traces[1:]], atol=1e-9)
    assert null.shape == (50,) and np.all(np.isfinite(null))
    _, none = calibration.rhat_null_max(np.ones((2, 4, 10)), 4, 5, rng)
    assert np.isnan(none).all()


def test_gap_null_is_the_largest_gap_of_each_relabelling():
    rng = np.random.default_rng(5)
    c, h, blocks = 3, 12, 4
    x = rng.normal(size=c * h) + np.repeat([0.0, 0.0, 0.7], h)
    dist = np.abs(x[:, None] - x[None, :])
    chain = np.repeat(np.arange(c), h)
    block = np.repeat(np.arange(c * blocks), h // blocks)

    def gaps(labels: np.ndarray) -> np.ndarray:
        pair = np.empty((c, c))
        for i in range(c):
            for j in range(c):
                a, b = np.flatnonzero(labels == i), np.flatnonzero(labels == j)
                d = dist[np.ix_(a, b)]
                pair[i, j] = d.sum() / (a.size * (a.size - 1)) if i == j else d.mean()
        return pair - (np.diag(pair)[:, None] + np.diag(pair)[None, :]) / 2

    pair, gap, p_value, null = calibration.gap_test(dist, chain, block, c, 30, np.random.default_rng(9))
    expected = gaps(chain)
    np.testing.assert_allclose(gap, expected - np.diag(np.diag(expected)), atol=1e-12)
    # The same relabellings, recomputed draw by draw: orders list chain 0's blocks, then chain 1's ...
    orders = calibration._random_orders(np.random.default_rng(9), c * blocks, 30)
    upper = np.triu_indices(c, 1)
    for k, order in enumerate(orders):
        owner = np.empty(c * blocks, dtype=int)
        owner[order] = np.repeat(np.arange(c), blocks)
        assert null[k] == pytest.approx(gaps(owner[block])[upper].max(), abs=1e-12)
    assert p_value == (1 + np.sum(null >= gap[upper].max() - 1e-12)) / 31


def test_independent_chains_are_not_called_unconverged():
    # Chains of independent draws of one posterior: "converged" or "too few draws" (125 draws a
    # chain is less than twice the 100 a chain the ESS threshold asks), never "not converged".
    for seed in range(3):
        diag = salsox.diagnose(_iid_chains(seed), seed=seed, n_runs=2, n_references=3, n_jobs=2)
        assert diag.status in ("converged", "too few draws"), diag.verdict
        assert diag.rhat_limit >= 1.01 and not diag.flagged_rhat and not diag.gap_flagged
        assert diag.gap_exact and abs(diag.gap).max() < 0.02


def test_a_chain_with_items_glued_together_is_flagged_by_the_gap():
    chains = _iid_chains(1)
    items = np.array([3, 17, 40, 62, 91])
    chains[2][:, items] = chains[2].max() + 1  # five items in a cluster of their own, in chain 2 only
    diag = salsox.diagnose(chains, seed=1, n_runs=2, n_references=3, n_jobs=2)
    assert diag.status == "not converged" and diag.gap_flagged and diag.gap_pvalue <= 0.01
    assert 2 in diag.gap_pair and diag.gap[diag.gap_pair] > 0.05
    i, j = diag.gap_pair
    assert f"  gap between chains {i} and {j}: their draws are {diag.gap[i, j]:.4g} farther apart (VI)" in diag.verdict


def test_the_rhat_limit_is_the_threshold_or_the_null_quantile():
    chains = _iid_chains(2)
    low = salsox.diagnose(chains, seed=4, n_runs=1, n_references=2, n_jobs=2)
    high = salsox.diagnose(chains, seed=4, n_runs=1, n_references=2, n_jobs=2, rhat_threshold=1.5)
    assert high.rhat_limit == 1.5 and 1.01 <= low.rhat_limit < 1.5
    assert high.rhat_pvalue == low.rhat_pvalue  # the null does not depend on the threshold
    # A smaller alpha asks more of the maximum: a higher quantile of the same null.
    strict = salsox.diagnose(chains, seed=4, n_runs=1, n_references=2, n_jobs=2, alpha=0.001)
    assert strict.rhat_limit >= low.rhat_limit
    assert low.flagged_rhat == [t for t, r in zip(low.trace_names, low.rhat) if r > low.rhat_limit]


def test_the_ess_threshold_is_per_chain():
    chains = _iid_chains(3)
    base = salsox.diagnose(chains, seed=2, n_runs=1, n_references=2, n_jobs=2)
    low = np.fmin(base.ess_bulk, base.ess_tail)
    k = int(np.nanargmin(low))
    c = base.n_chains
    # Just above the trace's ESS per chain (x C chains): flagged; just below: not.
    above = salsox.diagnose(chains, seed=2, n_runs=1, n_references=2, n_jobs=2, ess_threshold=low[k] / c * 1.001)
    below = salsox.diagnose(chains, seed=2, n_runs=1, n_references=2, n_jobs=2, ess_threshold=low[k] / c * 0.999)
    np.testing.assert_array_equal(above.ess_bulk, base.ess_bulk)
    assert base.trace_names[k] in above.flagged_ess and below.flagged_ess == []
    expected = [t for t, b, e in zip(base.trace_names, base.ess_bulk, base.ess_tail) if min(b, e) < 100 * c]
    assert base.flagged_ess == expected
    # ESS is (ArviZ's) over all chains: recomputed independently.
    assert base.ess_bulk[k] == float(az.ess(base.traces[k], method="bulk"))


def test_too_few_draws_is_fewer_than_twice_the_ess_threshold_a_chain():
    chains = _iid_chains(0)  # 125 draws a chain
    few = salsox.diagnose(chains, seed=0, n_runs=1, n_references=2, n_jobs=2, ess_threshold=62.6)
    enough = salsox.diagnose(chains, seed=0, n_runs=1, n_references=2, n_jobs=2, ess_threshold=62.5)
    assert few.too_few_draws and not enough.too_few_draws
    # A low ESS alone: "too few draws" below the bar, "not converged" at it.
    strict = dict(seed=0, n_runs=1, n_references=2, n_jobs=2)
    short = salsox.diagnose(chains[:, :30], ess_threshold=100, **strict)
    assert short.flagged_ess and not short.flagged_rhat and not short.gap_flagged
    assert short.status == "too few draws" and short.verdict.startswith("Too few draws to judge: 4 chains x 30 draws")
    long = salsox.diagnose(chains[:, :30], ess_threshold=14, **strict)  # 30 >= 2 x 14
    assert long.flagged_ess == [t for t, b, e in zip(long.trace_names, long.ess_bulk, long.ess_tail)
                                if min(b, e) < 56]
    assert long.status == ("not converged" if long.flagged_ess else "converged")


def test_reference_ess_is_the_median_and_interval_over_references():
    diag = salsox.diagnose(_iid_chains(4), seed=3, n_runs=1, n_references=10, n_jobs=2)
    ess = diag.ess_bulk[1:]
    mid, low, high = diag.reference_ess
    assert mid == np.median(ess) and low == np.quantile(ess, 0.025) and high == np.quantile(ess, 0.975)
    assert f"Bulk ESS over the 40 reference traces: median {mid:.0f}" in diag.verdict
    d = diag.to_dict()
    assert d["reference_ess"] == [mid, low, high] and d["gap_pvalue"] == diag.gap_pvalue
    assert d["status"] == diag.status and d["rhat_limit"] == diag.rhat_limit
