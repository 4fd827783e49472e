"""salso called from several threads at once (issue 39): four Python threads each calling
salso, salso in a Dask worker with two threads, and salso in a joblib pool, each against the
same calls made one after another.

Every call uses the default n_jobs (the usable cores), so running them at once asks for more
threads than cores; the engine's helpers then sleep rather than compete with the runs (see
Crew in cpp/include/salsox/threads.hpp). The concurrent and the sequential way are timed in
turn, ``--repeat`` times, keeping the fastest of each. Every call must give the same estimate
either way (checked). Target: every ratio at most 1.3.

    python benchmarks/bench_nested.py
    python benchmarks/bench_nested.py --repeat 5 --H 2000 --n 500
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import platform
import warnings
from typing import Any, Callable, List

import numpy as np

import salsox
from _common import best_times, print_table
from salsox._cpus import cpu_info


def _draws(H: int, n: int, k: int, flip: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, size=n)
    out = np.tile(truth, (H, 1))
    mask = rng.random((H, n)) < flip
    out[mask] = rng.integers(0, k, size=int(mask.sum()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--H", type=int, default=1000)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--calls", type=int, default=4)
    args = parser.parse_args()
    warnings.simplefilter("ignore", salsox.SalsoxWarning)
    datasets = [salsox.Draws(_draws(args.H, args.n, 6, 0.3, seed)) for seed in range(args.calls)]

    def one(i: int) -> Any:
        est = salsox.salso(datasets[i], "VI", n_runs=16, seed=i)
        return tuple(est.labels), est.expected_loss

    def sequential() -> List[Any]:
        return [one(i) for i in range(args.calls)]

    def python_threads() -> List[Any]:
        with concurrent.futures.ThreadPoolExecutor(args.calls) as pool:
            return list(pool.map(one, range(args.calls)))

    def joblib_pool() -> List[Any]:
        from joblib import Parallel, delayed

        return list(Parallel(n_jobs=args.calls, prefer="threads")(delayed(one)(i) for i in range(args.calls)))

    rows: List[List[object]] = []
    cases: List[tuple] = [("4 Python threads", python_threads), ("joblib pool (threads)", joblib_pool)]
    client = None
    try:
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
        client = Client(cluster)

        def dask_worker() -> List[Any]:
            assert client is not None
            return client.gather([client.submit(one, i, pure=False) for i in range(args.calls)])

        cases.append(("Dask worker, 2 threads", dask_worker))
    except ImportError:
        print("dask.distributed not installed: no Dask row")
    print(f"CPU: {platform.processor() or platform.machine()}, usable cores {cpu_info().default}, "
          f"load average {os.getloadavg()[0]:.1f}")
    try:
        for name, fn in cases:
            calls: List[Callable[[], object]] = [sequential, fn]
            (t_seq, r_seq), (t_conc, r_conc) = best_times(calls, repeat=args.repeat)
            if r_seq != r_conc:
                raise SystemExit(f"{name}: another estimate than the sequential calls")
            rows.append([name, args.calls, t_seq, t_conc, t_conc / t_seq])
    finally:
        if client is not None:
            client.close()
    print_table(["setting", "calls", "one after another s", "at once s", "at once / one after another"], rows)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
