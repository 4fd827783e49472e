"""The Dask path against the local one: same estimate, and what the cluster costs.

Starts a LocalCluster of 2 worker processes with 1 thread each (``pip install
"salsox[dask]"``) and runs the same search locally with ``n_jobs=2`` and on the cluster
(``client=``), for a few datasets and losses. Prints both times (fastest of ``--repeat``),
the overhead ratio dask / local, and whether the estimates are identical (they must be: run r
uses the random stream (seed, r) on either path). The first cluster call, which ships the
draws to the workers, is timed separately as "first call".

Usage: python benchmarks/bench_dask.py [--datasets galaxy ex1] [--losses VI binder]
       [--runs 16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import salsox
from _common import DATASETS, best_time, load_draws, print_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="*", default=["iris", "galaxy", "ex1"], choices=DATASETS)
    parser.add_argument("--losses", nargs="*", default=["VI", "binder", "NID"])
    parser.add_argument("--runs", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="timings keep the fastest of this many")
    args = parser.parse_args()
    try:
        import distributed
    except ImportError:
        raise SystemExit('bench_dask needs dask.distributed: pip install "salsox[dask]"') from None

    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    )
    rows = []
    with distributed.Client(cluster) as client:
        client.run(lambda: __import__("salsox"))  # import the package on every worker first
        for name in args.datasets:
            draws = salsox.Draws(load_draws(name))
            for loss in args.losses:
                opts = dict(n_runs=args.runs, seed=args.seed)
                t_local, local = best_time(
                    lambda d=draws, lo=loss, o=opts: salsox.salso(d, lo, n_jobs=2, **o), args.repeat
                )
                t0 = time.perf_counter()
                salsox.salso(draws, loss, n_jobs=1, client=client, **opts)
                t_first = time.perf_counter() - t0
                t_dask, remote = best_time(
                    lambda d=draws, lo=loss, o=opts: salsox.salso(d, lo, n_jobs=1, client=client, **o), args.repeat
                )
                same = bool(np.array_equal(local.labels, remote.labels)) and local.expected_loss == remote.expected_loss
                rows.append([name, loss, args.runs, t_local, t_first, t_dask, t_dask / t_local, t_dask - t_local,
                             "yes" if same else "NO"])
    cluster.close()
    print(f"{args.runs} runs, seed {args.seed}: local n_jobs=2 against a LocalCluster of 2 worker processes "
          "x 1 thread (each task runs a batch of runs with n_jobs=1)")
    print_table(["dataset", "loss", "runs", "local s", "dask first call s", "dask s", "dask / local",
                 "overhead s", "identical"], rows)
    if any(r[-1] != "yes" for r in rows):
        raise SystemExit("the Dask estimate differs from the local one")


if __name__ == "__main__":
    main()
