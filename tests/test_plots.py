"""Plots render to non-blank PNGs with the Agg backend; MDS and linkage are checked numerically."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import salsox
from conftest import load_draws
from salsox import plots
from salsox.plots.dendrogram import dendrogram_layout
from salsox.summaries.linkage import average_linkage, leaf_order
from salsox.datasets import example_draws


@pytest.fixture(scope="module")
def mpl():
    matplotlib = pytest.importorskip("matplotlib")  # the optional dependency only
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


@pytest.fixture(scope="module")
def example():
    ex = example_draws()
    est = salsox.salso(ex.draws, "VI", n_runs=2, seed=1)
    return ex, est, est.summary(ex.draws)


def _assert_not_blank(fig, path, drawn=0.01):
    """Save to PNG and check that every panel has something drawn inside its frame.

    An empty panel scores 0 here (its frame, ticks and title are outside the measured area).
    """
    dpi = 60
    fig.savefig(path, dpi=dpi)
    import matplotlib.image as mpimg

    image = mpimg.imread(str(path))
    assert image.ndim == 3 and image.shape[0] > 50 and image.shape[1] > 50
    rgb = image[..., :3]
    assert rgb.std() > 0.05  # more than one flat colour
    height = rgb.shape[0]
    scale = dpi / fig.dpi
    panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert panels
    for ax in panels:
        box = ax.get_window_extent()
        x0, x1 = int(box.x0 * scale) + 3, int(box.x1 * scale) - 3
        y0, y1 = height - int(box.y1 * scale) + 3, height - int(box.y0 * scale) - 3
        inside = rgb[y0:y1, x0:x1]
        fraction = np.any(inside < 0.9, axis=-1).mean()
        assert fraction > drawn, f"{path.name}: a panel is almost blank ({fraction:.2%} drawn)"


def test_blank_check_catches_empty_axes(mpl, tmp_path):
    fig, ax = mpl.subplots()
    ax.set_title("nothing here")
    with pytest.raises(AssertionError, match="almost blank"):
        _assert_not_blank(fig, tmp_path / "empty.png")


def test_heatmap(mpl, example, tmp_path):
    _, est, s = example
    ax = plots.plot_heatmap(s)
    assert ax.__class__.__name__.endswith("Axes")
    image = ax.get_images()[0].get_array()
    np.testing.assert_allclose(image, s.psm[np.ix_(s.order, s.order)])
    # One horizontal and one vertical line per boundary between clusters.
    assert len(ax.lines) == 2 * (s.n_clusters - 1)
    _assert_not_blank(ax.figure, tmp_path / "heatmap.png")


def test_heatmap_from_estimate_and_draws_into_given_axes(mpl, example, tmp_path):
    ex, est, _ = example
    fig, axes = mpl.subplots(1, 2, figsize=(9, 4))
    out = plots.plot_heatmap(est, ex.draws, ax=axes[0], colorbar=False)
    assert out is axes[0]
    plots.plot_mds(est.labels, ex.draws, ax=axes[1], loss="binder")
    _assert_not_blank(fig, tmp_path / "two.png")


def test_heatmap_pools_large_matrices(mpl, tmp_path):
    rng = np.random.default_rng(0)
    n = 1100
    base = np.repeat(np.arange(4), n // 4 + 1)[:n]
    draws = np.where(rng.random((40, n)) < 0.1, rng.integers(0, 4, (40, n)), base)
    s = salsox.summarize(base, draws, "binder")
    ax = plots.plot_heatmap(s)
    assert ax.get_images()[0].get_array().shape == (550, 550)
    _assert_not_blank(ax.figure, tmp_path / "large.png")


def test_mds(mpl, example, tmp_path):
    _, _, s = example
    ax = plots.plot_mds(s)
    # The segments to the exemplars, one scatter per cluster, the exemplars.
    assert len(ax.collections) == s.n_clusters + 2
    _assert_not_blank(ax.figure, tmp_path / "mds.png")


def test_pairs_on_data(mpl, example, tmp_path):
    ex, est, s = example
    fig = plots.plot_pairs(s, ex.data)
    # Four panels, and the hidden count axis of each diagonal histogram.
    assert fig.__class__.__name__ == "Figure" and len(fig.axes) == 4 + 2
    _assert_not_blank(fig, tmp_path / "pairs.png")
    # Labels alone are enough; columns choose features.
    fig = plots.plot_pairs(est, np.column_stack([ex.data, ex.data[:, 0] ** 2]), columns=[0, 2])
    assert len(fig.axes) == 4 + 2
    with pytest.raises(ValueError, match="100 rows but the estimate has 99"):
        plots.plot_pairs(est.labels[:99], ex.data)
    with pytest.raises(ValueError, match="max_columns"):
        plots.plot_pairs(est, np.zeros((100, 9)))


def test_pairs_with_iris_like_frame(mpl, tmp_path):
    pd = pytest.importorskip("pandas")
    draws = load_draws("iris")
    est = salsox.salso(draws, "VI", n_runs=1, seed=2)
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(150, 3)) + est.labels[:, None], columns=["a", "b", "c"])
    fig = plots.plot_pairs(est, frame, columns=["a", "c"])
    assert [ax.get_xlabel() for ax in fig.axes[2:4]] == ["a", "c"]
    _assert_not_blank(fig, tmp_path / "frame.png")


@pytest.mark.parametrize("leaves", ["clusters", "items"])
def test_dendrogram(mpl, example, tmp_path, leaves):
    _, _, s = example
    ax = plots.plot_dendrogram(s, leaves=leaves)
    segments = ax.collections[0].get_segments()
    expected = s.n_clusters - 1 if leaves == "clusters" else s.n_items - 1
    assert len(segments) == expected
    _assert_not_blank(ax.figure, tmp_path / f"dendrogram_{leaves}.png")


def test_dendrogram_one_cluster_and_bad_leaves(mpl, tmp_path):
    draws = load_draws("galaxy")[:200]
    s = salsox.summarize(np.zeros(82, dtype=int), draws)
    ax = plots.plot_dendrogram(s)
    ax.figure.savefig(tmp_path / "one.png")
    with pytest.raises(ValueError, match="leaves must be"):
        plots.plot_dendrogram(s, leaves="both")


def test_plots_of_a_summary(mpl, example, tmp_path):
    # Plots depend on summaries, never the reverse: a Summary is drawn by salsox.plots.
    ex, _, s = example
    for draw in (plots.plot_heatmap, plots.plot_mds, plots.plot_dendrogram):
        assert draw(s) is not None
    assert plots.plot_pairs(s, ex.data).__class__.__name__ == "Figure"
    assert not hasattr(s, "plot")


def test_plot_argument_errors(example):
    ex, est, s = example
    with pytest.raises(TypeError, match="draws is required"):
        plots.plot_heatmap(est.labels)
    with pytest.raises(ValueError, match="must not be given with a Summary"):
        plots.plot_mds(s, ex.draws)


def test_missing_matplotlib_names_the_extra(monkeypatch, example):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # makes the import fail
    with pytest.raises(ImportError, match=r"salsox\[plot\]"):
        plots.plot_heatmap(example[2])


# ---- the numerical pieces, which need no matplotlib ------------------------------------------


def test_classical_mds_recovers_euclidean_configuration():
    rng = np.random.default_rng(3)
    points = rng.normal(size=(40, 2)) * [3.0, 1.0]
    d = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
    coords = plots.classical_mds(d, 2)
    d2 = np.sqrt(((coords[:, None, :] - coords[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(d2, d, atol=1e-9)
    # Degenerate input: fewer positive eigenvalues than components gives zero columns.
    flat = plots.classical_mds(np.zeros((5, 5)), 3)
    assert flat.shape == (5, 3) and np.all(flat == 0)
    with pytest.raises(ValueError, match="square"):
        plots.classical_mds(np.zeros((3, 4)))


def _naive_average_linkage(d):
    """O(m^3) textbook UPGMA: merge the closest pair, average distances by size."""
    clusters = {i: [i] for i in range(len(d))}
    next_id = len(d)
    heights = []
    members = []
    while len(clusters) > 1:
        keys = list(clusters)
        best = None
        for ia, a in enumerate(keys):
            for b in keys[ia + 1:]:
                h = d[np.ix_(clusters[a], clusters[b])].mean()
                if best is None or h < best[0]:
                    best = (h, a, b)
        h, a, b = best
        heights.append(h)
        members.append(frozenset(clusters[a] + clusters[b]))
        merged = clusters.pop(a) + clusters.pop(b)
        clusters[next_id] = merged
        next_id += 1
    return np.array(heights), members


def test_average_linkage_matches_textbook_upgma():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(30, 3))
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    z = average_linkage(d)
    heights, members = _naive_average_linkage(d)
    np.testing.assert_allclose(z[:, 2], heights, rtol=1e-12)
    # Rebuild each merged set from z and compare with the naive merges.
    sets = {i: frozenset([i]) for i in range(30)}
    for t, row in enumerate(z):
        sets[30 + t] = sets[int(row[0])] | sets[int(row[1])]
        assert sets[30 + t] == members[t] and row[3] == len(members[t])
    order = leaf_order(z)
    assert sorted(order.tolist()) == list(range(30))
    segments, order2, h = dendrogram_layout(z)
    assert segments.shape == (29, 4, 2) and np.array_equal(order, order2)


def test_average_linkage_matches_scipy():
    hierarchy = pytest.importorskip("scipy.cluster.hierarchy")
    rng = np.random.default_rng(9)
    x = rng.normal(size=(120, 4))
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    ours = average_linkage(d)
    iu = np.triu_indices(120, 1)
    theirs = hierarchy.linkage(d[iu], "average")
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert np.array_equal(leaf_order(ours), hierarchy.leaves_list(theirs))


def test_weighted_linkage_continues_item_linkage():
    # Leaves standing for groups, weighted by size, merge like the items would once the
    # groups are formed.
    rng = np.random.default_rng(2)
    x = np.r_[rng.normal(0, 0.1, (5, 2)), rng.normal(3, 0.1, (7, 2)), rng.normal([0, 4], 0.1, (4, 2))]
    groups = np.repeat([0, 1, 2], [5, 7, 4])
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    g = np.array([[d[np.ix_(groups == a, groups == b)].mean() for b in range(3)] for a in range(3)])
    z = average_linkage(g, weights=np.bincount(groups))
    full = average_linkage(d)
    np.testing.assert_allclose(z[:, 2], full[-2:, 2], rtol=1e-12)
    assert z[-1, 3] == 16


@pytest.mark.parametrize("seed", range(4))
def test_weighted_linkage_equals_scipy_on_the_items_it_stands_for(seed):
    # scipy has no leaf weights: a leaf of weight w is w items at distance 0 from each other.
    # Once scipy has merged those copies (height 0), its merges are the weighted linkage's.
    from scipy.cluster import hierarchy
    from scipy.spatial.distance import squareform

    rng = np.random.default_rng(seed)
    m = 7
    x = rng.normal(size=(m, 3))
    g = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    w = rng.integers(1, 5, m)
    items = np.repeat(np.arange(m), w)
    theirs = hierarchy.linkage(squareform(g[np.ix_(items, items)], checks=False), method="average")
    ours = average_linkage(g, weights=w)
    tail = theirs[-(m - 1):]
    np.testing.assert_allclose(ours[:, 2], tail[:, 2], rtol=1e-12)
    np.testing.assert_array_equal(ours[:, 3], tail[:, 3])  # items in each merged cluster
    # Unit weights: scipy's own linkage, merge for merge.
    np.testing.assert_allclose(average_linkage(g, weights=np.ones(m)), hierarchy.linkage(squareform(g), "average"))
