"""The credible ball: the estimate and its bounds side by side (as mcclust.ext draws them)."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from ._common import _pyplot, check_result_first, data_rows, item_coordinates, matched_colors

__all__ = ["plot_credible_ball", "matched_colors"]


def _coordinates(data: Any, draws: Any, n: int, names: Any) -> Tuple[np.ndarray, str, str]:
    """Two coordinates per item: the data (rows matched to the items by name when both have
    names; its first two principal components beyond two columns; a jittered strip for one),
    else the MDS of 1 - PSM of the draws."""
    if data is not None:
        values, columns = data_rows(data, n, names)
        return item_coordinates(values, columns)
    if draws is None:
        raise ValueError("plot_credible_ball needs data (n x p features) or draws (for an MDS map of the items)")
    from ..io import Draws, align, check_item_names
    from ..metrics import psm
    from .mds import classical_mds

    d = draws if isinstance(draws, Draws) else Draws(draws)
    if names is None and d.n_items != n:
        raise ValueError(f"draws have {d.n_items} items but the ball's estimate has {n}")
    target = None if names is None else check_item_names(list(names), n)
    take = align(target, n, d.item_names, d.n_items, "draws", against="the ball")  # by name (salsox.io.item_index)
    p = psm(d)
    if take is not None:
        p = p[np.ix_(take, take)]
    return classical_mds(1.0 - p, 2), "MDS 1", "MDS 2"


def plot_credible_ball(
    ball: Any, data: Any = None, *, draws: Any = None, figsize: Optional[Tuple[float, float]] = None
) -> Any:
    """The estimate and the bounds of its credible ball (:func:`salsox.credible_ball`) side by
    side, as ``mcclust.ext``'s ``plot.credibleball``: estimate, upper vertical bound (fewest
    clusters), lower vertical bound (most clusters) and horizontal bound (farthest), each a
    map of the items coloured by cluster. A bound's clusters take the colour of the estimate
    cluster they overlap most, so what moved stands out.

    Parameters
    ----------
    ball : CredibleBall
    data : array-like (n, p), DataFrame or Series, optional
        The items' features: drawn as they are for two columns (named by a DataFrame's
        columns), by their first two principal components for more, as a jittered strip for
        one. Rows are matched to the items by name when both the ball and the data's index
        name them (names that differ are an error), else by position.
    draws : optional
        Without ``data``: the draws, whose 1 - PSM is mapped by classical MDS.
    figsize : (float, float), optional

    Returns
    -------
    matplotlib.figure.Figure
        Four panels; a bound reached by several partitions shows the first (the title says
        how many).

    Examples
    --------
    >>> import io
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1], [0, 0, 1, 1]]
    >>> ball = salsox.credible_ball([0, 0, 1, 1], draws, "VI", level=0.75)
    >>> fig = salsox.plots.plot_credible_ball(ball, draws=draws)
    >>> len(fig.axes)
    4
    >>> fig.savefig(io.BytesIO(), format="png")    # or a file name; plt.show() in a notebook
    """
    check_result_first("plot_credible_ball", ball, data, "ball")
    if not all(hasattr(ball, a) for a in ("estimate", "horizontal", "upper_vertical", "lower_vertical")):
        raise TypeError(f"ball must be a CredibleBall (salsox.credible_ball), got {type(ball).__name__}")
    plt = _pyplot()
    estimate = np.asarray(ball.estimate)
    coords, xlabel, ylabel = _coordinates(data, draws, estimate.shape[0], getattr(ball, "item_names", None))
    panels: List[Tuple[str, np.ndarray]] = [(f"Estimate ({int(estimate.max()) + 1} clusters)", estimate)]
    for name, bound in (("Upper vertical bound", ball.upper_vertical), ("Lower vertical bound", ball.lower_vertical),
                        ("Horizontal bound", ball.horizontal)):
        labels = np.asarray(bound.labels)
        many = f", 1 of {labels.shape[0]}" if labels.shape[0] > 1 else ""
        text = f"{name} ({int(bound.n_clusters[0])} clusters{many})\n{ball.loss.name} distance {bound.distance:.3g}"
        panels.append((text, labels[0]))
    fig, axes = plt.subplots(2, 2, figsize=figsize or (8.6, 7.6), layout="constrained", sharex=True, sharey=True)
    for ax, (text, labels) in zip(axes.ravel(), panels):
        colors = matched_colors(estimate, labels)
        ax.scatter(coords[:, 0], coords[:, 1], s=16, c=colors[labels], edgecolors="none", alpha=0.9)
        ax.set_title(text, fontsize=9)
        if ylabel == "":
            ax.set_yticks([])
    for ax in axes[1]:
        ax.set_xlabel(xlabel)
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel if ylabel else "(jitter)")
    fig.suptitle(
        f"{100 * ball.level:g}% credible ball ({ball.loss.name} distance), radius {ball.radius:.3g}", fontsize=11
    )
    return fig
