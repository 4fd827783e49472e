"""xarray DataArrays and ArviZ InferenceData are accepted wherever draws are (chains stacked)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import salsox
from conftest import load_draws

xr = pytest.importorskip("xarray")  # the optional dependency only


@pytest.fixture(scope="module")
def iris():
    return load_draws("iris")


@pytest.fixture(scope="module")
def chains(iris):
    """iris draws as 4 chains x 250 draws x 150 items."""
    return xr.DataArray(iris.reshape(4, 250, 150), dims=("chain", "draw", "item"), name="z")


def test_dataarray_is_stacked_chain_by_chain(iris, chains):
    np.testing.assert_array_equal(salsox.from_xarray(chains), iris)
    # Any dimension order, any name for the items.
    moved = chains.transpose("item", "draw", "chain").rename(item="obs")
    np.testing.assert_array_equal(salsox.from_xarray(moved), iris)
    # (draw, item) and (sample, item) without chains.
    flat = xr.DataArray(iris, dims=("draw", "obs"))
    np.testing.assert_array_equal(salsox.from_xarray(flat), iris)
    stacked = xr.DataArray(iris, dims=("sample", "obs"))
    np.testing.assert_array_equal(salsox.from_xarray(stacked), iris)
    # Unnamed dimensions: positional (chain, draw, item).
    positional = xr.DataArray(iris.reshape(4, 250, 150))
    np.testing.assert_array_equal(salsox.from_xarray(positional), iris)


def test_everywhere_draws_are_accepted(iris, chains):
    est = salsox.salso(chains, "VI", n_runs=2, seed=3)
    ref = salsox.salso(iris, "VI", n_runs=2, seed=3)
    np.testing.assert_array_equal(est.labels, ref.labels)
    assert salsox.Draws(chains).n_draws == 1000
    assert salsox.partition_loss(est.labels, chains, "VI") == pytest.approx(ref.expected_loss)
    np.testing.assert_allclose(salsox.psm(chains), salsox.psm(iris))
    np.testing.assert_allclose(salsox.summarize(est, chains).item_score, salsox.summarize(est, iris).item_score)
    np.testing.assert_array_equal(
        salsox.credible_ball(est, chains).distances, salsox.credible_ball(est, iris).distances
    )
    assert salsox.tune(chains, "binder", 3, n_runs=1, seed=2).estimate.n_clusters == 3
    assert salsox.dlso(chains[:, :20], "binder").n_clusters >= 1


def test_dataset_needs_the_variable_name(iris, chains):
    ds = xr.Dataset({"z": chains, "mu": chains.astype(float) * 0.5})
    np.testing.assert_array_equal(salsox.Draws((ds, "z")).n_items, 150)
    est = salsox.salso((ds, "z"), "binder", n_runs=1, seed=1)
    assert est.labels.shape == (150,)
    with pytest.raises(ValueError, match="name the one holding the cluster labels"):
        salsox.salso(ds)
    with pytest.raises(KeyError, match="'w' not found"):
        salsox.salso((ds, "w"))
    single = xr.Dataset({"z": chains})
    np.testing.assert_array_equal(salsox.from_xarray(single), iris)


def test_bad_layouts(iris):
    with pytest.raises(ValueError, match="cannot tell the item dimension"):
        salsox.from_xarray(xr.DataArray(iris.reshape(4, 250, 15, 10), dims=("chain", "draw", "a", "b")))
    with pytest.raises(TypeError, match="expected an xarray"):
        salsox.from_xarray(iris)
    with pytest.raises(ValueError, match="non-integral"):
        salsox.salso(xr.DataArray(iris + 0.5, dims=("draw", "item")))
    # Plain tuples of rows are still draws, not (container, name) pairs.
    assert salsox.Draws(((1, 2, 2), (1, 1, 2))).n_draws == 2


def test_arviz_inference_data(iris):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ArviZ announces its refactor on import
        az = pytest.importorskip("arviz")
        idata = az.from_dict(posterior={"z": iris.reshape(4, 250, 150), "sigma": np.ones((4, 250))})
    np.testing.assert_array_equal(salsox.from_arviz(idata, "z"), iris)
    est = salsox.salso((idata, "z"), "VI", n_runs=2, seed=3)
    ref = salsox.salso(iris, "VI", n_runs=2, seed=3)
    np.testing.assert_array_equal(est.labels, ref.labels)
    assert salsox.partition_loss(est.labels, (idata, "z")) == pytest.approx(ref.expected_loss)
    with pytest.raises(ValueError, match=r"needs the name of the variable"):
        salsox.salso(idata)
    with pytest.raises(KeyError, match="'w' not found in the posterior group; available"):
        salsox.from_arviz(idata, "w")
    with pytest.raises(ValueError, match="no 'prior' group"):
        salsox.from_arviz(idata, "z", group="prior")
    with pytest.raises(TypeError, match="var_name must be a string"):
        salsox.from_arviz(idata, 3)


def test_xarray_datatree_like_arviz_1(iris):
    # ArviZ 1.x holds its groups in an xarray DataTree: the same (tree, "z") form works.
    if not hasattr(xr, "DataTree"):
        pytest.skip("this xarray has no DataTree")
    tree = xr.DataTree.from_dict(
        {"posterior": xr.Dataset({"z": (("chain", "draw", "obs"), iris.reshape(4, 250, 150))})}
    )
    np.testing.assert_array_equal(salsox.from_arviz(tree, "z"), iris)
    assert salsox.Draws((tree, "z")).n_draws == 1000
