"""Calibration of salsox.diagnose's verdict (issue 50): how often it says what, on chains whose
truth is known. The figures of docs/diagnostics.md ("How often the verdict is wrong") come from
this script.

Scenarios (each over --seeds seeds unless said):

- ``iid``: the bundled example's 500 draws (one posterior, a DP mixture's Gibbs sampler)
  shuffled and split into 4 chains of 125: independent draws of one posterior.
- ``autocorrelated``: the package's DP sampler on the bundled example's data, 4 chains of
  --long draws each (burn-in 100 sweeps, no thinning) from seeds of their own: converged,
  autocorrelated chains.
- ``lazy``: 4 chains of --long draws of a lazy independence sampler on the bundled example's
  500 draws: each step keeps the previous draw with probability --stay, else takes one of the
  500 at random. Converged from the first draw (it starts from one of them), and as
  autocorrelated as --stay makes it (0.9: about 1 effective draw in 19, bulk ESS near 850).
- ``stuck``: 4 chains that never leave one partition (the same one: 3 partitions tried; then
  each chain on a partition of its own).
- ``shift``: galaxy draws (shared/data), 4 consecutive stretches of 500 draws from a random
  offset, with --glue items (drawn at random) glued into a cluster of their own in every draw
  of chain 2 (a subtle mode shift), and the same stretches without it (the control).
- ``gap``: ex1 draws (shared/data), 4 consecutive stretches of 1,000 from a random offset:
  the gap and the expected distances from the default gap_draws against every pair of draws
  (gap_draws=1000). Errors relative to the largest within-chain expected distance.

Usage: python benchmarks/bench_diagnose_calibration.py [--scenarios iid autocorrelated lazy stuck shift gap]
       [--seeds 30] [--long 4000] [--stay 0.9] [--glue 5] [--jobs N]
"""

from __future__ import annotations

import argparse
import collections
import platform
import time
import warnings
from typing import Any, Dict, List

import numpy as np

import salsox
from _common import load_draws, print_table
from salsox.datasets import example_draws, sample_dp_mixture
from salsox.diagnostics._arviz import arviz


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _summary(diags: List[Any]) -> Dict[str, Any]:
    status = collections.Counter(d.status for d in diags)
    # "R-hat > 1.01": the rule before the calibration (any trace above the fixed threshold).
    rhat = [float(np.nanmax(d.rhat)) if (~np.isnan(d.rhat)).any() else float("nan") for d in diags]
    ess = [d.reference_ess[0] for d in diags]
    return {
        "runs": len(diags),
        "converged": status["converged"],
        "too few draws": status["too few draws"],
        "not converged": status["not converged"],
        "cannot assess": status["cannot assess"],
        "R-hat > 1.01": sum(bool(np.any(d.rhat > d.rhat_threshold)) for d in diags),
        "R-hat flag": sum(bool(d.flagged_rhat) for d in diags),
        "gap p < alpha": sum(d.gap_flagged for d in diags),
        "ESS flag": sum(bool(d.flagged_ess) for d in diags),
        "largest R-hat": f"{min(rhat):.3f}-{max(rhat):.3f}",
        "R-hat limit": f"{min(d.rhat_limit for d in diags):.3f}-{max(d.rhat_limit for d in diags):.3f}",
        "gap p": f"{min(d.gap_pvalue for d in diags):.3g}-{max(d.gap_pvalue for d in diags):.3g}",
        "bulk ESS (median)": f"{min(ess):.0f}-{max(ess):.0f}",
    }


COLUMNS = ["scenario", "runs", "converged", "too few draws", "not converged", "cannot assess", "R-hat > 1.01",
           "R-hat flag",
           "gap p < alpha", "ESS flag", "largest R-hat", "R-hat limit", "gap p", "bulk ESS (median)"]


def iid(seeds: int, jobs: Any) -> List[Any]:
    draws = np.asarray(example_draws().draws)
    out = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        chains = draws[rng.permutation(len(draws))].reshape(4, 125, draws.shape[1])
        out.append(salsox.diagnose(chains, seed=seed, n_jobs=jobs))
    return out


def autocorrelated(seeds: int, n_draws: int, jobs: Any) -> List[Any]:
    data = np.asarray(example_draws().data)
    out = []
    for seed in range(seeds):
        chains = np.stack([sample_dp_mixture(data, n_draws=n_draws, burn_in=100, seed=1000 * seed + k)
                           for k in range(4)])
        out.append(salsox.diagnose(chains, seed=seed, n_jobs=jobs))
    return out


def lazy(seeds: int, n_draws: int, stay: float, jobs: Any) -> List[Any]:
    pool = np.asarray(example_draws().draws)
    out = []
    for seed in range(seeds):
        rng = np.random.default_rng(10_000 + seed)
        fresh = rng.integers(0, len(pool), size=(4, n_draws))
        moves = rng.random((4, n_draws)) >= stay
        moves[:, 0] = True
        # Each step's draw: the last fresh pick at or before it.
        last = np.maximum.accumulate(np.where(moves, np.arange(n_draws), 0), axis=1)
        picks = np.take_along_axis(fresh, last, axis=1)
        out.append(salsox.diagnose(pool[picks], seed=seed, n_jobs=jobs))
    return out


def stuck(jobs: Any) -> List[List[Any]]:
    n = 100
    rng = np.random.default_rng(0)
    partitions = [np.asarray(example_draws().true_labels), np.zeros(n, int), rng.integers(0, 6, n)]
    same = [salsox.diagnose(np.broadcast_to(p, (4, 200, n)).copy(), seed=1, n_jobs=jobs) for p in partitions]
    apart = np.stack([np.broadcast_to(rng.integers(0, 4, n), (200, n)) for _ in range(4)])
    return [same, [salsox.diagnose(apart, seed=1, n_jobs=jobs)]]


def shift(seeds: int, glue: int, jobs: Any) -> List[List[Any]]:
    galaxy = load_draws("galaxy")
    control, shifted = [], []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        start = int(rng.integers(0, galaxy.shape[0] - 2000 + 1))
        chains = galaxy[start : start + 2000].reshape(4, 500, galaxy.shape[1]).astype(np.int64)
        control.append(salsox.diagnose(chains, seed=seed, n_jobs=jobs))
        items = rng.choice(galaxy.shape[1], size=glue, replace=False)
        glued = chains.copy()
        glued[2][:, items] = glued[2].max() + 1
        shifted.append(salsox.diagnose(glued, seed=seed, n_jobs=jobs))
    return [control, shifted]


def gap_accuracy(seeds: int, jobs: Any) -> List[List[str]]:
    ex1 = load_draws("ex1")
    rows = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        start = int(rng.integers(0, ex1.shape[0] - 4000 + 1))
        chains = ex1[start : start + 4000].reshape(4, 1000, ex1.shape[1]).astype(np.int64)
        t0 = time.perf_counter()
        sub = salsox.diagnose(chains, seed=seed, n_jobs=jobs, n_runs=1)
        t1 = time.perf_counter()
        exact = salsox.diagnose(chains, seed=seed, n_jobs=jobs, n_runs=1, gap_draws=1000)
        t2 = time.perf_counter()
        scale = float(np.diag(exact.posterior_distance).max())
        dg = float(np.abs(sub.gap - exact.gap).max())
        dp = float(np.abs(sub.posterior_distance / exact.posterior_distance - 1).max())
        rows.append([
            str(seed), str(start), str(sub.gap_draws), f"{exact.gap.max():.4f}", f"{sub.gap.max():.4f}",
            f"{dg / scale:.2%}", f"{dp:.2%}", f"{exact.gap_pvalue:.3g}", f"{sub.gap_pvalue:.3g}",
            f"{sub.info['stage_seconds']['gap']:.2f}", f"{exact.info['stage_seconds']['gap']:.2f}",
            f"{t1 - t0:.1f}/{t2 - t1:.1f}",
        ])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    names = ["iid", "autocorrelated", "lazy", "stuck", "shift", "gap"]
    parser.add_argument("--scenarios", nargs="+", default=names, choices=names)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--shift-seeds", type=int, default=10)
    parser.add_argument("--gap-seeds", type=int, default=5)
    parser.add_argument("--long", type=int, default=4000, help="draws per chain of the autocorrelated chains")
    parser.add_argument("--stay", type=float, default=0.9, help="the lazy sampler's probability of staying")
    parser.add_argument("--glue", type=int, default=5, help="items glued together in the shifted chain")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore", salsox.SalsoxWarning)
    arviz()
    print(f"{_cpu()}; n_jobs={args.jobs or 'all'}; salsox.diagnose defaults (alpha=0.01, 999 relabellings, "
          "gap_draws=250, 5 references a chain)")
    rows = []
    started = time.perf_counter()
    if "iid" in args.scenarios:
        rows.append({"scenario": "iid 4 x 125 (example)", **_summary(iid(args.seeds, args.jobs))})
    if "autocorrelated" in args.scenarios:
        rows.append({"scenario": f"DP sampler 4 x {args.long}",
                     **_summary(autocorrelated(args.seeds, args.long, args.jobs))})
    if "lazy" in args.scenarios:
        rows.append({"scenario": f"lazy {args.stay:g}, 4 x {args.long}",
                     **_summary(lazy(args.seeds, args.long, args.stay, args.jobs))})
    if "stuck" in args.scenarios:
        same, apart = stuck(args.jobs)
        rows.append({"scenario": "stuck, same partition", **_summary(same)})
        rows.append({"scenario": "stuck, 4 partitions", **_summary(apart)})
    if "shift" in args.scenarios:
        control, shifted = shift(args.shift_seeds, args.glue, args.jobs)
        rows.append({"scenario": "galaxy 4 x 500", **_summary(control)})
        rows.append({"scenario": f"galaxy 4 x 500, {args.glue} glued", **_summary(shifted)})
    if rows:
        print_table(COLUMNS, [[str(r[c]) for c in COLUMNS] for r in rows])
    if "gap" in args.scenarios:
        print("\nThe gap from gap_draws=250 evenly spaced draws a chain against every pair (ex1, 4 x 1,000):")
        print_table(
            ["seed", "offset", "draws", "largest G exact", "largest G", "max |dG| / P_ii", "max |dP| / P",
             "p exact", "p", "gap s", "exact gap s", "diagnose s"],
            gap_accuracy(args.gap_seeds, args.jobs),
        )
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
