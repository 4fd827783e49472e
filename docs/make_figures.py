"""Regenerate the pictures in docs/images: the figure of understanding.md and the gallery.

    python docs/make_figures.py            # writes docs/images/*.png

Every figure is deterministic (fixed seeds, Agg backend, date-free PNG metadata) and kept
small (< 150 KB each). Two cases, both from :mod:`salsox.datasets` so that anyone can rebuild
them: the bundled example (4 clusters, 100 items) and a many-cluster case (134 points: 130 from
14 Gaussian components plus 4 far outliers, which come out as singletons).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt
import numpy as np

import salsox
from salsox import plots
from salsox.datasets import example_draws, sample_dp_mixture, simulate_mixture_data

HERE = Path(__file__).resolve().parent
IMAGES = HERE / "images"
MAX_BYTES = 150 * 1024
DPI = 72


def many_clusters() -> Tuple[np.ndarray, np.ndarray]:
    """Data and draws with many clusters: 14 components on a ring and 4 outliers far outside."""
    data, _ = simulate_mixture_data(130, 14, seed=1)
    rng = np.random.default_rng(5)
    angle = rng.uniform(0.0, 2.0 * np.pi, 4)
    radius = np.abs(data).max() + np.array([6.0, 9.0, 12.0, 8.0])
    data = np.r_[data, np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])]
    draws = sample_dp_mixture(data, n_draws=300, burn_in=100, seed=1)
    return data, draws


def cases() -> Dict[str, Tuple[np.ndarray, np.ndarray]]:
    example = example_draws(seed=0)
    return {"example": (np.asarray(example.data), np.asarray(example.draws)), "many": many_clusters()}


def _save(fig: Any, name: str, written: List[Path]) -> None:
    path = IMAGES / name
    # metadata=None for the date-free PNG: regenerating gives the same bytes.
    fig.savefig(path, dpi=DPI, metadata={"Software": None}, pil_kwargs={"optimize": True})
    plt.close(fig)
    written.append(path)


def understanding_figure(written: List[Path]) -> None:
    """The figure of understanding.md: heatmap and MDS of the bundled example."""
    example = example_draws(seed=0)
    estimate = salsox.salso(example.draws, "VI", n_runs=16, seed=0)
    summary = estimate.summary(example.draws)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 4.4), layout="constrained")
    plots.plot_heatmap(summary, ax=left, title="Posterior similarity, ordered by the estimate")
    plots.plot_mds(summary, ax=right, title="MDS of 1 - similarity (circles: exemplars)")
    fig.suptitle(
        f"SALSO (VI) on the bundled example: {example.draws.shape[0]} draws of "
        f"{example.draws.shape[1]} items, {estimate.n_clusters} clusters",
        fontsize=11,
    )
    path = IMAGES / "example_heatmap.png"
    fig.savefig(path, dpi=80, metadata={"Software": None}, pil_kwargs={"optimize": True})
    plt.close(fig)
    written.append(path)


GALLERY = ("heatmap", "mds", "pairs", "strip", "dendrogram", "ball", "chips", "wasabi", "wasabi_heatmap",
           "contributions")


def gallery_figure(name: str, data: np.ndarray, draws: np.ndarray, estimate: Any, summary: Any) -> Any:
    """One gallery figure of one case."""
    if name == "heatmap":
        fig, (left, right) = plt.subplots(1, 2, figsize=(11.0, 4.8), layout="constrained")
        plots.plot_heatmap(summary, ax=left, title='order="fit" (best-fitting items first)')
        plots.plot_heatmap(summary, ax=right, order="hclust", colorbar=False,
                           title='order="hclust" (sub-structure within clusters)')
        return fig
    if name == "mds":
        return plots.plot_mds(summary).figure
    if name == "pairs":
        return plots.plot_pairs(summary, data, segments=True)
    if name == "strip":
        return plots.plot_pairs(summary, data[:, :1])
    if name == "dendrogram":
        width = max(11.0, 0.5 * estimate.n_clusters + 4.0)
        fig, (left, right) = plt.subplots(1, 2, figsize=(width, 4.4), layout="constrained")
        plots.plot_dendrogram(summary, draws, kind="loss", ax=left)
        plots.plot_dendrogram(summary, ax=right)
        return fig
    if name == "ball":
        return plots.plot_credible_ball(salsox.credible_ball(estimate, draws), data)
    if name == "chips":
        return plots.plot_chips(salsox.chips(draws, threshold=0.5, seed=0), data).figure
    if name == "wasabi":
        return plots.plot_wasabi(salsox.wasabi(draws, 3, seed=0), data)
    if name == "wasabi_heatmap":
        return plots.plot_wasabi(salsox.wasabi(draws, 3, seed=0), kind="heatmap")
    if name == "contributions":
        return plots.plot_wasabi_contributions(salsox.wasabi(draws, 3, seed=0)).figure
    raise ValueError(f"no gallery figure {name!r}")


def gallery(written: List[Path]) -> None:
    """Every plot on each case: docs/images/gallery_<case>_<plot>.png."""
    for case, (data, draws) in cases().items():
        estimate = salsox.salso(draws, "VI", n_runs=16, seed=0)
        summary = estimate.summary(draws)
        for name in GALLERY:
            _save(gallery_figure(name, data, draws, estimate, summary), f"gallery_{case}_{name}.png", written)


def main() -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    written: List[Path] = []
    understanding_figure(written)
    gallery(written)
    status = 0
    for path in written:
        size = path.stat().st_size
        print(f"wrote {path.relative_to(HERE.parent)} ({size / 1024:.0f} KB)")
        if size > MAX_BYTES:
            print(f"error: {path.name} is larger than {MAX_BYTES // 1024} KB", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
