"""Average-linkage hierarchical clustering of 1 - PSM, cut at a number of clusters (numpy only)."""

from __future__ import annotations

from typing import Optional

import numpy as np

import salsox


def average_linkage_labels(distances: np.ndarray, n_clusters: int) -> np.ndarray:
    """Average-linkage (UPGMA) clusters of a dissimilarity matrix, cut at ``n_clusters``.

    Parameters
    ----------
    distances : ndarray of shape (n, n)
        Symmetric dissimilarities; the diagonal is ignored.
    n_clusters : int
        Number of clusters of the cut (at least 1; capped at n).

    Returns
    -------
    ndarray of shape (n,), int64
        Labels 0..n_clusters-1.

    Notes
    -----
    :func:`average_linkage_merges` then :func:`cut_merges`: O(n^2) time and memory.
    """
    return cut_merges(average_linkage_merges(distances), n_clusters)


def average_linkage_merges(distances: np.ndarray) -> np.ndarray:
    """The merges of average-linkage (UPGMA) clustering, lowest first.

    Returns an (n - 1, 2) int64 array: row t merges the cluster holding item ``[t, 0]`` with
    the one holding item ``[t, 1]``; the first n - k rows give k clusters (:func:`cut_merges`).

    The nearest-neighbour chain algorithm: O(n^2) time and memory (one n x n float64 work
    matrix besides the input). Average linkage is reducible, so the chain's merges sorted by
    height are those of the usual greedy algorithm.
    """
    d = np.array(distances, dtype=np.float64)  # a work copy, overwritten below
    n = d.shape[0]
    if d.ndim != 2 or d.shape[1] != n or n == 0:
        raise ValueError(f"distances must be a non-empty square matrix, got shape {d.shape}")
    np.fill_diagonal(d, np.inf)
    size = np.ones(n)
    height = np.zeros(n)  # height of the last merge into each slot (keeps heights monotone)
    merges = []  # (height, a, b): the cluster holding item a merged with the one holding item b
    chain: list = []
    active = n
    next_start = 0
    while active > 1:
        if not chain:
            while not np.isfinite(size[next_start]):
                next_start += 1
            chain.append(next_start)
        a = chain[-1]
        row = d[a]
        b = int(np.argmin(row))
        if len(chain) >= 2 and row[chain[-2]] <= row[b]:
            b = chain[-2]  # ties go back down the chain, so it cannot cycle
        if len(chain) >= 2 and b == chain[-2]:
            chain.pop()
            chain.pop()
            h = max(row[b], height[a], height[b])
            merges.append((h, a, b))
            # Lance-Williams update for average linkage; the merged cluster keeps slot a.
            sa, sb = size[a], size[b]
            merged = (sa * d[a] + sb * d[b]) / (sa + sb)
            d[a] = merged
            d[:, a] = merged
            d[a, a] = np.inf
            d[b] = np.inf
            d[:, b] = np.inf
            size[a] = sa + sb
            size[b] = np.inf  # marks slot b inactive
            height[a] = h
            active -= 1
        else:
            chain.append(b)
    # Sorted by height (stable: a merge never precedes its children).
    order = sorted(range(len(merges)), key=lambda t: merges[t][0])
    return np.array([(merges[t][1], merges[t][2]) for t in order], dtype=np.int64).reshape(-1, 2)


def cut_merges(merges: np.ndarray, n_clusters: int) -> np.ndarray:
    """Labels 0..k-1 after the lowest n - k merges of :func:`average_linkage_merges` (k =
    ``n_clusters``, capped to 1..n). O(n) time: cheap enough to cut once per run."""
    n = len(merges) + 1
    n_clusters = max(1, min(int(n_clusters), n))
    parent = np.arange(n)

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in merges[: n - n_clusters].tolist():
        parent[root(b)] = root(a)
    roots = np.array([root(i) for i in range(n)])
    _, labels = np.unique(roots, return_inverse=True)
    return labels.astype(np.int64)


def psm_linkage(draws: np.ndarray, max_clusters: int) -> np.ndarray:
    """Setup step of the initialisers: the average-linkage merges of 1 - PSM, once per search.

    Holds two n x n float64 matrices while it runs (the dissimilarities and the linkage's
    work copy: 1.6 GB at n = 10^4) and returns only the n - 1 merges, so the runs share an
    O(n) state.
    """
    distances = salsox.psm(draws, n_jobs=1)
    np.subtract(1.0, distances, out=distances)
    return average_linkage_merges(distances)


def psm_hclust(
    draws: np.ndarray, max_clusters: int, rng: np.random.Generator, merges: Optional[np.ndarray] = None
) -> np.ndarray:
    """Initialiser ``"psm-hclust"``: average linkage of 1 - PSM cut at ``max_clusters``.

    ``rng`` is unused (the result is deterministic). ``merges`` is the state of the setup step
    :func:`psm_linkage`; without it they are computed here.
    """
    if merges is None:
        merges = psm_linkage(draws, max_clusters)
    return cut_merges(merges, max_clusters)


def psm_hclust_random(
    draws: np.ndarray, max_clusters: int, rng: np.random.Generator, merges: np.ndarray
) -> np.ndarray:
    """Initialiser ``"psm-hclust-random"``: the same tree cut at a number of clusters drawn
    uniformly from 1..max_clusters for each run (``merges`` from the setup :func:`psm_linkage`:
    each run costs O(n), not the O(n^2) of the PSM and the linkage)."""
    return cut_merges(merges, int(rng.integers(1, max_clusters + 1)))
