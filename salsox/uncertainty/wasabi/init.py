"""Starting particles for WASABI: "++" (random, spread out), "topvi" (hierarchical-clustering
cuts of the co-clustering matrix with the smallest expected VI) and fixed partitions."""

from __future__ import annotations

from typing import Any, Callable, List, Optional

import numpy as np

from ..._validation import as_label_matrix
from .draws import DrawSet, vi_matrix

__all__ = ["plus_plus", "top_vi", "fixed_particles", "INIT_METHODS"]

INIT_METHODS = ("++", "topvi")


# Called between steps and while the engine works (see vi_matrix): raises to stop a start.
Check = Optional[Callable[[], None]]


def plus_plus(
    ds: DrawSet, first_rows: np.ndarray, n_particles: int, rng: np.random.Generator, n_jobs: int,
    check: Check = None,
) -> np.ndarray:
    """The R package's "++" start: the first particle is a draw picked at random among
    ``first_rows`` (distinct-row indices of every 10th draw); each next one is a draw picked
    with probability proportional to its VI to the nearest particle chosen so far (weighted by
    its multiplicity), so the particles are distinct and spread over the posterior. ``check``
    is called throughout (see :func:`vi_matrix`): an exception from it stops the start."""
    chosen = [int(first_rows[rng.integers(len(first_rows))])]
    nearest_vi = vi_matrix(ds, ds.unique[chosen[0]], n_jobs, check)[:, 0]
    return _extend(ds, chosen, nearest_vi, n_particles, rng, n_jobs, check)


def _extend(
    ds: DrawSet, chosen: List[int], nearest_vi: np.ndarray, n_particles: int, rng: np.random.Generator, n_jobs: int,
    check: Check = None,
) -> np.ndarray:
    """Adds ++ picks to the distinct-row indices ``chosen`` up to ``n_particles``."""
    while len(chosen) < n_particles:
        p = ds.counts * nearest_vi
        # Distinct draws not chosen yet have VI > 0 to every chosen one (equal partitions, and
        # only they, have VI exactly 0), and the caller checked there are enough of them.
        u = int(rng.choice(ds.n_unique, p=p / p.sum()))
        chosen.append(u)
        nearest_vi = np.minimum(nearest_vi, vi_matrix(ds, ds.unique[u], n_jobs, check)[:, 0])
    return ds.unique[chosen].astype(np.int32)


def top_vi(
    ds: DrawSet, matrix: np.ndarray, n_particles: int, rng: np.random.Generator, n_jobs: int,
    check: Check = None,
) -> np.ndarray:
    """The R package's "topvi" start: cut the average- and complete-linkage trees of 1 - PSM at
    k = 1..max_k clusters (max_k = min(n, max(10, most clusters in a draw))) and keep the
    ``n_particles`` distinct cuts of smallest expected VI. Deterministic; when there are fewer
    distinct cuts than particles, ++ picks among the draws complete them (using ``rng``).
    ``check`` is called between the steps and while the VI are computed (not inside the PSM
    and linkage, O(n^2) each)."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    from ...metrics import psm

    n = matrix.shape[1]
    check = check or (lambda: None)
    cuts = []
    if n == 1:
        cuts.append(np.zeros(1, dtype=np.int32))
    else:
        dist = 1.0 - np.asarray(psm(matrix), dtype=np.float64)
        check()
        np.fill_diagonal(dist, 0.0)
        condensed = np.clip(squareform(dist, checks=False), 0.0, None)
        max_k = min(n, max(10, int(matrix.max()) + 1))
        for method in ("average", "complete"):
            check()
            tree = linkage(condensed, method=method)
            for k in range(1, max_k + 1):
                cuts.append(fcluster(tree, k, criterion="maxclust"))
    labels, _ = as_label_matrix(np.asarray(cuts), "cuts")
    _, first = np.unique(labels, axis=0, return_index=True)
    labels = labels[np.sort(first)]  # distinct cuts, in order of k
    vi = vi_matrix(ds, labels, n_jobs, check)
    evi = ds.counts @ vi / ds.total
    order = np.argsort(evi, kind="stable")[:n_particles]
    particles = labels[order].astype(np.int32)
    if len(order) == n_particles:
        return particles
    # Too few distinct cuts: complete from the draws, spread out from the cuts kept.
    nearest_vi = vi[:, order].min(axis=1)
    extra = _extend(ds, [], nearest_vi, n_particles - len(order), rng, n_jobs, check)
    return np.vstack([particles, extra]).astype(np.int32)


def fixed_particles(init: Any, n_particles: int, n: int) -> np.ndarray:
    """Given starting partitions: ``n_particles`` distinct rows of n labels (canonicalised)."""
    labels, _ = as_label_matrix(init, "init", n)
    if labels.shape[0] != n_particles:
        raise ValueError(f"init has {labels.shape[0]} partitions but n_particles={n_particles}")
    if len(np.unique(labels, axis=0)) != labels.shape[0]:
        raise ValueError("init has duplicate partitions: the starting particles must be distinct")
    return labels.astype(np.int32)
