"""Classical multidimensional scaling of 1 - PSM, coloured by cluster."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ._common import _summary_of, _colors, _new_axes


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
    coords = vectors[:, top] * np.sqrt(np.clip(values[top], 0.0, None))
    # eigh's signs are arbitrary: fix them so that plots are reproducible.
    signs = np.sign(coords[np.argmax(np.abs(coords), axis=0), np.arange(coords.shape[1])])
    signs[signs == 0] = 1.0
    coords = coords * signs
    if coords.shape[1] < n_components:
        coords = np.hstack([coords, np.zeros((n, n_components - coords.shape[1]))])
    return coords


def plot_mds(
    x: Any,
    draws: Any = None,
    *,
    loss: Any = None,
    ax: Any = None,
    show_exemplars: bool = True,
    legend: bool = True,
    title: Optional[str] = None,
) -> Any:
    """Two-dimensional classical MDS of 1 - PSM, points coloured by cluster.

    Items that are often clustered together land close together; exemplars are outlined.

    Parameters
    ----------
    x, draws, loss, ax, title
        As in :func:`plot_heatmap`.
    show_exemplars : bool, default True
    legend : bool, default True
        A legend with cluster sizes (for at most 20 clusters).

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
    s = _summary_of(x, draws, loss)
    ax = _new_axes(ax, (5.0, 4.6))
    coords = classical_mds(1.0 - s.psm, 2)
    colors = _colors(s.n_clusters)
    for c in range(s.n_clusters):
        members = s.labels == c
        ax.scatter(
            coords[members, 0], coords[members, 1], s=18, color=colors[c], alpha=0.8,
            label=f"{c} (n={s.sizes[c]})", edgecolors="none",
        )
    if show_exemplars:
        e = s.exemplars
        ax.scatter(coords[e, 0], coords[e, 1], s=70, facecolors="none", edgecolors="black", linewidths=1.2)
    if legend and s.n_clusters <= 20:
        ax.legend(title="cluster", fontsize=7, title_fontsize=8, loc="best", markerscale=1.2)
    ax.set_xlabel("MDS 1")
    ax.set_ylabel("MDS 2")
    ax.set_title(title if title is not None else "MDS of 1 - posterior similarity")
    return ax
