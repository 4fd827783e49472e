"""The CHIPS plot: a high-probability sub-partition, its unallocated items by how uncertain they are."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..metrics import psm
from ._common import _new_axes, check_result_first, cluster_colors, data_rows, item_coordinates, legend_handles
from .mds import classical_mds, stacked_points

__all__ = ["plot_chips"]


def plot_chips(result: Any, data: Any = None, *, ax: Any = None, title: Optional[str] = None) -> Any:
    """A CHIPS sub-partition (:func:`salsox.chips`, single mode): allocated items coloured by
    cluster (as the other plots: several singletons grey), unallocated items as open circles
    underneath, each sized by ``p - q_i`` (how much the sub-partition's
    probability p would drop were it added: the larger, the more uncertain the item).

    Parameters
    ----------
    result : ChipsResult
        A single-mode result (``chips(draws, threshold > 0)`` or ``path.threshold(gamma)``).
    data : array-like (n, p), DataFrame or Series, optional
        The items' features: two columns drawn as they are (named by a DataFrame's columns),
        more by their first two principal components, one as a strip with vertical jitter.
        Rows are matched to the items by name when both the draws and the data's index name
        them (names that differ are an error), else by position. Default: the classical MDS
        of 1 - PSM of the result's draws (as :func:`plot_mds`); items always clustered
        together are drawn once, the marker's area proportional to their number.
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
    check_result_first("plot_chips", result, data, "result")
    if not (hasattr(result, "mode") and hasattr(result, "unallocated")):
        raise TypeError(f"plot_chips needs a ChipsResult (salsox.chips), got {type(result).__name__}")
    if result.mode != "single":
        raise ValueError(
            "plot_chips needs a single sub-partition: chips(draws, threshold > 0) or path.threshold(gamma)"
        )
    labels = np.asarray(result.labels)
    n = labels.shape[0]
    if data is None:
        coords = classical_mds(1.0 - psm(result.draws), 2)
        xlabel, ylabel = "MDS 1", "MDS 2"
    else:
        values, columns = data_rows(data, n, getattr(result.draws, "item_names", None), owner="the result")
        coords, xlabel, ylabel = item_coordinates(values, columns)
    ax = _new_axes(ax, (6.4, 4.6))
    allocated = labels >= 0
    k = int(labels.max()) + 1 if np.any(allocated) else 0
    sizes = np.bincount(labels[allocated], minlength=k)
    colors, other = cluster_colors(sizes)
    u = result.unallocated
    handles = legend_handles(colors, other, sizes) if k else []
    if len(u.items):
        from matplotlib.lines import Line2D

        # Open circles under the allocated items: they never hide them.
        p = float(result.probability)
        drop = np.clip(p - np.asarray(u.q, dtype=np.float64), 0.0, None)
        size = 8.0 + 80.0 * drop / max(p, 1e-12)
        ax.scatter(coords[u.items, 0], coords[u.items, 1], s=size, facecolors="none", edgecolors="0.25",
                   linewidths=0.8, zorder=1)
        handles.append(Line2D([], [], marker="o", linestyle="", markerfacecolor="none", markeredgecolor="0.25",
                              label=f"unallocated (n={len(u.items)})\narea: p - q (uncertainty)"))
    stacked = 1
    if k:
        points, owner, counts = stacked_points(coords[allocated], labels[allocated])
        stacked = int(counts.max())
        for c in np.lexsort((np.arange(k), sizes)):  # large clusters drawn last, on top
            mine = owner == c
            ax.scatter(points[mine, 0], points[mine, 1], s=20.0 * counts[mine], color=colors[c], alpha=0.85,
                       edgecolors="white", linewidths=0.4, zorder=2)
    note = "cluster (n)" if stacked <= 1 else "cluster (n)\narea: items at a point"
    ax.legend(handles=handles, title=note, fontsize=7, title_fontsize=7, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel if ylabel else "(jitter)")
    if ylabel == "":
        ax.set_yticks([])
    ax.set_title(title if title is not None else f"CHIPS: {result.n_items} of {n} items, p = {result.probability:.3g}")
    return ax
