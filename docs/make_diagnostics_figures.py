"""Regenerate the pictures of docs/diagnostics.md (and print the reports the page shows).

    python docs/make_diagnostics_figures.py       # writes docs/images/diagnostics_*.png

The chains are the package's own: its Dirichlet-process sampler (salsox.datasets) on the
bundled example data, run four times from dispersed starts (one cluster, all singletons, ten
random clusters, two random clusters), once with a short run and no burn-in, once with a
burn-in of 100 sweeps and 1,000 draws thinned by 2. Deterministic (fixed seeds, Agg backend,
date-free PNG metadata), each picture under 150 KB.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any, List

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt
import numpy as np

import salsox
from salsox import plots
from salsox.datasets import example_draws, sample_dp_mixture

HERE = Path(__file__).resolve().parent
IMAGES = HERE / "images"
MAX_BYTES = 150 * 1024
DPI = 72


def dispersed_starts(n: int) -> List[np.ndarray]:
    """Four starting partitions far apart: one cluster, singletons, 10 and 2 random clusters."""
    rng = np.random.default_rng(0)
    return [np.zeros(n, int), np.arange(n), rng.integers(0, 10, n), rng.integers(0, 2, n)]


def chains(burn_in: int, n_draws: int, thin: int) -> np.ndarray:
    """(4, n_draws, 100) draws of the example's DP mixture, one chain per dispersed start."""
    data = np.asarray(example_draws().data)
    return np.stack(
        [
            sample_dp_mixture(data, n_draws=n_draws, burn_in=burn_in, thin=thin, seed=10 + k, init=start)
            for k, start in enumerate(dispersed_starts(data.shape[0]))
        ]
    )


def _save(fig: Any, name: str, written: List[Path]) -> None:
    path = IMAGES / name
    fig.savefig(path, dpi=DPI, metadata={"Software": None}, pil_kwargs={"optimize": True})
    plt.close(fig)
    written.append(path)


def main() -> int:
    warnings.simplefilter("ignore", salsox.SalsoxWarning)
    IMAGES.mkdir(exist_ok=True)
    written: List[Path] = []
    for name, (burn_in, n_draws, thin) in {"short": (0, 100, 1), "long": (100, 1000, 2)}.items():
        diag = salsox.diagnose(chains(burn_in, n_draws, thin), seed=1)
        print(f"--- {name}: burn_in={burn_in}, n_draws={n_draws}, thin={thin}")
        print(diag.to_text())
        shown = ["n_clusters", "VI to ref 0", "VI to ref 5"]
        _save(plots.plot_diagnosis_traces(diag, shown, figsize=(8, 5.2)), f"diagnostics_{name}_traces.png", written)
        _save(plots.plot_diagnosis_ranks(diag, shown), f"diagnostics_{name}_ranks.png", written)
        if name == "short":
            _save(plots.plot_chain_estimates(diag), "diagnostics_short_estimates.png", written)
            _save(plots.plot_chain_gap(diag), "diagnostics_short_gap.png", written)
    too_big = [p for p in written if p.stat().st_size > MAX_BYTES]
    for p in written:
        print(f"{p.relative_to(HERE.parent)}: {p.stat().st_size // 1024} KB")
    if too_big:
        print(f"over {MAX_BYTES // 1024} KB: {too_big}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
