"""Cell sums cache (issue 15): count-table searches with and without it, on the shared draws.

VI, the tabulated losses and ID score a slot from its cell sum, which reads only that slot's
column of the item's rows; the engine keeps each item's sums per slot and recomputes only those
whose column changed (``cell_sums_cache.hpp``). The searches are the same bit for bit either
way (tests/test_cell_sums_cache.py), which this script checks again on the full draws;
``SALSOX_CELL_CACHE=off`` turns the cache off, which is how it times both.

For every dataset and row of ``r_salso.csv`` it times the default 16-run search on one thread
(wall seconds), with and without the cache in turn, ``--repeat`` times, keeping the fastest of
each, and prints the ratio off/on (above 1: the cache is faster) and the estimate's clusters.

    python benchmarks/bench_cell_cache.py                       # VI, VI(a=2/3), ID on every dataset
    python benchmarks/bench_cell_cache.py --datasets iris --losses VI --repeat 5
"""

from __future__ import annotations

from typing import List, Optional

from _common import engine_setting_main

LOSSES = ("VI", "VI_a2_3", "ID")  # row names of r_salso.csv whose losses score by cell sums


def main(argv: Optional[List[str]] = None) -> None:
    engine_setting_main(__doc__, "SALSOX_CELL_CACHE", LOSSES, "the cache", argv)


if __name__ == "__main__":
    main()
