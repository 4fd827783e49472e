"""Tests for salsox.datasets (bundled example posterior draws)."""

import ast
import dataclasses
import importlib.util
import math
import pathlib
import sys

import numpy as np
import pytest

_MODULE_PATH = pathlib.Path(__file__).resolve().parents[1] / "salsox" / "datasets.py"

try:
    import salsox.datasets as datasets
except Exception:  # package (or its C++ core) may not be built yet
    _spec = importlib.util.spec_from_file_location("_salsox_datasets", _MODULE_PATH)
    datasets = importlib.util.module_from_spec(_spec)
    # dataclasses looks the defining module up in sys.modules.
    sys.modules[_spec.name] = datasets
    _spec.loader.exec_module(datasets)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def adjusted_rand_index(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    _, a = np.unique(a, return_inverse=True)
    _, b = np.unique(b, return_inverse=True)
    table = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(table, (a, b), 1)

    def pairs(v):
        return float(np.sum(v * (v - 1) / 2))

    n = a.size
    index = pairs(table)
    row, col = pairs(table.sum(axis=1)), pairs(table.sum(axis=0))
    expected = row * col / (n * (n - 1) / 2)
    maximum = (row + col) / 2
    if maximum == expected:
        return 1.0
    return (index - expected) / (maximum - expected)


def assert_canonical(labels):
    labels = np.atleast_2d(labels)
    running_max = np.maximum.accumulate(labels, axis=1)
    previous_max = np.hstack([np.full((labels.shape[0], 1), -1), running_max[:, :-1]])
    # Each new label is exactly one more than all earlier ones.
    assert np.all(labels >= 0)
    assert np.all(labels <= previous_max + 1)


@pytest.fixture(scope="module")
def example():
    return datasets.example_draws()


@pytest.fixture(scope="module")
def small_data():
    return datasets.simulate_mixture_data(30, 3, seed=2)[0]


# ---------------------------------------------------------------------------
# Shapes and dtypes
# ---------------------------------------------------------------------------


def test_simulate_shapes_dtypes():
    data, labels = datasets.simulate_mixture_data()
    assert data.shape == (100, 2) and data.dtype == np.float64
    assert labels.shape == (100,) and labels.dtype == np.int64
    assert np.array_equal(np.bincount(labels), [25, 25, 25, 25])
    assert_canonical(labels)

    data, labels = datasets.simulate_mixture_data(7, 3, seed=5)
    assert data.shape == (7, 2)
    assert sorted(np.bincount(labels)) == [2, 2, 3]
    assert_canonical(labels)


def test_simulate_single_component():
    data, labels = datasets.simulate_mixture_data(5, 1, seed=0)
    assert data.shape == (5, 2)
    assert np.all(labels == 0)


def test_sample_shapes_dtypes(small_data):
    draws = datasets.sample_dp_mixture(small_data, n_draws=20, burn_in=5, seed=1)
    assert draws.shape == (20, 30) and draws.dtype == np.int64
    assert_canonical(draws)


def test_sample_accepts_lists_and_other_dimensions():
    draws = datasets.sample_dp_mixture([[0.0], [0.1], [5.0]], n_draws=3, burn_in=0)
    assert draws.shape == (3, 3)
    x3 = np.random.default_rng(0).normal(size=(10, 3))
    assert datasets.sample_dp_mixture(x3, n_draws=4, burn_in=1).shape == (4, 10)


def test_example_shapes_dtypes(example):
    assert isinstance(example, datasets.ExampleDraws)
    assert example.draws.shape == (500, 100) and example.draws.dtype == np.int64
    assert example.data.shape == (100, 2) and example.data.dtype == np.float64
    assert example.true_labels.shape == (100,)
    assert example.true_labels.dtype == np.int64
    assert isinstance(example.description, str) and example.description
    assert "500x100" in repr(example)


def test_labels_canonical(example):
    assert_canonical(example.draws)
    assert_canonical(example.true_labels)


# ---------------------------------------------------------------------------
# Determinism
# ---------------------------------------------------------------------------


def test_simulate_deterministic():
    a = datasets.simulate_mixture_data(50, 3, seed=4)
    b = datasets.simulate_mixture_data(50, 3, seed=4)
    c = datasets.simulate_mixture_data(50, 3, seed=5)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_sample_deterministic(small_data):
    a = datasets.sample_dp_mixture(small_data, n_draws=30, burn_in=5, seed=3)
    b = datasets.sample_dp_mixture(small_data, n_draws=30, burn_in=5, seed=3)
    c = datasets.sample_dp_mixture(small_data, n_draws=30, burn_in=5, seed=4)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_thin_keeps_every_thin_th_sweep(small_data):
    full = datasets.sample_dp_mixture(small_data, n_draws=9, burn_in=5, seed=8)
    thinned = datasets.sample_dp_mixture(
        small_data, n_draws=5, burn_in=5, thin=2, seed=8
    )
    assert np.array_equal(thinned, full[::2])


def test_example_deterministic_and_cached(example):
    assert datasets.example_draws() is example
    assert datasets.example_draws(0) is example
    # Recompute from scratch with the documented settings (bypasses the cache).
    data, truth = datasets.simulate_mixture_data(100, 4, seed=0)
    draws = datasets.sample_dp_mixture(
        data, n_draws=500, burn_in=100, alpha=0.5, sigma=1.0, tau=5.0, seed=0
    )
    assert np.array_equal(example.data, data)
    assert np.array_equal(example.true_labels, truth)
    assert np.array_equal(example.draws, draws)


def test_example_differs_across_seeds(example):
    other = datasets.example_draws(1)
    assert other.draws.shape == example.draws.shape
    assert not np.array_equal(other.data, example.data)
    assert not np.array_equal(other.draws, example.draws)


# ---------------------------------------------------------------------------
# Posterior quality
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_posterior_uncertain_but_structured(seed):
    ex = datasets.example_draws(seed)
    draws = ex.draws
    n_clusters = draws.max(axis=1) + 1

    # Not degenerate: draws differ and the number of clusters varies.
    n_distinct = len({row.tobytes() for row in draws})
    assert n_distinct > 100
    assert len(np.unique(n_clusters)) >= 3
    coclust = (draws[:, :, None] == draws[:, None, :]).mean(axis=0)
    assert np.mean((coclust > 0.05) & (coclust < 0.95)) > 0.05

    # Not noise: clear structure close to the truth.
    assert np.mean((n_clusters >= 3) & (n_clusters <= 6)) > 0.8
    ari = np.array([adjusted_rand_index(z, ex.true_labels) for z in draws])
    assert ari.mean() > 0.6


def _exact_posterior(x, alpha, sigma, tau):
    """Enumerate p(partition | x) for a tiny data set."""
    n, d = x.shape
    mu0 = x.mean(axis=0)

    def log_marginal(block):
        m = block.shape[0]
        cov = sigma**2 * np.eye(m) + tau**2 * np.ones((m, m))
        _, logdet = np.linalg.slogdet(cov)
        prec = np.linalg.inv(cov)
        r = block - mu0
        quad = np.einsum("ij,ik,kj->", r, prec, r)
        return -0.5 * (d * (m * math.log(2 * math.pi) + logdet) + quad)

    def partitions(i, z, k):
        if i == n:
            yield tuple(z)
            return
        for c in range(k + 1):
            yield from partitions(i + 1, z + [c], max(k, c + 1))

    result = {}
    for z in partitions(0, [], 0):
        z_arr = np.array(z)
        k = z_arr.max() + 1
        lp = k * math.log(alpha)
        for c in range(k):
            members = z_arr == c
            lp += math.lgamma(members.sum()) + log_marginal(x[members])
        result[z] = lp
    logs = np.array(list(result.values()))
    probs = np.exp(logs - logs.max())
    return dict(zip(result, probs / probs.sum()))


def test_sampler_matches_exact_posterior():
    x = np.array([[0.0, 0.0], [0.7, -0.3], [2.0, 1.5], [2.4, 0.9]])
    alpha, sigma, tau = 0.8, 0.9, 2.0
    exact = _exact_posterior(x, alpha, sigma, tau)
    draws = datasets.sample_dp_mixture(
        x, n_draws=20000, burn_in=50, alpha=alpha, sigma=sigma, tau=tau, seed=11
    )
    keys, counts = np.unique(draws, axis=0, return_counts=True)
    empirical = {tuple(k.tolist()): c / draws.shape[0] for k, c in zip(keys, counts)}
    assert set(empirical) <= set(exact)
    tv = 0.5 * sum(abs(empirical.get(z, 0.0) - p) for z, p in exact.items())
    assert tv < 0.03


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"n_draws": 0}, ValueError, "n_draws"),
        ({"n_draws": -3}, ValueError, "n_draws"),
        ({"n_draws": 2.0}, TypeError, "n_draws"),
        ({"n_draws": True}, TypeError, "n_draws"),
        ({"burn_in": -1}, ValueError, "burn_in"),
        ({"thin": 0}, ValueError, "thin"),
        ({"thin": "2"}, TypeError, "thin"),
        ({"alpha": 0.0}, ValueError, "alpha"),
        ({"alpha": -1.0}, ValueError, "alpha"),
        ({"sigma": -1.0}, ValueError, "sigma"),
        ({"sigma": 0}, ValueError, "sigma"),
        ({"sigma": "1"}, TypeError, "sigma"),
        ({"tau": float("nan")}, ValueError, "tau"),
        ({"tau": float("inf")}, ValueError, "tau"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": 1.5}, TypeError, "seed"),
    ],
)
def test_sample_rejects_bad_arguments(small_data, kwargs, error, name):
    with pytest.raises(error, match=name):
        datasets.sample_dp_mixture(small_data, **{"n_draws": 2, "burn_in": 0, **kwargs})


@pytest.mark.parametrize(
    "data, error",
    [
        (np.zeros(5), ValueError),
        (np.zeros((2, 3, 2)), ValueError),
        (np.zeros((0, 2)), ValueError),
        (np.zeros((3, 0)), ValueError),
        (np.array([[0.0, np.nan], [1.0, 1.0]]), ValueError),
        (np.array([["a", "b"], ["c", "d"]]), TypeError),
        (np.array([[1 + 1j, 0], [0, 0]]), TypeError),
        (np.ones((3, 2), dtype=bool), TypeError),
    ],
)
def test_sample_rejects_bad_data(data, error):
    with pytest.raises(error, match="data"):
        datasets.sample_dp_mixture(data, n_draws=2, burn_in=0)


@pytest.mark.parametrize(
    "args, error, name",
    [
        ((0, 1), ValueError, "n_items"),
        ((10, 0), ValueError, "n_components"),
        ((3, 4), ValueError, "n_items"),
        ((10.0, 2), TypeError, "n_items"),
        ((10, 2, -1), ValueError, "seed"),
    ],
)
def test_simulate_rejects_bad_arguments(args, error, name):
    with pytest.raises(error, match=name):
        datasets.simulate_mixture_data(*args)


@pytest.mark.parametrize(
    "seed, error", [(-1, ValueError), ("0", TypeError), (None, TypeError)]
)
def test_example_rejects_bad_seed(seed, error):
    with pytest.raises(error, match="seed"):
        datasets.example_draws(seed)


# ---------------------------------------------------------------------------
# Cache protection
# ---------------------------------------------------------------------------


def test_cached_arrays_are_read_only(example):
    snapshot = {f: getattr(example, f).copy() for f in ("draws", "data", "true_labels")}
    for field in snapshot:
        arr = getattr(example, field)
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 0
        with pytest.raises(ValueError):
            arr += 1
        with pytest.raises(ValueError):
            arr.setflags(write=True)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(example, field, np.zeros(1))
    again = datasets.example_draws()
    for field, before in snapshot.items():
        assert np.array_equal(getattr(again, field), before)
    # A copy is writable and independent.
    mine = example.draws.copy()
    mine[0, 0] = 99
    assert datasets.example_draws().draws[0, 0] == 0


# ---------------------------------------------------------------------------
# Module hygiene
# ---------------------------------------------------------------------------


def test_module_imports_only_allowed_dependencies():
    tree = ast.parse(_MODULE_PATH.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    assert imported <= {"numpy", "dataclasses", "functools", "typing"}


def test_public_api():
    assert set(datasets.__all__) == {
        "ExampleDraws",
        "simulate_mixture_data",
        "sample_dp_mixture",
        "example_draws",
    }
    for name in datasets.__all__:
        assert getattr(datasets, name).__doc__
