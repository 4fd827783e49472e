"""T threads against one (default T = 2): how much idle threads helping the runs still going
(issue 15) brings to a 16-run search.

For every dataset and loss it times the default 16-run search on one thread, on T threads
with every run kept on its own thread (``inner_jobs=1``: a thread that runs out of runs waits
for the others), and on T threads with the default helping (a thread with no run left serves
the loops of the runs still going). The three settings are timed in turn, ``--repeat`` times,
keeping the fastest of each, so that a shared machine's load hits them alike; the load average
is printed before and after. Every setting must give the same estimate (checked).

The "balanced" column is the best T threads could do without helping: the run times of the
one-thread search dealt to T threads in run order, as the engine does (total / longest
thread's share). Helping can beat it; plain T threads cannot. "run seconds x" is the sum of
the runs' own seconds on T helping threads over one thread's (above 1: runs slow each other
down, through shared caches, memory or clock speed, or wait on their helpers); "longest run /
wall" is the longest of those runs over the T-thread wall (the rest is building the states,
starting threads and collecting results).

    python benchmarks/bench_threads.py                          # all rows (many minutes)
    python benchmarks/bench_threads.py --datasets ex1 --losses VI NVI --repeat 5
    python benchmarks/bench_threads.py --threads 16 --synthetic 20000 1000   # a 16-core machine
    python benchmarks/bench_threads.py --threads 16 --datasets ex1 --losses VI --per-cpu
    python benchmarks/bench_threads.py --runs 1 --datasets ex1 galaxy   # one run: helping alone
    python benchmarks/bench_threads.py --threads 16 --bound-only        # the bound, on any machine

With ``--bound-only`` only the one-thread search is timed: "balanced on T" is its bound on T
threads without helping, "longest run / mean run" how far the slowest run sets it back.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

import salsox
from _common import DATASETS, load_draws, print_table
from synthetic import synthetic_draws

LOSSES = ("VI", "binder", "omARI", "NVI", "NID", "ID")


def _settings(threads: int, runs: int = 16) -> Dict[str, Dict[str, Any]]:
    return {
        "1 thread": dict(n_jobs=1, n_runs=runs),
        f"{threads} alone": dict(n_jobs=threads, inner_jobs=1, n_runs=runs),
        f"{threads} helping": dict(n_jobs=threads, n_runs=runs),
    }


def _balanced(seconds: Sequence[float], threads: int) -> float:
    """Total run time over the longest thread's share, runs dealt in order to the first free thread."""
    busy = [0.0] * threads
    for s in seconds:
        busy[busy.index(min(busy))] += s
    return sum(seconds) / max(busy)


def _per_cpu(draws: Any, loss: str, seed: int, engine: Optional[str], runs: int) -> List[float]:
    """The one-thread search's wall with the process pinned to each CPU in turn (Linux only)."""
    cpus = sorted(os.sched_getaffinity(0))
    walls = []
    try:
        for cpu in cpus:
            os.sched_setaffinity(0, {cpu})
            t0 = time.perf_counter()
            salsox.salso(draws, loss, seed=seed, engine=engine, n_jobs=1, n_runs=runs)
            walls.append(time.perf_counter() - t0)
    finally:
        os.sched_setaffinity(0, set(cpus))
    return walls


def _row(name: str, draws: Any, loss: str, repeat: int, seed: int, threads: int,
         engine: Optional[str], per_cpu: bool = False, runs: int = 16) -> Tuple[List[Any], Dict[str, float]]:
    settings = _settings(threads, runs)
    best = {k: float("inf") for k in settings}
    estimates: Dict[str, Any] = {}
    for _ in range(repeat):
        for key, opts in settings.items():
            t0 = time.perf_counter()
            est = salsox.salso(draws, loss, seed=seed, engine=engine, **opts)
            wall = time.perf_counter() - t0
            if wall < best[key]:  # the estimate of the fastest call, for its run times
                best[key], estimates[key] = wall, est
    one = estimates["1 thread"]
    for key, est in estimates.items():
        if not (np.array_equal(est.labels, one.labels) and est.expected_loss == one.expected_loss):
            raise AssertionError(f"{name} {loss}: {key} gave another estimate than one thread")
    helped = max(r["threads"] for r in estimates[f"{threads} helping"].info["runs"])
    balanced = _balanced([r["seconds"] for r in one.info["runs"]], threads)
    t1 = best["1 thread"]
    # Where the T-thread wall goes: the runs' own seconds (a helped run counts once, however
    # many threads served it) against one thread's, and the longest run against the wall.
    many = estimates[f"{threads} helping"].info["runs"]
    work = sum(r["seconds"] for r in many) / sum(r["seconds"] for r in one.info["runs"])
    longest = max(r["seconds"] for r in many) / best[f"{threads} helping"]
    row = [name, loss, one.info["engine"], t1, t1 / best[f"{threads} alone"],
           t1 / best[f"{threads} helping"], balanced, helped, work, longest]
    if per_cpu:
        walls = _per_cpu(draws, loss, seed, engine, runs)
        median = float(np.median(walls))
        row += [min(walls), median, median / best[f"{threads} helping"]]
    return row, best


def _bound_row(name: str, draws: Any, loss: str, repeat: int, seed: int, threads: int,
               engine: Optional[str], runs: int = 16) -> List[Any]:
    """The one-thread search alone: the balanced bound on T threads and the runs' spread."""
    best, one = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        est = salsox.salso(draws, loss, seed=seed, engine=engine, n_jobs=1, n_runs=runs)
        wall = time.perf_counter() - t0
        if wall < best:
            best, one = wall, est
    seconds = [r["seconds"] for r in one.info["runs"]]
    return [name, loss, one.info["engine"], best, _balanced(seconds, threads), max(seconds) / float(np.mean(seconds))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--losses", nargs="+", default=list(LOSSES), choices=LOSSES)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="T, the threads to compare with one")
    parser.add_argument("--engine", choices=("counts", "default"), default="counts",
                        help="counts (every loss on count tables) or each loss's default engine")
    parser.add_argument("--runs", type=int, default=16,
                        help="runs per search (1: how much the idle threads speed up a single run)")
    parser.add_argument("--per-cpu", action="store_true",
                        help="also time the one-thread search pinned to each CPU in turn (Linux)")
    parser.add_argument("--bound-only", action="store_true",
                        help="time only the one-thread search and print the balanced bound on T threads "
                             "(for a T this machine lacks)")
    parser.add_argument("--synthetic", nargs=2, type=int, metavar=("N", "H"),
                        help="also N items x H draws of benchmarks/synthetic.py (k = 20)")
    args = parser.parse_args()
    if args.per_cpu and not hasattr(os, "sched_setaffinity"):
        parser.error("--per-cpu needs os.sched_setaffinity (Linux)")
    engine = None if args.engine == "default" else args.engine
    T = args.threads
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    sets = [(name, lambda name=name: load_draws(name)) for name in args.datasets]
    if args.synthetic:
        n, H = args.synthetic
        sets.append((f"synthetic {n}x{H}", lambda: synthetic_draws(n, H, k=20, seed=1)))
    rows = []
    if args.bound_only:
        for name, make in sets:
            draws = salsox.Draws(make())
            for loss in args.losses:
                rows.append(_bound_row(name, draws, loss, args.repeat, args.seed, T, engine, args.runs))
        print_table(["dataset", "loss", "engine", "1 thread (s)", f"balanced on {T}", "longest run / mean run"], rows)
        below = sum(r[4] < 0.75 * T for r in rows)
        print(f"\nbalanced on {T} below {0.75 * T:g}x (helping must shorten the longest run): {below} of {len(rows)}")
        return
    for name, make in sets:
        draws = salsox.Draws(make())
        for loss in args.losses:
            row, _ = _row(name, draws, loss, args.repeat, args.seed, T, engine, args.per_cpu, args.runs)
            rows.append(row)
            print(f"  {name} {loss}: {row[3]:.3f} s on one thread, {row[5]:.2f}x on {T}", flush=True)
    print()
    extra = ["1 thread, fastest CPU (s)", "1 thread, median CPU (s)", f"{T} helping over median CPU"]
    print_table(["dataset", "loss", "engine", "1 thread (s)", f"{T} alone", f"{T} helping", "balanced",
                 "helped run threads", "run seconds x", "longest run / wall"] + (extra if args.per_cpu else []), rows)
    ratios = [r[5] for r in rows]
    print(f"\n{T} helping over 1: min {min(ratios):.3f}x, geometric mean {np.exp(np.mean(np.log(ratios))):.3f}x")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
