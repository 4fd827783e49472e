"""Peak memory of the calls that take memory_limit against their own estimate (issue 39).

Each call runs in a fresh process: its peak resident set (``VmHWM``, reset just before the
call through ``/proc/self/clear_refs``) less the resident set just before the call, over the
bytes the call's memory check counted. The inputs are built before the call and not counted.
Target: each ratio within 1.2 (the estimate may be above the peak, never far below it).

    python benchmarks/bench_memory.py
    python benchmarks/bench_memory.py --cases psm dlso
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from typing import Dict, List

from _common import print_table

CASES: Dict[str, str] = {
    "psm": """
d = salsox.Draws(draws(200, 4000, 8))
need = 8 * d.n_items ** 2
run = lambda: salsox.psm(d, n_jobs=2)
""",
    "partition_loss, 1 estimate, k=400": """
d = salsox.Draws(draws(3000, 2000, 400))
est = np.arange(2000) % 400
salsox.partition_loss(est[:1000][None, :], salsox.Draws(draws(4, 1000, 400)), "VI", n_jobs=2)  # threads started
route = salsox.VI()._route(d)
need = route.losses_bytes(1, 400, 2)
run = lambda: salsox.partition_loss(est, d, "VI", n_jobs=2)
""",
    "partition_loss, PSM route from draws": """
d = salsox.Draws(draws(200, 4000, 8))
est = np.arange(4000) % 8
route = salsox.losses.get_loss("VI.lb")._route(d)
need = route.losses_bytes(1, 8, 2)
run = lambda: salsox.partition_loss(est, d, "VI.lb", n_jobs=2)
""",
    "dlso over the draws": """
d = salsox.Draws(draws(1500, 2000, 8))
route = salsox.VI()._route(d)
from salsox._validation import relabel_bytes
h, n = d.n_draws, d.n_items
need = relabel_bytes(h, n) + route.losses_bytes(h, int(d._core.kmax), 2)
run = lambda: salsox.dlso(d, "VI", n_jobs=2)
""",
    "credible_ball": """
raw = draws(5000, 2000, 8)
route = salsox.VI()._route(salsox.Draws(raw[:1]))
from salsox._validation import relabel_bytes
need = relabel_bytes(*raw.shape) + 24 * raw.shape[0] + route.losses_bytes(raw.shape[0], 8, 2)
run = lambda: salsox.credible_ball(raw[0], raw, "VI", n_jobs=2)
""",
    "chips path": """
from salsox.uncertainty.chips import chips_bytes
raw = draws(200, 3000, 8)
need = chips_bytes(3000, 200, 8, 2, "path")
run = lambda: salsox.chips(raw, n_runs=8, n_jobs=2, seed=1)
""",
    "chips path, n=20,000, H=1,000": """
from salsox.uncertainty.chips import chips_bytes
d = salsox.Draws(noisy(1000, 20000, 8))
need = chips_bytes(20000, 1000, 64, 2, "path")
run = lambda: salsox.chips(d, n_jobs=2, seed=1)
""",
    "wasabi": """
from salsox._cpus import usable_cpus
from salsox.uncertainty.wasabi import api
from salsox.uncertainty.wasabi.draws import DrawSet, unique_rows
raw = salsox.canonicalize_labels(noisy(4000, 2000, 8))
first, inverse = unique_rows(raw)
ds = DrawSet(raw[first], np.bincount(inverse).astype(np.int64))
workers = min(2, usable_cpus())
need = api._memory_needed(ds, raw.shape[0], 1, workers, 2 // workers, None, "++")
del ds
run = lambda: salsox.wasabi(raw, 1, n_starts=2, max_iter=1, n_jobs=2, seed=1)
""",
}

PRELUDE = """
import json, os, numpy as np, salsox
def draws(H, n, k):
    return np.random.default_rng(0).integers(0, k, size=(H, n)).astype(np.int16)
def noisy(H, n, k, flip=0.1):
    rng = np.random.default_rng(0)
    out = np.tile(rng.integers(0, k, size=n).astype(np.int16), (H, 1))
    mask = rng.random((H, n)) < flip
    out[mask] = rng.integers(0, k, size=int(mask.sum()))
    return out
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
"""

EPILOGUE = """
import time
before = rss()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # resets the peak resident set (VmHWM) to the current one
t0 = time.perf_counter()
run()
seconds = time.perf_counter() - t0
with open("/proc/self/status") as f:
    peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
print(json.dumps({"need": int(need), "grew": max(0, peak - before), "seconds": seconds}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=None, help="case names (prefixes) to run")
    args = parser.parse_args()
    print(f"CPU: {platform.processor() or platform.machine()}, load average {os.getloadavg()[0]:.1f}")
    rows: List[List[object]] = []
    for name, body in CASES.items():
        if args.cases and not any(name.startswith(c) for c in args.cases):
            continue
        out = subprocess.run([sys.executable, "-c", PRELUDE + body + EPILOGUE], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"{name}: {out.stderr}")
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append([name, r["need"] / 2**20, r["grew"] / 2**20, r["grew"] / max(1, r["need"]), r["seconds"]])
        print(name, "done", flush=True)
    print_table(["call", "estimate MiB", "peak RSS growth MiB", "growth / estimate", "seconds"], rows)


if __name__ == "__main__":
    main()
