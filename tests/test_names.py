"""Item names end to end: from DataFrame columns and xarray coordinates through Draws, the
estimate, its summary and the credible ball, to pandas/xarray outputs and notebook HTML."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import salsox

pd = pytest.importorskip("pandas")

DRAWS = np.array([[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1], [0, 0, 1, 1]])
NAMES = ["ant", "bee", "cat", "dog"]


def frame() -> "pd.DataFrame":
    return pd.DataFrame(DRAWS, columns=NAMES)


def test_draws_take_names_from_dataframe_columns_and_keep_them_when_pickled() -> None:
    d = salsox.Draws(frame())
    assert d.item_names.tolist() == NAMES and d.item_dim is None
    assert not d.item_names.flags.writeable
    again = pickle.loads(pickle.dumps(d))
    assert again.item_names.tolist() == NAMES
    assert salsox.Draws(d).item_names.tolist() == NAMES  # a Draws of a Draws keeps them


def test_unnamed_inputs_have_no_names() -> None:
    assert salsox.Draws(DRAWS).item_names is None
    assert salsox.Draws(pd.DataFrame(DRAWS)).item_names is None  # pandas' 0..n-1 are positions
    assert salsox.salso(DRAWS, seed=1).item_names is None


def test_explicit_names_are_checked() -> None:
    assert salsox.Draws(DRAWS, item_names=[10, 20, 30, 40]).item_names.tolist() == [10, 20, 30, 40]
    with pytest.raises(ValueError, match="one name per item"):
        salsox.Draws(DRAWS, item_names=["a", "b"])
    with pytest.raises(TypeError, match="not a single string"):
        salsox.Draws(DRAWS, item_names="abcd")
    with pytest.raises(TypeError, match="item_dim"):
        salsox.Draws(DRAWS, item_dim=3)  # type: ignore[arg-type]


def test_xarray_coordinates_name_the_items_and_the_dimension() -> None:
    xr = pytest.importorskip("xarray")
    da = xr.DataArray(DRAWS[None], dims=("chain", "draw", "obs"), coords={"obs": NAMES})
    d = salsox.Draws(da)
    assert d.item_names.tolist() == NAMES and d.item_dim == "obs"
    est = salsox.salso(da, seed=1)
    out = est.to_xarray()
    assert out.dims == ("obs",) and out["obs"].values.tolist() == NAMES
    assert out.values.tolist() == est.labels.tolist() and out.name == "cluster"
    assert out.attrs["expected_loss"] == est.expected_loss
    # An ArviZ-style (container, variable) pair too.
    ds = xr.Dataset({"z": da, "mu": xr.DataArray(np.zeros((1, 4)), dims=("chain", "draw"))})
    assert salsox.salso((ds, "z"), seed=1).item_names.tolist() == NAMES


def test_estimate_to_series_and_to_xarray() -> None:
    xr = pytest.importorskip("xarray")
    est = salsox.salso(frame(), seed=1)
    assert est.item_names.tolist() == NAMES
    series = est.to_series()
    assert series.index.tolist() == NAMES and series.tolist() == est.labels.tolist()
    assert series.index.name == "item"
    plain = salsox.salso(DRAWS, seed=1)
    assert plain.to_series().index.tolist() == [0, 1, 2, 3]
    out = plain.to_xarray()
    assert isinstance(out, xr.DataArray) and out.dims == ("item",) and "item" not in out.coords


def test_summary_and_ball_carry_names() -> None:
    est = salsox.salso(frame(), seed=1)
    s = est.summary()
    assert s.item_names.tolist() == NAMES
    assert salsox.summarize(est.labels, frame()).item_names.tolist() == NAMES
    assert salsox.summarize(est, DRAWS).item_names.tolist() == NAMES  # from the estimate
    table = s.to_dataframe()
    assert table.index.tolist() == NAMES and list(table.columns) == ["cluster", "similarity", "score"]
    clusters = s.to_dataframe("clusters")
    assert clusters["exemplar_name"].tolist() == [NAMES[i] for i in s.exemplars]
    with pytest.raises(ValueError, match="'items' or 'clusters'"):
        s.to_dataframe("pairs")
    text = s.to_text()
    assert "ant" in text.splitlines()[2]  # the exemplar of cluster 0, by name
    ball = salsox.credible_ball(est, DRAWS, "VI", 0.75)
    assert ball.item_names.tolist() == NAMES
    assert ball.to_dict()["item_names"] == NAMES
    assert salsox.credible_ball(est.labels, DRAWS).item_names is None


def test_one_based_reports() -> None:
    s = salsox.summarize([0, 0, 1, 1], DRAWS)
    zero, one = s.to_dict(), s.to_dict(one_based=True)
    assert one["labels"] == [v + 1 for v in zero["labels"]]
    for table, key in (("items", "item"), ("items", "cluster"), ("clusters", "cluster"), ("clusters", "exemplar")):
        assert one[table][key] == [v + 1 for v in zero[table][key]]
    assert one["order"] == [v + 1 for v in zero["order"]]
    rows = s.to_text(one_based=True).splitlines()
    assert rows[2].split()[:3] == ["1", "2", "1"]  # cluster 1, size 2, exemplar item 1
    ball = salsox.credible_ball([0, 0, 1, 1], DRAWS, "VI", 0.75)
    assert ball.to_dict(one_based=True)["estimate"] == [1, 1, 2, 2]
    assert ball.to_dict(one_based=True)["horizontal"]["draws"] == (ball.horizontal.draws + 1).tolist()


def test_html_reprs_show_names_escaped() -> None:
    names = ["<b>x</b>", "bee", "cat", "dog"]
    est = salsox.salso(pd.DataFrame(DRAWS, columns=names), seed=1)
    for obj in (est, est.summary()):
        html = obj._repr_html_()
        assert html.startswith("<div>") and "<table>" in html
        assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    ball = salsox.credible_ball(est, DRAWS)
    assert "credible ball" in ball._repr_html_() and "horizontal" in ball._repr_html_()


def test_tune_dlso_and_chips_keep_names() -> None:
    xr = pytest.importorskip("xarray")
    da = xr.DataArray(DRAWS, dims=("draw", "obs"), coords={"obs": NAMES})
    tuned = salsox.tune(da, "binder", 2, seed=1).estimate
    assert tuned.item_names.tolist() == NAMES and tuned.item_dim == "obs"
    assert salsox.dlso(frame(), "binder").item_names.tolist() == NAMES
    res = salsox.chips(frame(), 0.5, seed=1)
    assert res.completed is not None and res.completed.item_names.tolist() == NAMES
