"""The plugin workflow (issue 14, part 5): CLI errors that name the plugin, --param and
--initializer, the tiers in `salsox plugins`, an initialiser's once-per-search setup, `tune` on
any loss's parameter and `credible_ball` with any loss as its distance.

The example packages in plugins/ must be installed (see tests/test_plugins.py).
"""

from __future__ import annotations

import json
import math
from typing import Callable

import numpy as np
import pytest

import salsox
from conftest import load_draws
from salsox import cli
from salsox.losses import Binder, get_loss, loss_tier
from salsox.plugins import ContingencyLoss, CountSumLoss, DecomposableLoss, Initializer, PluginError
from salsox.search.initializers import initial_partitions

IRIS_SMALL = 60  # draws of iris used where a search must be quick


@pytest.fixture(scope="module")
def draws_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("workflow") / "iris.npy"
    np.save(path, load_draws("iris")[:IRIS_SMALL])
    return str(path)


def _cli(capsys, *args: str):
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def _pairs(counts: np.ndarray, n: int) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    return c * (c - 1) / 2


def _squares(counts: np.ndarray, n: int) -> np.ndarray:
    return np.asarray(counts, dtype=np.float64) ** 2


def _count_sum_binder() -> CountSumLoss:
    """Binder's loss (n-invariant) as a count-sum formula with parameters a and b."""
    return CountSumLoss(
        name="cs-binder",
        sums={"J": ("cell", _squares), "E": ("estimate", _squares), "D": ("draw", _squares)},
        formula="(a * D + b * E - (a + b) * J) / (n * n)",
        params={"a": 1.0, "b": 1.0},
    )


class _ScaledJaccard(CountSumLoss):
    """The Jaccard distance times a parameter: registered by class, with default_params."""

    name = "scaled-jaccard"
    sums = {"X": ("cell", _pairs), "B": ("estimate", _pairs), "A": ("draw", _pairs)}
    formula = "scale * where(A + B - X == 0, 0, 1 - X / (A + B - X))"
    default_params = {"scale": 1.0}


class _Zero(DecomposableLoss):
    def draw_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return np.zeros(len(counts))

    estimate_term = cell_term = draw_term


class _RaisingInit(_Zero):
    name = "raising-init"

    def __init__(self) -> None:
        raise RuntimeError("the loss cannot start")


class _RaisingParams(_Zero):
    name = "raising-params"

    @property
    def params(self):
        raise KeyError("no params today")


# ---------------------------------------------------------------------------------------------
# CLI errors raised in a plugin's code name the plugin
# ---------------------------------------------------------------------------------------------


def test_cli_names_the_plugin_whose_code_raised(runtime, capsys, draws_file):
    runtime(_RaisingInit)
    runtime(_RaisingParams)
    code, out, err = _cli(capsys, "estimate", draws_file, "--loss", "raising-init", "-q")
    line = _one_line(err)
    assert code == 1 and out == ""
    assert "internal error" not in line
    assert "loss 'raising-init' of plugin 'loss:raising-init' raised RuntimeError: the loss cannot start" in line
    code, _, err = _cli(capsys, "estimate", draws_file, "--loss", "raising-params", "--runs", "1", "--json", "-q")
    line = _one_line(err)
    assert code == 1 and "loss 'raising-params' of plugin 'loss:raising-params' raised KeyError" in line
    assert "no params today" in line
    # An installed plugin (entry point): named with its distribution.
    code, _, err = _cli(capsys, "estimate", draws_file, "--loss", "vi-plugin", "--a", "-1", "-q")
    line = _one_line(err)
    assert code == 1
    assert (
        "loss 'vi-plugin' of plugin 'example_losses' (from salsox-example-losses 0.1.0) raised ValueError: "
        "a and b must be > 0" in line
    )


def test_cli_names_a_raising_initializer_and_its_setup(runtime, capsys, draws_file):
    def broken(draws, max_clusters, rng):
        raise ZeroDivisionError("no start")

    def setup_fails(draws, max_clusters):
        raise MemoryError("no room for the PSM")

    runtime(Initializer("broken-start", broken))
    runtime(Initializer("broken-setup", lambda d, k, rng, state: np.zeros(d.shape[1], int), setup=setup_fails))
    code, _, err = _cli(capsys, "estimate", draws_file, "--initializer", "broken-start", "--runs", "2", "-q")
    line = _one_line(err)
    assert code == 1 and "internal error" not in line
    assert "initializer plugin 'broken-start'" in line and "ZeroDivisionError: no start" in line
    code, _, err = _cli(capsys, "estimate", draws_file, "--initializer", "broken-setup", "--runs", "2", "-q")
    line = _one_line(err)
    assert code == 1 and "initializer plugin 'broken-setup'" in line
    assert "setup raised MemoryError: no room for the PSM" in line


def test_salsox_bugs_are_still_internal_errors(monkeypatch, capsys, draws_file):
    """Only a plugin's frames make a plugin error: salsox's own bugs keep their label."""

    def boom(*args, **kwargs):
        raise ZeroDivisionError("deep inside")

    monkeypatch.setattr(salsox.search, "salso", boom)
    code, _, err = _cli(capsys, "estimate", draws_file, "--loss", "jaccard", "-q")
    assert code == 1 and "internal error: ZeroDivisionError: deep inside" in _one_line(err)


# ---------------------------------------------------------------------------------------------
# --param and --initializer
# ---------------------------------------------------------------------------------------------


def test_param_sets_plugin_and_builtin_parameters(runtime, capsys, draws_file):
    runtime(_ScaledJaccard)
    draws = np.load(draws_file)
    code, out, err = _cli(
        capsys, "estimate", draws_file, "--loss", "scaled-jaccard", "--param", "scale=2.5", "--runs", "3",
        "--seed", "4", "--json", "-q",
    )
    assert code == 0, err
    got = json.loads(out)
    assert got["loss"] == "scaled-jaccard" and got["loss_params"] == {"scale": 2.5}
    ref = salsox.salso(draws, _ScaledJaccard(scale=2.5), n_runs=3, seed=4)
    assert got["labels"] == ref.labels.tolist()
    assert got["expected_loss"] == pytest.approx(ref.expected_loss, rel=1e-12)
    # The example package's tabulated loss and a built-in one.
    code, out, err = _cli(
        capsys, "estimate", draws_file, "--loss", "vi-plugin", "--param", "a=0.5", "--param", "b=2", "--runs", "2",
        "--seed", "1", "--json", "-q",
    )
    assert code == 0, err
    assert json.loads(out)["loss_params"] == {"a": 0.5, "b": 2.0}
    code, out, err = _cli(
        capsys, "estimate", draws_file, "--loss", "binder", "--param", "a=3", "--runs", "2", "--seed", "1",
        "--json", "-q",
    )
    assert code == 0, err
    assert json.loads(out)["loss_params"] == {"a": 3.0, "b": 1.0}


@pytest.mark.parametrize(
    "args, code, needle",
    [
        (["--loss", "jaccard", "--param", "lam=1"], 2, "--param lam=1: loss 'jaccard' has no parameter 'lam'"),
        (["--loss", "VI", "--param", "c=1"], 2, "loss 'VI' has no parameter 'c' (its parameters: a, b)"),
        (
            ["--loss", "vi-plugin", "--param", "a=-1"], 2,
            "--param a=-1: loss 'vi-plugin' refused it: a and b must be > 0",
        ),
        (["--loss", "VI", "--param", "a=1", "--param", "a=2"], 2, "--param a is given twice"),
        (["--loss", "VI", "--param", "a"], 2, "expected NAME=VALUE"),
        (["--loss", "VI", "--param", "a=x"], 2, "the value of a must be a number, got 'x'"),
        (["--loss", "VI", "--param", "a=inf"], 2, "the value of a must be finite"),
        (["--initializer", "no-such-start"], 2, "unknown initializer 'no-such-start'; choose one of:"),
        (["--prob-initializer", "0.5"], 2, "--prob-initializer needs --initializer NAME"),
        (["--initializer", "psm-hclust", "--prob-initializer", "2"], 2, "--prob-initializer must be in [0, 1]"),
    ],
)
def test_param_and_initializer_errors(capsys, draws_file, args, code, needle):
    got, out, err = _cli(capsys, "estimate", draws_file, "--runs", "1", "-q", *args)
    assert got == code and out == ""
    assert needle in _one_line(err)


def test_initializer_option(capsys, draws_file):
    draws = np.load(draws_file)
    code, out, err = _cli(
        capsys, "estimate", draws_file, "--initializer", "psm-hclust-random", "--prob-initializer", "0.5",
        "--runs", "6", "--seed", "3", "--json", "-q",
    )
    assert code == 0, err
    got = json.loads(out)
    assert got["info"]["initializer"] == "psm-hclust-random"
    kinds = [r["initialization"] for r in got["info"]["runs"]]
    ref = salsox.salso(draws, "VI", initializer="psm-hclust-random", prob_initializer=0.5, n_runs=6, seed=3)
    assert kinds == [r["initialization"] for r in ref.info["runs"]] and "initializer" in kinds
    assert got["labels"] == ref.labels.tolist()


# ---------------------------------------------------------------------------------------------
# `salsox plugins`: tiers
# ---------------------------------------------------------------------------------------------


class _MyVI(salsox.VI):
    name = "my-vi"


def test_plugins_lists_tiers_and_initializers(runtime, capsys):
    runtime(_MyVI)
    runtime(_ScaledJaccard)
    code, out, err = _cli(capsys, "plugins")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["name", "kind", "tier", "status", "source"]
    rows = {line.split()[0]: line.split() for line in lines[1:] if not line.startswith(" ")}
    assert rows["vi-plugin"][:4] == ["vi-plugin", "loss", "tabulated", "ok"]
    assert rows["jaccard"][2] == "count-sum" and rows["scaled-jaccard"][2] == "count-sum"
    assert rows["omari-numpy"][2] == "general"
    assert rows["my-vi"][2] == "built-in"
    assert rows["psm-hclust"][1:4] == ["initializer", "setup+per", "search"]
    assert rows["psm-hclust-random"][1:4] == ["initializer", "setup+per", "run"]
    for name in ("binder", "VI", "omARI", "NVI", "ID", "NID", "VI.lb", "omARI.approx"):
        assert rows[name][1:3] == ["loss", "built-in"] and "(built" in rows[name]
    # The test extras install llvmlite: the formulas are compiled (salsox.engine.countsum_jit).
    assert lines[-1] == "count-sum formulas: compiled to machine code (llvmlite)"
    code, out, _ = _cli(capsys, "plugins", "--json")
    listed = {e["name"]: e for e in json.loads(out)}
    assert listed["jaccard"]["tier"] == "count-sum" and listed["VI"]["tier"] == "built-in"
    assert listed["psm-hclust"]["tier"] == "setup+per search" and listed["my-vi"]["plugin"] == "loss:my-vi"


def test_plugins_says_when_formulas_run_uncompiled(runtime, capsys, monkeypatch):
    runtime(_ScaledJaccard)
    from salsox.engine import countsum_jit

    def missing() -> None:
        raise ImportError("No module named 'llvmlite'")

    monkeypatch.setattr(countsum_jit, "_binding", missing)  # as if llvmlite were not installed
    code, out, _ = _cli(capsys, "plugins")
    assert code == 0
    assert out.splitlines()[-1] == (
        'count-sum formulas: the engine\'s node loops (pip install "salsox[jit]" compiles them: faster, the same '
        "results)"
    )


def test_loss_tier_of_each_kind():
    assert loss_tier(salsox.VI()) == loss_tier(salsox.losses.VILowerBound) == "built-in"
    assert loss_tier(get_loss("vi-plugin")) == "tabulated"
    assert loss_tier(_count_sum_binder()) == "count-sum"
    assert loss_tier(get_loss("omari-numpy")) == "general"
    assert loss_tier(object()) == loss_tier(int) == "unknown"


# ---------------------------------------------------------------------------------------------
# An initialiser's once-per-search setup
# ---------------------------------------------------------------------------------------------


def _counting_initializer(deterministic: bool = False):
    calls = {"setup": 0, "function": 0, "states": set()}
    token = object()

    def setup(draws, max_clusters):
        calls["setup"] += 1
        assert draws.shape[1] == 150 and not draws.flags.writeable
        return (token, np.asarray(draws[0]).copy())

    def function(draws, max_clusters, rng, state):
        calls["function"] += 1
        calls["states"].add(id(state[0]))
        labels = state[1].copy()
        labels[labels >= max_clusters] = 0
        return labels

    return Initializer("counting", function, setup=setup, deterministic=deterministic), calls, token


def test_setup_runs_once_per_search_not_per_run():
    draws = load_draws("iris")[:IRIS_SMALL]
    init, calls, token = _counting_initializer()
    est = salsox.salso(draws, "VI", initializer=init, prob_initializer=0.5, n_runs=8, seed=2, n_jobs=2)
    used = [r["initialization"] for r in est.info["runs"]].count("initializer")
    assert 0 < used < 8
    assert calls["setup"] == 1 and calls["function"] == used and calls["states"] == {id(token)}
    # A second search sets up again; a search in which no run uses it never does.
    salsox.salso(draws, "VI", initializer=init, n_runs=3, seed=2)
    assert calls["setup"] == 2 and calls["function"] == used + 3
    salsox.salso(draws, "VI", initializer=init, prob_initializer=0.0, n_runs=3, seed=2)
    assert calls["setup"] == 2
    # Deterministic: one setup and one call per search.
    init, calls, _ = _counting_initializer(deterministic=True)
    salsox.salso(draws, "VI", initializer=init, n_runs=5, seed=1)
    assert (calls["setup"], calls["function"]) == (1, 1)


def test_setup_is_checked():
    with pytest.raises(TypeError, match="setup must be callable"):
        Initializer("bad", lambda d, k, rng: None, setup=3)

    def setup(draws, max_clusters):
        raise ValueError("bad draws")

    init = Initializer("bad-setup", lambda d, k, rng, s: np.zeros(d.shape[1], int), setup=setup)
    with pytest.raises(PluginError, match="initializer plugin 'bad-setup': setup raised ValueError: bad draws") as info:
        salsox.salso(load_draws("iris")[:20], "VI", initializer=init, n_runs=1)
    assert isinstance(info.value.__cause__, ValueError)


def test_hclust_initializers_share_the_setup_tree():
    from salsox_hclust_init import average_linkage_labels, cut_merges, psm_linkage

    draws = load_draws("iris")[:IRIS_SMALL]
    truth = salsox.Draws(draws)
    distances = 1.0 - salsox.psm(draws)
    merges = psm_linkage(draws.astype(np.int32), 6)
    assert merges.shape == (149, 2)
    for k in (1, 3, 6, 150):
        np.testing.assert_array_equal(cut_merges(merges, k), average_linkage_labels(distances, k))
    det, _, _ = initial_partitions("psm-hclust", 1.0, truth, 5, 3, 0)
    want = salsox._validation.relabel_rows(average_linkage_labels(distances, 5)[None, :])[0]
    assert all((row == want).all() for row in det)
    seed, cap = 11, 7
    rand, used, name = initial_partitions("psm-hclust-random", 1.0, truth, cap, 6, seed)
    assert name == "psm-hclust-random" and used.all()
    for r, row in enumerate(rand):
        k = int(np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, r]))).integers(1, cap + 1))
        expected = salsox._validation.relabel_rows(average_linkage_labels(distances, k)[None, :])[0]
        np.testing.assert_array_equal(row, expected)
    assert len({int(row.max()) for row in rand}) > 1  # cut at different numbers of clusters


# ---------------------------------------------------------------------------------------------
# Loss.with_params
# ---------------------------------------------------------------------------------------------


def test_with_params_rebuilds_each_kind():
    assert Binder(a=1.0, b=2.0).with_params(a=3.0) == Binder(a=3.0, b=2.0)
    cs = _count_sum_binder()
    changed = cs.with_params(a=2.0)
    assert changed.params == {"a": 2.0, "b": 1.0} and cs.params == {"a": 1.0, "b": 1.0}
    draws = load_draws("iris")[:IRIS_SMALL]
    est = salsox.salso(draws, "binder", n_runs=1, seed=0).labels
    assert salsox.partition_loss(est, draws, changed) == pytest.approx(
        salsox.partition_loss(est, draws, Binder(a=2.0, b=1.0)), rel=1e-12
    )
    assert _ScaledJaccard().with_params(scale=3.0).params == {"scale": 3.0}
    assert get_loss("vi-plugin").with_params(b=2.0).params == {"a": 1.0, "b": 2.0}
    with pytest.raises(ValueError, match="loss 'cs-binder' has no parameter 'c'"):
        cs.with_params(c=1.0)
    with pytest.raises(ValueError, match="has no parameter 'a' \\(its parameters: none\\)"):
        salsox.losses.OMARI().with_params(a=1.0)

    class NoRebuild(ContingencyLoss):
        name = "no-rebuild"

        def __init__(self, table_scale):
            self.table_scale = table_scale

        @property
        def params(self):
            return {"lam": 1.0}

        def loss(self, tables):
            return np.zeros(len(tables))

    with pytest.raises(TypeError, match="cannot be rebuilt with new parameters.*override Loss.with_params"):
        NoRebuild(1.0).with_params(lam=2.0)


# ---------------------------------------------------------------------------------------------
# tune on any loss's parameter
# ---------------------------------------------------------------------------------------------


def _small_draws() -> np.ndarray:
    """30 draws of 8 items around four pairs: every partition can be enumerated (bell(8) = 4140)."""
    rng = np.random.default_rng(3)
    rows = []
    for _ in range(30):
        d = np.repeat([0, 1, 2, 3], 2)
        flip = rng.random(8) < 0.3
        d[flip] = rng.integers(0, 5, flip.sum())
        rows.append(d)
    return np.array(rows)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 8])
def test_tune_a_count_sum_parameter_against_brute_force(k):
    draws = _small_draws()
    result = salsox.tune(draws, _count_sum_binder(), k, param="a", max_clusters=8, n_runs=8, seed=0)
    assert result.param == "a" and result.loss.params["a"] == result.value == result.a and result.b == 1.0
    assert result.estimate.n_clusters == k
    assert [set(h) for h in result.history] == [{"a", "n_clusters", "expected_loss"}] * len(result.history)
    exact = salsox.minimize_by_enumeration(draws, result.loss)
    assert exact.n_clusters == k
    assert result.estimate.expected_loss == pytest.approx(exact.expected_loss, rel=1e-12)
    # The same loss built in, whose direction is known, reaches the same value.
    builtin = salsox.tune(draws, "binder", k, max_clusters=8, n_runs=8, seed=0)
    assert builtin.value == pytest.approx(result.value, rel=1e-12)


def test_tune_finds_the_direction_and_uses_bounds():
    draws = _small_draws()
    # b of a plugin loss: clusters rise as it grows (found from the searches, not known).
    up = salsox.tune(draws, "vi-plugin", 6, param="b", max_clusters=8, n_runs=8, seed=0)
    assert up.estimate.n_clusters == 6 and up.value > 1.0 and up.a == 1.0
    assert salsox.minimize_by_enumeration(draws, up.loss).n_clusters == 6
    down = salsox.tune(draws, "vi-plugin", 2, param="b", max_clusters=8, n_runs=8, seed=0)
    assert down.estimate.n_clusters == 2 and down.value < 1.0
    # Bounds: a linear bisection from a value of 0, on a parameter that may be 0.
    lin = salsox.tune(draws, _count_sum_binder(), 3, param="a", bounds=(0.0, 30.0), max_clusters=8, n_runs=8, seed=0)
    assert lin.estimate.n_clusters == 3 and 0.0 < lin.value < 30.0
    assert salsox.minimize_by_enumeration(draws, lin.loss).n_clusters == 3
    assert lin.history[0]["a"] == 0.0 and lin.history[1]["a"] == 30.0


def test_tune_a_registered_loss_by_name_and_its_setup_per_search(runtime):
    draws = _small_draws()
    runtime(_ScaledJaccard)
    # scale multiplies the loss: the estimate never changes, so no value reaches 1 cluster.
    with pytest.raises(ValueError, match=r"n_clusters=1 is unreachable: even scale=.* gives 4 clusters"):
        salsox.tune(draws, "scaled-jaccard", 1, n_runs=2, seed=0, max_evaluations=100)
    setups = []
    init = Initializer(
        "start-zero", lambda d, k, rng, s: np.zeros(d.shape[1], int), setup=lambda d, k: setups.append(k)
    )
    result = salsox.tune(
        draws, _count_sum_binder(), 2, param="a", n_runs=4, seed=0, initializer=init, max_clusters=8
    )
    assert result.estimate.n_clusters == 2
    assert setups == [8] * len(result.history)  # once per search, not per run


def test_tune_argument_errors():
    draws = _small_draws()
    renamed = CountSumLoss(
        name="cs-binder-renamed",
        sums={"J": ("cell", _squares), "E": ("estimate", _squares), "D": ("draw", _squares)},
        formula="(lam * D + c * E - (lam + c) * J) / (n * n)",
        params={"lam": 1.0, "c": 1.0},
    )
    with pytest.raises(ValueError, match="'cs-binder-renamed' has the parameters lam, c and none called a: name the "
                                         "one to tune with param="):
        salsox.tune(draws, renamed, 2)
    with pytest.raises(ValueError, match="param: loss 'VI' has no parameter 'c'"):
        salsox.tune(draws, "VI", 2, param="c")
    with pytest.raises(ValueError, match="unreachable within the bounds .*a=2 gives .* and a=3 gives"):
        salsox.tune(draws, "binder", 8, bounds=(2.0, 3.0), n_runs=2, seed=0)
    with pytest.raises(ValueError, match="bounds must be finite with low < high"):
        salsox.tune(draws, "binder", 2, bounds=(3.0, 2.0))
    zero = _count_sum_binder().with_params(a=0.0)
    with pytest.raises(ValueError, match="parameter 'a' of loss 'cs-binder' is 0; .* give bounds"):
        salsox.tune(draws, zero, 2, param="a")
    with pytest.raises(ValueError, match="b: loss 'omARI' has no parameter b"):
        salsox.tune(draws, "omARI", 2, b=2.0)


# ---------------------------------------------------------------------------------------------
# credible_ball with any loss as its distance
# ---------------------------------------------------------------------------------------------


def _jaccard_numpy(x: np.ndarray, y: np.ndarray) -> float:
    same_x = x[:, None] == x[None, :]
    same_y = y[:, None] == y[None, :]
    upper = np.triu(np.ones_like(same_x), 1)
    both = (same_x & same_y & upper).sum()
    either = ((same_x | same_y) & upper).sum()
    return 0.0 if either == 0 else 1.0 - both / either


def _ball_reference(centre: np.ndarray, draws: np.ndarray, distance: Callable, level: float):
    """mcclust.ext's recipe with a given distance: sort, keep ceil(level H), the three bounds."""
    d = np.array([distance(row, centre) for row in draws])
    order = np.argsort(d, kind="stable")
    ball = order[: math.ceil(level * len(d) - 1e-9 * len(d))]
    k = np.array([len(np.unique(row)) for row in draws])
    radius = d[ball].max()
    fewest = ball[k[ball] == k[ball].min()]
    most = ball[k[ball] == k[ball].max()]
    return d, radius, d[fewest].max(), d[most].max(), ball


@pytest.mark.parametrize("name", ["jaccard", "fowlkes-mallows"])
def test_credible_ball_with_a_count_sum_plugin_loss_matches_numpy(name):
    draws = load_draws("iris")[:200:2]
    centre = salsox.salso(draws, "VI", n_runs=2, seed=0).labels
    ball = salsox.credible_ball(centre, draws, name, 0.9)
    if name == "jaccard":
        distance = _jaccard_numpy
    else:

        def distance(x, y):
            t = np.zeros((x.max() + 1, y.max() + 1))
            np.add.at(t, (x, y), 1)
            pairs = lambda c: (c * (c - 1) / 2).sum()
            a, b, j = pairs(t.sum(1)), pairs(t.sum(0)), pairs(t)
            return 0.0 if a == b == 0 else (1.0 if a * b == 0 else 1.0 - j / math.sqrt(a * b))

    d, radius, upper, lower, members = _ball_reference(centre, draws, distance, 0.9)
    np.testing.assert_allclose(ball.distances, d, rtol=1e-12, atol=1e-15)
    assert ball.loss.name == name and ball.radius == pytest.approx(radius, rel=1e-12)
    assert ball.upper_vertical.distance == pytest.approx(upper, rel=1e-12)
    assert ball.lower_vertical.distance == pytest.approx(lower, rel=1e-12)
    assert set(np.flatnonzero(ball.in_ball)) == set(members.tolist())


def test_credible_ball_with_tabulated_general_and_builtin_losses():
    draws = load_draws("iris")[:40]
    centre = salsox.salso(draws, "VI", n_runs=2, seed=0).labels
    vi = salsox.credible_ball(centre, draws, "VI", 0.8)
    tab = salsox.credible_ball(centre, draws, "vi-plugin", 0.8)  # tabulated, a = b
    np.testing.assert_allclose(tab.distances, vi.distances, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(tab.in_ball, vi.in_ball)
    omari = salsox.credible_ball(centre, draws, "omARI", 0.8)
    general = salsox.credible_ball(centre, draws, "omari-numpy", 0.8)  # the generic (callback) path
    np.testing.assert_allclose(general.distances, omari.distances, rtol=1e-9, atol=1e-12)
    ari = np.array([salsox.ARI(row, centre) for row in draws])
    np.testing.assert_allclose(omari.distances, 1.0 - ari, rtol=1e-9, atol=1e-12)
    assert general.radius == pytest.approx(omari.radius, rel=1e-9)
    # A count-sum loss given as an instance.
    cs = salsox.credible_ball(centre, draws, _count_sum_binder(), 0.8)
    binder = salsox.credible_ball(centre, draws, "binder", 0.8)
    np.testing.assert_allclose(cs.distances, binder.distances, rtol=1e-9, atol=1e-12)


def test_credible_ball_refuses_asymmetric_losses():
    draws = load_draws("iris")[:40]
    centre = salsox.salso(draws, "VI", n_runs=1, seed=0).labels
    with pytest.raises(ValueError, match="loss 'vi-plugin' is not symmetric"):
        salsox.credible_ball(centre, draws, get_loss("vi-plugin", a=0.5, b=1.0))
    with pytest.raises(ValueError, match="loss 'cs-binder' is not symmetric"):
        salsox.credible_ball(centre, draws, _count_sum_binder().with_params(b=3.0))


def test_cli_ball_with_a_plugin_distance(capsys, draws_file, tmp_path):
    draws = np.load(draws_file)
    labels = tmp_path / "centre.txt"
    centre = salsox.salso(draws, "VI", n_runs=1, seed=0).labels
    np.savetxt(labels, centre, fmt="%d")
    code, out, err = _cli(capsys, "ball", draws_file, "--labels", str(labels), "--distance", "jaccard", "--json")
    assert code == 0, err
    got = json.loads(out)
    ref = salsox.credible_ball(centre, draws, "jaccard")
    assert got["loss"] == "jaccard" and got["radius"] == pytest.approx(ref.radius, rel=1e-12)
