"""Count-table row order (issue 15): rows by draw against rows by label, on the shared draws.

A count table has one row per draw cluster. By draw, a draw's rows sit together; by label, the
rows of one draw label across all draws sit together, so that when consecutive draws put an item
under the same label (draws are relabelled in order of first appearance, so they often do) the
rows a score reads are neighbours in memory. Results are the same bit for bit (tested); only the
memory traffic differs. The engine picks the order by table size (``_core.count_table_row_order``);
``SALSOX_TABLE_ORDER=draw|label`` forces one, which is how this script times both.

For every dataset and loss it times the default 16-run search on one thread, CPU time of the
process, the two orders alternated call by call ``--repeat`` times, keeping the fastest of each;
prints the ratio draw/label (above 1: by label is faster), the order the engine picks, and the
load average before and after.

    python benchmarks/bench_layout.py                         # every dataset, five losses
    python benchmarks/bench_layout.py --datasets ex1 --losses VI NID --repeat 5
"""

from __future__ import annotations

import argparse
import os
import time
from typing import List

import salsox
from _common import DATASETS, load_draws, print_table, restored_env
from salsox import _core

# Binder is left out: salso runs it on co-clustering counts by default, not on count tables.
LOSSES = ("VI", "omARI", "NVI", "ID", "NID")


def _cpu_time(draws: salsox.Draws, loss: str, order: str, seed: int) -> float:
    os.environ["SALSOX_TABLE_ORDER"] = order
    start = time.process_time()
    salsox.salso(draws, loss, n_runs=16, n_jobs=1, seed=seed)
    return time.process_time() - start


def main(argv: List[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--losses", nargs="*", default=list(LOSSES))
    parser.add_argument("--repeat", type=int, default=3, help="keep the fastest of this many calls per order")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    rows = []
    with restored_env("SALSOX_TABLE_ORDER"):
        for name in args.datasets:
            x = load_draws(name)
            draws = salsox.Draws(x)
            for loss in args.losses:
                os.environ.pop("SALSOX_TABLE_ORDER", None)
                count_loss = salsox.losses.get_loss(loss)._count_loss(draws.n_items)
                picked = _core.count_table_row_order(draws._core, count_loss)
                best = {"draw": float("inf"), "label": float("inf")}
                for _ in range(args.repeat):
                    for order in best:
                        best[order] = min(best[order], _cpu_time(draws, loss, order, args.seed))
                rows.append([name, loss, best["draw"], best["label"], best["draw"] / best["label"], picked])
                print(f"{name:7} {loss:6} draw {best['draw']:.3f} s  label {best['label']:.3f} s  "
                      f"ratio {best['draw'] / best['label']:.2f}  picked {picked}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    print_table(["dataset", "loss", "by draw (s)", "by label (s)", "draw/label", "engine picks"], rows)


if __name__ == "__main__":
    main()
