"""Scale: large n and H, seconds and peak memory, each configuration in its own process.

Prints n, H, loss, runs, n_jobs, seconds, peak RSS, the compact draws' size and the budget
3 x compact + 100 MB. Usage: python benchmarks/bench_scale.py [--big] [--quick]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def one(n: int, H: int, loss: str, runs: int, jobs: int) -> None:
    sys.path.insert(0, str(HERE))
    import salsox
    from synthetic import synthetic_draws

    draws = synthetic_draws(n, H, k=20, seed=1)
    t0 = time.perf_counter()
    d = salsox.Draws(draws)
    del draws  # only the compact copy is needed from here on
    est = salsox.salso(d, loss, n_runs=runs, n_jobs=jobs, seed=0)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "peak": peak, "compact": d.nbytes,
                      "k": est.n_clusters, "loss": est.expected_loss}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--big", action="store_true", help="also n = 1,000,000, H = 200")
    parser.add_argument("--quick", action="store_true", help="n = 2,000 instead of 20,000")
    parser.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        n, H, loss, runs, jobs = args.one
        one(int(n), int(H), loss, int(runs), int(jobs))
        return
    n = 2_000 if args.quick else 20_000
    configs = [(n, 1000, loss, 16, jobs) for loss in ("VI", "binder") for jobs in (1, 2)]
    if args.big:
        configs.append((1_000_000, 200, "VI", 2, 2))
    rows = []
    for cfg in configs:
        res = subprocess.run([sys.executable, __file__, "--one", *map(str, cfg)],
                             capture_output=True, text=True, check=True)
        r = json.loads(res.stdout.strip().splitlines()[-1])
        budget = 3 * r["compact"] + 100 * 2**20
        rows.append(list(cfg) + [round(r["seconds"], 2), f"{r['peak'] / 2**20:.0f} MB",
                                 f"{r['compact'] / 2**20:.0f} MB", f"{budget / 2**20:.0f} MB",
                                 "ok" if r["peak"] <= budget else "OVER", r["k"]])
    from _common import print_table

    print_table(["n", "H", "loss", "runs", "n_jobs", "seconds", "peak RSS", "compact draws",
                 "3x+100MB", "memory", "k"], rows)


if __name__ == "__main__":
    main()
