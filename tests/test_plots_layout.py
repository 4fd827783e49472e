"""What a reader sees: labels that do not collide, axes that say what they show, scales that
belong to their variable, colours that keep the largest clusters apart. Each plot is drawn
with several numbers of clusters (singletons included) and measured with the Agg renderer."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import salsox
from conftest import load_draws
from salsox import plots
from salsox.plots._common import OTHER_COLOR, cluster_colors
from salsox.plots.mds import stacked_points


@pytest.fixture(scope="module")
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    yield pyplot
    pyplot.close("all")


@pytest.fixture(autouse=True)
def _close(plt):
    yield
    plt.close("all")


def _case(k: int, singletons: int = 0, size: int = 8, n_draws: int = 40, seed: int = 0):
    """A summary of ``k`` clusters of ``size`` items, plus ``singletons`` one-item clusters, the
    draws moving a tenth of the items at random."""
    rng = np.random.default_rng(seed)
    base = np.r_[np.repeat(np.arange(k), size), np.arange(k, k + singletons)]
    base = base[rng.permutation(base.shape[0])]
    moved = rng.random((n_draws, base.shape[0])) < 0.1
    draws = np.where(moved, rng.integers(0, k + singletons, (n_draws, base.shape[0])), base)
    return base, draws, salsox.summarize(base, draws, "binder")


CASES = {"1": (1, 0), "2": (2, 0), "5+1": (5, 1), "14+4": (14, 4), "30+10": (30, 10)}


def _visible_labels(*axes_list):
    out = []
    for ax in axes_list:
        for label in itertools.chain(ax.get_xticklabels(), ax.get_yticklabels()):
            if label.get_visible() and label.get_text():
                out.append(label)
    return out


def _draw(fig):
    """Lay the figure out and draw it once; the renderer measures what was drawn."""
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _assert_no_overlap(renderer, texts):
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        assert not box_a.overlaps(box_b), f"labels {a!r} and {b!r} overlap"


def _inside_figure(renderer, artist):
    box = artist.get_window_extent(renderer)
    frame = artist.figure.bbox
    assert box.x0 >= frame.x0 - 1 and box.x1 <= frame.x1 + 1 and box.y0 >= frame.y0 - 1 and box.y1 <= frame.y1 + 1, (
        f"{artist.get_text()!r} is cut off"
    )


def _child_axes(ax):
    return [a for a in ax.figure.axes if a is not ax] + [c for c in ax.child_axes]


# ---- heatmap -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", list(CASES))
def test_heatmap_cluster_labels_never_overlap(plt, case):
    _, _, s = _case(*CASES[case])
    ax = plots.plot_heatmap(s, show_ids=False)
    texts = _visible_labels(ax)
    renderer = _draw(ax.figure)
    _assert_no_overlap(renderer, texts)
    for artist in (ax.title, ax.xaxis.label, ax.yaxis.label):
        _inside_figure(renderer, artist)
    shown = {t.get_text() for t in ax.get_xticklabels()}
    # The largest cluster is always labelled; labels are cluster numbers only.
    assert str(int(np.argmax(s.sizes))) in shown and shown <= {str(c) for c in range(s.n_clusters)}
    assert ax.get_ylabel() == "cluster" and ax.get_xlabel()
    for t in texts:  # readable on white: no pale label colour
        r, g, b = t.get_color()[:3]
        assert 0.2126 * r + 0.7152 * g + 0.0722 * b <= 0.36


def test_heatmap_item_ids_by_default_for_small_n_and_names_when_known(plt):
    _, _, s = _case(3, 2, size=10)  # 32 items
    ax = plots.plot_heatmap(s)
    bottom = ax.child_axes[0]
    ids = [t.get_text() for t in bottom.get_xticklabels() if t.get_text()]
    assert len(ids) >= 0.9 * s.n_items  # all (or nearly all) items named
    assert set(ids) <= {str(i) for i in s.order}
    renderer = _draw(ax.figure)
    _assert_no_overlap(renderer, _visible_labels(*ax.child_axes))
    for artist in (ax.title, bottom.xaxis.label, ax.yaxis.label):
        _inside_figure(renderer, artist)
    assert bottom.get_xlabel()  # the item axis is labelled
    named = s
    object.__setattr__(named, "item_names", [f"item-{i}" for i in range(s.n_items)])
    ax = plots.plot_heatmap(named)
    ids = [t.get_text() for t in ax.child_axes[0].get_xticklabels() if t.get_text()]
    assert ids and all(t.startswith("item-") for t in ids)
    _, _, big = _case(8, 0, size=8)  # 64 items: no ids unless asked
    assert not plots.plot_heatmap(big).child_axes
    assert plots.plot_heatmap(big, show_ids=True).child_axes
    with pytest.raises(TypeError, match="show_ids"):
        plots.plot_heatmap(big, show_ids="yes")


def test_heatmap_hclust_order_within_clusters(plt):
    from scipy.cluster import hierarchy
    from scipy.spatial.distance import squareform

    draws = load_draws("iris")
    est = salsox.salso(draws, "VI", n_runs=1, seed=1)
    s = est.summary(draws)
    ax = plots.plot_heatmap(s, order="hclust")
    order = plots.heatmap.heatmap_order(s, "hclust")
    np.testing.assert_allclose(ax.get_images()[0].get_array(), s.psm[np.ix_(order, order)])
    start = 0
    for c in s.cluster_order:  # clusters stay blocks, in the same order as "fit"
        members = np.flatnonzero(s.labels == c)
        block = order[start:start + members.shape[0]]
        assert set(block) == set(members)
        d = 1.0 - s.psm[np.ix_(members, members)]
        np.fill_diagonal(d, 0.0)
        z = hierarchy.linkage(squareform(d, checks=False), "average")
        np.testing.assert_array_equal(block, members[hierarchy.leaves_list(z)])
        start += members.shape[0]
    with pytest.raises(ValueError, match="order must be"):
        plots.plot_heatmap(s, order="random")


# ---- colours -------------------------------------------------------------------------------


def test_palette_keeps_the_largest_clusters_distinct_and_greys_singletons():
    sizes = np.array([1, 30, 1, 5, 29, 1, 4] + [3] * 12)
    colors, other = cluster_colors(sizes)
    assert list(np.flatnonzero(other)) == [0, 2, 5]
    assert all(np.allclose(colors[c], OTHER_COLOR) for c in (0, 2, 5))
    # The two largest clusters: two saturated, different hues (not a light/dark pair).
    a, b = colors[1][:3], colors[4][:3]
    assert np.abs(a - b).sum() > 0.5
    import colorsys

    assert abs(colorsys.rgb_to_hsv(*a)[0] - colorsys.rgb_to_hsv(*b)[0]) > 0.05
    # Every non-grey cluster has its own colour.
    shown = {tuple(np.round(colors[c], 6)) for c in np.flatnonzero(~other)}
    assert len(shown) == int((~other).sum())
    # A single singleton keeps its own colour.
    assert not cluster_colors([5, 1])[1].any()


# ---- MDS -----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["1", "5+1", "14+4"])
def test_mds_axes_legend_and_segments(plt, case):
    _, _, s = _case(*CASES[case])
    ax = plots.plot_mds(s)
    for label in (ax.get_xlabel(), ax.get_ylabel()):
        assert label.startswith("MDS") and "% of variance" in label
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    singletons = int(np.sum(s.sizes == 1))
    if singletons > 1:  # one grey entry for them all
        assert sum("other" in t for t in texts) == 1 and len(texts) == s.n_clusters - singletons + 1
    segments = ax.collections[0].get_segments()
    assert len(segments) == s.n_items
    # The legend sits outside the points.
    renderer = _draw(ax.figure)
    assert not ax.get_legend().get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))


def test_stacked_points_merge_what_would_hide():
    coords = np.array([[0.0, 0.0], [0.0, 1e-12], [1.0, 1.0], [0.0, 0.0], [0.5, 0.2]])
    labels = np.array([0, 0, 1, 1, 0])
    points, owner, counts = stacked_points(coords, labels)
    assert counts.sum() == 5 and sorted(counts.tolist()) == [1, 1, 1, 2]
    assert set(owner.tolist()) == {0, 1}  # never merged across clusters


# ---- pairs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["1", "5+1", "14+4"])
def test_pairs_rows_have_their_own_named_scale(plt, case):
    base, _, s = _case(*CASES[case])
    rng = np.random.default_rng(1)
    n = base.shape[0]
    # Very different scales, so that sharing a scale by mistake shows.
    data = np.column_stack([rng.normal(0, 1, n), rng.normal(100, 30, n), rng.normal(-5000, 10, n)])
    names = ["small", "hundreds", "negative"]
    import pandas as pd

    fig = plots.plot_pairs(s, pd.DataFrame(data, columns=names), segments=True)
    grid = np.array(fig.axes[:9]).reshape(3, 3)
    for r in range(3):
        lo, hi = data[:, r].min(), data[:, r].max()
        for c in range(3):
            y0, y1 = grid[r, c].get_ylim()
            assert y0 <= lo and y1 >= hi, f"panel ({r}, {c}) does not cover {names[r]}"
            x0, x1 = grid[r, c].get_xlim()
            assert x0 <= data[:, c].min() and x1 >= data[:, c].max()
        assert grid[r, 0].get_ylabel() == names[r]  # every row named, the first one too
        ticks = [float(t) for t in grid[r, 0].get_yticks() if y0 <= t <= y1]
        assert ticks and min(ticks) >= lo - (hi - lo) and max(ticks) <= hi + (hi - lo)
        assert [t.get_text() for t in grid[r, 0].get_yticklabels() if t.get_visible() and t.get_text()]
    assert [grid[2, c].get_xlabel() for c in range(3)] == names
    for r, c in itertools.product(range(3), range(3)):
        if c > 0:
            assert not any(t.get_visible() and t.get_text() for t in grid[r, c].get_yticklabels()) or r == c
    # The histograms' count axes show no numbers.
    for twin in fig.axes[9:]:
        assert not [t for t in twin.get_yticklabels() if t.get_text()]
    renderer = _draw(fig)
    _inside_figure(renderer, fig._suptitle)
    legend = fig.legends[0]
    for ax in fig.axes[:9]:
        assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))


def test_pairs_one_variable_is_a_strip_per_cluster(plt):
    base, _, s = _case(5, 3)
    values = np.random.default_rng(2).normal(size=base.shape[0]) + base
    fig = plots.plot_pairs(s, values, segments=True)
    assert len(fig.axes) == 1
    ax = fig.axes[0]
    width, height = fig.get_size_inches()
    assert width >= 6.0 and height >= 3.0
    assert ax.get_xlabel() == "x0" and ax.get_ylabel()
    renderer = _draw(fig)
    for artist in (ax.title, ax.xaxis.label, ax.yaxis.label):
        _inside_figure(renderer, artist)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 5 + 1 and labels[-1].startswith("other")  # five clusters, then the singletons
    _assert_no_overlap(renderer, _visible_labels(ax))
    lo, hi = ax.get_xlim()
    assert lo <= values.min() and hi >= values.max()


def test_pairs_segments_need_exemplars(plt):
    base, _, _ = _case(3)
    with pytest.raises(ValueError, match="segments=True needs the exemplars"):
        plots.plot_pairs(base, np.zeros((base.shape[0], 2)), segments=True)


# ---- dendrograms ---------------------------------------------------------------------------


# The loss dendrogram evaluates O(K^3) partitions: 40 clusters only for the similarity one.
@pytest.mark.parametrize(
    "case, kind", [(c, "similarity") for c in CASES] + [(c, "loss") for c in CASES if c != "30+10"]
)
def test_dendrogram_leaf_labels_never_overlap(plt, case, kind):
    _, draws, s = _case(*CASES[case])
    ax = plots.plot_dendrogram(s, kind=kind)  # binder: computable from the Summary's PSM
    renderer = _draw(ax.figure)
    _assert_no_overlap(renderer, _visible_labels(ax))
    assert ax.get_ylabel() and ax.get_xlabel()
    shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert f"{int(np.argmax(s.sizes))} (n={s.sizes.max()})" in shown
    _inside_figure(renderer, ax.title)


def test_similarity_dendrogram_leaves_at_one_minus_within(plt):
    _, _, s = _case(4, 1)
    ax = plots.plot_dendrogram(s)
    leaves = ax.collections[1].get_offsets()
    expected = np.where(np.isfinite(s.within_similarity), 1.0 - s.within_similarity, 0.0)
    order = np.asarray(plots.dendrogram.leaf_order(s.cluster_linkage))
    np.testing.assert_allclose(np.asarray(leaves)[:, 1], expected[order])
    assert np.all(expected[s.sizes > 1] > 0)


def test_loss_linkage_is_rs_greedy_merge_dendrogram():
    draws = load_draws("galaxy")[:2000]
    est = salsox.salso(draws, "VI", n_runs=2, seed=1, max_clusters=6)
    k = est.n_clusters
    z, leaves = plots.loss_linkage(est.labels, draws, "VI")
    assert z.shape == (k - 1, 4) and k >= 3
    labels = est.labels
    # First merge: the pair whose merge has the lowest expected loss, at that loss.
    best = min(
        (salsox.partition_loss(np.where(labels == b, a, labels), draws, "VI"), a, b)
        for a in range(k) for b in range(a + 1, k)
    )
    assert z[0, 2] == pytest.approx(best[0]) and (z[0, 0], z[0, 1]) == (best[1], best[2])
    # Last merge: everything in one cluster.
    assert z[-1, 2] == pytest.approx(salsox.partition_loss(np.zeros(82, dtype=int), draws, "VI"))
    assert z[-1, 3] == k
    # Leaves: R rescales each cluster's own loss to [0, expected loss of the estimate].
    own = [salsox.partition_loss(np.zeros(int(np.sum(labels == c)), dtype=int), draws[:, labels == c], "VI")
           for c in range(k)]
    e = salsox.partition_loss(labels, draws, "VI")
    np.testing.assert_allclose(leaves, e * (np.array(own) - min(own)) / (max(own) - min(own)))


def test_loss_dendrogram_needs_draws_for_vi_from_a_summary(plt):
    draws = load_draws("galaxy")[:500]
    est = salsox.salso(draws, "VI", n_runs=1, seed=1)
    s = est.summary(draws)
    with pytest.raises(ValueError, match="needs the draws"):
        plots.plot_dendrogram(s, kind="loss")
    ax = plots.plot_dendrogram(s, draws, kind="loss")
    assert "expected loss" in ax.get_ylabel()
    ax = plots.plot_dendrogram(est, draws, kind="loss")  # an estimate with its draws
    assert len(ax.collections[0].get_segments()) == est.n_clusters - 1
    with pytest.raises(ValueError, match="kind must be"):
        plots.plot_dendrogram(s, kind="ward")
    with pytest.raises(ValueError, match="leaves='clusters'"):
        plots.plot_dendrogram(s, draws, kind="loss", leaves="items")


# ---- credible ball -------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["2", "5+1"])
def test_credible_ball_panels(plt, case):
    base, draws, _ = _case(*CASES[case])
    ball = salsox.credible_ball(base, draws)
    data = np.random.default_rng(0).normal(size=(base.shape[0], 3))
    fig = plots.plot_credible_ball(ball, data)
    assert len(fig.axes) == 4
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("Estimate") and "Upper vertical" in titles[1] and "Lower vertical" in titles[2]
    assert "Horizontal" in titles[3] and f"{ball.horizontal.distance:.3g}" in titles[3]
    assert [ax.get_xlabel() for ax in fig.axes[2:]] == ["PC 1", "PC 1"]
    assert [ax.get_ylabel() for ax in fig.axes[::2]] == ["PC 2", "PC 2"]
    # The estimate's panel: one colour per cluster.
    colors = fig.axes[0].collections[0].get_facecolors()
    assert len({tuple(np.round(c, 6)) for c in colors}) == len(set(base.tolist()))
    fig = plots.plot_credible_ball(ball, draws=draws)  # an MDS map without data
    assert fig.axes[2].get_xlabel() == "MDS 1"
    with pytest.raises(ValueError, match="needs data"):
        plots.plot_credible_ball(ball)
    with pytest.raises(TypeError, match="CredibleBall"):
        plots.plot_credible_ball(base, data)


def test_matched_colors_follow_the_estimate():
    from salsox.plots.credible_ball import matched_colors

    estimate = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    est_colors = matched_colors(estimate, estimate)
    bound = np.array([0, 0, 0, 0, 0, 0, 1, 1])  # clusters 0 and 1 merged
    colors = matched_colors(estimate, bound)
    np.testing.assert_allclose(colors[0], est_colors[0])
    np.testing.assert_allclose(colors[1], est_colors[2])


def test_credible_ball_one_variable_and_bad_data(plt):
    base, draws, _ = _case(3)
    ball = salsox.credible_ball(base, draws)
    fig = plots.plot_credible_ball(ball, np.arange(base.shape[0], dtype=float))
    assert fig.axes[2].get_xlabel() == "x0" and not fig.axes[0].get_yticks().size
    with pytest.raises(ValueError, match=f"has 3 rows but the estimate has {base.shape[0]} items"):
        plots.plot_credible_ball(ball, np.zeros((3, 2)))


# ---- CHIPS ---------------------------------------------------------------------------------


def test_chips_plot_legend_groups_singletons_and_marks_unallocated(plt):
    _, draws, _ = _case(6, 4, seed=3)
    result = salsox.chips(draws, threshold=0.3, seed=0)
    ax = plots.plot_chips(result)
    sizes = np.bincount(result.labels[result.labels >= 0])
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    singletons = int(np.sum(sizes == 1))
    grouped = singletons if singletons > 1 else 0  # several singletons: one "other" entry
    expected = len(sizes) - grouped + (grouped > 0) + (len(result.unallocated.items) > 0)
    assert len(texts) == expected
    if len(result.unallocated.items):
        assert texts[-1].startswith(f"unallocated (n={len(result.unallocated.items)})")
    renderer = _draw(ax.figure)
    assert not ax.get_legend().get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
    assert ax.get_xlabel() == "MDS 1" and ax.get_ylabel() == "MDS 2"
