"""Cell sums cache (issue 15): count-table searches with and without it, on the shared draws.

VI, the tabulated losses and ID score a slot from its cell sum, which reads only that slot's
column of the item's rows; the engine keeps each item's sums per slot and recomputes only those
whose column changed (``count_table_cache.hpp``). The searches are the same bit for bit either
way (tests/test_cell_sums_cache.py), which this script checks again on the full draws;
``SALSOX_CELL_CACHE=off`` turns the cache off, which is how it times both.

For every dataset and row of ``r_salso.csv`` it times the default 16-run search on one thread
(wall seconds), with and without the cache in turn, ``--repeat`` times, keeping the fastest of
each, and prints the ratio off/on (above 1: the cache is faster) and the estimate's clusters.

    python benchmarks/bench_cell_cache.py                       # VI, VI(a=2/3), ID on every dataset
    python benchmarks/bench_cell_cache.py --datasets iris --losses VI --repeat 5
"""

from __future__ import annotations

import argparse
import functools
import os
from typing import Any, List

import salsox
from _common import DATASETS, best_times, load_draws, loss_of, print_table, reference_rows, restored_env

LOSSES = ("VI", "VI_a2_3", "ID")  # row names of r_salso.csv whose losses score by cell sums


def _search(draws: salsox.Draws, loss: Any, setting: str) -> salsox.Estimate:
    os.environ["SALSOX_CELL_CACHE"] = setting
    return salsox.salso(draws, loss, n_runs=16, n_jobs=1, seed=0)


def main(argv: List[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--losses", nargs="*", default=list(LOSSES), choices=LOSSES)
    parser.add_argument("--repeat", type=int, default=3, help="keep the fastest of this many calls per setting")
    args = parser.parse_args(argv)
    table = []
    with restored_env("SALSOX_CELL_CACHE"):
        for ref in reference_rows():
            if ref["dataset"] not in args.datasets or ref["loss"] not in args.losses:
                continue
            draws, loss = salsox.Draws(load_draws(ref["dataset"])), loss_of(ref)
            searches = [functools.partial(_search, draws, loss, setting) for setting in ("off", "auto")]
            (t_off, off), (t_on, on) = best_times(searches, args.repeat)
            if list(off.labels) != list(on.labels) or off.expected_loss != on.expected_loss:
                raise SystemExit(f"{ref['dataset']} {ref['loss']}: the estimates differ with and without the cache")
            table.append([ref["dataset"], ref["r_call"], t_off, t_on, t_off / t_on, on.n_clusters])
            print(f"{ref['dataset']:7} {ref['r_call']:10} off {t_off:.3f} s  on {t_on:.3f} s  "
                  f"ratio {t_off / t_on:.2f}", flush=True)
    print()
    print_table(["dataset", "loss (R call)", "off (s)", "on (s)", "off/on", "clusters"], table)


if __name__ == "__main__":
    main()
