"""Draws from the PyData ecosystem: xarray DataArrays and ArviZ InferenceData.

Neither library is a dependency: objects are recognised by their attributes (``dims`` for
xarray, ``posterior`` for InferenceData or an xarray DataTree), never by importing the
libraries, so salsox imports neither.

Layout: the sample dimensions (``chain`` and ``draw``, or ``sample``) are stacked, chain by
chain, into the H rows of the draws matrix; the single remaining dimension is the items.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from .item_index import check_item_names

__all__ = ["from_xarray", "from_arviz", "convert_foreign", "convert_foreign_named", "is_foreign", "item_names_of"]

# What an input says about its items: their names (None when unknown) and, from xarray, the
# name of the item dimension.
Names = Tuple[Optional[np.ndarray], Optional[str]]

# Dimension names treated as "which posterior sample", in stacking order.
_SAMPLE_DIMS: Tuple[str, ...] = ("chain", "draw", "sample", "samples", "iteration")


def _is_dataarray(obj: Any) -> bool:
    # A DataArray has dims, values and a name; a Dataset has dims and data_vars.
    return hasattr(obj, "dims") and hasattr(obj, "values") and not hasattr(obj, "data_vars")


def _is_dataset(obj: Any) -> bool:
    return hasattr(obj, "dims") and hasattr(obj, "data_vars")


def _is_inference_data(obj: Any) -> bool:
    # InferenceData and DataTree both list their groups; a bare "posterior" attribute (say a
    # DataFrame column of that name) is not enough.
    return not isinstance(obj, np.ndarray) and hasattr(obj, "posterior") and hasattr(obj, "groups")


def is_foreign(obj: Any) -> bool:
    """Whether ``obj`` is an xarray/ArviZ object, or an ``(object, variable name)`` pair."""
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], str):
        return _is_inference_data(obj[0]) or _is_dataset(obj[0]) or _is_dataarray(obj[0])
    if isinstance(obj, np.ndarray):
        return False
    return _is_inference_data(obj) or _is_dataset(obj) or _is_dataarray(obj)


def from_xarray(data: Any, var_name: Optional[str] = None) -> np.ndarray:
    """Draws matrix (H x n) from an ``xarray.DataArray`` (or a Dataset and a variable name).

    Parameters
    ----------
    data : xarray.DataArray or xarray.Dataset
        Cluster labels with dimensions ``(chain, draw, item)``, ``(draw, item)`` or
        ``(sample, item)`` in any order; the item dimension may have any name. Without named
        sample dimensions, a 2-D array is read as (draw, item) and a 3-D one as
        (chain, draw, item).
    var_name : str, optional
        The variable to take from a Dataset (optional when it has a single variable).

    Returns
    -------
    ndarray of shape (H, n)
        Chains stacked one after the other: H = chains x draws.

    Examples
    --------
    >>> import xarray as xr
    >>> z = xr.DataArray([[[0, 0, 1], [0, 1, 1]]], dims=("chain", "draw", "obs"), coords={"obs": ["a", "b", "c"]})
    >>> salsox.from_xarray(z)
    array([[0, 0, 1],
           [0, 1, 1]])
    >>> salsox.salso(z, seed=1).item_names        # salso keeps the item coordinate
    array(['a', 'b', 'c'], dtype=object)
    """
    return _xarray_named(data, var_name)[0]


def _xarray_named(data: Any, var_name: Optional[str] = None) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[str]]:
    """:func:`from_xarray`'s matrix, with the item coordinate (None without one) and dimension."""
    if _is_dataset(data):
        names = [str(v) for v in data.data_vars]
        if var_name is None:
            if len(names) != 1:
                raise ValueError(
                    f"the Dataset has variables {names}; name the one holding the cluster labels, "
                    "e.g. (dataset, 'z') or salsox.from_xarray(dataset, 'z')"
                )
            var_name = names[0]
        if var_name not in names:
            raise KeyError(f"variable {var_name!r} not found; available: {names}")
        data = data[var_name]
    elif var_name is not None and not _is_dataarray(data):
        raise TypeError(f"expected an xarray DataArray or Dataset, got {type(data).__name__}")
    if not _is_dataarray(data):
        raise TypeError(f"expected an xarray DataArray or Dataset, got {type(data).__name__}")
    dims = [str(d) for d in data.dims]
    sample = [d for d in _SAMPLE_DIMS if d in dims]
    items = [d for d in dims if d not in sample]
    if len(items) != 1:
        if not sample and len(dims) in (2, 3):
            # Unnamed dimensions: take the documented positional layout.
            values = np.asarray(data.values)
            return values.reshape(-1, values.shape[-1]), _coord(data, dims[-1]), dims[-1]
        raise ValueError(
            f"cannot tell the item dimension among {tuple(dims)}: expected the sample dimensions "
            f"{_SAMPLE_DIMS[:2]} (or 'sample') and exactly one other dimension for the items"
        )
    values = np.asarray(data.transpose(*sample, items[0]).values)
    n = values.shape[-1]
    return values.reshape(-1, n), _coord(data, items[0]), items[0]


def _coord(data: Any, dim: str) -> Optional[np.ndarray]:
    """The coordinate values along ``dim`` (the item names), or None when it has none."""
    try:
        if dim not in data.coords:
            return None
        values = np.asarray(data.coords[dim].values)
    except (AttributeError, TypeError):
        return None
    return check_item_names(values, len(values), f"the {dim!r} coordinate")


def from_arviz(idata: Any, var_name: str, group: str = "posterior") -> np.ndarray:
    """Draws matrix (H x n) from an ArviZ ``InferenceData`` (or an xarray DataTree).

    Parameters
    ----------
    idata : arviz.InferenceData
    var_name : str
        The posterior variable holding the cluster labels, dimensions (chain, draw, item).
    group : str, default "posterior"

    Returns
    -------
    ndarray of shape (H, n), chains stacked.

    Examples
    --------
    >>> est = salsox.salso(salsox.from_arviz(idata, "z"))     # doctest: +SKIP
    >>> est = salsox.salso((idata, "z"))                       # the same  # doctest: +SKIP
    """
    return from_xarray(_arviz_variable(idata, var_name, group))


def _arviz_variable(idata: Any, var_name: str, group: str = "posterior") -> Any:
    """The DataArray ``var_name`` of an InferenceData's ``group``, with clear errors."""
    if not isinstance(var_name, str):
        raise TypeError(f"var_name must be a string, got {type(var_name).__name__}")
    if not hasattr(idata, group):
        raise ValueError(f"the InferenceData has no {group!r} group")
    ds = getattr(idata, group)
    try:
        available: Sequence[str] = [str(v) for v in ds.data_vars]
    except AttributeError:
        available = []
    if available and var_name not in available:
        raise KeyError(f"variable {var_name!r} not found in the {group} group; available: {list(available)}")
    return ds[var_name]


def convert_foreign_named(obj: Any) -> Tuple[Any, Optional[np.ndarray], Optional[str]]:
    """:func:`convert_foreign`, with the item names and dimension the object carries.

    A pandas DataFrame is returned unchanged, with its column labels as names (none for the
    default 0..n-1 RangeIndex); anything else has no names.
    """
    if not is_foreign(obj):
        names, dim = item_names_of(obj)
        return obj, names, dim
    if isinstance(obj, tuple):
        container, name = obj
        if _is_inference_data(container):
            return _xarray_named(_arviz_variable(container, name))
        return _xarray_named(container, name)
    if _is_inference_data(obj):
        convert_foreign(obj)  # raises: the variable must be named
    return _xarray_named(obj)


def item_names_of(obj: Any) -> Names:
    """(names, dimension) carried by ``obj``: a Draws/PSM's, a DataFrame's columns, an xarray
    object's item coordinate; (None, None) when it has none."""
    if isinstance(obj, np.ndarray):
        return None, None
    if hasattr(obj, "item_names") and hasattr(obj, "n_items"):  # Draws, PSM
        return obj.item_names, getattr(obj, "item_dim", None)
    if is_foreign(obj):
        return convert_foreign_named(obj)[1:]
    columns = getattr(obj, "columns", None)
    if columns is not None and hasattr(obj, "iloc"):  # a pandas DataFrame
        if type(columns).__name__ == "RangeIndex" and columns.start == 0 and columns.step == 1:
            return None, None  # pandas' default labels are positions, not names
        return check_item_names(np.asarray(columns), len(columns), "the DataFrame's columns"), None
    return None, None


def convert_foreign(obj: Any) -> Any:
    """``obj`` as a draws matrix if it is an xarray/ArviZ object (or pair); otherwise unchanged."""
    if not is_foreign(obj):
        return obj
    if isinstance(obj, tuple):
        container, name = obj
        if _is_inference_data(container):
            return from_arviz(container, name)
        return from_xarray(container, name)
    if _is_inference_data(obj):
        raise ValueError(
            "an InferenceData needs the name of the variable holding the cluster labels: pass "
            "(idata, 'z') or salsox.from_arviz(idata, 'z')"
        )
    return from_xarray(obj)
