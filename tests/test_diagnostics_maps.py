"""salsox.diagnose's maps from the literature (issue 50): genMCMCDiag's travelling-salesman map
(``ts``) and any loss the registry knows as the ground distance (a plugin's included), in Python
and from the command line, against numpy recomputations."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import salsox
from salsox import cli
from salsox.datasets import example_draws
from salsox.diagnostics.mapping import nearest_neighbour_tour, resolve_distance

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    az = pytest.importorskip("arviz")

pytestmark = pytest.mark.filterwarnings("ignore::salsox.SalsoxWarning")


def _chains(seed: int = 0, h: int = 20, n: int = 30) -> np.ndarray:
    draws = np.asarray(example_draws().draws)[:, :n]
    rng = np.random.default_rng(seed)
    return draws[rng.permutation(len(draws))][: 4 * h].reshape(4, h, n)


def _numpy_rand(a: np.ndarray, b: np.ndarray) -> float:
    """Binder's loss with unit costs (the Rand distance), from co-clustering matrices."""
    ca = a[:, None] == a[None, :]
    cb = b[:, None] == b[None, :]
    return float(np.abs(ca.astype(int) - cb.astype(int)).sum() / a.size**2)


class _RandPlugin(salsox.plugins.ContingencyLoss):
    """Binder's loss with unit costs, from the contingency tables: a plugin's distance."""

    name = "rand-diag"

    def loss(self, tables):
        n = tables.sum(axis=(1, 2)).astype(float)
        rows = (tables.sum(axis=2) ** 2).sum(axis=1)
        cols = (tables.sum(axis=1) ** 2).sum(axis=1)
        return (rows + cols - 2 * (tables**2).sum(axis=(1, 2))) / n**2


def _numpy_tour(dist: np.ndarray) -> np.ndarray:
    """The nearest-neighbour tour written out plainly: positions of the points along it."""
    m = len(dist)
    order = [int(np.argmax(dist.sum(axis=1)))]
    left = set(range(m)) - set(order)
    while left:
        here = order[-1]
        order.append(min(left, key=lambda j: (dist[here, j], j)))
        left.remove(order[-1])
    position = np.empty(m, dtype=int)
    position[order] = np.arange(m)
    return position


def test_the_tour_visits_each_point_once_nearest_first():
    rng = np.random.default_rng(2)
    for m in (1, 2, 7, 40):
        x = rng.normal(size=(m, 3))
        dist = np.sqrt(((x[:, None] - x[None]) ** 2).sum(axis=2))
        np.testing.assert_array_equal(nearest_neighbour_tour(dist), _numpy_tour(dist))


def test_ts_map_is_the_tour_through_the_gap_draws():
    chains = _chains(1)
    diag = salsox.diagnose(chains, seed=2, n_runs=1, n_references=1, ts=True, gap_draws=10)
    assert diag.ts_trace.shape == (4, 10)
    sub = chains[:, ::2].reshape(40, -1)  # 10 evenly spaced draws of 20: every other one
    vi = np.array([[salsox.partition_loss(a, b[None], "VI") for b in sub] for a in sub])
    np.testing.assert_array_equal(diag.ts_trace.ravel(), _numpy_tour(np.round(vi, 10)))
    assert diag.ts_rhat == float(az.rhat(diag.ts_trace, method="rank"))
    assert diag.ts_ess_bulk == float(az.ess(diag.ts_trace, method="bulk"))
    assert "Travelling-salesman map (ts) of 4 x 10 draws: R-hat" in diag.verdict
    plain = salsox.diagnose(chains, seed=2, n_runs=1, n_references=1, gap_draws=10)
    assert plain.ts_trace is None and np.isnan(plain.ts_rhat) and "ts" not in plain.verdict
    np.testing.assert_array_equal(plain.rhat, diag.rhat)  # ts adds a map, changes nothing else
    assert plain.gap_pvalue == diag.gap_pvalue


def test_a_plugin_distance_maps_and_compares_the_chains(runtime):
    chains = _chains(2)
    runtime(_RandPlugin())
    name = "rand-diag"
    diag = salsox.diagnose(chains, distance=name, seed=3, n_runs=1, n_references=2, ts=True)
    assert diag.distance == "rand-diag" and diag.trace_names[1] == "rand-diag to ref 0"
    refs = chains[diag.reference_chain, diag.reference_draw]
    mapped = np.array([[[_numpy_rand(d, r) for d in chain] for chain in chains] for r in refs])
    np.testing.assert_allclose(diag.traces[1:], mapped, atol=1e-9)
    flat = chains.reshape(-1, chains.shape[2])
    dist = np.array([[_numpy_rand(a, b) for b in flat] for a in flat]).reshape(4, 20, 4, 20)
    pair = np.array([[dist[i, :, j].sum() / (400 if i != j else 380) for j in range(4)] for i in range(4)])
    np.testing.assert_allclose(diag.posterior_distance, pair, atol=1e-9)
    est = np.stack([e.labels for e in diag.chain_estimates])
    np.testing.assert_allclose(diag.estimate_distance, [[_numpy_rand(a, b) for b in est] for a in est], atol=1e-9)
    # The built-in of the same distance gives the same figures.
    builtin = salsox.diagnose(chains, distance="binder", seed=3, n_runs=1, n_references=2, ts=True)
    np.testing.assert_allclose(builtin.traces, diag.traces, atol=1e-9)
    np.testing.assert_array_equal(builtin.ts_trace, diag.ts_trace)


def test_a_loss_with_parameters_is_a_distance_named_with_them():
    chains = _chains(3)
    diag = salsox.diagnose(chains, distance=salsox.VI(a=2, b=1), seed=1, n_runs=1, n_references=1)
    assert diag.trace_names[1] == "VI(a=2.0, b=1.0) to ref 0"
    refs = chains[diag.reference_chain, diag.reference_draw]
    expected = [[salsox.partition_loss(d, r[None], salsox.VI(a=2, b=1)) for d in chains[0]] for r in refs[:1]]
    np.testing.assert_allclose(diag.traces[1, 0], expected[0], atol=1e-9)


@pytest.mark.parametrize("bad, match", [("VI.lb", "posterior similarity"), ("euclid", "unknown loss"),
                                        (3, "loss name")])
def test_distances_that_are_not_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        resolve_distance(bad)
    with pytest.raises(ValueError, match=match):
        salsox.diagnose(_chains(), distance=bad)


def test_ts_and_a_plugin_distance_from_the_command_line(capsys, tmp_path, runtime):
    chains = _chains(4)
    np.save(tmp_path / "draws.npy", chains.reshape(-1, chains.shape[2]))
    runtime(_RandPlugin())
    name = "rand-diag"
    code = cli.main(["diagnose", str(tmp_path / "draws.npy"), "--chains", "4", "--distance", name, "--ts",
                     "--seed", "5", "--runs", "1", "--references", "1", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    got = json.loads(out)
    expected = salsox.diagnose(chains, distance=name, ts=True, seed=5, n_runs=1, n_references=1)
    assert got["distance"] == "rand-diag" and got["ts_rhat"] == expected.ts_rhat
    assert got["gap"] == expected.gap.tolist() and got["verdict"] == expected.verdict
    code = cli.main(["diagnose", str(tmp_path / "draws.npy"), "--chains", "4", "--distance", "VI.lb"])
    assert code == 2 and "posterior similarity" in capsys.readouterr().err
