"""Threads beyond the cores (issue 39): the wall of n_jobs = 4x, 16x and 128x the usable cores
over n_jobs = the cores, for every route.

Each route's call is timed at every thread count in turn (cores, 4x, 16x, 128x, cores, ...),
``--repeat`` times (more for calls under a second), keeping the fastest of each, so that a
shared machine's load hits them alike. Every thread count must give the same estimate as
n_jobs = the cores (checked: the script fails otherwise). Target: every ratio at most 1.3.

    python benchmarks/bench_oversubscription.py
    python benchmarks/bench_oversubscription.py --routes counts chips --repeat 5
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from typing import Any, Callable, Dict, List

import numpy as np

import salsox
from _common import best_times, print_table
from salsox._cpus import cpu_info


def _draws(H: int, n: int, k: int, flip: float, seed: int = 0) -> np.ndarray:
    """Draws around one partition into k clusters, each label replaced with probability flip."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, size=n)
    out = np.tile(truth, (H, 1))
    mask = rng.random((H, n)) < flip
    out[mask] = rng.integers(0, k, size=int(mask.sum()))
    return out


def _key(x: Any) -> Any:
    """What must be identical across thread counts."""
    if isinstance(x, salsox.Estimate):
        return (tuple(x.labels), x.expected_loss)
    if isinstance(x, salsox.ChipsResult):
        done = x.completed
        return (tuple(np.ravel(x.labels)), None if done is None else (tuple(done.labels), done.expected_loss))
    if isinstance(x, salsox.WasabiResult):
        return (x.particles.tobytes(), x.distance)
    return np.asarray(x).tobytes()


def routes(H: int, n: int) -> Dict[str, Callable[[int], Any]]:
    d = salsox.Draws(_draws(H, n, 6, 0.25))
    small = salsox.Draws(_draws(min(H, 500), min(n, 100), 4, 0.2, seed=1))
    common = dict(n_runs=16, seed=1)
    # Calls of a few milliseconds time the machine's load, not the threads: the short routes get
    # problems of 100 ms or more (one estimate of 60 clusters against 10 times the draws of 10
    # times the items, the PSM and the searches on a PSM or co-clustering counts on 5 times the
    # items, WASABI on 1,000 draws).
    rng = np.random.default_rng(3)
    wide = salsox.Draws(rng.integers(0, 6, size=(10 * H, 10 * n), dtype=np.int8))
    one = np.arange(10 * n) % 60
    psm_draws = salsox.Draws(_draws(H, 5 * n, 6, 0.25, seed=4))
    mid = salsox.Draws(_draws(min(H, 1000), n, 4, 0.2, seed=1))
    return {
        "counts (VI)": lambda j: salsox.salso(d, "VI", n_jobs=j, **common),
        "co-clustering (binder)": lambda j: salsox.salso(psm_draws, "binder", engine="coclustering", n_jobs=j,
                                                         **common),
        "PSM (VI.lb)": lambda j: salsox.salso(psm_draws, "VI.lb", n_jobs=j, **common),
        "count sums (jaccard)": lambda j: salsox.salso(d, "jaccard", n_jobs=j, **common),
        "callbacks (omari-numpy)": lambda j: salsox.salso(small, "omari-numpy", n_jobs=j, n_runs=4, seed=1),
        "partition_loss (1 estimate)": lambda j: salsox.partition_loss(one, wide, "VI", n_jobs=j),
        "psm": lambda j: salsox.psm(psm_draws, n_jobs=j),
        "chips (+ completion)": lambda j: salsox.chips(d, 0.5, n_runs=16, n_jobs=j, seed=1),
        "wasabi": lambda j: salsox.wasabi(mid, 2, n_starts=4, n_jobs=j, seed=1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--H", type=int, default=2000)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--factors", type=int, nargs="+", default=[4, 16, 128])
    parser.add_argument("--routes", nargs="+", default=None, help="route names (prefixes) to run")
    args = parser.parse_args()
    warnings.simplefilter("ignore", salsox.SalsoxWarning)
    cores = cpu_info().default
    print(f"CPU: {platform.processor() or platform.machine()}, usable cores {cores}, "
          f"load average {os.getloadavg()[0]:.1f}")
    table: List[List[object]] = []
    counts = [cores] + [f * cores for f in args.factors]
    for name, call in routes(args.H, args.n).items():
        if args.routes and not any(name.startswith(r) for r in args.routes):
            continue
        # Short calls get more turns (about a second each), their best being noisier on a shared machine.
        t0 = time.perf_counter()
        call(cores)
        repeat = max(args.repeat, min(50, int(1.0 / max(1e-4, time.perf_counter() - t0))))
        timed = best_times([lambda j=j, call=call: call(j) for j in counts], repeat=repeat)
        base_t, base = timed[0]
        for j, (_, result) in zip(counts[1:], timed[1:]):
            if _key(result) != _key(base):
                raise SystemExit(f"{name}: n_jobs={j} gave another result than n_jobs={cores}")
        table.append([name, base_t] + [t / base_t for t, _ in timed[1:]])
    print_table(["route", f"seconds at {cores}"] + [f"{f}x cores / 1x" for f in args.factors], table)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
