"""A scatter-plot matrix of the user's data, coloured by cluster."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from ._common import _pyplot, _summary_of, _colors
from ..summaries import Summary


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

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> ex = example_draws()
    >>> est = salsox.salso(ex.draws, seed=1)
    >>> fig = salsox.plots.plot_pairs(ex.data, est.summary(ex.draws))
    >>> len(fig.axes) >= 4
    True
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
        from .._validation import as_label_matrix

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
