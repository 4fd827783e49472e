"""Slots as SIMD lanes (issue 15): count-table searches with and without them, on the shared draws.

On the AVX2 path NVI's and NID's scores take up to 32 slots as lanes (``entropy_scorer.hpp``).
The searches are the same bit for bit either way (tests/test_engine_simd.py), which this script
checks again on the full draws; ``SALSOX_CELL_LANES=off`` turns the lanes off, which is how it
times both.

For every dataset and row of ``r_salso.csv`` it times the default 16-run search on one thread
(wall seconds), with and without the lanes in turn, ``--repeat`` times, keeping the fastest of
each, and prints the ratio off/on (above 1: the lanes are faster) and the estimate's clusters.

    python benchmarks/bench_cell_lanes.py                       # NVI, NID everywhere
    python benchmarks/bench_cell_lanes.py --datasets iris --losses NVI --repeat 5
"""

from __future__ import annotations

from typing import List, Optional

from _common import engine_setting_main

LOSSES = ("NVI", "NID")  # row names of r_salso.csv whose scores take lanes


def main(argv: Optional[List[str]] = None) -> None:
    engine_setting_main(__doc__, "SALSOX_CELL_LANES", LOSSES, "the lanes", argv)


if __name__ == "__main__":
    main()
