"""Plots of a WASABI summary (:func:`salsox.wasabi`): the particles, the elbow curve, and the
per-item contributions to the Wasserstein distance."""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from ..metrics import psm
from ._common import (
    OTHER_COLOR,
    _colors,
    _new_axes,
    _pyplot,
    check_result_first,
    data_rows,
    item_coordinates,
    legend_handles,
    matched_colors,
    thin_tick_labels,
)
from .mds import _classical_mds, stacked_points

__all__ = ["plot_wasabi", "plot_wasabi_elbow", "plot_wasabi_contributions"]


def _check_result(result: Any) -> None:
    if not (hasattr(result, "particles") and hasattr(result, "weights") and hasattr(result, "assignment")):
        raise TypeError(f"expected a WasabiResult from salsox.wasabi, got {type(result).__name__}")


def plot_wasabi(
    result: Any, data: Any = None, *, kind: str = "mds", ncols: Optional[int] = None, title: Optional[str] = None
) -> Any:
    """One small panel per particle, titled with its weight and its EVI (heaviest first).

    Parameters
    ----------
    result : WasabiResult
    data : array-like (n, p), DataFrame or Series, optional
        The items' features for ``kind="mds"``: two columns drawn as they are (named by a
        DataFrame's columns), more by their first two principal components, one as a strip
        with vertical jitter. Rows are matched to the items by name when both the draws and
        the data's index name them (names that differ are an error), else by position.
        Default: the classical MDS of 1 - PSM of all the draws, the same coordinates in every
        panel (items always clustered together drawn once, the area proportional to their
        number).
    kind : {"mds", "heatmap"}, default "mds"
        "mds": the items, coloured by the particle's clusters; a cluster takes the colour of
        the heaviest particle's cluster it shares most items with (as
        :func:`plot_credible_ball`), so an item that moves does not recolour whole clusters.
        Each panel has its axes and a legend of its clusters. "heatmap": the co-clustering
        matrix of the particle's own draws, items ordered by the particle's clusters, with
        its cluster boundaries and a colour scale.
    ncols : int, optional
        Panels per row (default: up to 4).
    title : str, optional
        Figure title (default: W and L).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import io
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 2], [0, 1, 1, 1], [0, 1, 1, 1], [0, 1, 1, 2]]
    >>> result = salsox.wasabi(draws, 2, seed=1)
    >>> fig = salsox.plots.plot_wasabi(result)
    >>> [ax.get_title().splitlines()[0] for ax in fig.axes]  # one panel per particle
    ['particle 0: weight 0.500', 'particle 1: weight 0.500']
    >>> fig.savefig(io.BytesIO(), format="png")    # or a file name; plt.show() in a notebook
    """
    check_result_first("plot_wasabi", result, data, "result")
    _check_result(result)
    if kind not in ("mds", "heatmap"):
        raise ValueError(f"kind must be 'mds' or 'heatmap', got {kind!r}")
    particles = np.asarray(result.particles)
    L, n = particles.shape
    if ncols is None:
        ncols = min(L, 4)
    elif isinstance(ncols, bool) or not isinstance(ncols, int) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    coords = None
    if kind == "mds":
        if data is None:
            coords, explained = _classical_mds(1.0 - psm(result.draws), 2)
            xlabel, ylabel = f"MDS 1 ({explained[0]:.0%})", f"MDS 2 ({explained[1]:.0%})"
        else:
            values, columns = data_rows(data, n, getattr(result, "item_names", None), owner="the result")
            coords, xlabel, ylabel = item_coordinates(values, columns)
    elif data is not None:
        raise ValueError("data is used only with kind='mds'")
    plt = _pyplot()
    nrows = math.ceil(L / ncols)
    width = 4.6 if coords is not None else 3.2
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols + (0.6 if coords is None else 0.0), 3.1 * nrows),
                             layout="constrained", squeeze=False)
    image = None
    for p in range(L):
        ax = axes[p // ncols][p % ncols]
        labels = particles[p]
        k = int(labels.max()) + 1
        sizes = np.bincount(labels, minlength=k)
        # Colours follow the heaviest particle's clusters, so what moved between particles shows.
        colors = matched_colors(particles[0], labels)
        if coords is not None:
            points, owner, counts = stacked_points(coords, labels)
            for c in np.lexsort((np.arange(k), sizes)):  # large clusters drawn last, on top
                mine = owner == c
                ax.scatter(points[mine, 0], points[mine, 1], s=12.0 * counts[mine], color=colors[c], alpha=0.85,
                           edgecolors="white", linewidths=0.3)
            ax.tick_params(labelsize=7)
            ax.set_xlabel(xlabel, fontsize=8)
            ax.set_ylabel(ylabel if ylabel else "(jitter)", fontsize=8)
            if ylabel == "":
                ax.set_yticks([])
            other = np.all(colors == np.asarray(OTHER_COLOR), axis=1) & (sizes == 1)
            ax.legend(handles=legend_handles(colors, other, sizes, limit=8), title="cluster (n)", fontsize=6,
                      title_fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                      frameon=False, handletextpad=0.2, labelspacing=0.3)
        else:
            order = np.argsort(labels, kind="stable")
            own = result.draws[np.asarray(result.assignment) == p]
            matrix = psm(own)[np.ix_(order, order)]
            image = ax.imshow(matrix, cmap="viridis", vmin=0.0, vmax=1.0, interpolation="nearest")
            for edge in np.cumsum(np.bincount(labels))[:-1] - 0.5:
                ax.axhline(edge, color="white", linewidth=0.6)
                ax.axvline(edge, color="white", linewidth=0.6)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_xlabel("items, grouped by cluster", fontsize=8)
        ax.set_title(f"particle {p}: weight {result.weights[p]:.3f}\nEVI {result.evi[p]:.3g}, {k} clusters",
                     fontsize=9)
    for p in range(L, nrows * ncols):
        axes[p // ncols][p % ncols].set_visible(False)
    if image is not None:
        fig.colorbar(image, ax=axes, label="co-clustering in the particle's draws", shrink=0.8)
    fig.suptitle(title if title is not None else f"WASABI: {L} particle(s), W = {result.distance:.4g} bits",
                 fontsize=10)
    return fig


def plot_wasabi_elbow(curve: Any, *, ax: Any = None, title: Optional[str] = None) -> Any:
    """W against the number of particles (an :class:`~salsox.uncertainty.wasabi.Elbow` from
    :func:`salsox.wasabi_elbow`), to choose L where the curve flattens.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import io
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 2], [0, 1, 1, 1], [0, 1, 1, 1], [0, 1, 1, 2]]
    >>> curve = salsox.wasabi_elbow(draws, 3, seed=1)
    >>> ax = salsox.plots.plot_wasabi_elbow(curve)
    >>> ax.get_lines()[0].get_ydata().round(4)
    array([0.7296, 0.1981, 0.0833])
    >>> ax.figure.savefig(io.BytesIO(), format="png")    # or a file name; plt.show() in a notebook
    """
    if not (hasattr(curve, "n_particles") and hasattr(curve, "distance")):
        raise TypeError(f"expected an Elbow from salsox.wasabi_elbow, got {type(curve).__name__}")
    ax = _new_axes(ax, (4.5, 3.4))
    ax.plot(curve.n_particles, curve.distance, marker="o")
    ax.set_xticks(np.asarray(curve.n_particles))
    ax.set_xlabel("particles L")
    ax.set_ylabel("W (bits)")
    ax.set_ylim(bottom=0.0)
    ax.set_title(title if title is not None else "WASABI elbow")
    return ax


def plot_wasabi_contributions(result: Any, *, ax: Any = None, title: Optional[str] = None) -> Any:
    """Each item's contribution to W, stacked by particle (``result.evi_contributions()``):
    the items that make the posterior uncertain even given the particles stand out. Items are
    named on the x axis when the draws named them (the largest contributions first when names
    would overlap), else numbered by position.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import io
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 2], [0, 1, 1, 1], [0, 1, 1, 1], [0, 1, 1, 2]]
    >>> result = salsox.wasabi(draws, 2, seed=1)
    >>> ax = salsox.plots.plot_wasabi_contributions(result)
    >>> len(ax.patches)  # one bar per item and particle
    8
    >>> ax.figure.savefig(io.BytesIO(), format="png")    # or a file name; plt.show() in a notebook
    """
    _check_result(result)
    parts = result.evi_contributions()
    L, n = parts.shape
    ax = _new_axes(ax, (max(6.0, min(14.0, 0.06 * n + 4.5)), 3.6))
    colors = _colors(L)
    bottom = np.zeros(n)
    for p in range(L):
        ax.bar(np.arange(n), parts[p], bottom=bottom, width=1.0, color=colors[p],
               label=f"particle {p} (w={result.weights[p]:.2f})", linewidth=0)
        bottom += parts[p]
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylabel("contribution to W (bits)")
    names = getattr(result, "item_names", None)
    if names is not None:
        ax.set_xlabel("item")
        ax.tick_params(axis="x", labelrotation=90, labelsize=float(np.clip(300.0 / n, 4.0, 8.0)), length=2)
        # The items contributing most keep their names when labels would overlap.
        thin_tick_labels([(ax, "x", np.arange(n), [str(v) for v in names], bottom, 1.0)])
    else:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("item (position)")
    if L <= 12:  # beside the bars, never over them
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    ax.set_title(title if title is not None else f"per-item contributions (sum W = {result.distance:.4g})")
    return ax
