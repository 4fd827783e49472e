"""Dendrograms: average linkage of the estimate's clusters (or of the items)."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ._common import _summary_of, _colors, _new_axes
from ..summaries.linkage import average_linkage, leaf_order


# Item-level dendrograms are O(n^2) memory and unreadable beyond this.
_DENDROGRAM_MAX_ITEMS = 5000


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

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> draws = example_draws().draws
    >>> ax = salsox.plots.plot_dendrogram(salsox.salso(draws, seed=1).summary())
    >>> ax.get_ylabel() != ""
    True
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
