"""Two threads against one on the count-table rows: how much idle threads helping the runs still
going (issue 15) brings to a 16-run search.

For every dataset and loss it times the default 16-run search on one thread, on two threads
with every run kept on its own thread (``inner_jobs=1``: a thread that runs out of runs waits
for the other), and on two threads with the default helping (a thread with no run left serves
the loops of the run still going). The three settings are timed in turn, ``--repeat`` times,
keeping the fastest of each, so that a shared machine's load hits them alike; the load average
is printed before and after. Every setting must give the same estimate (checked).

The "balanced" column is the best two threads could do without helping: the run times of the
one-thread search dealt to two threads in run order, as the engine does (total / longest
thread's share). Helping can beat it; plain two threads cannot.

    python benchmarks/bench_threads.py                          # all rows (many minutes)
    python benchmarks/bench_threads.py --datasets ex1 --losses VI NVI --repeat 5
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

import salsox
from _common import DATASETS, load_draws, print_table

LOSSES = ("VI", "binder", "omARI", "NVI", "NID", "ID")
SETTINGS: Dict[str, Dict[str, Any]] = {
    "1 thread": dict(n_jobs=1),
    "2 alone": dict(n_jobs=2, inner_jobs=1),
    "2 helping": dict(n_jobs=2),
}


def _balanced(seconds: Sequence[float], threads: int = 2) -> float:
    """Total run time over the longest thread's share, runs dealt in order to the first free thread."""
    busy = [0.0] * threads
    for s in seconds:
        busy[busy.index(min(busy))] += s
    return sum(seconds) / max(busy)


def _row(name: str, draws: np.ndarray, loss: str, repeat: int, seed: int) -> Tuple[List[Any], Dict[str, float]]:
    best = {k: float("inf") for k in SETTINGS}
    estimates: Dict[str, Any] = {}
    for _ in range(repeat):
        for key, opts in SETTINGS.items():
            t0 = time.perf_counter()
            est = salsox.salso(draws, loss, seed=seed, engine="counts", **opts)
            best[key] = min(best[key], time.perf_counter() - t0)
            estimates[key] = est
    one = estimates["1 thread"]
    for key, est in estimates.items():
        if not (np.array_equal(est.labels, one.labels) and est.expected_loss == one.expected_loss):
            raise AssertionError(f"{name} {loss}: {key} gave another estimate than one thread")
    helped = max(r["threads"] for r in estimates["2 helping"].info["runs"])
    balanced = _balanced([r["seconds"] for r in one.info["runs"]])
    t1 = best["1 thread"]
    row = [name, loss, t1, t1 / best["2 alone"], t1 / best["2 helping"], balanced, helped]
    return row, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--losses", nargs="+", default=list(LOSSES), choices=LOSSES)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    rows = []
    for name in args.datasets:
        draws = salsox.Draws(load_draws(name))
        for loss in args.losses:
            row, _ = _row(name, draws, loss, args.repeat, args.seed)
            rows.append(row)
            print(f"  {name} {loss}: done", flush=True)
    print()
    print_table(["dataset", "loss", "1 thread (s)", "2 alone", "2 helping", "balanced", "helped run threads"], rows)
    ratios = [r[4] for r in rows]
    print(f"\n2 helping over 1: min {min(ratios):.3f}x, geometric mean {np.exp(np.mean(np.log(ratios))):.3f}x")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
