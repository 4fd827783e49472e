"""Posterior draws of a partition, validated once and held compactly by the C++ engine."""

from __future__ import annotations

import numbers
from typing import Any, Optional, Union

import numpy as np

from .. import _core
from .._validation import as_integer_array
from .foreign import convert_foreign_named
from .item_index import check_item_names

__all__ = ["Draws", "as_draws", "check_item_names"]

# Label dtypes the engine reads directly (narrow ones are never widened in a copy).
_ENGINE_DTYPES = tuple(
    np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.int64)
)


class Draws:
    """H posterior draws of a clustering of n items.

    Parameters
    ----------
    draws : array-like of shape (H, n)
        Cluster labels, one row per draw. Any integer labels (starting at 1, with gaps,
        negative, beyond 65,535), any integer dtype or integral floats (object arrays are
        checked the same way), any layout (C or Fortran order, strided or reversed views,
        memory maps) and byte order, numpy arrays, pandas DataFrames or nested lists: the
        labels are read exactly, never narrowed. The input is never modified. An
        ``xarray.DataArray`` with dimensions (chain, draw, item), or an ArviZ
        ``(InferenceData, "variable")`` pair, is accepted too (chains stacked; see
        :func:`salsox.from_arviz`).
    item_names : array-like of shape (n,), optional
        Names of the items (any values: strings, numbers...). By default they are taken from
        the input when it has them: a DataFrame's column labels (not pandas' default 0..n-1),
        the coordinate of an xarray object's item dimension; :func:`salsox.read_draws` takes
        them from a file's header or coordinates. Estimates, summaries and plots carry them.
    item_dim : str, optional
        Name of the item dimension (taken from an xarray input; ``to_xarray()`` of an estimate
        uses it, default ``"item"``).

    Each draw is relabelled internally to 0..k-1 and stored item-major with 8-bit labels when
    every draw has at most 256 clusters, 16-bit otherwise. Build a ``Draws`` once and pass it
    to several calls to avoid validating the same matrix again.

    Attributes
    ----------
    n_items, n_draws : int
    max_clusters : int
        The largest number of clusters in any draw.
    label_bits : int
        8 or 16.
    nbytes : int
        Memory held by the compact labels.

    Examples
    --------
    >>> d = salsox.Draws([[1, 1, 2], [1, 2, 2], [5, 5, 5]])
    >>> d
    Draws(n_draws=3, n_items=3, max_clusters=2, label_bits=8)
    >>> d.draw(1)
    array([0, 1, 1], dtype=int32)
    >>> import pandas as pd
    >>> salsox.Draws(pd.DataFrame([[1, 1, 2]], columns=["ant", "bee", "cat"])).item_names
    array(['ant', 'bee', 'cat'], dtype=object)
    """

    def __init__(self, draws: Any, *, item_names: Any = None, item_dim: Optional[str] = None) -> None:
        self._core: _core.CompactDraws
        self._item_names: Optional[np.ndarray] = None
        self._item_dim: Optional[str] = None
        # xarray DataArray / ArviZ InferenceData (optional), with the names they carry
        draws, found_names, found_dim = convert_foreign_named(draws)
        if item_names is None:
            item_names = found_names
        if item_dim is None:
            item_dim = found_dim
        if isinstance(draws, Draws):
            self._core = draws._core
        else:
            self._core = self._compact(draws)
        self._item_names = check_item_names(item_names, self.n_items)
        if item_dim is not None and not isinstance(item_dim, str):
            raise TypeError(f"item_dim must be a string, got {type(item_dim).__name__}")
        self._item_dim = item_dim

    @staticmethod
    def _compact(draws: Any) -> "_core.CompactDraws":
        arr = as_integer_array(draws, "draws")
        if arr.ndim == 1:
            raise ValueError(
                "draws must be 2-D (H draws x n items); for a single partition use "
                "np.asarray(labels).reshape(1, -1)"
            )
        if arr.ndim != 2:
            raise ValueError(f"draws must be 2-D (H draws x n items), got a {arr.ndim}-D array")
        if arr.shape[0] == 0:
            raise ValueError("draws has no draws (H = 0)")
        if arr.shape[1] == 0:
            raise ValueError("draws has no items (n = 0)")
        if arr.dtype not in _ENGINE_DTYPES:
            arr = arr.astype(np.int64)
        # The engine reads the buffer as is: hand it C-contiguous, native-order integers
        # (as_integer_array made the byte order native), whatever the input's layout.
        arr = np.ascontiguousarray(arr)
        try:
            return _core.CompactDraws(arr)
        except ValueError as err:
            hint = ""
            if "clusters per draw" in str(err):
                hint = (
                    ". Between two partitions, pass each as a 1-D array of labels: partition_loss(estimate, "
                    "truth, loss), RI and ARI take any number of clusters; salso and the other summaries of "
                    "draws need every draw within 65536 clusters"
                )
            raise ValueError(f"draws: {err}{hint}") from None

    @property
    def item_names(self) -> Optional[np.ndarray]:
        """The items' names (read-only array), or None when unknown."""
        return self._item_names

    @property
    def item_dim(self) -> Optional[str]:
        """Name of the item dimension of an xarray input, or None."""
        return self._item_dim

    @property
    def n_items(self) -> int:
        return int(self._core.n)

    @property
    def n_draws(self) -> int:
        return int(self._core.H)

    @property
    def max_clusters(self) -> int:
        return int(self._core.kmax)

    @property
    def label_bits(self) -> int:
        return int(self._core.label_bits)

    @property
    def nbytes(self) -> int:
        return int(self._core.nbytes)

    @property
    def clusters_per_draw(self) -> np.ndarray:
        """Number of clusters in each draw."""
        return np.asarray(self._core.clusters_per_draw)

    def draw(self, h: int) -> np.ndarray:
        """Draw ``h`` (0 <= h < n_draws) relabelled 0..k-1."""
        # An integer only: True, 1.7 or "1" are mistakes, not indices.
        if isinstance(h, (bool, np.bool_)) or not isinstance(h, numbers.Integral):
            raise TypeError(f"draw index h must be an integer, got {type(h).__name__}")
        index = int(h)
        if not 0 <= index < self.n_draws:
            raise IndexError(f"draw index h must be in [0, {self.n_draws}), got {index}")
        return np.asarray(self._core.draw(index))

    def labels_matrix(self) -> np.ndarray:
        """The H x n relabelled draws, in the stored 8- or 16-bit width."""
        return np.asarray(self._core.labels_matrix())

    def __reduce__(self):
        # Pickles (e.g. to Dask workers) as the compact relabelled matrix, with the names.
        return (Draws, (self.labels_matrix(),), {"_item_names": self._item_names, "_item_dim": self._item_dim})

    def __len__(self) -> int:
        return self.n_draws

    def __repr__(self) -> str:
        return (
            f"Draws(n_draws={self.n_draws}, n_items={self.n_items}, "
            f"max_clusters={self.max_clusters}, label_bits={self.label_bits})"
        )


DrawsLike = Union[Draws, np.ndarray, Any]


def as_draws(draws: DrawsLike) -> Draws:
    """``draws`` as a :class:`Draws` (returned unchanged when it already is one)."""
    if isinstance(draws, Draws):
        return draws
    return Draws(draws)
