"""Tests of the plugin system (issue 4): registry, Python losses, Python initialisers.

The example packages in plugins/ must be installed (CI installs them with
``pip install ./plugins/salsox-example-losses ./plugins/salsox-hclust-init``); the tests that
use their names exercise discovery through the ``salsox`` entry-point group.
"""

from __future__ import annotations

import itertools
import json
import re
import types
import warnings

import numpy as np
import pytest

import salsox
from salsox import plugins
from salsox.engine import callback
from salsox.registry import host
from salsox.losses import Binder, VI
from salsox.plugins import ContingencyLoss, DecomposableLoss, Initializer, PluginError
from conftest import load_draws

JOBS = (1, 2)


@pytest.fixture(scope="module")
def iris() -> salsox.Draws:
    return salsox.Draws(load_draws("iris"))


@pytest.fixture(scope="module")
def small() -> salsox.Draws:
    """100 iris draws: the generic path runs in well under a second per run."""
    return salsox.Draws(load_draws("iris")[:100])


def run_losses(est: salsox.Estimate) -> list:
    return [r["loss"] for r in est.info["runs"]]


# ---------------------------------------------------------------------------------------------
# Registry: entry points, runtime registration, clashes
# ---------------------------------------------------------------------------------------------


def test_installed_plugins_are_discovered_through_entry_points():
    found = {(p.name, p.kind): p for p in plugins.list_plugins()}
    for name in ("vi-plugin", "binder-plugin", "omari-numpy"):
        info = found[(name, "loss")]
        assert info.source.startswith("salsox-example-losses ")
        assert info.plugin == "example_losses"
    init = found[("psm-hclust", "initializer")]
    assert init.source.startswith("salsox-hclust-init ")
    assert isinstance(init.factory(), Initializer)
    # Names select them, case-insensitively.
    assert type(salsox.losses.get_loss("VI-Plugin")).__name__ == "VIPlugin"
    assert plugins.get_initializer("PSM-HCLUST").name == "psm-hclust"


class _HalfVI(DecomposableLoss):
    """VI / 2: a distinct loss for registration tests."""

    name = "half-vi"

    def draw_term(self, counts, n):
        return 0.5 * _xlog2x(counts) / n

    def estimate_term(self, counts, n):
        return 0.5 * _xlog2x(counts) / n

    def cell_term(self, counts, n):
        return -_xlog2x(counts) / n


def _xlog2x(x):
    x = np.asarray(x, dtype=float)
    return np.where(x > 0, x * np.log2(np.maximum(x, 1)), 0.0)


class _HookPlugin:
    @salsox.hookimpl
    def salsox_losses(self):
        return [_HalfVI]

    @salsox.hookimpl
    def salsox_initializers(self):
        return [Initializer("one-cluster", lambda draws, k, rng: np.zeros(draws.shape[1], int))]


def test_runtime_registration_and_unregistration(iris, runtime):
    draws = load_draws("iris")
    with pytest.raises(ValueError, match="unknown loss 'half-vi'"):
        salsox.salso(iris, "half-vi")
    name = runtime(_HookPlugin(), name="notebook-plugin")
    listed = {(p.name, p.kind): p for p in plugins.list_plugins()}
    assert listed[("half-vi", "loss")].source == "runtime"
    assert listed[("half-vi", "loss")].plugin == name
    assert listed[("one-cluster", "initializer")].source == "runtime"
    # Usable by name in salso, partition_loss and dlso.
    est = salsox.salso(iris, "half-vi", seed=5, n_jobs=1)
    ref = salsox.salso(iris, "VI", seed=5, n_jobs=1)
    np.testing.assert_array_equal(est.labels, ref.labels)
    assert est.expected_loss == pytest.approx(ref.expected_loss / 2, rel=1e-12)
    assert salsox.partition_loss(draws[0], draws, "half-vi") == pytest.approx(
        salsox.partition_loss(draws[0], draws, "VI") / 2, rel=1e-12
    )
    assert salsox.dlso(draws, "half-vi").info["draw"] == salsox.dlso(draws, "VI").info["draw"]
    plugins.unregister(name=name)
    assert "half-vi" not in {p.name for p in plugins.list_plugins()}
    with pytest.raises(ValueError, match="unknown loss"):
        salsox.partition_loss(draws[0], draws, "half-vi")
    with pytest.raises(ValueError, match="no plugin registered"):
        plugins.unregister(name=name)


def test_register_a_loss_or_initializer_directly(iris, runtime):
    init = Initializer("all-apart", lambda draws, k, rng: np.arange(draws.shape[1]) % k)
    loss = _HalfVI()
    runtime(loss)
    runtime(init)
    names = {(p.name, p.kind) for p in plugins.list_plugins()}
    assert {("half-vi", "loss"), ("all-apart", "initializer")} <= names
    est = salsox.salso(iris, "half-vi", initializer="all-apart", n_runs=2, seed=1, n_jobs=1)
    assert est.info["initializer"] == "all-apart"
    plugins.unregister(loss)
    plugins.unregister(init)
    names = {(p.name, p.kind) for p in plugins.list_plugins()}
    assert not {("half-vi", "loss"), ("all-apart", "initializer")} & names
    with pytest.raises(ValueError, match="not registered"):
        plugins.unregister(loss)


def _summary(infos):
    return [(p.name, p.kind, p.source, p.plugin) for p in infos]


def test_name_clashes_are_refused_and_leave_the_registry_unchanged(runtime):
    before = plugins.list_plugins()

    class ClashPlugin(_HalfVI):
        name = "VI-PLUGIN"  # provided by salsox-example-losses

    with pytest.raises(PluginError, match="'VI-PLUGIN' is already provided by plugin 'example_losses'"):
        plugins.register(ClashPlugin, name="clash")

    class BuiltinName(_HalfVI):
        name = "vi"

    with pytest.raises(PluginError, match="built in"):
        plugins.register(BuiltinName)

    dup = Initializer("psm-hclust", lambda d, k, rng: np.zeros(d.shape[1], int))
    with pytest.raises(PluginError, match="initializer name 'psm-hclust' is already provided"):
        plugins.register(dup)
    assert _summary(plugins.list_plugins()) == _summary(before)
    assert plugins.registry()._pm.get_plugin("clash") is None

    runtime(_HalfVI(), name="first")
    with pytest.raises(ValueError):
        plugins.register(_HookPlugin(), name="first")  # registration name taken
    with pytest.raises(PluginError, match="'half-vi' is already provided by plugin 'first'"):
        plugins.register(_HookPlugin())


def test_plugin_objects_of_the_wrong_kind_are_refused():
    class BadInit:
        @salsox.hookimpl
        def salsox_initializers(self):
            return [lambda d, k, rng: None]

    with pytest.raises(PluginError, match="Initializer objects"):
        plugins.register(BadInit())

    class BadLoss:
        @salsox.hookimpl
        def salsox_losses(self):
            return [42]

    with pytest.raises(PluginError, match="not a loss class"):
        plugins.register(BadLoss())


# ---------------------------------------------------------------------------------------------
# Decomposable losses: native speed, same results as built-ins
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_vi_plugin_matches_builtin_vi(iris, seed):
    ref = salsox.salso(iris, "VI", seed=seed, n_jobs=2)
    got = salsox.salso(iris, "vi-plugin", seed=seed, n_jobs=2)
    np.testing.assert_array_equal(got.labels, ref.labels)
    assert got.expected_loss == pytest.approx(ref.expected_loss, rel=1e-12)
    assert got.info["engine"] == "counts"
    assert got.info["initialization"] == ref.info["initialization"]


def test_vi_and_binder_plugins_with_costs_match_builtins():
    from salsox_example_losses import BinderPlugin, VIPlugin

    draws = load_draws("galaxy")[:2000]
    for plugin, builtin in ((VIPlugin(0.5, 1.5), VI(a=0.5, b=1.5)), (BinderPlugin(1.4, 0.6), Binder(a=1.4, b=0.6))):
        ref = salsox.salso(draws, builtin, seed=11, n_jobs=2, engine="counts")
        got = salsox.salso(draws, plugin, seed=11, n_jobs=2)
        np.testing.assert_array_equal(got.labels, ref.labels)
        assert got.expected_loss == pytest.approx(ref.expected_loss, rel=1e-12)
        est = np.stack([draws[0], draws[1], np.zeros(draws.shape[1], int), np.arange(draws.shape[1])])
        got_values = salsox.partition_loss(est, draws, plugin)
        np.testing.assert_allclose(got_values, salsox.partition_loss(est, draws, builtin), rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------------------------
# General (contingency-table) losses: the generic path
# ---------------------------------------------------------------------------------------------


def test_omari_numpy_loss_values_match_builtin_omari():
    draws = load_draws("iris")
    n = draws.shape[1]
    rng = np.random.default_rng(0)
    est = np.vstack(
        [draws[:20], np.zeros((1, n), int), np.arange(n)[None, :], rng.integers(0, 5, (5, n))]
    )
    got = salsox.partition_loss(est, draws, "omari-numpy")
    want = salsox.partition_loss(est, draws, "omARI")
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    # Two partitions, including identical trivial ones (loss 0).
    assert salsox.partition_loss(draws[3], draws[7], "omari-numpy") == pytest.approx(
        salsox.partition_loss(draws[3], draws[7], "omARI"), rel=1e-12
    )
    assert salsox.partition_loss(np.zeros(n, int), np.zeros(n, int), "omari-numpy") == 0.0


def test_omari_numpy_search_on_iris_finds_an_estimate_of_equal_expected_loss(iris):
    ref = salsox.salso(iris, "omARI", seed=1, n_runs=2, n_jobs=1)
    got = salsox.salso(iris, "omari-numpy", seed=1, n_runs=2, n_jobs=1)
    assert got.info["engine"] == "python"
    assert got.expected_loss == pytest.approx(ref.expected_loss, rel=1e-12)
    assert got.expected_loss == pytest.approx(salsox.partition_loss(got.labels, iris, "omARI"), rel=1e-12)


def test_generic_path_gives_the_same_result_for_any_n_jobs(small):
    one = salsox.salso(small, "omari-numpy", seed=4, n_runs=4, n_jobs=1)
    two = salsox.salso(small, "omari-numpy", seed=4, n_runs=4, n_jobs=2)
    np.testing.assert_array_equal(one.labels, two.labels)
    assert run_losses(one) == run_losses(two)


def test_generic_path_with_wide_labels_and_split_batches(monkeypatch):
    # > 256 clusters in a draw (16-bit labels) and batches split by the cell cap.
    rng = np.random.default_rng(3)
    n = 300
    draws = np.vstack([np.arange(n), rng.integers(0, 4, (6, n)), rng.integers(0, 40, (3, n))])
    est = np.vstack([draws[1], rng.integers(0, 7, n), np.zeros(n, int)])
    want = salsox.partition_loss(est, draws, "omARI")
    np.testing.assert_allclose(salsox.partition_loss(est, draws, "omari-numpy"), want, rtol=1e-12)
    monkeypatch.setattr(callback, "MAX_BATCH_CELLS", 1000)
    np.testing.assert_allclose(salsox.partition_loss(est, draws, "omari-numpy"), want, rtol=1e-12)
    got = salsox.salso(draws[1:7], "omari-numpy", seed=2, n_runs=1, max_clusters=6, n_jobs=1)
    ref = salsox.salso(draws[1:7], "omARI", seed=2, n_runs=1, max_clusters=6, n_jobs=1)
    assert got.expected_loss == pytest.approx(ref.expected_loss, rel=1e-12)


class _TableOMARI(ContingencyLoss):
    """omARI of one table at a time (vectorized = False): the slow, simple form."""

    name = "omari-one-table"
    vectorized = False

    def loss(self, table):
        m = table.sum()
        comb = lambda x: x * (x - 1) / 2.0
        N = comb(m)
        X, A, B = comb(table).sum(), comb(table.sum(1)).sum(), comb(table.sum(0)).sum()
        if N <= 0:
            return 0.0
        expected = A * B / N
        denom = 0.5 * (A + B) - expected
        return 0.0 if denom == 0 else 1.0 - (X - expected) / denom


def test_unvectorized_contingency_loss():
    draws = load_draws("iris")[:15, :40]
    est = np.vstack([draws[:4], np.zeros((1, 40), int)])
    np.testing.assert_allclose(
        salsox.partition_loss(est, draws, _TableOMARI()), salsox.partition_loss(est, draws, "omARI"), rtol=1e-12
    )
    got = salsox.salso(draws, _TableOMARI(), seed=3, n_runs=1, n_jobs=1)
    assert got.expected_loss == pytest.approx(salsox.partition_loss(got.labels, draws, "omARI"), rel=1e-12)
    assert salsox.dlso(draws, _TableOMARI()).info["draw"] == salsox.dlso(draws, "omARI").info["draw"]


def test_tables_kept_by_a_loss_stay_valid_and_read_only(small):
    kept, calls = [], []

    class Keeper(ContingencyLoss):
        name = "keeper"

        def loss(self, tables):
            calls.append(1)
            if len(kept) < 5:
                kept.append(tables)
            assert not tables.flags.writeable
            assert tables.dtype == np.int64 and tables.ndim == 3
            return np.zeros(len(tables))

    options = dict(n_runs=1, max_scans=1, max_zealous=0, max_clusters=3, n_jobs=1)
    salsox.salso(small, Keeper(), seed=0, **options)
    assert len(calls) > 10
    snapshot = [t.copy() for t in kept]
    salsox.salso(small, Keeper(), seed=1, **options)
    for t, s in zip(kept, snapshot):
        np.testing.assert_array_equal(t, s)  # later batches go to fresh buffers
        assert t.sum(axis=(1, 2)).max() <= small.n_items


def test_contingency_loss_needs_draws():
    psm = salsox.psm(load_draws("iris")[:50])
    with pytest.raises(ValueError, match="needs draws"):
        salsox.partition_loss(np.zeros(150, int), salsox.PSM(psm), "omari-numpy")
    with pytest.raises(ValueError, match="engine applies to built-in"):
        salsox.salso(load_draws("iris")[:50], "omari-numpy", engine="counts")


# ---------------------------------------------------------------------------------------------
# Misbehaving plugins: clean errors naming the plugin, with n_jobs 1 and 2
# ---------------------------------------------------------------------------------------------


class _Bad(ContingencyLoss):
    def __init__(self, mode: str, after: int = 0) -> None:
        self.mode = mode
        self.after = after
        self.calls = 0
        self.name = f"bad-{mode}"

    def loss(self, tables):
        self.calls += 1
        good = np.full(len(tables), 0.5)
        if self.calls <= self.after:
            return good
        if self.mode == "raises":
            raise ZeroDivisionError("boom")
        if self.mode == "shape":
            return good[:-1]
        if self.mode == "scalar":
            return 0.5
        if self.mode == "nan":
            good[-1] = np.nan
            return good
        if self.mode == "negative":
            good[0] = -0.25
            return good
        if self.mode == "strings":
            return ["x"] * len(tables)
        raise AssertionError(self.mode)


BAD_MESSAGES = {
    "raises": r"loss\(\) raised ZeroDivisionError: boom",
    "shape": r"returned shape \(\d+,\) for \d+ tables",
    "scalar": r"returned shape \(\) for \d+ tables",
    "nan": "NaN or infinite",
    "negative": "negative loss",
    "strings": "loss\\(\\) raised ValueError",
}


@pytest.mark.parametrize("n_jobs", JOBS)
@pytest.mark.parametrize("mode", sorted(BAD_MESSAGES))
def test_failing_contingency_loss_gives_a_clean_error(small, mode, n_jobs):
    before = salsox.salso(small, "omari-numpy", seed=9, n_runs=2, n_jobs=n_jobs)
    # Fail at once, and in the middle of the search (other runs are then in flight).
    for after in (0, 40):
        bad = _Bad(mode, after=after)
        with pytest.raises(PluginError, match=f"loss plugin 'bad-{mode}'.*{BAD_MESSAGES[mode]}") as info:
            salsox.salso(small, bad, seed=0, n_runs=4, n_jobs=n_jobs)
        if mode == "raises":
            assert isinstance(info.value.__cause__, ZeroDivisionError)
    with pytest.raises(PluginError, match=f"bad-{mode}"):
        salsox.partition_loss(np.zeros(small.n_items, int), small, _Bad(mode))
    # Nothing is left corrupted: the same search gives the same answer.
    after_error = salsox.salso(small, "omari-numpy", seed=9, n_runs=2, n_jobs=n_jobs)
    np.testing.assert_array_equal(after_error.labels, before.labels)
    assert run_losses(after_error) == run_losses(before)


@pytest.mark.parametrize("n_jobs", JOBS)
def test_failing_registered_loss_names_its_plugin(small, runtime, n_jobs):
    class Registered(_Bad):
        name = "flaky-loss"

        def __init__(self):
            super().__init__("nan", after=5)
            self.name = "flaky-loss"

    runtime(Registered, name="flaky-package")
    with pytest.raises(PluginError, match="loss plugin 'flaky-loss' \\(plugin 'flaky-package'\\).*NaN"):
        salsox.salso(small, "flaky-loss", seed=0, n_runs=4, n_jobs=n_jobs)
    assert salsox.salso(small, "VI", seed=0, n_jobs=n_jobs).expected_loss > 0


@pytest.mark.parametrize("n_jobs", JOBS)
def test_keyboard_interrupt_in_a_loss_stops_the_search(small, n_jobs):
    class Interrupted(_Bad):
        def loss(self, tables):
            self.calls += 1
            if self.calls > 20:
                raise KeyboardInterrupt
            return np.zeros(len(tables))

    with pytest.raises(KeyboardInterrupt):
        salsox.salso(small, Interrupted("interrupt"), seed=0, n_runs=4, n_jobs=n_jobs)
    assert salsox.salso(small, "omARI", seed=0, n_jobs=n_jobs).n_clusters >= 1


class _BadDecomposable(_HalfVI):
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.name = f"bad-decomposable-{mode}"
        self.sign = -1.0 if mode == "negative" else 1.0  # minus VI: 0 on equal partitions, else < 0

    def draw_term(self, counts, n):
        return self.sign * super().draw_term(counts, n)

    def estimate_term(self, counts, n):
        return self.sign * super().estimate_term(counts, n)

    def cell_term(self, counts, n):
        values = self.sign * super().cell_term(counts, n)
        if self.mode == "raises":
            raise RuntimeError("cannot tabulate")
        if self.mode == "shape":
            return values[1:]
        if self.mode == "nan":
            values[-1] = np.nan
            return values
        if self.mode == "nonzero-self":
            return values + 0.01 * (counts > 0)
        return values


@pytest.mark.parametrize("n_jobs", JOBS)
@pytest.mark.parametrize(
    "mode, message",
    [
        ("raises", "cell_term raised RuntimeError: cannot tabulate"),
        ("shape", r"cell_term returned shape \(150,\), expected \(151,\)"),
        ("nan", "cell_term returned NaN"),
        ("negative", "negative loss"),
        ("nonzero-self", "against itself"),
    ],
)
def test_failing_decomposable_loss_gives_a_clean_error(iris, mode, message, n_jobs):
    bad = _BadDecomposable(mode)
    with pytest.raises(PluginError, match=f"loss plugin 'bad-decomposable-{mode}'.*{message}"):
        salsox.salso(iris, bad, seed=0, n_jobs=n_jobs)
    with pytest.raises(PluginError, match=f"bad-decomposable-{mode}"):
        salsox.partition_loss(np.zeros(iris.n_items, int), iris, bad)
    assert salsox.salso(iris, "vi-plugin", seed=0, n_jobs=n_jobs).n_clusters >= 1


# ---------------------------------------------------------------------------------------------
# Initialisers
# ---------------------------------------------------------------------------------------------


def test_psm_hclust_initializer_from_its_package(iris):
    from salsox_hclust_init import psm_hclust

    est = salsox.salso(iris, "VI", initializer="psm-hclust", seed=2, n_jobs=2)
    assert est.info["initializer"] == "psm-hclust"
    assert {r["initialization"] for r in est.info["runs"]} == {"initializer"}
    ref = salsox.salso(iris, "VI", seed=2, n_jobs=2)
    assert est.expected_loss == pytest.approx(ref.expected_loss, rel=1e-12)
    start = psm_hclust(load_draws("iris"), 3, np.random.default_rng(0))
    assert start.shape == (150,) and len(np.unique(start)) == 3
    # As an estimate on its own it is reasonable: close to the SALSO one.
    assert salsox.partition_loss(start, iris, "VI") < ref.expected_loss + 0.2


def _naive_average_linkage(dist: np.ndarray, k: int) -> np.ndarray:
    clusters = [[i] for i in range(len(dist))]
    while len(clusters) > k:
        best = None
        for a, b in itertools.combinations(range(len(clusters)), 2):
            d = dist[np.ix_(clusters[a], clusters[b])].mean()
            if best is None or d < best[0]:
                best = (d, a, b)
        _, a, b = best
        clusters[a] = clusters[a] + clusters[b]
        del clusters[b]
    labels = np.empty(len(dist), int)
    for c, members in enumerate(clusters):
        labels[members] = c
    return labels


def test_average_linkage_matches_the_naive_algorithm():
    from salsox._validation import relabel_rows
    from salsox_hclust_init import average_linkage_labels

    rng = np.random.default_rng(7)
    for n in (2, 5, 17, 40):
        points = rng.normal(size=(n, 2))
        dist = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
        for k in {1, 2, 3, n // 2 or 1, n}:
            got = relabel_rows(average_linkage_labels(dist, k)[None, :])
            want = relabel_rows(_naive_average_linkage(dist, k)[None, :])
            np.testing.assert_array_equal(got, want)


def test_initializer_runs_use_seeded_streams_independent_of_n_jobs(small):
    seen = []

    def random_start(draws, max_clusters, rng):
        seen.append(rng.random())
        return rng.integers(0, max_clusters, draws.shape[1])

    results = []
    for n_jobs in JOBS:
        seen.clear()
        results.append(salsox.salso(small, "VI", initializer=random_start, seed=123, n_runs=6, n_jobs=n_jobs))
        expected = [np.random.Generator(np.random.PCG64(np.random.SeedSequence([123, r]))).random() for r in range(6)]
        assert seen == expected
    np.testing.assert_array_equal(results[0].labels, results[1].labels)
    assert run_losses(results[0]) == run_losses(results[1])
    assert results[0].info["initializer"] == "random_start"


def test_prob_initializer_mixes_with_builtin_initialisations(small):
    calls = []

    def start(draws, max_clusters, rng):
        calls.append(1)
        return np.zeros(draws.shape[1], int)

    mixed = salsox.salso(small, "VI", initializer=start, prob_initializer=0.5, seed=5, n_runs=16, n_jobs=2)
    kinds = [r["initialization"] for r in mixed.info["runs"]]
    assert 0 < kinds.count("initializer") < 16 and len(calls) == kinds.count("initializer")
    calls.clear()
    none = salsox.salso(small, "VI", initializer=start, prob_initializer=0.0, seed=5, n_runs=4, n_jobs=1)
    assert not calls and "initializer" not in {r["initialization"] for r in none.info["runs"]}
    with pytest.raises(ValueError, match="prob_initializer needs an initializer"):
        salsox.salso(small, "VI", prob_initializer=0.5)
    with pytest.raises(ValueError, match="prob_initializer must be in"):
        salsox.salso(small, "VI", initializer=start, prob_initializer=1.5)


def test_deterministic_initializer_is_called_once(small):
    calls = []

    def start(draws, max_clusters, rng):
        calls.append(1)
        return draws[0]

    salsox.salso(small, "VI", initializer=Initializer("first-draw", start, deterministic=True), n_runs=5, seed=0)
    assert len(calls) == 1


def test_initializer_on_the_generic_path_and_with_relabelling(small):
    # Labels are arbitrary integers: relabelled 0..q-1.
    start = Initializer("spread", lambda d, k, rng: 1000 + 7 * (np.arange(d.shape[1]) % 3))
    est = salsox.salso(small, "omari-numpy", initializer=start, seed=0, n_runs=1, n_jobs=1)
    assert est.info["runs"][0]["initialization"] == "initializer"


def test_initializer_errors():
    with pytest.raises(ValueError, match="unknown initializer 'nope'; choose one of: .*psm-hclust"):
        salsox.salso(load_draws("iris")[:20], "VI", initializer="nope")
    with pytest.raises(TypeError, match="initializer must be"):
        salsox.salso(load_draws("iris")[:20], "VI", initializer=3)
    psm = salsox.PSM(salsox.psm(load_draws("iris")[:50]))
    with pytest.raises(ValueError, match="needs draws, not a PSM"):
        salsox.salso(psm, "VI.lb", initializer="psm-hclust")


BAD_INITIALIZERS = {
    "raises": (lambda d, k, rng: 1 / 0, "raised ZeroDivisionError"),
    "shape": (lambda d, k, rng: np.zeros(d.shape[1] + 1, int), r"returned shape \(151,\), expected \(150,\)"),
    "matrix": (lambda d, k, rng: d, r"returned shape \(\d+, 150\)"),
    "floats": (lambda d, k, rng: np.full(d.shape[1], 0.5), "returned the label 0.5; float labels must be integral"),
    "strings": (lambda d, k, rng: np.array(["a"] * d.shape[1]), "returned dtype <U1; labels must be integers"),
    "too-many": (lambda d, k, rng: np.arange(d.shape[1]), "returned 150 clusters, more than max_clusters=4"),
    "none": (lambda d, k, rng: None, r"returned shape \(\)"),
}


@pytest.mark.parametrize("n_jobs", JOBS)
@pytest.mark.parametrize("mode", sorted(BAD_INITIALIZERS))
def test_failing_initializer_gives_a_clean_error(small, runtime, mode, n_jobs):
    function, message = BAD_INITIALIZERS[mode]
    runtime(Initializer(f"bad-init-{mode}", function), name=f"bad-init-package-{mode}")
    with pytest.raises(PluginError, match=f"initializer plugin 'bad-init-{mode}'.*{message}"):
        salsox.salso(small, "VI", initializer=f"bad-init-{mode}", max_clusters=4, seed=0, n_runs=3, n_jobs=n_jobs)
    assert salsox.salso(small, "VI", initializer="psm-hclust", seed=0, n_runs=3, n_jobs=n_jobs).n_clusters >= 1


# ---------------------------------------------------------------------------------------------
# Isolation (issue 12): one broken installed plugin never breaks the others. Installed plugins
# are simulated with fake entry points in a fresh registry.
# ---------------------------------------------------------------------------------------------


class _FakeEntryPoint:
    """What importlib.metadata gives for one ``salsox`` entry point."""

    def __init__(self, name, load, value=None, dist="fake-dist"):
        self.name = name
        self.value = value or f"fake_{name}.plugin"
        self.dist = types.SimpleNamespace(metadata={"Name": dist}, version="1.0")
        self.loads = 0
        self._load = load

    def load(self):
        self.loads += 1
        return self._load()


class _Provides:
    """An installed plugin providing the given losses and initialisers."""

    def __init__(self, losses=(), initializers=()):
        self.losses = list(losses)
        self.initializers = list(initializers)

    @salsox.hookimpl
    def salsox_losses(self):
        return self.losses

    @salsox.hookimpl
    def salsox_initializers(self):
        return self.initializers


class _FailingHook:
    @salsox.hookimpl
    def salsox_losses(self):
        raise RuntimeError("no losses today")


def _raise(err):
    def load():
        raise err

    return load


def _named_loss(name, base=_HalfVI):
    return type(f"Loss_{name}", (base,), {"name": name})


@pytest.fixture
def installed(monkeypatch):
    """``installed(*entry_points)``: a fresh registry that finds exactly these entry points."""

    def install(*points):
        monkeypatch.setattr(host, "_entry_points", lambda group: list(points))
        monkeypatch.setattr(host, "_REGISTRY", host._Registry())
        return plugins.registry()

    return install


def _by_plugin(entries):
    return {(e.plugin, e.kind, e.name): e for e in entries}


def test_broken_installed_plugins_are_listed_and_the_rest_keeps_working(installed):
    start = Initializer("zeros", lambda d, k, rng: np.zeros(d.shape[1], int))
    installed(
        _FakeEntryPoint("good", lambda: _Provides([_HalfVI], [start]), dist="good-dist"),
        _FakeEntryPoint("missing-dep", _raise(ImportError("No module named 'torch'"))),
        _FakeEntryPoint("exits", _raise(SystemExit(3))),
        _FakeEntryPoint("hook-raises", _FailingHook),
        _FakeEntryPoint("bad-object", lambda: _Provides([42])),
    )
    with pytest.warns(plugins.PluginWarning) as warned:
        entries = _by_plugin(plugins.list_plugins())
    assert entries[("good", "loss", "half-vi")].status == "ok"
    assert entries[("good", "loss", "half-vi")].source == "good-dist 1.0"
    assert entries[("good", "initializer", "zeros")].ok
    expected = {
        ("missing-dep", "plugin", "missing-dep"): "failed to load: ImportError: No module named 'torch'",
        ("exits", "plugin", "exits"): "failed to load: SystemExit: 3",
        ("hook-raises", "plugin", "hook-raises"): "failed in salsox_losses: RuntimeError: no losses today",
        ("bad-object", "loss", "42"): "is not a loss class, instance or factory",
    }
    for key, message in expected.items():
        assert entries[key].status == "broken"
        assert message in entries[key].error and repr(key[0]) in entries[key].error
        with pytest.raises(PluginError, match=re.escape(message)):
            entries[key].factory()
    assert len(entries) == 2 + len(expected)
    assert sorted(str(w.message) for w in warned) == sorted(f"salsox: {entries[k].error}" for k in expected)
    # Each problem is warned about once; lookups and searches work.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(plugins.list_plugins()) == len(entries)
        draws = load_draws("iris")[:50]
        est = salsox.salso(draws, "half-vi", initializer="zeros", seed=1, n_runs=2, n_jobs=1)
        ref = salsox.salso(draws, "VI", initializer="zeros", seed=1, n_runs=2, n_jobs=1)
        assert est.expected_loss == pytest.approx(ref.expected_loss / 2, rel=1e-12)
        with pytest.raises(ValueError, match="unknown loss 'nope'; choose one of: .*half-vi"):
            salsox.salso(draws, "nope")
        # A broken entry's name is not selectable; the error says why.
        with pytest.raises(PluginError, match="is not a loss class"):
            salsox.losses.get_loss("42")


def test_plugin_loss_named_like_a_builtin_is_refused_for_that_name(installed):
    installed(_FakeEntryPoint("shadow", lambda: _Provides([_named_loss("VI"), _named_loss("kept-loss")])))
    with pytest.warns(plugins.PluginWarning, match="'VI' is built in"):
        entries = _by_plugin(plugins.list_plugins())
    assert entries[("shadow", "loss", "VI")].status == "conflict"
    assert "'shadow'" in entries[("shadow", "loss", "VI")].error
    assert entries[("shadow", "loss", "kept-loss")].ok
    assert type(salsox.losses.get_loss("vi")) is VI  # the built-in wins
    draws = load_draws("iris")[:50]
    assert salsox.partition_loss(draws[0], draws, "kept-loss") == pytest.approx(
        salsox.partition_loss(draws[0], draws, "VI") / 2, rel=1e-12
    )


def test_two_plugins_providing_one_name_are_both_refused(installed):
    installed(
        _FakeEntryPoint("alpha", lambda: _Provides([_named_loss("shared-loss"), _named_loss("alpha-loss")])),
        _FakeEntryPoint("beta", lambda: _Provides([_named_loss("Shared-Loss")], [Initializer("init", np.zeros)])),
        _FakeEntryPoint("gamma", lambda: _Provides([], [Initializer("INIT", np.ones)])),
    )
    with pytest.warns(plugins.PluginWarning) as warned:
        entries = _by_plugin(plugins.list_plugins())
    assert sorted(str(w.message) for w in warned) == [  # one warning per clash
        "salsox: initializer name 'init' is provided by plugins 'beta' and 'gamma'; it is not used until only one "
        "provides it",
        "salsox: loss name 'shared-loss' is provided by plugins 'alpha' and 'beta'; it is not used until only one "
        "provides it",
    ]
    assert entries[("alpha", "loss", "shared-loss")].status == "conflict"
    assert entries[("beta", "loss", "Shared-Loss")].status == "conflict"
    assert entries[("beta", "initializer", "init")].status == "conflict"
    assert entries[("alpha", "loss", "alpha-loss")].ok
    for name in ("shared-loss", "SHARED-LOSS"):
        with pytest.raises(PluginError, match="'shared-loss' is provided by plugins 'alpha' and 'beta'"):
            salsox.losses.get_loss(name)
    with pytest.raises(PluginError, match="'init' is provided by plugins 'beta' and 'gamma'"):
        plugins.get_initializer("init")
    assert salsox.losses.get_loss("alpha-loss").name == "alpha-loss"
    assert "shared-loss" not in plugins.registry().loss_names()
    # Uninstalling (here: unregistering) one of them makes the name usable again.
    plugins.unregister(name="beta")
    assert salsox.losses.get_loss("shared-loss").name == "shared-loss"
    assert plugins.get_initializer("init").name == "INIT"


def test_entry_points_sharing_a_name_are_all_loaded(installed):
    first = _FakeEntryPoint("losses", lambda: _Provides([_named_loss("first-loss")]), value="pkg_one.plugin")
    second = _FakeEntryPoint("losses", lambda: _Provides([_named_loss("second-loss")]), value="pkg_two.plugin")
    again = _FakeEntryPoint("losses", first._load, value="pkg_one.plugin")  # one package seen twice
    installed(first, second, again)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        entries = {e.name: e for e in plugins.list_plugins()}
    assert set(entries) == {"first-loss", "second-loss"}
    assert all(e.ok for e in entries.values())
    assert entries["first-loss"].plugin == "losses (pkg_one.plugin)"
    assert entries["second-loss"].plugin == "losses (pkg_two.plugin)"
    assert (first.loads, second.loads, again.loads) == (1, 1, 0)
    for name in entries:
        assert salsox.losses.get_loss(name).name == name


def test_ctrl_c_during_a_plugin_import_propagates_and_loading_resumes(installed):
    interrupted = []

    def slow_import():
        if not interrupted:
            interrupted.append(1)
            raise KeyboardInterrupt
        return _Provides([_named_loss("slow-loss")])

    points = (
        _FakeEntryPoint("before", lambda: _Provides([_named_loss("before-loss")])),
        _FakeEntryPoint("slow", slow_import),
        _FakeEntryPoint("after", lambda: _Provides([_named_loss("after-loss")])),
    )
    installed(*points)
    with pytest.raises(KeyboardInterrupt):
        plugins.list_plugins()
    # The next lookup retries: every plugin is there, none loaded twice.
    assert salsox.losses.get_loss("after-loss").name == "after-loss"
    assert {e.name for e in plugins.list_plugins() if e.ok} == {"before-loss", "slow-loss", "after-loss"}
    assert [p.loads for p in points] == [1, 2, 1]


def test_cli_lists_broken_plugins(installed, capsys, tmp_path):
    from salsox import cli

    installed(
        _FakeEntryPoint("good", lambda: _Provides([_HalfVI]), dist="good-dist"),
        _FakeEntryPoint("exits", _raise(SystemExit(3)), dist="exiting-dist"),
        _FakeEntryPoint("hook-raises", _FailingHook),
        _FakeEntryPoint("shadow", lambda: _Provides([_named_loss("VI"), _named_loss("twice")])),
        _FakeEntryPoint("shadow-too", lambda: _Provides([_named_loss("twice")])),
    )
    assert cli.main(["plugins"]) == 0
    out, err = capsys.readouterr()
    assert err == ""  # the listing shows the problems; no warnings on top
    lines = out.splitlines()
    assert lines[0].split() == ["name", "kind", "tier", "status", "source"]
    assert lines[1].split() == ["half-vi", "loss", "tabulated", "ok", "good-dist", "1.0"]
    assert "exits" in out and "SystemExit: 3" in out and "exiting-dist 1.0" in out
    assert "failed in salsox_losses: RuntimeError: no losses today" in out
    assert "'VI' is built in" in out
    assert cli.main(["plugins", "--json"]) == 0
    listed = {e["plugin"]: e for e in json.loads(capsys.readouterr().out)}
    assert listed["good"]["status"] == "ok" and listed["good"]["error"] == ""
    assert listed["exits"]["status"] == "broken" and "SystemExit: 3" in listed["exits"]["error"]
    assert listed["shadow"]["status"] == "conflict"
    # Other commands work, with the plugin's loss; a name in conflict is a user error.
    path = tmp_path / "draws.npy"
    np.save(path, load_draws("iris")[:50])
    assert cli.main(["estimate", str(path), "--loss", "half-vi", "--runs", "2", "--seed", "1", "-q"]) == 0
    assert len(capsys.readouterr().out.split()) == 150
    assert cli.main(["estimate", str(path), "--loss", "twice", "-q"]) == 1
    assert capsys.readouterr().err == (
        "salsox: error: loss name 'twice' is provided by plugins 'shadow' and 'shadow-too'; it is not used until "
        "only one provides it\n"
    )


def _misspelt_module(name, *, with_good_hook=False):
    """A plugin module whose hook is misspelt (``salsox_loss``), as a user wrote it (issue 47);
    with ``with_good_hook``, one more hook that is spelt right."""
    module = types.ModuleType(name)

    @salsox.hookimpl
    def salsox_loss():  # never called: salsox's hook is salsox_losses
        return [_named_loss("never-seen")]

    @salsox.hookimpl
    def salsox_initialisers():  # British spelling of salsox_initializers
        return []

    module.salsox_loss = salsox_loss
    module.salsox_initialisers = salsox_initialisers
    if with_good_hook:

        @salsox.hookimpl
        def salsox_losses():
            return [_named_loss("spelt-right")]

        module.salsox_losses = salsox_losses
    return module


def test_a_misspelt_hook_lists_the_plugin_as_broken_naming_the_hook(installed, capsys, runtime):
    installed(
        _FakeEntryPoint("typo", lambda: _misspelt_module("typo_plugin"), dist="typo-dist"),
        _FakeEntryPoint("half-typo", lambda: _misspelt_module("half_typo_plugin", with_good_hook=True)),
        _FakeEntryPoint("good", lambda: _Provides([_HalfVI])),
    )
    with pytest.warns(plugins.PluginWarning, match="'salsox_loss'") as warned:
        entries = _by_plugin(plugins.list_plugins())
    assert len(warned) == 2  # one per plugin with unknown hooks
    typo = entries[("typo", "plugin", "typo")]
    assert typo.status == "broken" and typo.source == "typo-dist 1.0"
    assert "'salsox_loss' (did you mean 'salsox_losses'?)" in typo.error
    assert "'salsox_initialisers' (did you mean 'salsox_initializers'?)" in typo.error
    with pytest.raises(PluginError, match="unknown hooks"):
        typo.factory()
    assert not any(e.name == "never-seen" for e in entries.values())
    # The hooks spelt right still count; the plugin is listed as broken beside them.
    assert entries[("half-typo", "loss", "spelt-right")].ok
    assert entries[("half-typo", "plugin", "half-typo")].status == "broken"
    assert entries[("good", "loss", "half-vi")].ok
    assert salsox.losses.get_loss("spelt-right").name == "spelt-right"
    # From the shell: listed as broken with the hook named, no traceback, exit 0.
    from salsox import cli

    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("typo "))
    assert row.split()[1:3] == ["plugin", "broken"]
    assert "salsox_loss' (did you mean 'salsox_losses'?)" in out
    assert cli.main(["plugins", "--json"]) == 0
    listed = {(e["plugin"], e["kind"]): e for e in json.loads(capsys.readouterr().out)}
    assert listed[("typo", "plugin")]["status"] == "broken"
    assert "salsox_loss" in listed[("typo", "plugin")]["error"]
    # At runtime such a plugin is refused (nothing registered), naming the hook.
    with pytest.raises(PluginError, match="'salsox_loss' \\(did you mean 'salsox_losses'\\?\\)"):
        plugins.register(_misspelt_module("at_runtime"), name="at-runtime")
    assert plugins.registry()._pm.get_plugin("at-runtime") is None


# ---------------------------------------------------------------------------------------------
# Loss values that are not finite reals, and dlso with a plugin loss (issue 12)
# ---------------------------------------------------------------------------------------------


class _ConstantTableLoss(ContingencyLoss):
    def __init__(self, name, value, vectorized=True):
        self.name = name
        self.value = value
        self.vectorized = vectorized

    def loss(self, tables):
        return np.full(len(tables), self.value) if self.vectorized else self.value


@pytest.mark.parametrize(
    "loss, message",
    [
        (_ConstantTableLoss("complex-loss", 0.5 + 1j), "complex-loss.*returned complex values"),
        (_ConstantTableLoss("complex-one", np.complex128(0.5 + 1j), False), "complex-one.*returned complex values"),
        (_ConstantTableLoss("huge-loss", 1e308), "huge-loss.*expected loss is inf"),
    ],
)
def test_contingency_loss_values_must_be_finite_reals(loss, message):
    draws = load_draws("iris")[:20, :30]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning either
        for call in (
            lambda: salsox.partition_loss(draws[0], draws, loss),
            lambda: salsox.salso(draws, loss, seed=0, n_runs=1, n_jobs=1),
            lambda: salsox.dlso(draws, loss),
        ):
            with pytest.raises(PluginError, match=message):
                call()


class _HugeTerms(_HalfVI):
    def __init__(self, name, scale):
        self.name = name
        self.scale = scale

    def draw_term(self, counts, n):
        return self.scale * super().draw_term(counts, n)

    def estimate_term(self, counts, n):
        return self.scale * super().estimate_term(counts, n)

    def cell_term(self, counts, n):
        return self.scale * super().cell_term(counts, n)


@pytest.mark.parametrize("scale", [1e306, 1e300])
def test_decomposable_terms_that_overflow_are_refused(scale):
    draws = load_draws("iris")[:20]
    loss = _HugeTerms("huge-terms", scale)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow RuntimeWarning either
        for call in (
            lambda: salsox.partition_loss(draws[0], draws, loss),
            lambda: salsox.salso(draws, loss, seed=0, n_runs=1, n_jobs=1),
            lambda: salsox.dlso(draws, loss),
        ):
            with pytest.raises(PluginError, match="loss plugin 'huge-terms'.*terms this large.*overflow"):
                call()
    # Large but safe terms are accepted: the same estimate as VI, scaled.
    big = salsox.partition_loss(draws[0], draws, _HugeTerms("big-terms", 1e250))
    assert big == pytest.approx(1e250 * salsox.partition_loss(draws[0], draws, "VI") / 2, rel=1e-12)


def test_dlso_with_a_plugin_loss_on_sparse_labels():
    # Sparse label values are stored relabelled in value order, not first appearance.
    rng = np.random.default_rng(1)
    draws = 1000 * rng.integers(0, 4, (30, 40)) + 7
    got = salsox.dlso(draws, "omari-numpy")
    want = salsox.dlso(draws, "omARI")
    assert got.info["draw"] == want.info["draw"]
    assert got.expected_loss == pytest.approx(want.expected_loss, rel=1e-12)
    np.testing.assert_array_equal(got.labels, want.labels)
