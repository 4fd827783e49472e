"""What the plot families share: matplotlib on demand, the summary to draw, colours, axes, labels."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ..summaries import Summary, summarize

# Colour of the clusters drawn as "other" (singletons) and of unallocated items.
OTHER_COLOR = (0.62, 0.62, 0.62, 1.0)


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "salsox plots need matplotlib, an optional dependency: pip install 'salsox[plot]' "
            "(or pip install matplotlib)"
        ) from None
    return plt


def _summary_of(x: Any, draws: Any, loss: Any) -> Summary:
    if isinstance(x, Summary):
        if draws is not None:
            raise ValueError("draws must not be given with a Summary (it already holds the PSM)")
        return x
    if draws is None:
        raise TypeError("draws is required when the first argument is an estimate, not a Summary")
    if loss is None:
        loss = getattr(x, "loss", "VI")  # an Estimate's own loss
    return summarize(x, draws, loss)


def _item_names(*sources: Any) -> Optional[List[str]]:
    """The items' names when an Estimate or Summary knows them (``item_names``), else None."""
    for source in sources:
        names = getattr(source, "item_names", None)
        if names is not None:
            return [str(v) for v in names]
    return None


def _distinct_colors(k: int) -> np.ndarray:
    """k distinguishable RGBA colours, the most distinct first: tab10 without its grey (kept for
    "other"), then the light halves of tab20's pairs, then a sampled continuous map."""
    from matplotlib import colormaps

    strong = colormaps["tab10"](np.array([0, 1, 2, 3, 4, 5, 6, 8, 9]))
    light = colormaps["tab20"](np.array([1, 3, 5, 7, 9, 11, 13, 17, 19]))
    base = np.vstack([strong, light])
    if k <= base.shape[0]:
        return base[:k]
    extra = colormaps["turbo"](np.linspace(0.05, 0.95, k - base.shape[0]))
    return np.vstack([base, extra])


def _colors(k: int) -> np.ndarray:
    """k distinguishable RGBA colours in cluster order (no grouping of singletons)."""
    return _distinct_colors(k)


def cluster_colors(sizes: Any, other_singletons: bool = True) -> Tuple[np.ndarray, np.ndarray]:
    """Colours of clusters of the given sizes, so that the largest clusters are the most distinct.

    Clusters are ranked by size (largest first, lower label on ties) and take the distinct
    colours in that order: the two largest clusters never get two shades of one hue. With
    ``other_singletons``, clusters of one item are all drawn grey, as "other", whenever there
    are more than one of them.

    Returns
    -------
    colors : ndarray of shape (K, 4)
    other : ndarray of bool, shape (K,)
        The clusters drawn as "other".
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    k = sizes.shape[0]
    other = np.zeros(k, dtype=bool)
    if other_singletons and k > 1 and int(np.sum(sizes == 1)) > 1:
        other = sizes == 1
    rank = np.lexsort((np.arange(k), -sizes))  # largest first
    ranked = [c for c in rank if not other[c]]
    colors = np.tile(np.asarray(OTHER_COLOR), (k, 1))
    palette = _distinct_colors(len(ranked))
    for i, c in enumerate(ranked):
        colors[c] = palette[i]
    return colors, other


def text_color(rgba: Any) -> Tuple[float, float, float, float]:
    """A darker shade of ``rgba`` that reads on a white background (relative luminance <= 0.35)."""
    r, g, b = (float(v) for v in np.asarray(rgba, dtype=np.float64)[:3])
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    if lum <= 0.35:
        return (r, g, b, 1.0)
    f = 0.35 / lum
    return (r * f, g * f, b * f, 1.0)


def _new_axes(ax: Any, figsize: Tuple[float, float]) -> Any:
    if ax is not None:
        return ax
    plt = _pyplot()
    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _renderer(fig: Any) -> Any:
    """Lay the figure out (constrained layout included) and return its renderer."""
    fig.canvas.draw()
    return fig.canvas.get_renderer()


TickSpec = Tuple[Any, str, Any, Sequence[str], Any, float]


def thin_tick_labels(specs: Sequence[TickSpec]) -> List[np.ndarray]:
    """Set tick labels, then keep only labels that do not overlap.

    Each spec is ``(axes, which, positions, labels, priority, pad)``: ``axes`` an Axes (or a
    secondary axis), ``which`` "x" or "y". All labels are set, the figure is laid out once and
    every label measured; then, per spec, labels are kept in order of ``priority`` (highest
    first) when their box, grown by ``pad`` points, meets no kept label. Removing labels only
    frees room, so what is kept stays apart after the final layout. Returns the indices kept
    for each spec (in position order).
    """
    def put(ax: Any, which: str, positions: np.ndarray, labels: Sequence[str]) -> None:
        if which == "x":
            ax.set_xticks(positions)
            ax.set_xticklabels(list(labels))
        else:
            ax.set_yticks(positions)
            ax.set_yticklabels(list(labels))

    for ax, which, positions, labels, _, _ in specs:
        put(ax, which, np.asarray(positions, dtype=np.float64), labels)
    if not specs or all(np.size(spec[2]) <= 1 for spec in specs):
        return [np.arange(np.size(spec[2])) for spec in specs]
    renderer = _renderer(specs[0][0].figure)
    result = []
    for ax, which, positions, labels, priority, pad in specs:
        texts = ax.get_xticklabels() if which == "x" else ax.get_yticklabels()
        grow = pad * ax.figure.dpi / 72.0
        boxes = [t.get_window_extent(renderer).padded(grow) for t in texts]
        kept: List[int] = []
        for i in np.argsort(-np.asarray(priority, dtype=np.float64), kind="stable"):
            if all(not boxes[i].overlaps(boxes[j]) for j in kept):
                kept.append(int(i))
        chosen = np.sort(np.asarray(kept, dtype=np.intp))
        put(ax, which, np.asarray(positions, dtype=np.float64)[chosen], [labels[i] for i in chosen])
        result.append(chosen)
    return result


def legend_handles(colors: np.ndarray, other: np.ndarray, sizes: Any, limit: int = 20) -> List[Any]:
    """Legend entries: the clusters not drawn as "other", largest first (at most ``limit``, then
    a line counting the rest), then one grey entry for the "other" clusters (singletons)."""
    from matplotlib.lines import Line2D

    sizes = np.asarray(sizes)
    k = sizes.shape[0]
    rank = [int(c) for c in np.lexsort((np.arange(k), -sizes)) if not other[c]]
    shown, rest = rank[:limit], rank[limit:]
    handles = [
        Line2D([], [], marker="o", linestyle="", color=colors[c], label=f"{c} (n={int(sizes[c])})") for c in shown
    ]
    if rest:
        handles.append(Line2D([], [], linestyle="", label=f"... {len(rest)} more clusters"))
    if other.any():
        handles.append(
            Line2D([], [], marker="o", linestyle="", color=OTHER_COLOR,
                   label=f"other: {int(other.sum())} singletons")
        )
    return handles
