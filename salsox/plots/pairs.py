"""A scatter-plot matrix of the user's data, coloured by cluster."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from ..io import labels_and_names
from ._common import (
    _item_names,
    _pyplot,
    _summary_of,
    check_result_first,
    cluster_colors,
    data_rows,
    legend_handles,
    text_color,
)
from ..summaries import Summary


def plot_pairs(
    x: Any,
    data: Any,
    draws: Any = None,
    *,
    loss: Any = None,
    columns: Optional[Sequence[Any]] = None,
    max_columns: int = 8,
    segments: bool = False,
    figsize: Optional[Tuple[float, float]] = None,
) -> Any:
    """Scatter-plot matrix of the clustered data, points coloured by cluster.

    Every row and column has its own labelled scale (the variable's range); the diagonal
    panels show stacked histograms by cluster on a hidden count axis, with the variable's
    name. One variable is drawn as a strip per cluster (with a rug of all items) instead.
    Colours follow the other plots: the largest clusters most distinct, several singletons
    grey as "other".

    Parameters
    ----------
    x : Summary, Estimate or labels
        The estimate; with an Estimate or labels, no draws are needed (only the labels are
        used), but a Summary, an Estimate holding its draws, or draws add exemplar markers.
    data : array-like of shape (n, p), pandas DataFrame or Series
        The items' features, one row per item. When the estimate and the data's index both
        name the items, rows are matched by name (names that differ are an error); otherwise
        row i is item i. A DataFrame's column names label the axes.
    draws : optional
    loss : optional
    columns : sequence, optional
        Columns to show (names for a DataFrame, otherwise indices). Default: all.
    max_columns : int, default 8
        Refuse wider matrices (which are unreadable) unless ``columns`` picks some.
    segments : bool, default False
        Segments from each item to its cluster's exemplar (as R salso draws them); needs the
        exemplars (a Summary, or the estimate with draws).
    figsize : (float, float), optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> ex = example_draws()
    >>> est = salsox.salso(ex.draws, seed=1)
    >>> fig = salsox.plots.plot_pairs(est.summary(ex.draws), ex.data)
    >>> len(fig.axes) >= 4
    True
    """
    plt = _pyplot()
    from matplotlib.collections import LineCollection

    check_result_first("plot_pairs", x, data, "estimate")
    s: Optional[Summary] = None
    label_names = None
    if isinstance(x, Summary) or draws is not None:
        s = _summary_of(x, draws, loss)
        labels = s.labels
    else:
        raw, label_names = labels_and_names(x, "labels")
        if hasattr(raw, "columns") or (np.ndim(raw) == 2 and np.shape(raw)[0] != 1):  # data, not labels
            raise TypeError(
                "plot_pairs takes the estimate first, then the data: plot_pairs(estimate, data) "
                f"(the first argument is a {type(raw).__name__} of shape {np.shape(raw)}, not labels)"
            )
        from .._validation import as_label_matrix

        labels = as_label_matrix(raw, "labels")[0][0]
    picked = None
    if columns is not None and hasattr(data, "columns") and hasattr(data, "to_numpy"):
        data = data[list(columns)]  # before the conversion: other columns may not be numeric
    elif columns is not None:
        picked = list(columns)
    known = _item_names(x, s) if s is not None else (None if label_names is None else list(label_names))
    values, names = data_rows(data, labels.shape[0], known)
    if picked is not None:
        try:
            values = values[:, picked]
        except IndexError:
            raise ValueError(f"columns {columns!r} out of range for data with {values.shape[1]} columns") from None
        names = [f"x{j}" for j in picked]
    p = values.shape[1]
    if p > max_columns:
        raise ValueError(
            f"data has {p} columns, more than max_columns={max_columns}; choose some with columns=[...]"
        )
    exemplars = None if s is None else np.asarray(s.exemplars)
    if segments and exemplars is None:
        raise ValueError("segments=True needs the exemplars: pass a Summary, or the estimate with draws")
    sizes = np.bincount(labels)
    ids = np.arange(sizes.shape[0]) if s is None else s.cluster_ids
    if s is None and not hasattr(x, "labels"):  # the user's own labels: shown as given
        given = np.asarray(x).reshape(-1)[np.unique(labels, return_index=True)[1]]
        ids = given if given.dtype.kind in "iu" else ids
    colors, other = cluster_colors(sizes)
    if p == 1:
        return _strip(plt, values[:, 0], names[0], labels, sizes, colors, other, exemplars, segments, figsize, ids)
    width, height = figsize if figsize is not None else (1.9 * p + 2.6, 1.9 * p + 0.9)
    fig, axes = plt.subplots(p, p, figsize=(width, height), squeeze=False)
    limits = [_limits(values[:, j]) for j in range(p)]
    # Large clusters drawn last (on top); "other" first.
    drawing = np.lexsort((np.arange(sizes.shape[0]), sizes))
    for r in range(p):
        for c in range(p):
            ax = axes[r, c]
            ax.set_xlim(limits[c])
            ax.set_ylim(limits[r])  # the row's scale, on the diagonal too
            if r == c:
                _histogram(ax, values[:, c], labels, drawing, colors, limits[c])
                ax.text(0.04, 0.95, names[c], transform=ax.transAxes, ha="left", va="top", fontsize=8,
                        fontweight="bold", zorder=5)
            else:
                if segments:
                    ends = exemplars[labels]  # type: ignore[index]
                    lines = np.stack([values[:, [c, r]], values[ends][:, [c, r]]], axis=1)
                    ax.add_collection(LineCollection(list(lines), colors=colors[labels], linewidths=0.5, alpha=0.4))
                for g in drawing:
                    members = labels == g
                    ax.scatter(values[members, c], values[members, r], s=9, color=colors[g], alpha=0.85,
                               edgecolors="none")
                if exemplars is not None:
                    ax.scatter(values[exemplars, c], values[exemplars, r], s=40, facecolors="none",
                               edgecolors="black", linewidths=0.9)
            ax.tick_params(labelsize=7, labelbottom=r == p - 1, labelleft=c == 0)
            if r == p - 1:
                ax.set_xlabel(names[c])
            if c == 0:
                ax.set_ylabel(names[r])
    right = 1.0 - 1.75 / width
    fig.subplots_adjust(left=0.8 / width, bottom=0.6 / height, right=right, top=1.0 - 0.45 / height,
                        wspace=0.08, hspace=0.08)
    fig.legend(handles=legend_handles(colors, other, sizes, ids=ids), title="cluster (n)", loc="center left",
               bbox_to_anchor=(right + 0.1 / width, 0.5), fontsize=7, title_fontsize=8, frameon=False)
    k = sizes.shape[0]
    fig.suptitle(f"Data coloured by the estimate ({k} cluster{'s' if k != 1 else ''})")
    return fig


def _limits(v: np.ndarray) -> Tuple[float, float]:
    """The variable's range, with a 5% margin (a unit margin for a constant)."""
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return (0.0, 1.0)
    lo, hi = float(finite.min()), float(finite.max())
    pad = 0.05 * (hi - lo) if hi > lo else max(0.5, 0.05 * abs(lo))
    return (lo - pad, hi + pad)


def _histogram(ax: Any, v: np.ndarray, labels: np.ndarray, drawing: np.ndarray, colors: np.ndarray,
               limits: Tuple[float, float]) -> None:
    """Stacked histogram by cluster on a twin axis whose count scale is hidden: the panel's own
    y axis stays the row variable's, so the row's tick labels are that variable's."""
    twin = ax.twinx()
    bins = np.linspace(limits[0], limits[1], 21)
    groups = [v[(labels == g) & np.isfinite(v)] for g in drawing]
    twin.hist(groups, bins=bins, stacked=True, color=[colors[g] for g in drawing], alpha=0.85,
              edgecolor="white", linewidth=0.3)
    twin.set_yticks([])
    twin.set_ylim(0.0, twin.get_ylim()[1] * 1.15)  # room for the variable's name
    ax.set_zorder(twin.get_zorder() + 1)  # the name above the bars
    ax.patch.set_visible(False)


def _strip(plt: Any, v: np.ndarray, name: str, labels: np.ndarray, sizes: np.ndarray, colors: np.ndarray,
           other: np.ndarray, exemplars: Optional[np.ndarray], segments: bool,
           figsize: Optional[Tuple[float, float]], ids: np.ndarray) -> Any:
    """One variable: a strip per cluster (clusters by mean value, singletons on one "other"
    strip), points jittered vertically."""
    k = sizes.shape[0]
    means = np.array([np.nanmean(v[labels == g]) if np.isfinite(v[labels == g]).any() else np.inf for g in range(k)])
    shown = [int(g) for g in np.lexsort((np.arange(k), means)) if not other[g]]
    rows = len(shown) + (1 if other.any() else 0)
    row_of = np.full(k, rows - 1)
    row_of[shown] = np.arange(len(shown))
    width, height = figsize if figsize is not None else (6.4, max(3.0, 0.3 * rows + 1.7))
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    jitter = np.random.default_rng(0).uniform(-0.25, 0.25, v.shape[0])
    y = row_of[labels] + jitter
    if segments:
        from matplotlib.collections import LineCollection

        ends = exemplars[labels]  # type: ignore[index]
        lines = np.stack([np.column_stack([v, y]), np.column_stack([v[ends], y[ends]])], axis=1)
        ax.add_collection(LineCollection(list(lines), colors=colors[labels], linewidths=0.5, alpha=0.4))
    ax.scatter(v, y, s=14, c=colors[labels], alpha=0.85, edgecolors="none")
    if exemplars is not None:
        ax.scatter(v[exemplars], y[exemplars], s=50, facecolors="none", edgecolors="black", linewidths=0.9)
    ax.plot(v, np.full(v.shape[0], -0.6), "|", color="0.3", markersize=6, alpha=0.6)  # rug of all items
    ticks = [f"{ids[g]} (n={sizes[g]})" for g in shown]
    ticks += [f"other ({int(other.sum())} singletons)"] if other.any() else []
    ax.set_yticks(np.arange(rows))
    ax.set_yticklabels(ticks, fontsize=8)
    for text, g in zip(ax.get_yticklabels(), shown + [-1]):
        text.set_color(text_color(colors[g]) if g >= 0 else "0.35")
    ax.set_ylim(-0.9, rows - 0.5)
    ax.set_xlim(_limits(v))
    ax.set_xlabel(name)
    ax.set_ylabel("cluster (n)")
    ax.grid(axis="y", color="0.9", linewidth=0.6)
    ax.set_title(f"Data by cluster of the estimate ({k} cluster{'s' if k != 1 else ''})")
    return fig
