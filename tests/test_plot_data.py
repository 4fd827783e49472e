"""Data drawn by the plots is matched to the items by name when both sides name them."""

from __future__ import annotations

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
def named():
    """The bundled example with named items, its data as a frame indexed by the same names."""
    ex = example_draws()
    names = [f"item{i}" for i in range(ex.draws.shape[1])]
    draws = pd.DataFrame(np.asarray(ex.draws), columns=names)
    frame = pd.DataFrame(np.asarray(ex.data), index=names, columns=["height", "weight"])
    shuffled = frame.sample(frac=1.0, random_state=3)
    assert not (shuffled.index == frame.index).all()
    est = salsox.salso(draws, "VI", n_runs=2, seed=1)
    return draws, frame, shuffled, est


def _points(fig):
    """Every scatter's points with their colours, sorted (independent of drawing order)."""
    out = []
    for ax in fig.axes:
        for coll in ax.collections:
            offsets = np.asarray(coll.get_offsets(), dtype=np.float64)
            if offsets.ndim != 2 or offsets.shape[0] == 0:
                continue
            colors = np.asarray(coll.get_facecolors())
            if colors.shape[0] == 1:
                colors = np.repeat(colors, offsets.shape[0], axis=0)
            rows = np.column_stack([offsets, colors[:, :3]]) if colors.shape[0] == offsets.shape[0] else offsets
            out.append(rows[np.lexsort(rows.T[::-1])].round(9))
    return out


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_ball_aligns_shuffled_rows(mpl, named):
    draws, frame, shuffled, est = named
    ball = salsox.credible_ball(est, draws, "VI")
    _same(_points(plots.plot_credible_ball(ball, shuffled)), _points(plots.plot_credible_ball(ball, frame)))


def test_chips_aligns_shuffled_rows(mpl, named):
    draws, frame, shuffled, _ = named
    res = salsox.chips(draws, 0.9, seed=1)
    _same(_points(plots.plot_chips(res, shuffled).figure), _points(plots.plot_chips(res, frame).figure))


def test_wasabi_aligns_shuffled_rows(mpl, named):
    draws, frame, shuffled, _ = named
    res = salsox.wasabi(draws, 2, seed=1)
    _same(_points(plots.plot_wasabi(res, shuffled)), _points(plots.plot_wasabi(res, frame)))


def test_pairs_aligns_shuffled_rows(mpl, named):
    _, frame, shuffled, est = named
    _same(_points(plots.plot_pairs(est, shuffled)), _points(plots.plot_pairs(est, frame)))


def test_names_that_disagree_are_refused(mpl, named):
    draws, frame, _, est = named
    renamed = frame.rename(index={"item3": "stranger"})
    ball = salsox.credible_ball(est, draws, "VI")
    chips = salsox.chips(draws, 0.9, seed=1)
    was = salsox.wasabi(draws, 2, seed=1)
    for draw in (lambda: plots.plot_pairs(est, renamed), lambda: plots.plot_credible_ball(ball, renamed),
                 lambda: plots.plot_chips(chips, renamed), lambda: plots.plot_wasabi(was, renamed)):
        refused = (r"data does not name the same items as the (estimate|result): "
                   r"1 items of the (estimate|result) are not in data \('item3'\)")
        with pytest.raises(ValueError, match=refused):
            draw()
    twice = frame.rename(index={"item3": "item4"})
    with pytest.raises(ValueError, match="index names an item twice"):
        plots.plot_pairs(est, twice)


def test_position_when_one_side_has_no_names(mpl, named):
    draws, frame, _, est = named
    unnamed = salsox.salso(np.asarray(draws), "VI", n_runs=2, seed=1)
    # Named rows, unnamed items: by position; unnamed rows (default index), named items: by position.
    _same(_points(plots.plot_pairs(unnamed, frame)), _points(plots.plot_pairs(est, frame.to_numpy())))
    _same(_points(plots.plot_pairs(est, frame.reset_index(drop=True))), _points(plots.plot_pairs(est, frame)))
    # A 0..n-1 index out of order (frame.sample() of unnamed rows) is read as item positions.
    positional = frame.reset_index(drop=True)
    _same(_points(plots.plot_pairs(unnamed, positional.sample(frac=1.0, random_state=2))),
          _points(plots.plot_pairs(unnamed, positional)))


def test_every_plot_takes_the_result_first(mpl, named):
    draws, frame, _, est = named
    ball = salsox.credible_ball(est, draws, "VI")
    chips = salsox.chips(draws, 0.9, seed=1)
    was = salsox.wasabi(draws, 2, seed=1)
    cases = [(plots.plot_pairs, est, "plot_pairs takes the estimate first"),
             (plots.plot_pairs, est.summary(), "plot_pairs takes the estimate first"),
             (plots.plot_credible_ball, ball, "plot_credible_ball takes the ball first"),
             (plots.plot_chips, chips, "plot_chips takes the result first"),
             (plots.plot_wasabi, was, "plot_wasabi takes the result first")]
    for function, result, message in cases:
        for data in (frame, frame.to_numpy()):
            with pytest.raises(TypeError, match=message):
                function(data, result)
    with pytest.raises(TypeError, match="plot_pairs takes the estimate first"):
        plots.plot_pairs(frame, est.labels)  # labels, not an Estimate, second


def test_axes_are_named_by_the_frame_columns(mpl, named):
    draws, frame, shuffled, est = named
    ball = salsox.credible_ball(est, draws, "VI")
    fig = plots.plot_credible_ball(ball, shuffled)
    assert (fig.axes[2].get_xlabel(), fig.axes[0].get_ylabel()) == ("height", "weight")
    ax = plots.plot_chips(salsox.chips(draws, 0.9, seed=1), shuffled)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("height", "weight")
    fig = plots.plot_wasabi(salsox.wasabi(draws, 2, seed=1), shuffled)
    assert {(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes} == {("height", "weight")}
    fig = plots.plot_pairs(est, shuffled)
    assert [ax.get_xlabel() for ax in fig.axes[2:4]] == ["height", "weight"]
    # Unnamed columns read the same everywhere.
    assert plots.plot_chips(salsox.chips(draws, 0.9, seed=1), frame.to_numpy()).get_xlabel() == "x0"


def test_one_column_data_draws_a_strip(mpl, named):
    draws, frame, shuffled, est = named
    velocity = shuffled["height"]  # a Series: one column, its index naming the rows
    res = salsox.chips(draws, 0.9, seed=1)
    ax = plots.plot_chips(res, velocity)
    assert ax.get_xlabel() == "height" and ax.get_ylabel() == "(jitter)"
    _same(_points(ax.figure), _points(plots.plot_chips(res, frame["height"]).figure))  # aligned by name
    fig = plots.plot_wasabi(salsox.wasabi(draws, 2, seed=1), velocity)
    assert fig.axes[0].get_xlabel() == "height"
    with pytest.raises(ValueError, match="only with kind='mds'"):
        plots.plot_wasabi(salsox.wasabi(draws, 2, seed=1), velocity, kind="heatmap")


def test_chips_open_circles_under_stacked_points(mpl):
    # Items 0-3 always together: at one MDS point, drawn once with four times the area.
    draws = np.array([[0, 0, 0, 0, 1, 1, 2], [0, 0, 0, 0, 1, 2, 2], [0, 0, 0, 0, 1, 1, 1]] * 3)
    res = salsox.chips(draws, 0.6, seed=1, complete=False)
    ax = plots.plot_chips(res)
    unallocated, *clusters = ax.collections
    assert unallocated.get_facecolors().size == 0 or np.all(unallocated.get_facecolors()[:, 3] == 0)
    assert unallocated.get_zorder() < min(c.get_zorder() for c in clusters)
    sizes = np.concatenate([c.get_sizes() for c in clusters])
    assert sizes.max() == 4 * sizes.min()
    assert "items at a point" in ax.get_legend().get_title().get_text()


def test_heatmap_and_mds_from_an_estimate_alone(mpl, named):
    _, _, _, est = named
    a = plots.plot_heatmap(est)
    b = plots.plot_heatmap(est.summary())
    np.testing.assert_array_equal(a.images[0].get_array(), b.images[0].get_array())
    np.testing.assert_array_equal(plots.plot_mds(est).collections[0].get_segments(),
                                  plots.plot_mds(est.summary()).collections[0].get_segments())
    with pytest.raises(TypeError, match="draws is required"):
        plots.plot_mds(est.labels)


def test_cli_data_rows_matched_by_name(mpl, named, tmp_path, capsys, monkeypatch):
    from salsox.cli import main

    draws, frame, shuffled, _ = named
    draws_file = tmp_path / "draws.csv"
    draws.iloc[:100].to_csv(draws_file, index=False)  # the header names the items
    shapes = []
    original = plots.plot_pairs

    def recorded(*args, **kwargs):
        fig = original(*args, **kwargs)
        shapes.append(([ax.get_xlabel() for ax in fig.axes[2:4]], _points(fig)))
        return fig

    monkeypatch.setattr(plots, "plot_pairs", recorded)
    for name, table in (("ordered", frame), ("shuffled", shuffled)):
        table.to_csv(tmp_path / f"{name}.csv")  # R's write.csv layout: a first column of row names
        args = ["summary", str(draws_file), "--seed", "1", "--runs", "2", "--data", str(tmp_path / f"{name}.csv"),
                "--kind", "pairs", "--plot", str(tmp_path / f"{name}.png"), "--out", str(tmp_path / f"{name}.txt")]
        assert main(args) == 0, capsys.readouterr().err
    (ordered_axes, ordered), (shuffled_axes, drawn) = shapes
    assert ordered_axes == shuffled_axes == ["height", "weight"]  # the header's names, not x0/x1
    _same(drawn, ordered)
    frame.rename(index={"item3": "stranger"}).to_csv(tmp_path / "wrong.csv")
    args = ["summary", str(draws_file), "--seed", "1", "--runs", "2", "--data", str(tmp_path / "wrong.csv"),
            "--kind", "pairs", "--plot", str(tmp_path / "wrong.png"), "--out", str(tmp_path / "wrong.txt")]
    assert main(args) != 0
    assert "does not name the same items as the estimate" in capsys.readouterr().err
