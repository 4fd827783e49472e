"""The posterior similarity matrix as a heatmap, items ordered by the estimate."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..summaries import Summary
from ..summaries.linkage import average_linkage, leaf_order
from ._common import _item_names, _new_axes, _summary_of, cluster_colors, text_color, thin_tick_labels


# Beyond this many items the heatmap is block-averaged to about this many pixels a side.
_HEATMAP_MAX_PIXELS = 1000

# Item ids are shown by default up to this many items (as R salso does).
_SHOW_IDS_MAX = 50


def heatmap_order(s: Summary, order: str = "fit") -> np.ndarray:
    """Items in heatmap order: clusters side by side in ``s.cluster_order``; within a cluster,
    ``"fit"`` puts the best-fitting items first (``s.order``) and ``"hclust"`` follows the
    average-linkage dendrogram of 1 - PSM among the cluster's items, which shows any
    sub-structure of a cluster (e.g. two sub-blocks)."""
    if order == "fit":
        return np.asarray(s.order)
    if order != "hclust":
        raise ValueError(f"order must be 'fit' or 'hclust', got {order!r}")
    parts = []
    for c in s.cluster_order:
        members = np.flatnonzero(s.labels == c)
        if members.shape[0] > 2:
            z = average_linkage(1.0 - s.psm[np.ix_(members, members)])
            members = members[leaf_order(z)]
        parts.append(members)
    return np.concatenate(parts)


def plot_heatmap(
    x: Any,
    draws: Any = None,
    *,
    loss: Any = None,
    ax: Any = None,
    cmap: str = "viridis",
    boundary_color: str = "white",
    colorbar: bool = True,
    show_ids: Optional[bool] = None,
    order: str = "fit",
    title: Optional[str] = None,
) -> Any:
    """Heatmap of the posterior similarity matrix, ordered by the estimate.

    Items are grouped by cluster (clusters in dendrogram order); lines mark the cluster
    boundaries. Cluster numbers (top and left, in the cluster's colour of the other plots)
    label the clusters that have room: a label that would overlap a larger cluster's is left
    out, so labels never collide whatever the number of clusters, and a cluster is labelled on
    both axes or on neither.

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
    show_ids : bool, optional
        Label the items (bottom and right) with their names when the estimate or summary knows
        them (``item_names``), else their indices. Default: for at most 50 items.
    order : {"fit", "hclust"}, default "fit"
        Order within clusters: best-fitting items first, or the average-linkage order of the
        cluster's items (see :func:`heatmap_order`).
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> draws = example_draws().draws
    >>> ax = salsox.plots.plot_heatmap(salsox.salso(draws, seed=1).summary())
    >>> import io
    >>> ax.figure.savefig(io.BytesIO(), format="png")    # or a file name; plt.show() in a notebook
    """
    if show_ids is not None and not isinstance(show_ids, (bool, np.bool_)):
        raise TypeError(f"show_ids must be True, False or None, got {show_ids!r}")
    s = _summary_of(x, draws, loss)
    items = heatmap_order(s, order)
    n = s.n_items
    ids = (n <= _SHOW_IDS_MAX) if show_ids is None else bool(show_ids)
    ax = _new_axes(ax, (6.4, 5.6) if ids else (5.6, 4.8))
    matrix = s.psm[np.ix_(items, items)]
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
    plural = "s" if s.n_clusters != 1 else ""
    ax.set_title(title if title is not None else f"Posterior similarity ({s.n_clusters} cluster{plural})")
    specs = []
    if ids:
        names = _item_names(x, s)
        texts = [str(names[i]) if names is not None else str(i) for i in items]
        fontsize = float(np.clip(220.0 / n, 4.0, 7.0))
        bottom = ax.secondary_xaxis("bottom")
        right = ax.secondary_yaxis("right")
        bottom.tick_params(labelsize=fontsize, length=2, labelrotation=90)
        right.tick_params(labelsize=fontsize, length=2)
        bottom.set_xlabel("items, grouped by cluster", fontsize=9)
        specs += [(bottom, "x", np.arange(n), texts, -np.arange(n), 0.5),
                  (right, "y", np.arange(n), texts, -np.arange(n), 0.5)]
    else:
        ax.set_xlabel("items, grouped by cluster")
    ax.xaxis.set_ticks_position("top")
    ax.xaxis.set_label_position("bottom")
    ax.tick_params(length=0, labelsize=8)
    ax.set_ylabel("cluster")
    # Cluster numbers in the colours the other plots use, the largest clusters labelled first.
    colors, _ = cluster_colors(s.sizes)
    centres = np.cumsum(sizes) - sizes / 2.0 - 0.5
    numbers = [str(s.cluster_ids[c]) for c in s.cluster_order]
    specs += [(ax, "x", centres, numbers, sizes, 2.0), (ax, "y", centres, numbers, sizes, 2.0)]
    if colorbar:  # after the secondary axes, else constrained layout loses the y label
        ax.figure.colorbar(image, ax=ax, label="posterior similarity", fraction=0.046, pad=0.04)
    kept = thin_tick_labels(specs)
    # Rows and columns name the same clusters: a cluster keeps its number on both or neither.
    both = np.intersect1d(kept[-2], kept[-1])
    ax.set_xticks(centres[both], [numbers[i] for i in both])
    ax.set_yticks(centres[both], [numbers[i] for i in both])
    for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
        for text, c in zip(labels, s.cluster_order[both]):
            text.set_color(text_color(colors[c]))
            text.set_fontweight("bold")
    return ax
