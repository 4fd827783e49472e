"""The 16-run SALSO search on every dataset and loss of shared/reference/r_salso.csv.

Prints, per row: salsox's expected loss against R salso's best (128 runs), the number of
clusters, salsox's seconds for 16 runs at n_jobs=1 next to R's seconds for the same 16-run
search on one core, and the speed-up of n_jobs=2 over n_jobs=1 (measured in the same run).

Usage: python benchmarks/bench_search.py [--datasets iris galaxy] [--losses VI binder]
       [--seed 0] [--no-parallel]
"""

from __future__ import annotations

import argparse

import salsox
from _common import DATASETS, best_time, load_draws, loss_of, print_table, reference_rows

TARGET = 3.0  # salsox at one thread at least this many times faster than R on one core


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--losses", nargs="*", default=None, help="row names, e.g. VI binder_a4_3")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1, help="timings keep the fastest of this many")
    parser.add_argument("--no-parallel", action="store_true", help="skip the n_jobs=2 timing")
    args = parser.parse_args()

    rows, worst_quality, slowest = [], 0.0, float("inf")
    for ref in reference_rows():
        if ref["dataset"] not in args.datasets or (args.losses and ref["loss"] not in args.losses):
            continue
        draws = salsox.Draws(load_draws(ref["dataset"]))
        loss = loss_of(ref)
        t1, est = best_time(
            lambda draws=draws, loss=loss: salsox.salso(draws, loss, n_jobs=1, seed=args.seed), args.repeat
        )
        r_best, r_sec = float(ref["best_expected_loss"]), float(ref["r_seconds_16_runs"])
        rel = est.expected_loss / r_best - 1
        row = [ref["dataset"], ref["loss"], est.expected_loss, r_best, f"{100 * rel:+.3f}%",
               est.n_clusters, ref["best_n_clusters"], t1, r_sec, r_sec / t1, est.info["engine"]]
        if not args.no_parallel:
            t2, _ = best_time(
                lambda draws=draws, loss=loss: salsox.salso(draws, loss, n_jobs=2, seed=args.seed), args.repeat
            )
            row.append(t1 / t2)
        rows.append(row)
        worst_quality = max(worst_quality, rel)
        slowest = min(slowest, r_sec / t1)
    headers = ["dataset", "loss", "salsox loss", "R best", "diff", "k", "R k", "salsox s", "R s",
               "x faster", "engine"] + ([] if args.no_parallel else ["2-job speed-up"])
    print(f"16 runs, defaults, seed={args.seed}; R: best of 128 runs, 16-run time on one core")
    print_table(headers, rows)
    print(f"worst quality vs R best: {100 * worst_quality:+.3f}%   slowest speed-up vs R: {slowest:.2f}x")
    below = [f"{r[0]} {r[1]} ({r[9]:.2f}x)" for r in rows if r[9] < TARGET]
    print(f"at least {TARGET:g}x faster than R on {len(rows) - len(below)} of {len(rows)} rows", end="")
    print(f"; below: {', '.join(below)} (why: docs/comparison.md)" if below else "")


if __name__ == "__main__":
    main()
