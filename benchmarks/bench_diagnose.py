"""salsox.diagnose on C chains x N draws x n items, against what the issue allows: the time of
one 16-run salso on the pooled draws plus the per-chain estimates (16 runs each).

Each chain is a block of synthetic draws around one k-cluster truth (benchmarks/synthetic.py),
so the chains are of one posterior. Timed in one process, in turn: the pooled salso, the C
per-chain salso calls (the seeds diagnose uses), then diagnose itself, with its own stage times.
Prints the ratio diagnose / (pooled + per-chain) (at most 1 is the issue's requirement) and
the ratio of diagnose's other stages (halves, mapping, ArviZ, loss traces) to the pooled salso.

Wall times, fastest of --repeat calls, all threads unless --jobs.

Usage: python benchmarks/bench_diagnose.py [--chains 4] [--draws 5000] [--n 1000] [--repeat 1] [--jobs N]
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings


import salsox
from _common import print_table
from salsox.diagnostics._arviz import arviz
from salsox.diagnostics.api import _seed_of
from synthetic import synthetic_draws


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _best(fn, repeat: int):
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--draws", type=int, default=5000, help="draws per chain")
    parser.add_argument("--n", type=int, default=1000, help="items")
    parser.add_argument("--k", type=int, default=10, help="clusters of the synthetic truth")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    warnings.simplefilter("ignore", salsox.SalsoxWarning)
    start = time.perf_counter()
    arviz()  # imported once per process (seconds): not part of any call's time
    t_import = time.perf_counter() - start

    pooled = synthetic_draws(args.n, args.chains * args.draws, k=args.k, seed=args.seed)
    chains = pooled.reshape(args.chains, args.draws, args.n)
    draws = [salsox.Draws(c) for c in chains]
    all_draws = salsox.Draws(pooled)
    t_pooled, _ = _best(lambda: salso16(all_draws, args.seed, args.jobs), args.repeat)
    t_chains, _ = _best(
        lambda: [
            salsox.salso(d, "VI", n_runs=16, seed=_seed_of(args.seed, 0, k), n_jobs=args.jobs)
            for k, d in enumerate(draws)
        ],
        args.repeat,
    )
    t_diag, diag = _best(lambda: salsox.diagnose(chains, seed=args.seed, n_jobs=args.jobs), args.repeat)
    stages = diag.info["stage_seconds"]
    other = t_diag - stages["chain_estimates"]
    print(f"{args.chains} chains x {args.draws} draws x {args.n} items (k={args.k}); {_cpu()}; "
          f"n_jobs={args.jobs or 'all'} ({salsox._core.max_threads()} cores)")
    print_table(
        ["step", "seconds", "/ pooled salso"],
        [
            ["salso, 16 runs, pooled draws", f"{t_pooled:.2f}", "1.00"],
            ["salso, 16 runs, each chain (sum)", f"{t_chains:.2f}", f"{t_chains / t_pooled:.2f}"],
            ["diagnose", f"{t_diag:.2f}", f"{t_diag / t_pooled:.2f}"],
            *[[f"  {name}", f"{sec:.2f}", f"{sec / t_pooled:.2f}"] for name, sec in stages.items()],
            ["  all but the chain estimates", f"{other:.2f}", f"{other / t_pooled:.2f}"],
        ],
    )
    print(f"diagnose / (pooled salso + per-chain salso) = {t_diag / (t_pooled + t_chains):.2f}  (requirement: <= 1)")
    print(f"verdict: {diag.verdict.splitlines()[0]}")
    print(f"(importing ArviZ, once per process, took {t_import:.2f} s, not counted above)")


def salso16(draws: salsox.Draws, seed: int, jobs) -> salsox.Estimate:
    return salsox.salso(draws, "VI", n_runs=16, seed=seed, n_jobs=jobs)


if __name__ == "__main__":
    main()
