"""CHIPS (salsox.chips) in path and threshold modes against the straightforward numpy
implementation of the same algorithm (tests/reference_chips.py), on ex1 and on a synthetic draw
set of at least 1,000 items.

The numpy implementation runs only a few runs (it is slow); times are compared per run, both on
one thread, as CPU time of the process (steadier than wall time on a shared machine), and
salsox's wall time for all of its runs on all threads is shown too. Both follow the
same algorithm, so the best probability found at each size should be of the same order (they
draw different ties).

Usage: python benchmarks/bench_chips.py [--runs 64] [--ref-runs 2] [--n 1000] [--H 500]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import salsox
from _common import best_time, load_draws, print_table
from synthetic import synthetic_draws

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from reference_chips import chips_run


def reference_runs(draws: np.ndarray, threshold: float, runs: int, seed: int) -> tuple[float, int, float]:
    """Seconds per run of the numpy implementation, and its best final (size, probability)."""
    rng = np.random.default_rng(seed)
    t0 = time.process_time()
    best = (-1, -1.0)
    for _ in range(runs):
        out = chips_run(draws, threshold, rng=rng)
        counts = out["counts"]
        size = len(out["items"])
        p = counts[-1] / draws.shape[0] if size else 1.0
        best = max(best, (size, float(p)))
    return (time.process_time() - t0) / runs, best[0], best[1]


def cpu_time(fn, repeat: int):
    """Fewest CPU seconds of `repeat` calls (one thread: CPU time is the work done)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.process_time()
        result = fn()
        best = min(best, time.process_time() - t0)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=64, help="salsox runs")
    parser.add_argument("--ref-runs", type=int, default=2, help="numpy implementation runs")
    parser.add_argument("--n", type=int, default=1000, help="synthetic items")
    parser.add_argument("--H", type=int, default=500, help="synthetic draws")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1, help="salsox timings keep the fastest of this many")
    args = parser.parse_args()

    datasets = {
        "ex1": load_draws("ex1"),
        f"synthetic n={args.n}": synthetic_draws(args.n, args.H, k=10, seed=args.seed),
    }
    rows = []
    for name, raw in datasets.items():
        draws = salsox.Draws(raw)
        for mode, thr in (("path", 0.0), ("threshold", args.threshold)):
            # complete=False: the CHIPS search alone, as the numpy reference.
            t1, res1 = cpu_time(
                lambda d=draws, t=thr: salsox.chips(d, t, n_runs=args.runs, n_jobs=1, seed=args.seed, complete=False),
                args.repeat,
            )
            tall, _ = best_time(
                lambda d=draws, t=thr: salsox.chips(d, t, n_runs=args.runs, seed=args.seed, complete=False), args.repeat
            )
            ref_per_run, ref_size, ref_p = reference_runs(raw, thr, args.ref_runs, args.seed)
            per_run = t1 / args.runs
            if mode == "path":
                size, p = int(res1.n_items[0]), float(res1.probability[0])
                quality = f"auc {res1.auc:.4f}"
            else:
                size, p = int(res1.n_items), float(res1.probability)
                quality = f"{len(res1.unallocated.items)} unallocated"
            rows.append(
                [
                    name,
                    mode,
                    raw.shape[0],
                    raw.shape[1],
                    per_run,
                    ref_per_run,
                    ref_per_run / per_run,
                    tall,
                    size,
                    p,
                    ref_size,
                    ref_p,
                    quality,
                ]
            )
    print(
        f"salsox: {args.runs} runs (per-run CPU time at n_jobs=1; 'all s': wall time of all runs on all threads, "
        f"{salsox._core.max_threads()} available); numpy: {args.ref_runs} runs; threshold {args.threshold}"
    )
    print_table(
        [
            "draws",
            "mode",
            "H",
            "n",
            "salsox cpu s/run",
            "numpy cpu s/run",
            "x faster",
            "all s",
            "items",
            "p",
            "numpy items",
            "numpy p",
            "salsox",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
