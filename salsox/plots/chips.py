"""The CHIPS plot: a high-probability sub-partition, its unallocated items by how uncertain they are."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..metrics import psm
from ._common import _new_axes, cluster_colors, legend_handles
from .mds import classical_mds

__all__ = ["plot_chips"]


def plot_chips(result: Any, data: Any = None, *, ax: Any = None, title: Optional[str] = None) -> Any:
    """A CHIPS sub-partition (:func:`salsox.chips`, single mode): allocated items coloured by
    cluster (as the other plots: several singletons grey), unallocated items as open circles,
    each sized by ``p - q_i`` (how much the sub-partition's
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

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> res = salsox.chips(example_draws().draws, 0.9, seed=1)
    >>> ax = salsox.plots.plot_chips(res)
    >>> ax.get_title()
    'CHIPS: 25 of 100 items, p = 0.9'
    """
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
    ax = _new_axes(ax, (6.4, 4.6))
    k = int(labels.max()) + 1 if np.any(labels >= 0) else 0
    sizes = np.bincount(labels[labels >= 0], minlength=k)
    colors, other = cluster_colors(sizes)
    for c in np.lexsort((np.arange(k), sizes)):  # large clusters drawn last, on top
        members = labels == c
        ax.scatter(coords[members, 0], coords[members, 1], s=24, color=colors[c], alpha=0.85, edgecolors="none")
    u = result.unallocated
    handles = legend_handles(colors, other, sizes) if k else []
    if len(u.items):
        from matplotlib.lines import Line2D

        p = float(result.probability)
        drop = np.clip(p - np.asarray(u.q, dtype=np.float64), 0.0, None)
        size = 8.0 + 80.0 * drop / max(p, 1e-12)
        ax.scatter(coords[u.items, 0], coords[u.items, 1], s=size, facecolors="white", alpha=0.9,
                   edgecolors="0.2", linewidths=0.8)
        handles.append(Line2D([], [], marker="o", linestyle="", markerfacecolor="white", markeredgecolor="0.2",
                              label=f"unallocated (n={len(u.items)})\narea: p - q (uncertainty)"))
    ax.legend(handles=handles, title="cluster (n)", fontsize=7, title_fontsize=7, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title if title is not None else f"CHIPS: {result.n_items} of {n} items, p = {result.probability:.3g}")
    return ax
