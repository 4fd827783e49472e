"""Plugins from the shell and the notebook (issue 40): tune and ball with a plugin's loss and
its parameters, get_loss with parameters, failing constructors and double registration named,
float labels from initialisers, and which scorer a count-sum loss got."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import salsox
from salsox import cli
from salsox.datasets import example_draws
from salsox.losses import get_loss
from salsox.plugins import CountSumLoss, DecomposableLoss, Initializer, PluginError

DRAWS = example_draws().draws[:200]


@pytest.fixture(scope="module")
def draws_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("shell") / "draws.npy"
    np.save(path, DRAWS)
    return str(path)


def run(capsys, *args: str) -> tuple:
    code = cli.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def plogp(counts, n):
    p = counts / n
    return p * np.log2(np.where(counts > 0, p, 1.0))


def vi_with(lam: float = 1.0, c: float = 1.0, name: str = "vi-two-params") -> CountSumLoss:
    """VI with costs a = lam and b = c, as a count sum with two parameters."""
    return CountSumLoss(
        name, {"D": ("draw", plogp), "E": ("estimate", plogp), "C": ("cell", plogp)},
        "lam * D + c * E - (lam + c) * C", params={"lam": lam, "c": c},
    )


# --- tune and ball from the shell -------------------------------------------------------------


def test_tune_takes_a_plugins_loss_and_its_parameters(capsys, draws_file) -> None:
    code, out, err = run(capsys, "tune", draws_file, "-k", "4", "--loss", "vi-plugin", "--param", "b=0.5",
                         "--seed", "1", "--json", "-q")
    assert code == 0, err
    got = json.loads(out)
    expected = salsox.tune(DRAWS, get_loss("vi-plugin", b=0.5), 4, param="a", seed=1)
    assert got["param"] == "a" and got["loss_params"]["b"] == 0.5
    assert got["value"] == pytest.approx(expected.value) and got["n_clusters"] == 4
    assert got["labels"] == expected.estimate.labels.tolist()


def test_tune_names_the_parameter_of_a_runtime_plugin(capsys, draws_file, runtime) -> None:
    runtime(vi_with())
    code, out, err = run(capsys, "tune", draws_file, "-k", "5", "--loss", "vi-two-params", "--tune", "lam",
                         "--param", "c=1", "--seed", "2", "--json", "-q")
    assert code == 0, err
    got = json.loads(out)
    expected = salsox.tune(DRAWS, vi_with(), 5, param="lam", seed=2)
    assert got["param"] == "lam" and got["value"] == pytest.approx(expected.value)
    assert got["labels"] == expected.estimate.labels.tolist()
    # an unknown --param is a bad argument: one line, exit status 2
    code, out, err = run(capsys, "tune", draws_file, "-k", "5", "--loss", "vi-two-params", "--tune", "lam",
                         "--param", "zeta=1")
    assert code == 2 and "--param zeta=1" in err and "lam, c" in err


def test_ball_takes_a_plugin_distance_with_its_parameters(capsys, draws_file, tmp_path: Path) -> None:
    labels = tmp_path / "centre.txt"
    centre = salsox.salso(DRAWS, seed=1)
    labels.write_text("\n".join(map(str, centre.labels.tolist())))
    code, out, err = run(capsys, "ball", draws_file, "--labels", str(labels), "--distance", "vi-plugin",
                         "--distance-param", "a=2", "--distance-param", "b=2", "--json")
    assert code == 0, err
    got = json.loads(out)
    expected = salsox.credible_ball(centre.labels, DRAWS, get_loss("vi-plugin", a=2, b=2))
    assert got["radius"] == pytest.approx(expected.radius)
    plain = salsox.credible_ball(centre.labels, DRAWS, "VI")
    assert expected.radius == pytest.approx(2 * plain.radius)  # the parameters were applied
    code, out, err = run(capsys, "ball", draws_file, "--labels", str(labels), "--distance", "vi-plugin",
                         "--param", "a=2")
    assert code == 2 and "--distance-param" in err


# --- the notebook -----------------------------------------------------------------------------


def test_get_loss_takes_a_plugins_parameters(runtime) -> None:
    assert get_loss("vi-plugin", b=0.5).params == {"a": 1.0, "b": 0.5}
    runtime(vi_with())
    loss = get_loss("vi-two-params", lam=0.25)
    assert loss.params == {"lam": 0.25, "c": 1.0} and loss == vi_with(lam=0.25)
    with pytest.raises(ValueError, match=r"no parameter 'zeta' \(its parameters: lam, c\)"):
        get_loss("vi-two-params", zeta=1)
    with pytest.raises(ValueError, match="loss 'VI' has no parameter 'lam'"):
        get_loss("VI", lam=1)


class _Refuses(DecomposableLoss):
    name = "refuses-to-start"

    def __init__(self) -> None:
        raise RuntimeError("no licence file")

    def draw_term(self, counts, n):  # pragma: no cover - never built
        return counts

    estimate_term = cell_term = draw_term


def test_a_failing_constructor_is_reported_naming_the_plugin(runtime) -> None:
    runtime(_Refuses, name="licensed-losses")
    for call in (lambda: get_loss("refuses-to-start"), lambda: salsox.salso(DRAWS, "refuses-to-start")):
        with pytest.raises(PluginError, match="loss 'refuses-to-start' of plugin 'licensed-losses' raised "
                                              "RuntimeError: no licence file"):
            call()


def test_registering_a_name_twice_says_to_unregister_first(runtime) -> None:
    runtime(vi_with(), name="my-losses")
    with pytest.raises(PluginError, match=r"already registered under the name 'my-losses'; unregister it first"):
        salsox.plugins.register(vi_with(lam=2), name="my-losses")
    loss = vi_with(name="another-vi")
    name = runtime(loss)
    with pytest.raises(PluginError, match=f"unregister it first: salsox.plugins.unregister\\(name='{name}'\\)"):
        salsox.plugins.register(loss)


def test_initialisers_may_return_integral_float_labels(runtime) -> None:
    def kmeans_like(draws, k, rng):
        return (draws[0] % 3).astype(np.float64)  # 0.0, 1.0, 2.0, as many k-means return

    def as_ints(draws, k, rng):
        return draws[0] % 3

    runtime(Initializer("float-starts", kmeans_like, deterministic=True))
    runtime(Initializer("int-starts", as_ints, deterministic=True))
    a = salsox.salso(DRAWS, initializer="float-starts", seed=3, n_runs=4)
    b = salsox.salso(DRAWS, initializer="int-starts", seed=3, n_runs=4)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.expected_loss == b.expected_loss


# --- which scorer ------------------------------------------------------------------------------


def _without_llvmlite(monkeypatch) -> None:
    """llvmlite as if not installed: formulas are not compiled (read when an engine form is built)."""
    from salsox.engine import countsum_jit

    def missing() -> None:
        raise ImportError("No module named 'llvmlite'")

    monkeypatch.setattr(countsum_jit, "_binding", missing)


@pytest.mark.parametrize("llvmlite", ["missing", "installed"])
def test_describe_says_which_scorer_and_whether_compiled(monkeypatch, llvmlite: str) -> None:
    from salsox.engine import countsum_jit

    if llvmlite == "missing":
        _without_llvmlite(monkeypatch)
    additive = vi_with().describe()
    jaccard = get_loss("jaccard").describe()
    assert "formula: lam * D + c * E - (lam + c) * C" in additive and "scorer: tabulated" in additive
    if not countsum_jit.kernel_available():
        assert "scorer: dense (every draw x candidate cluster)\n" in jaccard + "\n"
        assert 'compiled: no (llvmlite is not installed: pip install "salsox[jit]")' in jaccard
    else:
        assert "scorer: dense (every draw x candidate cluster, in compiled code)" in jaccard
        assert "compiled: yes" in jaccard
    assert salsox.VI().describe().splitlines()[0] == "loss: VI(a=1.0, b=1.0)"


def test_plugins_verbose_lists_scorer_and_compilation(capsys, monkeypatch) -> None:
    _without_llvmlite(monkeypatch)
    code, out, err = run(capsys, "plugins", "--verbose")
    assert code == 0, err
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("jaccard "))
    assert lines[at + 1].strip().startswith("scorer: dense")
    assert lines[at + 2].strip() == 'compiled: no (llvmlite is not installed: pip install "salsox[jit]")'
    code, out, err = run(capsys, "plugins", "--verbose", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["jaccard"]["compiled"].startswith("no (llvmlite is not installed") and "scorer" not in rows["VI"]
    code, out, err = run(capsys, "plugins")
    assert "scorer:" not in out
