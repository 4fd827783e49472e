"""Two builds of salsox against each other, interleaved in one run (issue 38: "same speed").

Each build is a directory holding a ``salsox`` package with its compiled ``_core`` (e.g. a copy
of the package with the .so of ``main`` beside one with the new .so). The script starts one
worker process per build, which imports that build and loads the shared draws once, and then
asks the workers in turn, row by row and ``--repeat`` times (old, new, old, new, ...), for the
default 16-run search of each row of the speed table of docs/comparison.md (one thread, seed
0). It keeps each build's fastest CPU time per row (the search runs on one thread; on a shared
machine the CPU time moves far less with the load than the wall time), checks that both builds
give the same estimate and expected loss to the bit, and prints the ratio new/old per row,
their geometric mean and the slowest row.

    python benchmarks/bench_builds.py OLD_DIR NEW_DIR                    # all 32 rows
    python benchmarks/bench_builds.py OLD_DIR NEW_DIR --datasets iris --repeat 5
    python benchmarks/bench_builds.py OLD_DIR NEW_DIR --datasets iris galaxy --losses NVI NID omARI
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from _common import DATASETS, print_table, reference_rows

HERE = Path(__file__).resolve().parent


def _worker() -> None:
    """Serves searches: reads a row index per line, answers a JSON line."""
    import time

    import salsox
    from _common import load_draws, loss_of

    # An editable install of salsox in this interpreter takes precedence over PYTHONPATH: the
    # worker would time that build instead of the one asked for.
    root = Path(os.environ["SALSOX_BENCH_BUILD"]).resolve()
    for module in (salsox, salsox._core):
        if root not in Path(module.__file__).resolve().parents:
            raise SystemExit(f"bench_builds: {module.__name__} came from {module.__file__}, not from {root}; "
                             "run this script with an interpreter without salsox installed")

    rows = reference_rows()
    draws: Dict[str, Any] = {}
    for line in sys.stdin:
        ref = rows[int(line)]
        if ref["dataset"] not in draws:
            draws[ref["dataset"]] = salsox.Draws(load_draws(ref["dataset"]))
        loss = loss_of(ref)
        t0 = time.process_time()
        est = salsox.salso(draws[ref["dataset"]], loss, n_runs=16, n_jobs=1, seed=0)
        cpu = time.process_time() - t0
        print(json.dumps({"cpu": cpu, "loss": float(est.expected_loss).hex(), "labels": est.labels.tolist()}),
              flush=True)


class Build:
    def __init__(self, root: Path) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(HERE)]), SALSOX_BENCH_BUILD=str(root))
        # (Builds from before issue 38 also read SALSOX_TABLE_ORDER.)
        for name in ("SALSOX_SIMD", "SALSOX_CELL_CACHE", "SALSOX_CELL_LANES", "SALSOX_TABLE_ORDER"):
            env.pop(name, None)
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__)), "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env, cwd=str(HERE))

    def run(self, row: int) -> Dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{row}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("a worker stopped")
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="directory holding the old build's salsox package")
    parser.add_argument("new", type=Path, help="directory holding the new build's salsox package")
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--losses", nargs="*", help="only these rows (the loss column of r_salso.csv, e.g. NVI)")
    parser.add_argument("--repeat", type=int, default=3, help="keep the fastest of this many calls per build")
    args = parser.parse_args(argv)
    refs = [(i, r) for i, r in enumerate(reference_rows())
            if r["dataset"] in args.datasets and (not args.losses or r["loss"] in args.losses)]
    if not refs:
        known = sorted({r["loss"] for r in reference_rows()})
        parser.error(f"--losses {args.losses} selects no row; the loss column holds {known}")
    builds = [Build(args.old), Build(args.new)]
    best: Dict[int, List[float]] = {i: [math.inf, math.inf] for i, _ in refs}
    print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
    try:
        for _ in range(args.repeat):
            for i, ref in refs:
                out = [b.run(i) for b in builds]
                if out[0]["loss"] != out[1]["loss"] or out[0]["labels"] != out[1]["labels"]:
                    raise SystemExit(f"{ref['dataset']} {ref['r_call']}: the builds' estimates differ")
                for j in (0, 1):
                    best[i][j] = min(best[i][j], out[j]["cpu"])
    finally:
        for b in builds:
            b.close()
    table = [[r["dataset"], r["r_call"], best[i][0], best[i][1], best[i][1] / best[i][0]] for i, r in refs]
    ratios = [row[4] for row in table]
    print(f"load after: {os.getloadavg()[0]:.2f}\n")
    print_table(["dataset", "loss (R call)", "old (CPU s)", "new (CPU s)", "new/old"], table)
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    worst = max(range(len(table)), key=lambda k: ratios[k])
    print(f"\ngeometric mean new/old {geo:.3f}; slowest row {table[worst][0]} {table[worst][1]} {ratios[worst]:.3f}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        _worker()
    else:
        main()
