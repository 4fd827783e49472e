"""Per-item VI contributions (Balocchi & Wade): how much each item adds to the VI between two
partitions, or to an expected VI.

VIC_i(z1, z2) = (1/n) log2(|z1(i)| |z2(i)| / |z1(i) & z2(i)|^2), where z(i) is the cluster of
item i: the n contributions are >= 0 and sum to VI(z1, z2) in bits.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..._validation import as_label_matrix, relabel_rows
from ...io import Draws, convert_foreign, convert_foreign_named, labels_and_names, matched, refuse_similarity

__all__ = ["vi_contributions", "evi_contributions", "contribution_rows", "draws_matrix"]

# Label cells per vectorised block (bounds the temporaries to a few tens of MiB).
_CHUNK_CELLS = 1 << 20


def _sizes(rows: np.ndarray) -> np.ndarray:
    """Size of each item's cluster, row by row (rows of labels 0..n-1)."""
    m, n = rows.shape
    flat = rows.astype(np.int64) + (np.arange(m, dtype=np.int64) * n)[:, None]
    return np.bincount(flat.ravel(), minlength=m * n)[flat]


def contribution_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """VIC of rows ``a`` (m x n) against ``b`` (n,) or rows (m x n), labels in 0..n-1: m x n."""
    m, n = a.shape
    b = np.broadcast_to(b, (m, n))
    out = np.empty((m, n), dtype=np.float64)
    step = max(1, _CHUNK_CELLS // n)
    for s in range(0, m, step):
        x, y = a[s : s + step], b[s : s + step]
        # Cells of the contingency table: the pair of labels, made 0..n^2-1, then per row.
        joint = relabel_rows(x.astype(np.int64) * n + y)
        sx, sy, sj = _sizes(x), _sizes(y), _sizes(joint)
        out[s : s + step] = np.log2(sx * sy / (sj.astype(np.float64) ** 2)) / n
    return np.maximum(out, 0.0)  # log2(1) can round to -0.0 or a hair below in products


def vi_contributions(x: Any, y: Any) -> np.ndarray:
    """Each item's contribution to the VI between two partitions.

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Two partitions of the same n items (any integer labels).

    Returns
    -------
    ndarray of shape (n,)
        ``VIC_i(x, y) = (1/n) log2(|x(i)| |y(i)| / |x(i) & y(i)|^2)`` in bits, >= 0; they sum to
        ``salsox.partition_loss(x, y, "VI")``. An item whose cluster is the same in both
        contributes 0.

    Examples
    --------
    Splitting the last cluster costs its two items 0.25 bit each:

    >>> salsox.vi_contributions([0, 0, 1, 1], [0, 0, 1, 2])
    array([0.  , 0.  , 0.25, 0.25])
    >>> float(salsox.partition_loss([0, 0, 1, 1], [0, 0, 1, 2], "VI"))
    0.5
    """
    # y's items matched to x's by name (salsox.io.item_index); the result follows x's items.
    x, x_names = labels_and_names(x, "x")
    y_values, y_names = labels_and_names(y, "y")
    if x_names is not None or y_names is not None:
        y = matched(y, x_names, int(np.shape(x)[-1]), "y", against="x")[0]
    else:
        y = y_values
    xs, x_single = as_label_matrix(x, "x")
    ys, y_single = as_label_matrix(y, "y")
    if not (x_single and y_single):
        raise ValueError("x and y must each be one 1-D partition")
    if xs.shape[1] != ys.shape[1]:
        raise ValueError(f"x has {xs.shape[1]} items but y has {ys.shape[1]}")
    return contribution_rows(xs, ys[0])[0]


def draws_matrix(draws: Any, name: str = "draws") -> np.ndarray:
    """H x n canonical int32 labels of ``draws`` (array-like, Draws, xarray or ArviZ)."""
    draws = convert_foreign(draws)
    refuse_similarity(draws, name, "wasabi")
    if isinstance(draws, Draws):
        return relabel_rows(np.asarray(draws._core.labels_matrix()))
    matrix, single = as_label_matrix(draws, name)
    if single:
        raise ValueError(f"{name} must be 2-D (H draws x n items)")
    return matrix


def evi_contributions(estimate: Any, draws: Any, weights: Optional[Any] = None) -> np.ndarray:
    """Each item's contribution to the expected VI of ``estimate`` over the draws.

    Parameters
    ----------
    estimate : Estimate or array-like of shape (n,)
    draws : array-like (H, n), Draws, xarray DataArray or (InferenceData, name)
    weights : array-like of shape (H,), optional
        Non-negative weights of the draws (default: equal).

    Returns
    -------
    ndarray of shape (n,)
        The (weighted) mean over draws of VIC_i(draw, estimate); they sum to the expected VI,
        ``salsox.partition_loss(estimate, draws, "VI")``.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 2], [0, 1, 1, 1], [0, 1, 1, 1], [0, 1, 1, 2]]
    >>> contributions = salsox.evi_contributions([0, 0, 1, 1], draws)
    >>> contributions.round(4)
    array([0.125 , 0.2987, 0.1737, 0.1321])
    >>> round(float(contributions.sum()), 4), round(float(salsox.partition_loss([0, 0, 1, 1], draws, "VI")), 4)
    (0.7296, 0.7296)
    """
    w = None
    if weights is not None:  # checked before the draws are read; its length once they are
        if isinstance(weights, (str, bytes)):
            raise TypeError("weights must be an array of numbers, got a string")
        try:
            w = np.asarray(weights, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(f"weights must be an array of numbers ({err})") from None
        if w.ndim != 1:
            raise ValueError(f"weights must have one value per draw, got shape {w.shape}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
            raise ValueError("weights must be finite, >= 0 and not all 0")
    matrix = draws_matrix(draws)
    h, n = matrix.shape
    # The estimate's items matched to the draws' by name (salsox.io.item_index).
    estimate = matched(estimate, convert_foreign_named(draws)[1], n, "estimate")[0]
    est, single = as_label_matrix(estimate, "estimate", n)
    if not single:
        raise ValueError("estimate must be one 1-D partition")
    if w is None:
        w = np.full(h, 1.0 / h)
    else:
        if w.shape != (h,):
            raise ValueError(f"weights must have one value per draw ({h}), got shape {w.shape}")
        w = w / w.sum()
    out = np.zeros(n)
    step = max(1, _CHUNK_CELLS // n)
    for s in range(0, h, step):
        out += w[s : s + step] @ contribution_rows(matrix[s : s + step], est[0])
    return out
