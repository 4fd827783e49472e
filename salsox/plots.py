"""Plots of a partition estimate (optional dependency: ``pip install salsox[plot]``).

Every function takes a :class:`~salsox.summary.Summary` (from ``Estimate.summary(draws)`` or
:func:`salsox.summarize`), or an estimate (an Estimate or labels) together with ``draws``:

* :func:`plot_heatmap` -- the posterior similarity matrix, items ordered by the estimate,
  cluster boundaries drawn;
* :func:`plot_mds` -- classical multidimensional scaling of 1 - PSM, coloured by cluster;
* :func:`plot_pairs` -- a scatter-plot matrix of the user's data, coloured by cluster;
* :func:`plot_dendrogram` -- average linkage of the estimate's clusters (or of the items).

Single-panel plots draw into ``ax`` when given and return the matplotlib ``Axes``;
:func:`plot_pairs` returns the ``Figure``. matplotlib is imported only when a plot is drawn,
and no scipy is needed: the MDS and the linkage are computed here with numpy.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from ._linkage import average_linkage, dendrogram_layout
from .summary import Summary, summarize

__all__ = ["plot_heatmap", "plot_mds", "plot_pairs", "plot_dendrogram", "classical_mds"]

# Beyond this many items the heatmap is block-averaged to about this many pixels a side.
_HEATMAP_MAX_PIXELS = 1000
# Item-level dendrograms are O(n^2) memory and unreadable beyond this.
_DENDROGRAM_MAX_ITEMS = 5000


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "salsox plots need matplotlib, an optional dependency: pip install 'salsox[plot]' "
            "(or pip install matplotlib)"
        ) from None
    return plt


def _summary_of(x: Any, draws: Any, loss: Any) -> Summary:
    if isinstance(x, Summary):
        if draws is not None:
            raise ValueError("draws must not be given with a Summary (it already holds the PSM)")
        return x
    if draws is None:
        raise TypeError("draws is required when the first argument is an estimate, not a Summary")
    if loss is None:
        loss = getattr(x, "loss", "VI")  # an Estimate's own loss
    return summarize(x, draws, loss)


def _colors(k: int) -> np.ndarray:
    """k distinguishable RGBA colours (tab10, then tab20, then a sampled continuous map)."""
    from matplotlib import colormaps

    if k <= 10:
        return colormaps["tab10"](np.arange(k))
    if k <= 20:
        return colormaps["tab20"](np.arange(k))
    return colormaps["turbo"](np.linspace(0.05, 0.95, k))


def _new_axes(ax: Any, figsize: Tuple[float, float]) -> Any:
    if ax is not None:
        return ax
    plt = _pyplot()
    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def plot_heatmap(
    x: Any,
    draws: Any = None,
    *,
    loss: Any = None,
    ax: Any = None,
    cmap: str = "viridis",
    boundary_color: str = "white",
    colorbar: bool = True,
    title: Optional[str] = None,
) -> Any:
    """Heatmap of the posterior similarity matrix, ordered by the estimate.

    Items are grouped by cluster (clusters in dendrogram order, best-fitting items first);
    lines mark the cluster boundaries and ticks label the clusters.

    Parameters
    ----------
    x : Summary, Estimate or labels
    draws : optional
        The draws (or a PSM) when ``x`` is not a Summary.
    loss : str or Loss, optional
        For a Summary built here (default: the Estimate's loss, else "VI").
    ax : matplotlib Axes, optional
    cmap : str, default "viridis"
    boundary_color : str, default "white"
    colorbar : bool, default True
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    s = _summary_of(x, draws, loss)
    ax = _new_axes(ax, (5.5, 4.6))
    n = s.n_items
    matrix = s.psm[np.ix_(s.order, s.order)]
    scale = 1
    if n > _HEATMAP_MAX_PIXELS:
        # Block-average so that huge matrices render quickly and without aliasing.
        scale = int(np.ceil(n / _HEATMAP_MAX_PIXELS))
        m = int(np.ceil(n / scale)) * scale
        padded = np.full((m, m), np.nan)
        padded[:n, :n] = matrix
        matrix = np.nanmean(padded.reshape(m // scale, scale, m // scale, scale), axis=(1, 3))
    extent = (-0.5, n - 0.5, n - 0.5, -0.5)
    image = ax.imshow(matrix, cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest", extent=extent)
    sizes = s.sizes[s.cluster_order]
    edges = np.cumsum(sizes)[:-1] - 0.5
    for e in edges:
        ax.axhline(e, color=boundary_color, linewidth=0.8)
        ax.axvline(e, color=boundary_color, linewidth=0.8)
    centres = np.cumsum(sizes) - sizes / 2.0 - 0.5
    if s.n_clusters <= 30:
        colors = _colors(s.n_clusters)
        ax.set_xticks(centres)
        ax.set_xticklabels([str(c) for c in s.cluster_order], fontsize=8, fontweight="bold")
        ax.set_yticks(centres)
        ax.set_yticklabels([str(c) for c in s.cluster_order], fontsize=8, fontweight="bold")
        # Cluster numbers in the colours the other plots use for them.
        for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
            for text, c in zip(labels, s.cluster_order):
                text.set_color(colors[c])
    else:
        ax.set_xticks([])
        ax.set_yticks([])
    ax.set_xlabel("items, grouped by cluster")
    ax.set_ylabel("items, grouped by cluster")
    ax.set_title(title if title is not None else f"Posterior similarity ({s.n_clusters} clusters)")
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="posterior similarity", fraction=0.046, pad=0.04)
    return ax


# Largest classical MDS attempted (bytes at the peak, see _check_mds_memory).
_MDS_MEMORY_LIMIT = 8 * 2**30


def _mds_memory_message(n: int, why: str) -> str:
    need = _MDS_MATRICES * 8 * n * n
    return (
        f"classical MDS of {n} items needs about {need / 2**30:.1f} GiB ({_MDS_MATRICES} {n} x {n} "
        f"float64 matrices for the eigendecomposition), which {why}; plot a subset of the items "
        "(e.g. plot_mds(labels[idx], draws[:, idx])) or use plot_heatmap"
    )


# n x n float64 matrices alive at the peak: D^2, the centred matrix, its symmetrised copy, the
# eigenvectors, and LAPACK's workspace (about two more).
_MDS_MATRICES = 6


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


def plot_pairs(
    data: Any,
    x: Any,
    draws: Any = None,
    *,
    loss: Any = None,
    columns: Optional[Sequence[Any]] = None,
    max_columns: int = 8,
    figsize: Optional[Tuple[float, float]] = None,
) -> Any:
    """Scatter-plot matrix of the clustered data, points coloured by cluster.

    Parameters
    ----------
    data : array-like of shape (n, p), or a pandas DataFrame
        The items' features (one row per item, in the order of the draws' columns).
    x : Summary, Estimate or labels
        The estimate; with an Estimate or labels, no draws are needed (only the labels are
        used), but a Summary or draws adds exemplar markers.
    draws : optional
    loss : optional
    columns : sequence, optional
        Columns to show (names for a DataFrame, otherwise indices). Default: all.
    max_columns : int, default 8
        Refuse wider matrices (which are unreadable) unless ``columns`` picks some.
    figsize : (float, float), optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = _pyplot()
    names: Sequence[str]
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):
        frame = data if columns is None else data[list(columns)]
        names = [str(c) for c in frame.columns]
        values = frame.to_numpy()
    else:
        values = np.asarray(data)
        if values.ndim == 1:
            values = values[:, None]
        if values.ndim != 2:
            raise ValueError(f"data must be 2-D (n items x p features), got {values.ndim}-D")
        index = list(range(values.shape[1])) if columns is None else list(columns)
        try:
            values = values[:, index]
        except IndexError:
            raise ValueError(f"columns {columns!r} out of range for data with {values.shape[1]} columns") from None
        names = [f"x{i}" for i in index]
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("data must be numeric") from None
    if isinstance(x, Summary) or draws is not None:
        s: Optional[Summary] = _summary_of(x, draws, loss)
        labels = s.labels  # type: ignore[union-attr]
    else:
        s = None
        raw = getattr(x, "labels", x)
        from ._validation import as_label_matrix

        labels = as_label_matrix(raw, "labels")[0][0]
    n, p = values.shape
    if labels.shape[0] != n:
        raise ValueError(f"data has {n} rows but the estimate has {labels.shape[0]} items")
    if p > max_columns:
        raise ValueError(
            f"data has {p} columns, more than max_columns={max_columns}; choose some with columns=[...]"
        )
    k = int(labels.max()) + 1
    colors = _colors(k)
    side = figsize if figsize is not None else (1.9 * p + 1.2, 1.9 * p + 0.5)
    fig, axes = plt.subplots(p, p, figsize=side, squeeze=False)
    for r in range(p):
        for c in range(p):
            ax = axes[r, c]
            if r == c:
                finite = values[np.isfinite(values[:, c]), c]
                bins = np.histogram_bin_edges(finite, bins=20) if finite.size else 10
                for g in range(k):
                    ax.hist(values[labels == g, c], bins=bins, color=colors[g], alpha=0.55)
            else:
                for g in range(k):
                    members = labels == g
                    ax.scatter(
                        values[members, c], values[members, r], s=8, color=colors[g], alpha=0.8, edgecolors="none"
                    )
                if s is not None:
                    e = s.exemplars
                    ax.scatter(values[e, c], values[e, r], s=40, facecolors="none", edgecolors="black", linewidths=0.9)
            if r == p - 1:
                ax.set_xlabel(names[c])
            else:
                ax.set_xticklabels([])
            if c == 0 and r != 0:
                ax.set_ylabel(names[r])
            elif c != 0:
                ax.set_yticklabels([])
            ax.tick_params(labelsize=7)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="o", linestyle="", color=colors[g], label=str(g)) for g in range(min(k, 20))]
    fig.subplots_adjust(left=0.1, bottom=0.1, right=0.86, top=0.92, wspace=0.08, hspace=0.08)
    fig.legend(handles=handles, title="cluster", loc="center right", fontsize=7, title_fontsize=8)
    fig.suptitle(f"Data coloured by the estimate ({k} clusters)")
    return fig


def plot_dendrogram(
    x: Any,
    draws: Any = None,
    *,
    loss: Any = None,
    leaves: str = "clusters",
    ax: Any = None,
    title: Optional[str] = None,
) -> Any:
    """Dendrogram of average linkage on 1 - PSM.

    Parameters
    ----------
    x, draws, loss, ax, title
        As in :func:`plot_heatmap`.
    leaves : {"clusters", "items"}, default "clusters"
        ``"clusters"``: the estimate's clusters are the leaves (labelled with their sizes), and
        merges continue the item-level average linkage from them, so the heights show how far
        apart the posterior puts the clusters. ``"items"``: the full item tree (up to 5000
        items), leaves marked with the colour of their cluster in the estimate.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from matplotlib.collections import LineCollection

    if leaves not in ("clusters", "items"):
        raise ValueError(f"leaves must be 'clusters' or 'items', got {leaves!r}")
    s = _summary_of(x, draws, loss)
    ax = _new_axes(ax, (6.0, 4.0))
    colors = _colors(s.n_clusters)
    if leaves == "clusters":
        if s.n_clusters == 1:
            ax.bar([0], [0.0])
            ax.set_xticks([0])
            ax.set_xticklabels([f"0\n(n={s.sizes[0]})"], fontsize=8)
            ax.set_title(title if title is not None else "One cluster: nothing to merge")
            ax.set_ylabel("1 - mean posterior similarity")
            return ax
        z = s.cluster_linkage
    else:
        if s.n_items > _DENDROGRAM_MAX_ITEMS:
            raise ValueError(
                f"an item dendrogram of {s.n_items} items is too large (limit {_DENDROGRAM_MAX_ITEMS}); "
                "use leaves='clusters'"
            )
        z = average_linkage(1.0 - s.psm)
    segments, order, heights = dendrogram_layout(z)
    ax.add_collection(LineCollection(list(segments), colors="0.25", linewidths=0.9))
    m = order.shape[0]
    top = float(heights.max()) if heights.size else 1.0
    ax.set_xlim(-0.75, m - 0.25)
    ax.set_ylim(-0.04 * max(top, 1e-9), 1.05 * max(top, 1e-9))
    ax.set_ylabel("1 - mean posterior similarity")
    if leaves == "clusters":
        ax.scatter(np.arange(m), np.zeros(m), s=60, color=colors[order], zorder=3)
        if m <= 40:
            ax.set_xticks(np.arange(m))
            ax.set_xticklabels([f"{c}\n(n={s.sizes[c]})" for c in order], fontsize=8)
        ax.set_xlabel("clusters of the estimate")
    else:
        ax.scatter(np.arange(m), np.zeros(m), s=6, color=colors[s.labels[order]], zorder=3, marker="s")
        ax.set_xticks([])
        ax.set_xlabel("items (colour: cluster in the estimate)")
    ax.set_title(title if title is not None else "Average-linkage dendrogram")
    return ax


__all__ += ["plot_chips"]


def plot_chips(result: Any, data: Any = None, *, ax: Any = None, title: Optional[str] = None) -> Any:
    """A CHIPS sub-partition (:func:`salsox.chips`, single mode): allocated items coloured by
    cluster, unallocated items grey, each sized by ``p - q_i`` (how much the sub-partition's
    probability p would drop were it added: the larger, the more uncertain the item).

    Parameters
    ----------
    result : ChipsResult
        A single-mode result (``chips(draws, threshold > 0)`` or ``path.threshold(gamma)``).
    data : array-like (n, 2), optional
        Coordinates of the items (e.g. two features). Default: the classical MDS of
        1 - PSM of the result's draws (as :func:`plot_mds`).
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    from .evaluation import psm

    if getattr(result, "mode", None) != "single":
        raise ValueError(
            "plot_chips needs a single sub-partition: chips(draws, threshold > 0) or path.threshold(gamma)"
        )
    labels = np.asarray(result.labels)
    n = labels.shape[0]
    if data is None:
        coords = classical_mds(1.0 - psm(result.draws), 2)
        xlabel, ylabel = "MDS 1", "MDS 2"
    else:
        coords = np.asarray(data, dtype=np.float64)
        if coords.ndim != 2 or coords.shape != (n, 2):
            raise ValueError(f"data must have shape ({n}, 2) (one point per item), got {coords.shape}")
        xlabel, ylabel = "x 1", "x 2"
    ax = _new_axes(ax, (5.0, 4.6))
    k = int(labels.max()) + 1 if np.any(labels >= 0) else 0
    colors = _colors(max(k, 1))
    for c in range(k):
        members = labels == c
        ax.scatter(coords[members, 0], coords[members, 1], s=24, color=colors[c], alpha=0.85,
                   label=f"{c} (n={int(members.sum())})", edgecolors="none")
    u = result.unallocated
    if len(u.items):
        p = float(result.probability)
        drop = np.clip(p - np.asarray(u.q, dtype=np.float64), 0.0, None)
        size = 8.0 + 80.0 * drop / max(p, 1e-12)
        ax.scatter(coords[u.items, 0], coords[u.items, 1], s=size, color="0.6", alpha=0.8,
                   label=f"unallocated (n={len(u.items)})", edgecolors="0.3", linewidths=0.5)
    if k <= 20:
        ax.legend(fontsize=7, loc="best")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title if title is not None else f"CHIPS: {result.n_items} of {n} items, p = {result.probability:.3g}")
    return ax
