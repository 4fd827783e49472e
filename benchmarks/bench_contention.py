"""How much P busy cores slow each other down, whatever the engine's threading does (issue 15).

Each row times the one-thread 16-run search in one process alone, then in P processes at the
same moment (a barrier starts them together; each keeps its fastest of ``--repeat``). Processes
share no memory of the engine's, no locks and no thread pool, so their slowdown is the
machine's: shared cache, memory bandwidth, and the clock a chip holds with every core busy.
Set against ``bench_threads.py``'s "run seconds x" (the same slowdown for runs as threads of
one search), it tells a threading cost from a hardware one: a loss whose runs slow down as much
in processes as in threads cannot scale better by changing how the threads share work.

    python benchmarks/bench_contention.py --processes 16 --datasets ex1 --losses VI NVI
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from typing import List

import numpy as np

from _common import DATASETS, load_draws, print_table

LOSSES = ("VI", "binder", "omARI", "NVI", "NID", "ID")


def _worker(name: str, loss: str, repeat: int, barrier, results) -> None:
    import salsox

    draws = salsox.Draws(load_draws(name))
    salsox.salso(draws, loss, seed=0, n_jobs=1, engine="counts")  # warm: pages, caches, lookup tables
    best = float("inf")
    for _ in range(repeat):
        barrier.wait()
        t0 = time.perf_counter()
        salsox.salso(draws, loss, seed=0, n_jobs=1, engine="counts")
        best = min(best, time.perf_counter() - t0)
    results.put(best)


def _concurrent(name: str, loss: str, processes: int, repeat: int) -> List[float]:
    """The fastest-of-repeat wall of each of `processes` one-thread searches run at once."""
    ctx = mp.get_context("spawn")  # no fork: a forked OpenMP runtime can hang the child
    barrier, results = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(name, loss, repeat, barrier, results)) for _ in range(processes)]
    for p in procs:
        p.start()
    times = [results.get() for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise RuntimeError(f"{name} {loss}: a worker process failed (exit code {p.exitcode})")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--losses", nargs="+", default=list(LOSSES), choices=LOSSES)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    P = args.processes
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    rows = []
    for name in args.datasets:
        for loss in args.losses:
            alone = _concurrent(name, loss, 1, args.repeat)[0]
            together = _concurrent(name, loss, P, args.repeat)
            rows.append([name, loss, alone, float(np.median(together)), float(np.median(together)) / alone,
                         max(together) / alone])
            print(f"  {name} {loss}: {alone:.3f} s alone, {rows[-1][4]:.2f}x slower with {P} at once", flush=True)
    print()
    print_table(["dataset", "loss", "alone (s)", f"{P} at once, median (s)", "median slowdown",
                 "slowest slowdown"], rows)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
