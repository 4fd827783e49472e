"""Regenerate the pictures in docs/images from the bundled example draws.

    python docs/make_figures.py            # writes docs/images/example_heatmap.png

The figure is deterministic (fixed seeds, Agg backend) and kept small (< 100 KB): a PSM
heatmap ordered by the SALSO estimate, beside the MDS of 1 - PSM, both coloured by cluster.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt

import salsox
from salsox.datasets import example_draws

HERE = Path(__file__).resolve().parent
OUT = HERE / "images" / "example_heatmap.png"
MAX_BYTES = 100 * 1024


def main() -> int:
    example = example_draws(seed=0)
    estimate = salsox.salso(example.draws, "VI", n_runs=16, seed=0)
    summary = estimate.summary(example.draws)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 4.0), layout="constrained")
    salsox.plots.plot_heatmap(summary, ax=left, title="Posterior similarity, ordered by the estimate")
    salsox.plots.plot_mds(summary, ax=right, title="MDS of 1 - similarity (circles: exemplars)")
    fig.suptitle(
        f"SALSO (VI) on the bundled example: {example.draws.shape[0]} draws of "
        f"{example.draws.shape[1]} items, {estimate.n_clusters} clusters",
        fontsize=11,
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    # metadata=None for the date-free PNG: regenerating gives the same bytes.
    fig.savefig(OUT, dpi=80, metadata={"Software": None})
    plt.close(fig)
    size = OUT.stat().st_size
    print(f"wrote {OUT.relative_to(HERE.parent)} ({size / 1024:.0f} KB)")
    if size > MAX_BYTES:
        print(f"error: {OUT.name} is larger than {MAX_BYTES // 1024} KB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
