"""What the plot families share: matplotlib on demand, the summary to draw, colours, axes."""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from ..summaries import Summary, summarize


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


def _colors(k: int) -> np.ndarray:
    """k distinguishable RGBA colours (tab10, then tab20, then a sampled continuous map)."""
    from matplotlib import colormaps

    if k <= 10:
        return colormaps["tab10"](np.arange(k))
    if k <= 20:
        return colormaps["tab20"](np.arange(k))
    return colormaps["turbo"](np.linspace(0.05, 0.95, k))


def _new_axes(ax: Any, figsize: Tuple[float, float]) -> Any:
    if ax is not None:
        return ax
    plt = _pyplot()
    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax
