"""salsox.diagnose (issue 41): convergence diagnostics of partition-valued chains.

What must hold: chains of independent draws from one posterior pass (R-hat of every mapped
trace below 1.01 on average over 20 seeds); a chain sampling another mode is flagged by every
mapping and by the between-chain distances; an independent numpy implementation of the
reference-draw mapping, fed to arviz.rhat, agrees exactly. Plus the input layouts, the loss
traces behind the MCSE, seeds and threads, and every argument error.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import salsox
from salsox.datasets import example_draws, sample_dp_mixture, simulate_mixture_data

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    az = pytest.importorskip("arviz")

# The searches of small test chains often end at the draws' cluster cap: R's warning, not ours to test.
pytestmark = pytest.mark.filterwarnings("ignore::salsox.SalsoxWarning")

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
    assert diag.verdict.startswith("Not converged:") and f"R-hat above {diag.rhat_limit:.4g}" in diag.verdict
    assert diag.gap_flagged and diag.gap_pvalue <= 0.01 and 2 in diag.gap_pair


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


def _small_chains(seed: int = 0) -> np.ndarray:
    """4 chains x 40 draws x 30 items of one posterior (fast)."""
    return _iid_chains(seed, _draw_set()[:160, :30])


def test_every_input_layout_gives_the_same_diagnosis():
    xr = pytest.importorskip("xarray")
    chains = _small_chains()
    c, h, n = chains.shape
    base = salsox.diagnose(chains, seed=4, **FAST)
    ids = np.repeat(["a", "b", "c", "d"], h)
    stacked = chains.reshape(c * h, n)
    order = np.arange(c * h).reshape(c, h).T.ravel()  # the chains' rows interleaved, each chain's in order
    z = xr.DataArray(chains + 1, dims=("chain", "draw", "obs"), coords={"obs": [f"i{j}" for j in range(n)]})
    idata = az.from_dict(posterior={"z": chains})
    variants = {
        "list": [chains[k] for k in range(c)],
        "list of Draws": [salsox.Draws(chains[k]) for k in range(c)],
        "chains ids": (stacked, ids),
        "interleaved ids": (stacked[order], ids[order]),
        "DataArray": z,
        "Dataset": (z.to_dataset(name="z"), "z"),
        "InferenceData": (idata, "z"),
    }
    for name, x in variants.items():
        if isinstance(x, tuple) and isinstance(x[1], np.ndarray):
            diag = salsox.diagnose(x[0], chains=x[1], seed=4, **FAST)
        else:
            diag = salsox.diagnose(x, seed=4, **FAST)
        np.testing.assert_array_equal(diag.traces, base.traces, err_msg=name)
        np.testing.assert_array_equal(diag.rhat, base.rhat, err_msg=name)
        np.testing.assert_array_equal(diag.estimate_distance, base.estimate_distance, err_msg=name)
        np.testing.assert_array_equal(diag.loss_traces, base.loss_traces, err_msg=name)
    assert salsox.diagnose(stacked, chains=ids, seed=4, **FAST).chain_ids == ["a", "b", "c", "d"]
    assert salsox.diagnose(z, seed=4, **FAST).chain_draws[0].item_names.tolist()[:2] == ["i0", "i1"]


@pytest.mark.parametrize(
    "loss", ["VI", salsox.VI(a=0.5, b=1.5), salsox.Binder(a=2, b=1), "omARI", "NID", "ID", "NVI"]
)
def test_loss_traces_average_to_the_expected_losses(loss):
    chains = _small_chains(1)
    diag = salsox.diagnose(chains, loss=loss, seed=2, **FAST)
    for i, est in enumerate(diag.chain_estimates):
        for j in range(diag.n_chains):
            # Each draw's loss, one at a time, by partition_loss (the estimate first).
            direct = [salsox.partition_loss(est.labels, chains[j][t : t + 1], loss) for t in range(0, 40, 7)]
            np.testing.assert_allclose(diag.loss_traces[i, j, ::7], direct, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(diag.loss_matrix[i, j], salsox.partition_loss(est.labels, chains[j], loss),
                                       rtol=1e-9)
        assert diag.loss_matrix[i, i] == pytest.approx(est.expected_loss, rel=1e-9)
        assert diag.expected_loss[i] == pytest.approx(salsox.partition_loss(est.labels, chains.reshape(-1, 30), loss))
        assert diag.mcse[i] == az.mcse(diag.loss_traces[i], method="mean")
        assert diag.chain_mcse[i] == az.mcse(diag.loss_traces[i, i][None, :], method="mean")
    assert diag.estimate is diag.chain_estimates[int(np.argmin(diag.expected_loss))]


class _CostlySplits(salsox.plugins.ContingencyLoss):
    """Binder(a=2, b=1) from the tables (draw clusters as rows): not symmetric."""

    name = "costly-splits-diag"

    def loss(self, tables):
        n = tables.sum(axis=(1, 2)).astype(float)
        rows = (tables.sum(axis=2) ** 2).sum(axis=1)
        cols = (tables.sum(axis=1) ** 2).sum(axis=1)
        return (2 * rows + cols - 3 * (tables**2).sum(axis=(1, 2))) / n**2


class _LopsidedVI(salsox.plugins.DecomposableLoss):
    """VI(a=0.5, b=1.5) as a decomposable plugin: not symmetric."""

    name = "lopsided-vi-diag"

    @staticmethod
    def _h(counts, n):
        p = counts / n
        return np.where(counts > 0, p * np.log2(np.where(counts > 0, p, 1.0)), 0.0)

    def draw_term(self, counts, n):
        return 0.5 * self._h(counts, n)

    def estimate_term(self, counts, n):
        return 1.5 * self._h(counts, n)

    def cell_term(self, counts, n):
        return -2.0 * self._h(counts, n)


def _jaccard():
    pairs = lambda c, n: c * (c - 1) / 2
    return salsox.losses.CountSumLoss(
        name="jaccard-diag",
        sums={"J": ("cell", pairs), "D": ("estimate", pairs), "E": ("draw", pairs)},
        formula="where(D + E - J == 0, 0, 1 - J / (D + E - J))",
    )


@pytest.mark.parametrize(
    "plugin, same_as",
    [(_CostlySplits(), salsox.Binder(a=2, b=1)), (_LopsidedVI(), salsox.VI(a=0.5, b=1.5)), (_jaccard(), None)],
)
def test_plugin_losses_are_traced_draw_by_draw(plugin, same_as):
    chains = _small_chains(2)[:, :12]
    diag = salsox.diagnose(chains, loss=plugin, seed=1, n_runs=1, n_references=1)
    for i, est in enumerate(diag.chain_estimates):
        for j in (0, 3):
            direct = [salsox.partition_loss(est.labels, d[None], plugin) for d in chains[j]]
            np.testing.assert_allclose(diag.loss_traces[i, j], direct, atol=1e-12)
            if same_as is not None:
                builtin = [salsox.partition_loss(est.labels, d[None], same_as) for d in chains[j]]
                np.testing.assert_allclose(diag.loss_traces[i, j], builtin, atol=1e-9)


def test_a_psm_loss_has_no_loss_trace():
    diag = salsox.diagnose(_small_chains(), loss="VI.lb", seed=1, **FAST)
    assert np.isnan(diag.loss_traces).all() and np.isnan(diag.mcse).all() and np.isnan(diag.chain_mcse).all()
    np.testing.assert_allclose(diag.expected_loss, [e.expected_loss for e in diag.chain_estimates])
    assert "MCSE nan" in diag.verdict


@pytest.mark.parametrize("distance", ["NVI", "ID", "NID", "binder"])
def test_other_distances_are_the_losses_between_draws_and_references(distance):
    chains = _small_chains(3)
    diag = salsox.diagnose(chains, distance=distance, seed=5, **FAST)
    refs = chains[diag.reference_chain, diag.reference_draw]
    expected = np.stack([[salsox.partition_loss(chain, ref[None], distance) for chain in chains] for ref in refs])
    np.testing.assert_allclose(diag.traces[1:], expected, atol=1e-9)
    assert diag.trace_names[1] == f"{distance} to ref 0"
    est = np.stack([e.labels for e in diag.chain_estimates])
    np.testing.assert_allclose(diag.estimate_distance, [salsox.partition_loss(est, e[None], distance) for e in est],
                               atol=1e-9)


def test_a_table_loss_distance_takes_draws_with_sparse_labels():
    # Sparse labels are relabelled in value order, not by first appearance: the draws' rows the
    # engine scores as estimates against the references are then out of order (once refused).
    chains = np.random.default_rng(1).integers(0, 3, size=(2, 200, 12))
    sparse = chains * 10**6 + 7
    got = salsox.diagnose(sparse, distance=_CostlySplits(), seed=5, **FAST)
    want = salsox.diagnose(chains, distance=_CostlySplits(), seed=5, **FAST)
    np.testing.assert_allclose(got.traces, want.traces, atol=1e-12)


def _numpy_gap(chains: np.ndarray) -> tuple:
    """P_ij (mean VI over pairs of draws, distinct ones within a chain) and G_ij, in numpy."""
    c, h, _ = chains.shape
    flat = chains.reshape(c * h, -1)
    vi = np.array([[_numpy_vi(a, b) for b in flat] for a in flat]).reshape(c, h, c, h)
    pair = np.empty((c, c))
    for i in range(c):
        for j in range(c):
            block = vi[i, :, j, :]
            pair[i, j] = block.sum() / (h * (h - 1)) if i == j else block.mean()
    gap = pair - (np.diag(pair)[:, None] + np.diag(pair)[None, :]) / 2
    np.fill_diagonal(gap, 0.0)
    return pair, gap


def test_posterior_distance_and_gap_are_the_all_pairs_means():
    chains = _small_chains(4)[:, :24]
    diag = salsox.diagnose(chains, seed=8, n_runs=2, n_references=2)
    assert diag.gap_exact and diag.gap_draws == 24
    pair, gap = _numpy_gap(chains)
    np.testing.assert_allclose(diag.posterior_distance, pair, atol=1e-9)
    np.testing.assert_allclose(diag.gap, gap, atol=1e-9)
    # Beyond gap_draws, every pair of evenly spaced draws: draws 0, 3, 6, ... of 24 for 8.
    thinned = salsox.diagnose(chains, seed=8, n_runs=2, n_references=2, gap_draws=8)
    assert not thinned.gap_exact and thinned.gap_draws == 8
    pair, gap = _numpy_gap(chains[:, ::3])
    np.testing.assert_allclose(thinned.posterior_distance, pair, atol=1e-9)
    np.testing.assert_allclose(thinned.gap, gap, atol=1e-9)


@pytest.mark.parametrize("h", [24, 25])
def test_half_estimates_are_the_halves_own(h):
    # Each half is searched on its own draws: the first h // 2, then the last h - h // 2.
    chains = _small_chains(4)[:, :h]
    diag = salsox.diagnose(chains, seed=8, n_runs=4, n_references=3)
    for k in range(diag.n_chains):
        first, second = diag.half_estimates[k]
        assert diag.half_distance[k] == pytest.approx(_numpy_vi(first, second), abs=1e-9)
        for side, half in enumerate((chains[k, : h // 2], chains[k, h // 2 :])):
            own = np.mean([_numpy_vi(diag.half_estimates[k, side], d) for d in half])
            assert diag.half_expected_loss[k, side] == pytest.approx(own, abs=1e-9)
            # A SALSO estimate of the half's draws: no chain estimate (its warm starts) does better there.
            assert all(own <= np.mean([_numpy_vi(e.labels, d) for d in half]) + 1e-12 for e in diag.chain_estimates)


def test_same_seed_same_diagnosis_for_any_thread_count():
    chains = _small_chains(5)
    one = salsox.diagnose(chains, seed=9, n_runs=3, n_references=2, n_jobs=1)
    two = salsox.diagnose(chains, seed=9, n_runs=3, n_references=2, n_jobs=2)
    np.testing.assert_array_equal(one.traces, two.traces)
    np.testing.assert_array_equal(one.rhat, two.rhat)
    np.testing.assert_array_equal(one.half_estimates, two.half_estimates)
    assert one.to_dict() == two.to_dict()
    other = salsox.diagnose(chains, seed=10, n_runs=3, n_references=2, n_jobs=1)
    assert not np.array_equal(other.reference_draw, one.reference_draw)


def test_chains_on_one_partition_cannot_be_assessed_and_never_pass():
    for base in (np.arange(30) % 3, np.zeros(30, int), np.arange(30)):
        chains = np.broadcast_to(base, (4, 10, 30)).copy()
        diag = salsox.diagnose(chains, seed=1, n_runs=1, n_references=1)
        assert np.isnan(diag.rhat).all() and np.isnan(diag.ess_bulk).all()
        assert diag.status == "cannot assess" and not diag.converged
        assert diag.verdict.startswith("Cannot assess: every draw of every chain is the same partition")
        assert diag.to_dict()["converged"] is False


def test_chains_stuck_apart_have_infinite_rhat_printed_as_inf():
    chains = np.broadcast_to(np.arange(30) % 3, (4, 10, 30)).copy()
    chains[1] = np.arange(30) % 5  # one chain elsewhere, each chain constant
    diag = salsox.diagnose(chains, seed=1, n_runs=1, n_references=1)
    assert diag.status == "not converged" and not diag.converged
    assert np.all(np.isinf(diag.rhat))
    assert set(diag.stuck_chains) == {0, 1, 2, 3}
    assert "(largest inf," in diag.verdict and "never move" in diag.verdict
    assert "e+" not in diag.verdict and "max_rhat=inf" in repr(diag)
    assert diag.to_dict()["traces"][0]["rhat"] == "inf"


def test_constant_traces_are_reported_not_counted():
    # Every draw has 3 clusters of 10 (the n_clusters trace is constant), the items shuffled.
    rng = np.random.default_rng(6)
    base = np.repeat([0, 1, 2], 10)
    chains = np.stack([[rng.permutation(base) for _ in range(20)] for _ in range(4)])
    diag = salsox.diagnose(chains, seed=1, n_runs=1, n_references=1)
    assert np.isnan(diag.rhat[0]) and np.isfinite(diag.rhat[1:]).all()
    assert "1 trace(s) constant in every chain (no information): not counted." in diag.verdict
    assert "n_clusters" not in diag.flagged_rhat + diag.flagged_ess


def test_a_chain_that_never_moves_is_not_converged():
    chains = _small_chains(6)
    chains[:3] = chains[0, 0]  # chains 0-2 on one partition, chain 3 moves
    diag = salsox.diagnose(chains, seed=1, n_runs=1, n_references=1)
    assert diag.stuck_chains == [0, 1, 2] and diag.status == "not converged"
    assert "  chain(s) 0, 1, 2 never move: every draw the same partition." in diag.verdict.splitlines()


def test_report_json_and_html():
    diag = salsox.diagnose(_small_chains(), seed=1, **FAST)
    d = diag.to_dict()
    import json

    assert json.loads(json.dumps(d)) == d
    assert d["converged"] == diag.converged and len(d["traces"]) == len(diag.trace_names)
    html = diag._repr_html_()
    assert "<table>" in html and "R-hat" in html and "VI to ref 0" in html
    assert "n_clusters" in str(diag) and repr(diag).startswith("Diagnosis(status=")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(n_references=0), ValueError, "n_references"),
        (dict(n_references=41), ValueError, "n_references"),
        (dict(n_references=1.5), TypeError, "n_references"),
        (dict(n_runs=0), ValueError, "n_runs"),
        (dict(distance="euclid"), ValueError, "distance"),
        (dict(distance=None), ValueError, "distance"),
        (dict(loss="nope"), ValueError, "nope"),
        (dict(rhat_threshold=1.0), ValueError, "rhat_threshold"),
        (dict(rhat_threshold="1.1"), TypeError, "rhat_threshold"),
        (dict(ess_threshold=0), ValueError, "ess_threshold"),
        (dict(ess_threshold=float("nan")), ValueError, "ess_threshold"),
        (dict(alpha=0), ValueError, "alpha"),
        (dict(alpha=1.0), ValueError, "alpha"),
        (dict(alpha="0.05"), TypeError, "alpha"),
        (dict(n_permutations=0), ValueError, "n_permutations"),
        (dict(gap_draws=1), ValueError, "gap_draws"),
        (dict(memory_limit=300_000), MemoryError, "gap_draws"),
        (dict(seed=-1), ValueError, "seed"),
        (dict(n_jobs=0), ValueError, "n_jobs"),
        (dict(memory_limit=0), ValueError, "memory_limit"),
        (dict(memory_limit=1000), MemoryError, "memory_limit"),
        (dict(chains=np.zeros(160)), ValueError, "chains="),
    ],
)
def test_arguments_are_checked_before_any_work(kwargs, error, match, monkeypatch):
    calls = []
    import salsox.diagnostics.api as api

    monkeypatch.setattr(api, "salso", lambda *a, **k: calls.append(1))
    with pytest.raises(error, match=match):
        salsox.diagnose(_small_chains(), **kwargs)
    assert not calls


@pytest.mark.parametrize(
    "draws, chains, match",
    [
        (np.zeros((40, 5), dtype=int), None, "chains="),
        (np.zeros((40, 5), dtype=int), np.zeros(39), "one chain id per draw"),
        (np.zeros((40, 5), dtype=int), np.repeat([0, 1], [15, 25]), "different numbers of draws"),
        (np.zeros((40, 5), dtype=int), np.zeros(40), "1 chain"),
        (np.zeros((2, 3, 5), dtype=int), None, "at least 4"),
        ([np.zeros((5, 4), dtype=int), np.zeros((6, 4), dtype=int)], None, "different numbers of draws"),
        ([np.zeros((5, 4), dtype=int), np.zeros((5, 3), dtype=int)], None, "different numbers of items"),
        (np.zeros((2, 5, 4)) + 0.5, None, "non-integral"),
        (np.zeros((2, 5, 0), dtype=int), None, "no items"),
        ("draws.csv", None, "string"),
    ],
)
def test_bad_chains_are_refused(draws, chains, match):
    with pytest.raises((ValueError, TypeError), match=match):
        salsox.diagnose(draws, chains=chains)


def test_a_missing_arviz_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "arviz", None)
    with pytest.raises(ImportError, match=r"salsox\[diagnostics\]"):
        salsox.diagnose(_small_chains())


def test_the_dp_sampler_starts_where_it_is_told():
    data, _ = simulate_mixture_data(30, 3, seed=2)
    default = sample_dp_mixture(data, n_draws=5, burn_in=2, seed=3)
    np.testing.assert_array_equal(sample_dp_mixture(data, n_draws=5, burn_in=2, seed=3, init=np.zeros(30, int)),
                                  default)
    singletons = sample_dp_mixture(data, n_draws=1, burn_in=0, seed=3, init=np.arange(30) * 7)
    assert singletons.max() + 1 > default[0].max() + 1  # one sweep from singletons keeps many clusters
    with pytest.raises(ValueError, match="init"):
        sample_dp_mixture(data, init=np.zeros(29, int))
    with pytest.raises(TypeError, match="init"):
        sample_dp_mixture(data, init=np.zeros(30))


def test_plots_draw_the_chosen_traces():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    diag = salsox.diagnose(_small_chains(), seed=1, **FAST)
    fig = salsox.plots.plot_diagnosis_traces(diag, ["VI to ref 3", 0])
    assert [ax.get_ylabel() for ax in fig.axes] == ["VI to ref 3", "n_clusters"]
    # One line per chain, the chain's mapped values.
    np.testing.assert_array_equal(fig.axes[1].lines[2].get_ydata(), diag.traces[0, 2])
    fig = salsox.plots.plot_chain_estimates(diag)
    shown = fig.axes[0].images[0].get_array()
    assert np.all(np.diag(shown) == 1)
    for bad in (["nope"], [99], [True], []):
        with pytest.raises(ValueError, match="traces"):
            salsox.plots.plot_diagnosis_ranks(diag, bad)
    fig = salsox.plots.plot_chain_gap(diag)
    np.testing.assert_array_equal(fig.axes[0].images[0].get_array(), diag.gap)
    # The histogram counts every relabelling's largest gap; the line is the chains' own.
    assert sum(p.get_height() for p in fig.axes[1].patches) == diag.n_permutations
    assert fig.axes[1].lines[0].get_xdata()[0] == diag.gap[diag.gap_pair]
    assert f"p = {diag.gap_pvalue:.3g}" in fig.axes[1].get_title()
    for plot in (salsox.plots.plot_diagnosis_traces, salsox.plots.plot_diagnosis_ranks,
                 salsox.plots.plot_chain_estimates, salsox.plots.plot_chain_gap):
        with pytest.raises(TypeError, match="takes a Diagnosis"):
            plot(diag.chain_estimates[0])
    plt.close("all")


def test_the_mapping_stops_on_ctrl_c(monkeypatch):
    import _thread
    import threading
    import time

    from test_interrupts import MARGIN, _still_usable

    from salsox import _core

    # One partition repeated: the searches end at once, while 4 x 300 references on 3,000
    # items make the distance mapping (several kernel calls) run for seconds.
    chains = np.broadcast_to(np.arange(3000) % 5, (4, 1000, 3000))
    fired: list = []
    timer = threading.Timer(0.3, lambda: (fired.append(time.monotonic()), _thread.interrupt_main()))
    original = _core.particle_vi

    def entered(*args, **kwargs):
        if not timer.is_alive() and not fired:
            timer.start()  # a simulated Ctrl-C 0.3 s after the mapping's first kernel call
        return original(*args, **kwargs)

    monkeypatch.setattr(_core, "particle_vi", entered)
    try:
        with pytest.raises(KeyboardInterrupt):
            salsox.diagnose(chains, seed=1, n_runs=1, n_references=300, n_jobs=2)
        assert fired and time.monotonic() - fired[0] < MARGIN
    finally:
        timer.cancel()
    monkeypatch.undo()
    _still_usable()
