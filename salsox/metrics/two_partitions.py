"""The built-in losses between two partitions from their sparse contingency table (numpy).

The engine tabulates clusters in 16-bit labels, at most 65,536 per partition. Between two
partitions nothing needs such a table: the losses are sums over the nonzero cells and the two
margins, which ``np.unique`` finds for any number of clusters. :func:`partition_loss` (so
``RI`` and ``ARI``) takes this route only when a partition has more clusters than the engine
holds; elsewhere the engine's values are used, so results do not change with the route.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..losses import ID, NID, NVI, OMARI, VI, Binder, Loss

__all__ = ["ENGINE_MAX_CLUSTERS", "needs_numpy_route", "two_partition_loss"]

#: The most clusters per partition the engine's tables hold (cpp/include/salsox/draws.hpp).
ENGINE_MAX_CLUSTERS = 65536


def _plogp(counts: np.ndarray, n: int) -> float:
    p = counts / n
    return float(np.sum(p * np.log2(p)))


def _comb2(counts: np.ndarray) -> int:
    c = counts.astype(np.int64)
    return int(np.sum(c * (c - 1) // 2))


def two_partition_loss(estimate: np.ndarray, truth: np.ndarray, loss: Loss) -> Optional[float]:
    """The loss of ``estimate`` against the single partition ``truth`` (both canonical labels
    0..k-1 of n items), or None for a loss this module does not compute (plugins, PSM losses,
    subclasses of the built-ins, which may redefine them)."""
    kind = type(loss)
    if kind not in (Binder, VI, OMARI, NVI, ID, NID):
        return None
    n = int(truth.shape[0])
    x = truth.astype(np.int64)
    y = estimate.astype(np.int64)
    rows = np.bincount(x)
    cols = np.bincount(y)
    cells = np.unique(x * (int(y.max()) + 1) + y, return_counts=True)[1]  # exact: k^2 < 2^63
    if kind is Binder or kind is VI:
        a, b = float(loss.params["a"]), float(loss.params["b"])
        if kind is Binder:
            sq = lambda c: float(np.sum((c / n) ** 2))
            return a * sq(rows) + b * sq(cols) - (a + b) * sq(cells)
        return a * _plogp(rows, n) + b * _plogp(cols, n) - (a + b) * _plogp(cells, n)
    if kind is OMARI:
        pairs = n * (n - 1) // 2
        s_rows, s_cols, s_cells = _comb2(rows), _comb2(cols), _comb2(cells)
        if pairs == 0 or (s_rows + s_cols) * pairs == 2 * s_rows * s_cols:
            return 0.0  # both one cluster or both all singletons: identical, ARI 1
        expected = s_rows * s_cols / pairs
        return 1.0 - (s_cells - expected) / (0.5 * (s_rows + s_cols) - expected)
    h_x, h_y, h_xy = -_plogp(rows, n), -_plogp(cols, n), -_plogp(cells, n)
    mutual = h_x + h_y - h_xy
    if kind is NVI:
        return 0.0 if h_xy == 0.0 else 1.0 - mutual / h_xy
    if kind is ID:
        return max(h_x, h_y) - mutual
    top = max(h_x, h_y)
    return 0.0 if top == 0.0 else 1.0 - mutual / top  # NID


def needs_numpy_route(estimate: np.ndarray, truth: np.ndarray) -> bool:
    """Whether either partition (canonical labels) has more clusters than the engine holds."""
    return bool(int(truth.max()) + 1 > ENGINE_MAX_CLUSTERS or int(estimate.max()) + 1 > ENGINE_MAX_CLUSTERS)
