"""Classical multidimensional scaling of 1 - PSM, coloured by cluster."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ._common import _summary_of, _new_axes


# Largest classical MDS attempted (bytes at the peak, see _check_mds_memory).
_MDS_MEMORY_LIMIT = 8 * 2**30


# n x n float64 matrices alive at the peak: D^2, the centred matrix, its symmetrised copy, the
# eigenvectors, and LAPACK's workspace (about two more).
_MDS_MATRICES = 6


def _mds_memory_message(n: int, why: str) -> str:
    need = _MDS_MATRICES * 8 * n * n
    return (
        f"classical MDS of {n} items needs about {need / 2**30:.1f} GiB ({_MDS_MATRICES} {n} x {n} "
        f"float64 matrices for the eigendecomposition), which {why}; plot a subset of the items "
        "(e.g. plot_mds(labels[idx], draws[:, idx])) or use plot_heatmap"
    )


def _check_mds_memory(n: int) -> None:
    """Refuse up front an MDS that would not fit (rather than fail inside LAPACK)."""
    limit = _MDS_MEMORY_LIMIT
    try:  # the memory available now (Linux: free plus reclaimable cache)
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    limit = min(limit, int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    if _MDS_MATRICES * 8 * n * n > limit:
        raise MemoryError(_mds_memory_message(n, f"is more than the {limit / 2**30:.1f} GiB available"))


def classical_mds(distances: np.ndarray, n_components: int = 2) -> np.ndarray:
    """Classical (Torgerson) multidimensional scaling.

    Parameters
    ----------
    distances : ndarray of shape (n, n)
        Symmetric dissimilarities.
    n_components : int, default 2

    Returns
    -------
    ndarray of shape (n, n_components)
        Coordinates whose Euclidean distances best match ``distances`` (exactly, when they are
        Euclidean distances in that many dimensions). Components with non-positive
        eigenvalues are zero.

    Examples
    --------
    >>> d = np.array([[0.0, 3.0, 4.0], [3.0, 0.0, 5.0], [4.0, 5.0, 0.0]])   # a 3-4-5 triangle
    >>> xy = salsox.plots.classical_mds(d)
    >>> xy.shape, bool(np.isclose(np.linalg.norm(xy[1] - xy[2]), 5.0))
    ((3, 2), True)
    """
    return _classical_mds(distances, n_components)[0]


def _classical_mds(distances: np.ndarray, n_components: int) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`classical_mds`, and the fraction of the (positive) eigenvalue sum each component
    explains (as R's ``cmdscale(eig=TRUE)`` reports)."""
    d = np.asarray(distances, dtype=np.float64)
    if d.ndim != 2 or d.shape[0] != d.shape[1]:
        raise ValueError(f"distances must be a square matrix, got shape {d.shape}")
    n = d.shape[0]
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
        raise ValueError(f"n_components must be a positive integer, got {n_components!r}")
    _check_mds_memory(n)
    sq = d * d
    # Double centring: B = -1/2 J D^2 J without forming J.
    b = -0.5 * (sq - sq.mean(axis=0)[None, :] - sq.mean(axis=1)[:, None] + sq.mean())
    try:
        values, vectors = np.linalg.eigh((b + b.T) / 2.0)
    except MemoryError as err:  # LAPACK's workspace: numpy's error says nothing
        raise MemoryError(_mds_memory_message(n, "is more than could be allocated")) from err
    top = np.argsort(values)[::-1][:n_components]
    positive = values[values > 0].sum()
    explained = np.clip(values[top], 0.0, None) / positive if positive > 0 else np.zeros(top.shape[0])
    coords = vectors[:, top] * np.sqrt(np.clip(values[top], 0.0, None))
    # eigh's signs are arbitrary: fix them so that plots are reproducible.
    signs = np.sign(coords[np.argmax(np.abs(coords), axis=0), np.arange(coords.shape[1])])
    signs[signs == 0] = 1.0
    coords = coords * signs
    if coords.shape[1] < n_components:
        coords = np.hstack([coords, np.zeros((n, n_components - coords.shape[1]))])
        explained = np.r_[explained, np.zeros(n_components - explained.shape[0])]
    return coords, explained


def stacked_points(
    coords: np.ndarray, labels: np.ndarray, resolution: float = 1.0 / 150
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points of one cluster that would hide each other, merged into one.

    Points of a cluster in one cell of a grid ``resolution`` times the plot's extent wide
    (about a marker's width) become one point at their mean. Returns the points, their
    cluster and how many items each stands for.
    """
    span = float(np.ptp(coords, axis=0).max()) if coords.size else 0.0
    cell = np.floor((coords - coords.min(axis=0)) / max(span * resolution, 1e-300))
    _, group, counts = np.unique(np.column_stack([labels, cell]), axis=0, return_inverse=True, return_counts=True)
    group = group.reshape(-1)
    means = np.zeros((counts.shape[0], coords.shape[1]))
    np.add.at(means, group, coords)
    owner = np.zeros(counts.shape[0], dtype=labels.dtype)
    owner[group] = labels
    return means / counts[:, None], owner, counts


def plot_mds(
    x: Any,
    draws: Any = None,
    *,
    loss: Any = None,
    ax: Any = None,
    show_exemplars: bool = True,
    segments: bool = True,
    legend: bool = True,
    title: Optional[str] = None,
) -> Any:
    """Two-dimensional classical MDS of 1 - PSM, points coloured by cluster.

    Items that are often clustered together land close together. As in R salso, a segment
    joins each item to its cluster's exemplar (outlined). The largest clusters get the most
    distinct colours; when there are several singletons, they are grey, as "other". Items at
    the same spot (always clustered together) are drawn once, the marker's area proportional
    to their number. The axes say how much of the (positive) eigenvalue sum each explains.

    Parameters
    ----------
    x, draws, loss, ax, title
        As in :func:`plot_heatmap`.
    show_exemplars : bool, default True
    segments : bool, default True
        Segments from items to their cluster's exemplar.
    legend : bool, default True
        A legend (outside the axes) with cluster sizes, the 20 largest clusters at most.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> draws = example_draws().draws
    >>> ax = salsox.plots.plot_mds(salsox.salso(draws, seed=1).summary())
    >>> len(ax.collections) >= 1
    True
    """
    from matplotlib.collections import LineCollection

    from ._common import cluster_colors, legend_handles

    s = _summary_of(x, draws, loss)
    ax = _new_axes(ax, (6.4, 4.6))
    coords, explained = _classical_mds(1.0 - s.psm, 2)
    colors, other = cluster_colors(s.sizes)
    if segments:
        ends = coords[s.exemplars[s.labels]]
        lines = np.stack([coords, ends], axis=1)
        ax.add_collection(LineCollection(list(lines), colors=colors[s.labels], linewidths=0.6, alpha=0.4, zorder=1))
    points, owner, counts = stacked_points(coords, s.labels)
    # "other" first, then the clusters from the smallest up, so that large clusters stay on top.
    for c in np.lexsort((np.arange(s.n_clusters), s.sizes))[::1]:
        mine = owner == c
        if not mine.any():
            continue
        ax.scatter(points[mine, 0], points[mine, 1], s=16.0 * counts[mine], color=colors[c], alpha=0.85,
                   edgecolors="white", linewidths=0.4, zorder=2)
    if show_exemplars:
        e = s.exemplars
        ax.scatter(coords[e, 0], coords[e, 1], s=70, facecolors="none", edgecolors="black", linewidths=1.2, zorder=3)
    if legend:
        handles = legend_handles(colors, other, s.sizes, ids=s.cluster_ids)
        note = "cluster (n)" if counts.max() <= 1 else "cluster (n)\narea: items at a point"
        ax.legend(handles=handles, title=note, fontsize=7, title_fontsize=7, loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    ax.set_xlabel(f"MDS 1 ({explained[0]:.0%} of variance)")
    ax.set_ylabel(f"MDS 2 ({explained[1]:.0%} of variance)")
    ax.set_title(title if title is not None else "MDS of 1 - posterior similarity")
    return ax
