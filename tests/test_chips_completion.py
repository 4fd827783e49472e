"""CHIPS completion (chips(..., complete=), ChipsResult.threshold), the `salsox chips` command and
plots.plot_chips (issue 16)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import salsox
from salsox import cli
from salsox.enumeration import set_partitions
from salsox.losses import get_loss
from reference import noisy_draws


def _noisy(seed: int, H: int = 80, n: int = 8, k: int = 3, p: float = 0.2) -> np.ndarray:
    return noisy_draws(seed, H=H, n=n, k=k, p=p)


def _best_completion(draws: np.ndarray, loss: str, sub: np.ndarray) -> float:
    """Smallest expected loss over the partitions that keep the sub-partition's clusters."""
    parts = set_partitions(draws.shape[1]).astype(np.int32)
    on = np.flatnonzero(sub >= 0)
    same = sub[on][:, None] == sub[on][None, :]
    ok = np.array([np.array_equal(p[on][:, None] == p[on][None, :], same) for p in parts])
    return float(np.min(salsox.partition_loss(parts[ok], draws, loss)))


@pytest.mark.parametrize("loss", ["VI", "binder", "omARI"])
def test_completion_is_the_best_partition_keeping_the_chips_clusters(loss: str) -> None:
    draws = _noisy(2)
    res = salsox.chips(draws, 0.5, n_runs=16, seed=1, loss=loss, n_jobs=1)
    assert res.mode == "single" and 0 < res.n_items < 8
    est = res.completed
    assert est is not None and est.loss.name == get_loss(loss).name
    on = res.labels >= 0
    # Allocated items keep their clusters: equal CHIPS labels together, different apart.
    np.testing.assert_array_equal(
        est.labels[on][:, None] == est.labels[on][None, :], res.labels[on][:, None] == res.labels[on][None, :]
    )
    assert est.expected_loss == pytest.approx(_best_completion(draws, loss, res.labels), abs=1e-9)


def test_completion_options_and_defaults() -> None:
    draws = _noisy(3)
    # Path and all-candidates modes are not completed; asking for it there is an error.
    assert salsox.chips(draws, n_runs=4, seed=0).completed is None
    assert salsox.chips(draws, 0.5, n_runs=4, seed=0, complete=False).completed is None
    with pytest.raises(ValueError, match="complete"):
        salsox.chips(draws, n_runs=4, seed=0, complete=True)
    with pytest.raises(TypeError, match="complete"):
        salsox.chips(draws, 0.5, n_runs=4, seed=0, complete="yes")
    # R's procedure: random labels for the free items, then sweetening only.
    r_like = salsox.chips(draws, 0.5, n_runs=4, seed=0, complete=dict(prob_sequential=0, max_zealous=0))
    assert r_like.completed is not None
    assert {r["initialization"] for r in r_like.completed.info["runs"]} == {"random"}
    assert all(r["zealous_attempts"] == 0 for r in r_like.completed.info["runs"])
    # max_clusters below the CHIPS clusters: the completion's clear error.
    k = int(r_like.labels.max()) + 1
    assert k >= 2
    with pytest.raises(ValueError, match=f"max_clusters={k - 1} is below the {k} clusters of the CHIPS sub-partition"):
        salsox.chips(draws, 0.5, n_runs=4, seed=0, max_clusters=k - 1)


def test_threshold_from_the_path_completes_too() -> None:
    draws = _noisy(4, H=100, n=8)
    path = salsox.chips(draws, n_runs=8, seed=2, loss="binder")
    th = path.threshold(0.5)
    assert th.completed is not None and th.completed.loss.name == "binder"
    assert th.completed.expected_loss == pytest.approx(_best_completion(draws, "binder", th.labels), abs=1e-9)
    assert path.threshold(0.5, complete=False).completed is None


def test_completion_does_not_depend_on_threads() -> None:
    draws = _noisy(5, n=14)
    got = [salsox.chips(draws, 0.4, n_runs=8, seed=7, n_jobs=j) for j in (1, 3)]
    np.testing.assert_array_equal(got[0].labels, got[1].labels)
    np.testing.assert_array_equal(got[0].completed.labels, got[1].completed.labels)


def test_cli_chips_json_and_text(tmp_path, capsys) -> None:
    draws = _noisy(6, n=8)
    path = tmp_path / "draws.csv"
    np.savetxt(path, draws, fmt="%d", delimiter=",")
    assert cli.main(["chips", str(path), "--threshold", "0.5", "--seed", "3", "--runs", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = salsox.chips(draws, 0.5, n_runs=8, seed=3)
    assert out["mode"] == "single" and out["labels"] == ref.labels.tolist()
    assert out["probability"] == ref.probability and out["n_items"] == ref.n_items
    assert out["unallocated"]["items"] == ref.unallocated.items.tolist()
    assert out["completed"]["labels"] == ref.completed.labels.tolist()
    assert out["cluster_probability"] == pytest.approx(list(ref.cluster_probability))
    # Text: one line per item, CHIPS label then completed label.
    assert cli.main(["chips", str(path), "--threshold", "0.5", "--seed", "3", "--runs", "8"]) == 0
    lines = capsys.readouterr().out.split()
    rows = [f"{i},{a},{b}" for i, (a, b) in enumerate(zip(ref.labels, ref.completed.labels))]
    assert lines == ["item,chips,completed"] + rows
    # Threshold 0: the path table.
    assert cli.main(["chips", str(path), "--seed", "3", "--runs", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    path_ref = salsox.chips(draws, n_runs=8, seed=3)
    assert out["auc"] == pytest.approx(path_ref.auc)
    assert [r["n_items"] for r in out["path"]] == path_ref.n_items.tolist()
    assert cli.main(["chips", str(path), "--threshold", "1.5"]) != 0
    assert "threshold" in capsys.readouterr().err


def test_plot_chips_renders(tmp_path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt

    from salsox.datasets import example_draws
    from salsox.plots import plot_chips

    ex = example_draws()
    res = salsox.chips(ex.draws, 0.5, n_runs=8, seed=0, complete=False)
    assert len(res.unallocated.items) > 0 and res.n_items > 0
    for data in (None, ex.data):
        ax = plot_chips(res, data)
        # The open circles of the unallocated items (underneath, sized by p - q_i), then the clusters.
        collections = ax.collections
        assert len(collections) == int(res.labels.max()) + 2
        grey = collections[0]
        assert grey.get_zorder() < min(c.get_zorder() for c in collections[1:])
        assert len(grey.get_offsets()) == len(res.unallocated.items)
        drop = res.probability - res.unallocated.q
        assert np.argmax(grey.get_sizes()) == np.argmax(drop)
        file = tmp_path / "chips.png"
        ax.figure.savefig(file, dpi=50)
        assert mpimg.imread(str(file))[..., :3].std() > 0.05
        plt.close(ax.figure)
    with pytest.raises(ValueError, match="single"):
        plot_chips(salsox.chips(ex.draws, n_runs=2, seed=0))
    with pytest.raises(ValueError, match="data has 3 rows but the result has 100 items"):
        plot_chips(res, ex.data[:3])
