"""salsox.tune: bisection on the cost a for a wanted number of clusters."""

from __future__ import annotations

import numpy as np
import pytest

import salsox
from conftest import load_draws


@pytest.fixture(scope="module")
def iris():
    return load_draws("iris")


@pytest.mark.parametrize("loss,k", [("binder", 3), ("binder", 1), ("binder", 10), ("VI", 4), ("VI", 6)])
def test_reaches_wanted_clusters_on_iris(iris, loss, k):
    result = salsox.tune(iris, loss, k, n_runs=2, seed=5)
    assert result.estimate.n_clusters == k
    assert result.b == 1.0 and result.loss.a == result.a and result.loss.b == 1.0
    assert result.loss.name == ("binder" if loss == "binder" else "VI")
    assert result.history[-1]["a"] == result.a and result.history[-1]["n_clusters"] == k
    # Reproducible: the same search at that a gives the same estimate.
    again = salsox.salso(iris, result.loss, n_runs=2, seed=5, max_clusters=result.estimate.info["max_clusters"])
    assert np.array_equal(again.labels, result.estimate.labels)
    expected = salsox.partition_loss(result.estimate.labels, iris, result.loss)
    assert result.estimate.expected_loss == pytest.approx(expected)


def test_direction_and_history_on_galaxy():
    draws = load_draws("galaxy")[:2000]
    result = salsox.tune(draws, "VI", 5, n_runs=2, seed=1)
    assert result.estimate.n_clusters == 5
    # VI(1, 1) gives fewer clusters here, so a must have gone down (a < b: more clusters).
    assert result.history[0]["a"] == 1.0 and result.history[0]["n_clusters"] < 5
    assert result.a < 1.0
    # Bisection brackets: every a tried below the answer gives >= 5 clusters, above <= 5,
    # up to the search's small non-monotonicities.
    ks = {h["a"]: h["n_clusters"] for h in result.history}
    assert ks[min(ks)] >= 5 and ks[max(ks)] <= 5
    assert "TuneResult(loss=VI(" in repr(result)


def test_b_is_fixed_and_the_ratio_matters(iris):
    result = salsox.tune(iris, "binder", 3, b=2.0, n_runs=2, seed=5)
    assert result.b == 2.0 and result.estimate.n_clusters == 3
    assert result.loss == salsox.Binder(a=result.a, b=2.0)


def test_jump_over_k_is_a_clear_error():
    # Half the draws put everything together, half split 3 x 10. The expected Binder losses
    # are proportional to 3b (one cluster), 3a (three clusters) and 2a + b (two), so two
    # clusters are never optimal: the estimate jumps from 3 to 1 clusters as a passes b.
    together = np.zeros(30, dtype=int)
    split = np.repeat([0, 1, 2], 10)
    draws = np.array([together, split] * 5)
    assert salsox.tune(draws, "binder", 3, n_runs=2, seed=0).estimate.n_clusters == 3
    assert salsox.tune(draws, "binder", 1, n_runs=2, seed=0).estimate.n_clusters == 1
    with pytest.raises(ValueError, match=r"n_clusters=2 is unreachable .* jumps from 3 clusters at a=.* to 1 clusters"):
        salsox.tune(draws, "binder", 2, n_runs=2, seed=0)


def test_unreachable_counts_are_refused(iris):
    with pytest.raises(ValueError, match="only 150 items"):
        salsox.tune(iris, "binder", 151)
    with pytest.raises(ValueError, match="unreachable with max_clusters=4"):
        salsox.tune(iris, "binder", 5, max_clusters=4)
    # Every draw identical: a cannot change the estimate, whose loss is 0 at that partition.
    same = np.tile(np.repeat([0, 1, 2], 4), (5, 1))
    with pytest.raises(ValueError, match="unreachable: even a=.* gives 3 clusters"):
        salsox.tune(same, "binder", 1, n_runs=1, seed=0)


def test_bad_arguments(iris):
    with pytest.raises(ValueError, match="loss 'omARI' has no parameters to tune"):
        salsox.tune(iris, "omARI", 2)
    with pytest.raises(TypeError, match="n_clusters is required"):
        salsox.tune(iris, "binder")
    with pytest.raises(ValueError, match="n_clusters must be >= 1"):
        salsox.tune(iris, "binder", 0)
    with pytest.raises(ValueError, match="b must be finite and > 0"):
        salsox.tune(iris, "binder", 2, b=-1.0)
    with pytest.raises(ValueError, match="max_evaluations"):
        salsox.tune(iris, "binder", 4, n_runs=1, seed=5, max_evaluations=2)


# --- one default parameter for Python and the shell; R's scale beside the paper's (issue 47) ---


def _plogp(counts, n):
    p = counts / n
    return p * np.log2(np.where(counts > 0, p, 1.0))


def _vi_costs(name: str, first: str, second: str):
    """VI as a count sum whose two costs are called ``first`` and ``second``."""
    from salsox.plugins import CountSumLoss

    return CountSumLoss(
        name, {"D": ("draw", _plogp), "E": ("estimate", _plogp), "C": ("cell", _plogp)},
        f"{first} * D + {second} * E - ({first} + {second}) * C", params={first: 1.0, second: 1.0},
    )


def test_default_param_is_one_rule():
    from salsox.search.tuning import default_param

    assert default_param(salsox.Binder()) == "a" and default_param(salsox.VI(a=2, b=1)) == "a"
    assert default_param(_vi_costs("vi-ab", "b", "a")) == "a"  # the cost a, wherever it is listed
    with pytest.raises(ValueError, match="the parameters lam, c and none called a: name the one to tune"):
        default_param(_vi_costs("vi-lam", "lam", "c"))
    with pytest.raises(ValueError, match="'omARI' has no parameters to tune"):
        default_param(salsox.OMARI())


@pytest.mark.parametrize("loss", ["vi-plugin", "binder", "VI"])
def test_python_and_shell_tune_the_same_parameter_by_default(iris, capsys, tmp_path, loss):
    import json

    from salsox import cli

    draws = iris[:60]
    path = tmp_path / "draws.npy"
    np.save(path, draws)
    expected = salsox.tune(draws, loss, 4, n_runs=2, seed=3)  # no param: the shared default
    assert expected.param == "a"
    assert cli.main(["tune", str(path), "-k", "4", "--loss", loss, "--runs", "2", "--seed", "3", "--json", "-q"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["param"] == expected.param and got["value"] == expected.value
    assert got["labels"] == expected.estimate.labels.tolist()


def test_a_loss_with_two_parameters_but_no_a_needs_one_named_in_python_and_on_the_shell(iris, capsys, tmp_path,
                                                                                         runtime):
    from salsox import cli

    runtime(_vi_costs("vi-lam-c", "lam", "c"))
    draws = iris[:60]
    path = tmp_path / "draws.npy"
    np.save(path, draws)
    with pytest.raises(ValueError, match="name the one to tune with param="):
        salsox.tune(draws, "vi-lam-c", 4)
    assert cli.main(["tune", str(path), "-k", "4", "--loss", "vi-lam-c", "-q"]) == 2
    assert "--loss vi-lam-c: loss 'vi-lam-c' has the parameters lam, c and none called a: name the one to tune with " \
        "--tune (see salsox tune --help)" in capsys.readouterr().err
    named = salsox.tune(draws, "vi-lam-c", 4, param="lam", n_runs=2, seed=3)
    assert cli.main(["tune", str(path), "-k", "4", "--loss", "vi-lam-c", "--tune", "lam", "--runs", "2", "--seed",
                     "3", "--json", "-q"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["value"] == named.value


@pytest.mark.parametrize("loss, cls", [("binder", salsox.Binder), ("VI", salsox.VI)])
def test_tune_reports_a_on_rs_scale_too(iris, capsys, tmp_path, loss, cls):
    import json

    from salsox import cli

    draws = iris[:60]
    res = salsox.tune(draws, loss, 3, n_runs=2, seed=3)
    a, b = res.loss.a, res.loss.b
    assert res.r_a == pytest.approx(2 * a / (a + b), rel=1e-15) and 0 < res.r_a < 2
    assert f"R's a={res.r_a:.6g}" in repr(res)
    # R's loss (costs summing to 2) is the paper's times 2 / (a + b): the same estimate.
    r_loss = cls.from_r(res.r_a)
    assert salsox.partition_loss(res.estimate, draws, r_loss) == pytest.approx(
        res.estimate.expected_loss * 2 / (a + b), rel=1e-9
    )
    assert salsox.tune(draws, loss, 3, b=0.5, n_runs=2, seed=3).r_a == pytest.approx(res.r_a, rel=1e-3)
    # Other losses have no R scale.
    assert salsox.tune(draws, "vi-plugin", 3, n_runs=2, seed=3).r_a is None
    path = tmp_path / "draws.npy"
    np.save(path, draws)
    assert cli.main(["tune", str(path), "-k", "3", "--loss", loss, "--runs", "2", "--seed", "3", "--json", "-q"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["r_a"] == res.r_a and got["a"] == a
    assert cli.main(["tune", str(path), "-k", "3", "--loss", loss, "--runs", "2", "--seed", "3", "-q"]) == 0
    assert f"(R salso: {res.loss.name}(a={res.r_a:.8g}))" in capsys.readouterr().err
    assert cli.main(["tune", str(path), "-k", "3", "--loss", "vi-plugin", "--runs", "2", "--seed", "3", "-q"]) == 0
    assert "R salso" not in capsys.readouterr().err
