"""Plots of a WASABI summary (:func:`salsox.wasabi`): the particles, the elbow curve, and the
per-item contributions to the Wasserstein distance."""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from ..metrics import psm
from ._common import _colors, _new_axes, _pyplot
from .mds import classical_mds

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
    data : array-like (n, 2), optional
        Coordinates of the items for ``kind="mds"`` (e.g. two features). Default: the classical
        MDS of 1 - PSM of all the draws, the same coordinates in every panel.
    kind : {"mds", "heatmap"}, default "mds"
        "mds": the items, coloured by the particle's clusters. "heatmap": the co-clustering
        matrix of the particle's own draws, items ordered by the particle's clusters, with
        its cluster boundaries.
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
            coords = classical_mds(1.0 - psm(result.draws), 2)
        else:
            coords = np.asarray(data, dtype=np.float64)
            if coords.shape != (n, 2):
                raise ValueError(f"data must have shape ({n}, 2) (one point per item), got {coords.shape}")
    elif data is not None:
        raise ValueError("data is used only with kind='mds'")
    plt = _pyplot()
    nrows = math.ceil(L / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 3.0 * nrows), layout="constrained", squeeze=False)
    for p in range(L):
        ax = axes[p // ncols][p % ncols]
        labels = particles[p]
        k = int(labels.max()) + 1
        if coords is not None:
            colors = _colors(k)
            ax.scatter(coords[:, 0], coords[:, 1], s=14, c=colors[labels], edgecolors="none", alpha=0.9)
            ax.set_xticks([])
            ax.set_yticks([])
        else:
            order = np.argsort(labels, kind="stable")
            own = result.draws[np.asarray(result.assignment) == p]
            matrix = psm(own)[np.ix_(order, order)]
            ax.imshow(matrix, cmap="viridis", vmin=0.0, vmax=1.0, interpolation="nearest")
            for edge in np.cumsum(np.bincount(labels))[:-1] - 0.5:
                ax.axhline(edge, color="white", linewidth=0.6)
                ax.axvline(edge, color="white", linewidth=0.6)
            ax.set_xticks([])
            ax.set_yticks([])
        ax.set_title(f"particle {p}: weight {result.weights[p]:.3f}\nEVI {result.evi[p]:.3g}, {k} clusters",
                     fontsize=9)
    for p in range(L, nrows * ncols):
        axes[p // ncols][p % ncols].set_visible(False)
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
    the items that make the posterior uncertain even given the particles stand out.

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
    ax = _new_axes(ax, (max(5.0, min(14.0, 0.06 * n + 3)), 3.4))
    colors = _colors(L)
    bottom = np.zeros(n)
    for p in range(L):
        ax.bar(np.arange(n), parts[p], bottom=bottom, width=1.0, color=colors[p],
               label=f"particle {p} (w={result.weights[p]:.2f})", linewidth=0)
        bottom += parts[p]
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_xlabel("item")
    ax.set_ylabel("contribution to W (bits)")
    if L <= 12:
        ax.legend(fontsize=7, loc="best")
    ax.set_title(title if title is not None else f"per-item contributions (sum W = {result.distance:.4g})")
    return ax
