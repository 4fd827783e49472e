"""What a notebook shows of CHIPS, WASABI and Summary results: names, tables, HTML, the user's
cluster labels; and the WASABI pictures' details."""

from __future__ import annotations

import json

import numpy as np
import pytest

import salsox
from salsox import plots
from salsox.datasets import example_draws

pd = pytest.importorskip("pandas")


@pytest.fixture
def mpl():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


@pytest.fixture(scope="module")
def named_draws():
    ex = example_draws()
    return pd.DataFrame(np.asarray(ex.draws), columns=[f"it{i}" for i in range(ex.draws.shape[1])])


def test_chips_result_views(named_draws):
    res = salsox.chips(named_draws, 0.9, seed=1)
    names = list(named_draws.columns)
    assert list(res.item_names) == names
    series = res.to_series()
    assert list(series.index) == names and (series.to_numpy() == res.labels).all()
    frame = res.to_dataframe()
    u = res.unallocated
    np.testing.assert_array_equal(frame["q"].to_numpy()[u.items], u.q)
    assert frame["q"].isna().sum() == res.n_items
    np.testing.assert_array_equal(frame["completed"].to_numpy(), res.completed.labels)
    text = str(res)
    worst = u.items[np.argmin(u.q)]
    assert text.startswith(f"CHIPS: {res.n_items} of 100 items allocated")
    assert f"least certain: {names[worst]} (q {u.q.min():.2f})" in text
    html = res._repr_html_()
    assert "<table>" in html and names[worst] in html
    path = salsox.chips(named_draws, seed=1)
    table = path.to_dataframe()
    assert list(table.columns) == ["n_items", "n_clusters", "probability", "run"]
    np.testing.assert_array_equal(table["probability"].to_numpy(), path.probability)
    assert "AUC" in path.to_text() and "<table>" in path._repr_html_()
    with pytest.raises(ValueError, match="single mode"):
        path.to_series()


def test_wasabi_result_views_and_json_names(named_draws):
    res = salsox.wasabi(named_draws, 2, seed=1)
    names = list(named_draws.columns)
    assert list(res.item_names) == names
    frame = res.to_dataframe()
    assert list(frame.index) == names
    np.testing.assert_array_equal(frame["particle 1"].to_numpy(), res.particles[1])
    assert frame["contribution"].sum() == pytest.approx(res.distance)
    assert (res.to_series(1).to_numpy() == res.particles[1]).all()
    with pytest.raises(ValueError, match="particle must be in 0..1"):
        res.to_series(2)
    payload = json.loads(json.dumps(res.to_dict()))
    assert payload["item_names"] == names
    top = names[int(np.argmax(frame["contribution"].to_numpy()))]
    assert f"items contributing most to W (bits): {top}" in res.to_text(3)
    assert top in res._repr_html_() and "<table>" in res._repr_html_()
    # The elbow's results keep the names too; unnamed draws have none.
    curve = salsox.wasabi_elbow(named_draws, 2, seed=1)
    assert all(list(r.item_names) == names for r in curve.results)
    assert salsox.wasabi(named_draws.to_numpy(), 2, seed=1).item_names is None


def test_wasabi_cli_json_carries_item_names(tmp_path, named_draws):
    from salsox.cli import main

    path = tmp_path / "draws.csv"
    named_draws.iloc[:200].to_csv(path, index=False)
    out = tmp_path / "out.json"
    assert main(["wasabi", str(path), "-L", "2", "--seed", "1", "--json", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["item_names"] == list(named_draws.columns)


def test_summary_html_lists_the_least_certain_items(named_draws):
    s = salsox.salso(named_draws, "VI", n_runs=2, seed=1).summary()
    line = s.to_text().splitlines()[-1]
    assert line.startswith("least certain items") and "it" in line
    import html

    assert html.escape(line) in s._repr_html_()


def test_summary_keeps_the_users_cluster_labels(mpl):
    draws = [[0, 0, 1, 1, 2], [0, 0, 1, 2, 2], [0, 0, 0, 1, 1]]
    s = salsox.summarize([7, 7, 3, 3, 1], draws)  # the user's labels: 7, 3, 1
    np.testing.assert_array_equal(s.labels, [0, 0, 1, 1, 2])
    np.testing.assert_array_equal(s.cluster_labels, [7, 3, 1])
    rows = s.to_text().splitlines()[2:5]
    assert [int(r.split()[0]) for r in rows] == [7, 3, 1]
    assert s.to_text(one_based=True).splitlines()[2].split()[0] == "7"  # not shifted: the user's own
    assert list(s.to_dataframe()["cluster"]) == [7, 7, 3, 3, 1]
    assert list(s.to_dataframe("clusters").index) == [7, 3, 1]
    assert s.to_dict()["cluster_labels"] == [7, 3, 1] and s.to_dict()["labels"] == [0, 0, 1, 1, 2]
    assert "<td>7</td>" in s._repr_html_()
    legend = [t.get_text() for t in plots.plot_mds(s).get_legend().get_texts()]
    assert legend[:1] == ["7 (n=2)"] or "7 (n=2)" in legend
    ticks = {t.get_text() for t in plots.plot_heatmap(s).get_xticklabels()}
    assert ticks <= {"7", "3", "1"} and ticks
    fig = plots.plot_pairs([7, 7, 3, 3, 1], np.arange(10.0).reshape(5, 2))
    assert "7 (n=2)" in [t.get_text() for t in fig.legends[0].get_texts()]
    # Canonical labels: nothing to keep.
    assert salsox.summarize([0, 0, 1, 1, 2], draws).cluster_labels is None


def test_wasabi_colours_follow_the_heaviest_particle(mpl):
    # Two particles that differ by item 0 only, which renumbers the second's clusters (labels
    # are canonical): the clusters still keep their colours between panels.
    draws = np.array([[0] * 5 + [1] * 5 + [2] * 5] * 6 + [[1] + [0] * 4 + [1] * 5 + [2] * 5] * 4)
    res = salsox.wasabi(draws, 2, seed=1)
    fig = plots.plot_wasabi(res)
    first, second = (ax for ax in fig.axes[:2])

    def colour_of_item(ax, i, coords):
        for coll in ax.collections:
            offsets = np.asarray(coll.get_offsets())
            hit = np.flatnonzero(np.all(np.isclose(offsets, coords[i]), axis=1))
            if hit.size:
                colors = coll.get_facecolors()
                return tuple(np.round(colors[hit[0] if colors.shape[0] > 1 else 0][:3], 6))
        raise AssertionError(f"item {i} not drawn")

    from salsox.metrics import psm
    from salsox.plots.mds import classical_mds

    coords = classical_mds(1.0 - psm(draws), 2)
    assert res.particles[1][0] == 0 and res.particles[1][5] == 0  # item 5's cluster is number 1, then 0
    for item in (1, 7, 12):  # one item of each cluster, none of them the mover
        assert colour_of_item(first, item, coords) == colour_of_item(second, item, coords)
    assert all(ax.get_xlabel().startswith("MDS 1") and ax.get_legend() is not None for ax in (first, second))


def test_wasabi_heatmap_has_a_colour_scale_and_contributions_name_items(mpl, named_draws):
    res = salsox.wasabi(named_draws.iloc[:300], 2, seed=1)
    fig = plots.plot_wasabi(res, kind="heatmap")
    assert any(ax.get_label() == "<colorbar>" for ax in fig.axes)
    ax = plots.plot_wasabi_contributions(res)
    shown = [t.get_text() for t in ax.get_xticklabels()]
    assert shown and set(shown) <= set(named_draws.columns)
    # The largest contribution keeps its name when labels are thinned.
    top = named_draws.columns[int(np.argmax(res.evi_contributions().sum(axis=0)))]
    assert top in shown
    legend = ax.get_legend()
    ax.figure.canvas.draw()
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1  # beside the bars, not over them
    unnamed = salsox.wasabi(named_draws.iloc[:300].to_numpy(), 2, seed=1)
    ticks = plots.plot_wasabi_contributions(unnamed).get_xticks()
    assert np.all(ticks == np.round(ticks))


def test_cli_summary_keeps_the_labels_file_numbers(tmp_path):
    from salsox.cli import main

    draws = tmp_path / "draws.csv"
    np.savetxt(draws, [[0, 0, 1, 1, 2], [0, 0, 1, 2, 2], [0, 0, 0, 1, 1]], fmt="%d", delimiter=",")
    labels = tmp_path / "labels.txt"
    labels.write_text("1\n1\n2\n2\n3\n")  # R's 1-based labels
    out = tmp_path / "report.txt"
    assert main(["summary", str(draws), "--labels", str(labels), "--out", str(out)]) == 0
    rows = out.read_text().splitlines()[2:5]
    assert [int(r.split()[0]) for r in rows] == [1, 2, 3]


def test_wasabi_names_from_xarray(named_draws):
    xr = pytest.importorskip("xarray")
    values = named_draws.to_numpy()[:200].reshape(2, 100, -1)
    da = xr.DataArray(values, dims=("chain", "draw", "obs"), coords={"obs": list(named_draws.columns)})
    res = salsox.wasabi(da, 2, seed=1)
    assert list(res.item_names) == list(named_draws.columns)
    assert list(res.to_series().index) == list(named_draws.columns)
