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
from typing import List

from _common import DATASETS, time_engine_setting

LOSSES = ("VI", "VI_a2_3", "ID")  # row names of r_salso.csv whose losses score by cell sums


def main(argv: List[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--losses", nargs="*", default=list(LOSSES), choices=LOSSES)
    parser.add_argument("--repeat", type=int, default=3, help="keep the fastest of this many calls per setting")
    args = parser.parse_args(argv)
    time_engine_setting("SALSOX_CELL_CACHE", args.datasets, args.losses, args.repeat, "the cache")


if __name__ == "__main__":
    main()
