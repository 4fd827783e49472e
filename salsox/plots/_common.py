"""What the plot families share: matplotlib on demand, the summary to draw, colours, axes, labels."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ..io import align, check_item_names
from ..io.item_index import index_names
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
        if getattr(x, "truth", None) is not None and hasattr(x, "summary"):
            return x.summary() if loss is None else summarize(x, x.truth, loss)  # an Estimate holds its draws
        raise TypeError(
            "draws is required when the first argument is labels (or an Estimate without its draws), not a Summary"
        )
    if loss is None:
        loss = getattr(x, "loss", "VI")  # an Estimate's own loss
    return summarize(x, draws, loss)


def _item_names(*sources: Any) -> Optional[List[Any]]:
    """The items' names, as given, when an Estimate or Summary knows them (``item_names``),
    else None."""
    for source in sources:
        names = getattr(source, "item_names", None)
        if names is not None:
            return list(names)
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


def legend_handles(
    colors: np.ndarray, other: np.ndarray, sizes: Any, limit: int = 20, ids: Any = None
) -> List[Any]:
    """Legend entries: the clusters not drawn as "other", largest first (at most ``limit``, then
    a line counting the rest), then one grey entry for the "other" clusters (singletons).
    ``ids``: the label shown for each cluster (a Summary's ``cluster_ids``; default 0..K-1)."""
    from matplotlib.lines import Line2D

    sizes = np.asarray(sizes)
    k = sizes.shape[0]
    rank = [int(c) for c in np.lexsort((np.arange(k), -sizes)) if not other[c]]
    shown, rest = rank[:limit], rank[limit:]
    names = [str(c) for c in range(k)] if ids is None else [str(v) for v in ids]
    handles = [
        Line2D([], [], marker="o", linestyle="", color=colors[c], label=f"{names[c]} (n={int(sizes[c])})")
        for c in shown
    ]
    if rest:
        handles.append(Line2D([], [], linestyle="", label=f"... {len(rest)} more clusters"))
    if other.any():
        handles.append(
            Line2D([], [], marker="o", linestyle="", color=OTHER_COLOR,
                   label=f"other: {int(other.sum())} singletons")
        )
    return handles


def _row_names(data: Any) -> Optional[np.ndarray]:
    """A pandas object's row names (its index), None for the default 0..n-1 RangeIndex or data
    without an index."""
    index = getattr(data, "index", None)
    if index is None or not hasattr(data, "to_numpy") or isinstance(data, np.ndarray):
        return None
    names = index_names(index)
    return None if names is None else check_item_names(names, len(names), "data's index")


def _column_names(data: Any, p: int) -> List[str]:
    """Column names of a DataFrame (a Series' name), else x0, x1, ..."""
    columns = getattr(data, "columns", None)
    if columns is not None and hasattr(data, "to_numpy"):
        return [str(c) for c in columns]
    name = getattr(data, "name", None) if hasattr(data, "index") and hasattr(data, "to_numpy") else None
    if p == 1 and name is not None:
        return [str(name)]
    return [f"x{j}" for j in range(p)]


def data_rows(
    data: Any, n: int, item_names: Optional[Sequence[Any]], *, what: str = "data", owner: str = "the estimate"
) -> Tuple[np.ndarray, List[str]]:
    """The user's data as an (n, p) float matrix whose row i is item i, and its column names.

    Rows are matched to items by :mod:`salsox.io.item_index`'s rule: by name when both sides
    have names (a DataFrame's or Series' index, the estimate's ``item_names``), refused when the
    names differ; by position, with a warning, when only one side has names (pandas' default
    RangeIndex is positions, and an index that is the integers 0..n-1 in another order is the
    positions of unnamed items, e.g. ``frame.sample(frac=1)``). Column names come from a
    DataFrame (else ``x0``, ``x1``, ...).
    """
    rows = _row_names(data)
    raw = data.to_numpy() if hasattr(data, "to_numpy") else data
    values = np.asarray(raw)
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2:
        raise ValueError(f"{what} must be 2-D (n items x p features), got {values.ndim}-D")
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be numeric (one row per item, one column per feature)") from None
    if values.shape[0] != n and (rows is None or item_names is None):
        raise ValueError(f"{what} has {values.shape[0]} rows but {owner} has {n} items (one row per item)")
    columns = _column_names(data, values.shape[1])
    target = None if item_names is None else check_item_names(list(item_names), n, "item_names")
    # Rows matched to the items by name (salsox.io.item_index).
    take = align(target, n, rows, values.shape[0], what, against=owner)
    return (values if take is None else values[take]), columns


def item_coordinates(values: np.ndarray, columns: Sequence[str]) -> Tuple[np.ndarray, str, str]:
    """Two coordinates per item from its features: the two columns as they are; the first two
    principal components beyond two; one column as a strip with vertical jitter (fixed seed).
    Returns the coordinates and the axis labels ("" for the jitter axis)."""
    if not np.all(np.isfinite(values)):
        raise ValueError("data contains NaN or infinite values")
    n, p = values.shape
    if p == 1:
        jitter = np.random.default_rng(0).uniform(-1.0, 1.0, n)
        return np.column_stack([values[:, 0], jitter]), columns[0], ""
    if p == 2:
        return values, columns[0], columns[1]
    centred = values - values.mean(axis=0)
    u, sv, _ = np.linalg.svd(centred, full_matrices=False)
    return u[:, :2] * sv[:2], "PC 1", "PC 2"


_RESULT_ATTRIBUTES = ("expected_loss", "particles", "unallocated", "upper_vertical", "psm", "sizes")


def _looks_like_result(obj: Any) -> bool:
    if isinstance(obj, (np.ndarray, list, tuple)) or hasattr(obj, "to_numpy"):
        return False  # data or labels (a DataFrame may have a column called "sizes")
    return any(hasattr(obj, a) for a in _RESULT_ATTRIBUTES)


def check_result_first(function: str, first: Any, second: Any, expected: str) -> None:
    """A clear error when a plot gets (data, result) instead of (result, data)."""
    if second is not None and _looks_like_result(second) and not _looks_like_result(first):
        raise TypeError(
            f"{function} takes the {expected} first, then the data: {function}({expected}, data) "
            f"(got {type(first).__name__}, then {type(second).__name__})"
        )


def matched_colors(estimate: np.ndarray, partition: np.ndarray) -> np.ndarray:
    """Colours of ``partition``'s clusters that follow the estimate's: each cluster takes the
    colour of the estimate cluster it shares most items with (each estimate colour used once,
    largest overlaps first); the others get new colours; several singletons are grey."""
    k_est = int(estimate.max()) + 1
    est_colors, _ = cluster_colors(np.bincount(estimate, minlength=k_est))
    k = int(partition.max()) + 1
    sizes = np.bincount(partition, minlength=k)
    table = np.zeros((k, k_est), dtype=np.int64)
    np.add.at(table, (partition, estimate), 1)
    colors = np.zeros((k, 4))
    done = np.zeros(k, dtype=bool)
    used = np.zeros(k_est, dtype=bool)
    singletons_grey = int(np.sum(sizes == 1)) > 1
    for flat in np.argsort(-table, axis=None, kind="stable"):
        c, e = divmod(int(flat), k_est)
        if table[c, e] == 0:
            break
        if done[c] or used[e] or (singletons_grey and sizes[c] == 1):
            continue
        colors[c], done[c], used[e] = est_colors[e], True, True
    spare = iter(_distinct_colors(k_est + k)[k_est:])
    for c in range(k):
        if not done[c]:
            colors[c] = OTHER_COLOR if singletons_grey and sizes[c] == 1 else next(spare)
    return colors
