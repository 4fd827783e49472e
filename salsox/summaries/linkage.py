"""Average-linkage (UPGMA) clustering for summaries and plots, by scipy.cluster.hierarchy.

The linkage matrix is scipy's: row t merges clusters ``Z[t, 0]`` and ``Z[t, 1]`` (leaves are
0..m-1, the cluster formed at row t is m + t) at height ``Z[t, 2]``, giving a cluster of
``Z[t, 3]`` leaves.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["average_linkage", "leaf_order"]


def average_linkage(distances: np.ndarray, weights: Optional[np.ndarray] = None) -> np.ndarray:
    """Average-linkage agglomerative clustering of a distance matrix.

    Parameters
    ----------
    distances : ndarray of shape (m, m)
        Symmetric dissimilarities (the diagonal is ignored).
    weights : ndarray of shape (m,), optional
        Number of items each leaf stands for (default 1). With weights, the leaves are groups
        and ``distances`` the mean item-to-item distance between them; the result is then the
        item-level average linkage continued from those groups (``Z[:, 3]`` sums the weights).

    Returns
    -------
    ndarray of shape (m - 1, 4)
        scipy's linkage format, rows in order of height.

    Notes
    -----
    Without weights this is ``scipy.cluster.hierarchy.linkage(..., method="average")``. scipy
    has no leaf weights, so the weighted case (used for the few clusters of an estimate) merges
    the closest pair, the lowest-numbered on ties, with the Lance-Williams update for average
    linkage weighted by the items each side holds: O(m^3) for m leaves.
    """
    d = np.array(distances, dtype=np.float64, copy=True)
    if d.ndim != 2 or d.shape[0] != d.shape[1]:
        raise ValueError(f"distances must be a square matrix, got shape {d.shape}")
    m = d.shape[0]
    if m < 2:
        return np.empty((0, 4))
    if weights is None:
        # scipy is imported when first needed: it would double `import salsox`'s time.
        from scipy.cluster import hierarchy
        from scipy.spatial.distance import squareform

        d = 0.5 * (d + d.T)  # symmetric to rounding, as squareform requires
        np.fill_diagonal(d, 0.0)
        return hierarchy.linkage(squareform(d, checks=False), method="average")
    size = np.asarray(weights, dtype=np.float64).copy()
    if size.shape != (m,) or not np.all(size > 0):
        raise ValueError(f"weights must be {m} positive numbers")
    np.fill_diagonal(d, np.inf)
    name = np.arange(m)  # the linkage's name of the cluster in each slot
    z = np.empty((m - 1, 4))
    for t in range(m - 1):
        flat = int(np.argmin(d))
        x, y = divmod(flat, m)
        x, y = min(x, y), max(x, y)
        h = float(d[x, y])
        # The merged cluster lives in slot x; slot y is retired.
        new = (size[x] * d[x] + size[y] * d[y]) / (size[x] + size[y])
        d[x, :] = new
        d[:, x] = new
        d[y, :] = np.inf
        d[:, y] = np.inf
        d[x, x] = np.inf
        a, b = sorted((int(name[x]), int(name[y])))
        size[x] += size[y]
        z[t] = (a, b, h, size[x])
        name[x] = m + t
    return z


def leaf_order(z: np.ndarray) -> np.ndarray:
    """Leaves in the left-to-right order of the dendrogram of linkage ``z`` (scipy's
    ``leaves_list``)."""
    if z.shape[0] == 0:
        return np.zeros(1, dtype=np.intp)
    from scipy.cluster import hierarchy

    z = np.array(z, dtype=np.float64)
    m = z.shape[0] + 1
    # scipy checks Z[:, 3] against the leaves below; a weighted linkage counts items there.
    leaves = np.ones(2 * m - 1)
    for t in range(m - 1):
        leaves[m + t] = leaves[int(z[t, 0])] + leaves[int(z[t, 1])]
    z[:, 3] = leaves[m:]
    return hierarchy.leaves_list(z).astype(np.intp)
