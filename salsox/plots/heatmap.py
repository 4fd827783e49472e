"""The posterior similarity matrix as a heatmap, items ordered by the estimate."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ._common import _summary_of, _colors, _new_axes


# Beyond this many items the heatmap is block-averaged to about this many pixels a side.
_HEATMAP_MAX_PIXELS = 1000


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

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> draws = example_draws().draws
    >>> ax = salsox.plots.plot_heatmap(salsox.salso(draws, seed=1).summary())
    >>> import io
    >>> ax.figure.savefig(io.BytesIO(), format="png")    # or a file name; plt.show() in a notebook
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
