"""Average-linkage (UPGMA) hierarchical clustering and dendrogram layout, in numpy only.

Used to order clusters in summaries and heatmaps and to draw dendrograms without scipy. The
linkage matrix has scipy's layout, so it can be handed to ``scipy.cluster.hierarchy`` too.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

__all__ = ["average_linkage", "leaf_order", "dendrogram_layout"]


def average_linkage(distances: np.ndarray, weights: Optional[np.ndarray] = None) -> np.ndarray:
    """Average-linkage agglomerative clustering of a distance matrix.

    Parameters
    ----------
    distances : ndarray of shape (m, m)
        Symmetric dissimilarities (the diagonal is ignored).
    weights : ndarray of shape (m,), optional
        Number of items each leaf stands for (default 1). With weights, the leaves are groups
        and ``distances`` the mean item-to-item distance between them; the result is then the
        item-level average linkage continued from those groups.

    Returns
    -------
    ndarray of shape (m - 1, 4)
        scipy's linkage format: row t merges clusters ``Z[t, 0]`` and ``Z[t, 1]`` (leaves are
        0..m-1, the cluster formed at row t is m + t) at height ``Z[t, 2]``, giving a cluster
        of ``Z[t, 3]`` leaves (weights summed when given). Rows are in order of height.

    Notes
    -----
    The nearest-neighbour chain algorithm: O(m^2) time and one m x m work matrix. Average
    linkage is reducible, so sorting the chain's merges by height gives the same hierarchy as
    the naive algorithm.
    """
    d = np.array(distances, dtype=np.float64, copy=True)
    if d.ndim != 2 or d.shape[0] != d.shape[1]:
        raise ValueError(f"distances must be a square matrix, got shape {d.shape}")
    m = d.shape[0]
    if m < 2:
        return np.empty((0, 4))
    size = np.ones(m) if weights is None else np.asarray(weights, dtype=np.float64).copy()
    count = np.ones(m)
    np.fill_diagonal(d, np.inf)
    alive = np.ones(m, dtype=bool)
    merges: List[Tuple[int, int, float]] = []
    chain: List[int] = []
    for _ in range(m - 1):
        if not chain:
            chain.append(int(np.flatnonzero(alive)[0]))
        while True:
            x = chain[-1]
            row = d[x]
            y = int(np.argmin(row))
            # Prefer the previous chain element on ties, or the chain could cycle.
            if len(chain) > 1 and row[chain[-2]] <= row[y]:
                y = chain[-2]
            if len(chain) > 1 and y == chain[-2]:
                break
            chain.append(y)
        x, y = chain.pop(), chain.pop()
        merges.append((x, y, float(d[x, y])))
        # Lance-Williams update for average linkage; the merged cluster lives in slot y.
        new = (size[x] * d[x] + size[y] * d[y]) / (size[x] + size[y])
        d[y, :] = new
        d[:, y] = new
        d[x, :] = np.inf
        d[:, x] = np.inf
        d[y, y] = np.inf
        size[y] += size[x]
        count[y] += count[x]
        alive[x] = False
    order = sorted(range(len(merges)), key=lambda t: merges[t][2])  # stable
    # Replay in height order, naming clusters as scipy does (union-find over slots).
    parent = list(range(m))
    name = list(range(m))
    leaves = [1.0] * m if weights is None else [float(w) for w in np.asarray(weights, dtype=np.float64)]

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    z = np.empty((m - 1, 4))
    for t, idx in enumerate(order):
        x, y, h = merges[idx]
        rx, ry = find(x), find(y)
        a, b = sorted((name[rx], name[ry]))
        z[t] = (a, b, h, leaves[rx] + leaves[ry])
        parent[rx] = ry
        name[ry] = m + t
        leaves[ry] += leaves[rx]
    return z


def leaf_order(z: np.ndarray) -> np.ndarray:
    """Leaves in the left-to-right order of the dendrogram of linkage ``z``."""
    m = z.shape[0] + 1
    if m == 1:
        return np.zeros(1, dtype=np.intp)
    out: List[int] = []
    stack = [2 * m - 2]  # the root; iterative, so deep trees cannot hit the recursion limit
    while stack:
        node = stack.pop()
        if node < m:
            out.append(node)
        else:
            left, right = int(z[node - m, 0]), int(z[node - m, 1])
            stack.append(right)
            stack.append(left)
    return np.asarray(out, dtype=np.intp)


def dendrogram_layout(z: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segments to draw the dendrogram of linkage ``z``.

    Returns
    -------
    segments : ndarray of shape (m - 1, 4, 2)
        For each merge, the four points of its upside-down U: (x, y) pairs.
    order : ndarray of shape (m,)
        Leaves left to right; leaf ``order[i]`` sits at x = i.
    heights : ndarray of shape (m - 1,)
    """
    m = z.shape[0] + 1
    order = leaf_order(z)
    x = np.empty(2 * m - 1)
    y = np.zeros(2 * m - 1)
    x[order] = np.arange(m, dtype=np.float64)
    segments = np.empty((m - 1, 4, 2))
    for t in range(m - 1):
        a, b, h = int(z[t, 0]), int(z[t, 1]), float(z[t, 2])
        segments[t] = ((x[a], y[a]), (x[a], h), (x[b], h), (x[b], y[b]))
        x[m + t] = 0.5 * (x[a] + x[b])
        y[m + t] = h
    return segments, order, z[:, 2].copy()
