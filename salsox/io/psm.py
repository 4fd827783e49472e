"""The PSM container: a posterior similarity matrix, marked so it is never mistaken for draws."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from .._validation import looks_like_similarity
from .draws import check_item_names
from .foreign import item_names_of
from .item_index import align, index_names

__all__ = ["PSM", "refuse_similarity"]


class PSM:
    """A posterior similarity matrix, marked as such so it is never mistaken for draws.

    Parameters
    ----------
    matrix : array-like of shape (n, n)
        Symmetric, entries in [0, 1], ones on the diagonal.
    item_names : array-like of shape (n,), optional
        Names of the items; by default a DataFrame's column labels.

    Examples
    --------
    >>> p = salsox.PSM([[1.0, 0.8, 0.1], [0.8, 1.0, 0.2], [0.1, 0.2, 1.0]])
    >>> p
    PSM(n_items=3)
    >>> salsox.salso(p, "binder", seed=1).labels
    array([0, 0, 1])
    """

    matrix: np.ndarray
    item_names: Optional[np.ndarray] = None

    def __init__(self, matrix: Any, *, item_names: Any = None) -> None:
        if hasattr(matrix, "columns") and hasattr(matrix, "index") and hasattr(matrix, "iloc"):
            matrix, found = _frame_in_column_order(matrix)
            item_names = found if item_names is None else item_names
        if item_names is None:
            item_names = item_names_of(matrix)[0]
        if isinstance(matrix, PSM):
            self.matrix = matrix.matrix
            self.item_names = check_item_names(item_names, self.n_items)
            return
        try:
            m = np.asarray(matrix, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError("psm must be a numeric n x n matrix") from None
        if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
            raise ValueError(f"psm must be a non-empty square matrix, got shape {m.shape}")
        if not np.all(np.isfinite(m)):
            raise ValueError("psm contains NaN or infinite values")
        if np.any(m < 0) or np.any(m > 1):
            raise ValueError("psm entries must lie in [0, 1]")
        if not np.allclose(m, m.T, rtol=0, atol=1e-12):
            raise ValueError("psm must be symmetric")
        if not np.allclose(np.diag(m), 1.0, rtol=0, atol=1e-12):
            raise ValueError("psm must have ones on its diagonal")
        self.matrix = np.ascontiguousarray(m)
        self.matrix.setflags(write=False)
        self.item_names = check_item_names(item_names, self.n_items)

    @property
    def n_items(self) -> int:
        return int(self.matrix.shape[0])

    def __repr__(self) -> str:
        return f"PSM(n_items={self.n_items})"


def _frame_in_column_order(frame: Any) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """A DataFrame similarity matrix as an array whose rows follow its columns, with the names:
    rows and columns that both name the items are matched by name (salsox.io.item_index), so a
    frame whose rows were reordered or sorted is read right."""
    columns, rows = index_names(frame.columns), index_names(frame.index)
    values = frame.to_numpy()
    n = values.shape[1] if values.ndim == 2 else 0
    col_names = None if columns is None else check_item_names(columns, len(columns), "psm's columns")
    row_names = None if rows is None else check_item_names(rows, len(rows), "psm's index")
    if col_names is None:
        return values, row_names
    take = align(col_names, n, row_names, values.shape[0], "psm's rows (its index)", against="its columns")
    return (values if take is None else values[take]), col_names


def refuse_similarity(x: Any, name: str, who: str) -> None:
    """A :class:`PSM`, or a bare similarity matrix (R salso's test, as ``salso`` applies it),
    given where ``who`` needs the draws: a ValueError saying so, not "non-integral values"."""
    if not isinstance(x, (PSM, np.ndarray)) and (isinstance(x, list) or hasattr(x, "iloc")):
        try:  # nested lists, a DataFrame
            x = np.asarray(x)
        except (ValueError, TypeError):
            return
    if isinstance(x, PSM):
        found = "a salsox.PSM"
    elif looks_like_similarity(x):
        found = "a similarity matrix (square, symmetric, entries in [0, 1], ones on the diagonal)"
    else:
        return
    raise ValueError(
        f"{name} is {found}, but {who} needs the H x n draws themselves, which a similarity matrix does "
        "not determine"
    )
