"""Peak memory of the calls that take memory_limit against their own estimate (issue 39).

Each call runs in a fresh process: its peak resident set (``ru_maxrss``) less the resident set
just before the call, over the bytes the call's memory check counted. The inputs are built
before the call and not counted. Target: each ratio within 1.2 (the estimate may be above the
peak, never far below it).

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
d = salsox.Draws(draws(400, 6000, 8))
need = 8 * d.n_items ** 2
run = lambda: salsox.psm(d, n_jobs=2)
""",
    "partition_loss, 1 estimate, k=400": """
d = salsox.Draws(draws(3000, 2000, 400))
est = np.arange(2000) % 400
route = salsox.VI()._route(d)
need = route.losses_bytes(1, 400, 2)
run = lambda: salsox.partition_loss(est, d, "VI", n_jobs=2)
""",
    "partition_loss, PSM route from draws": """
d = salsox.Draws(draws(400, 5000, 8))
est = np.arange(5000) % 8
route = salsox.losses.get_loss("VI.lb")._route(d)
need = route.losses_bytes(1, 8, 2)
run = lambda: salsox.partition_loss(est, d, "VI.lb", n_jobs=2)
""",
    "dlso over the draws": """
d = salsox.Draws(draws(20000, 2000, 8))
route = salsox.VI()._route(d)
need = 20 * d.n_draws * d.n_items + route.losses_bytes(d.n_draws, int(d._core.kmax), 2)
run = lambda: salsox.dlso(d, "VI", n_jobs=2)
""",
    "credible_ball": """
raw = draws(20000, 2000, 8)
route = salsox.VI()._route(salsox.Draws(raw[:1]))
need = raw.shape[0] * raw.shape[1] * 4 + 24 * raw.shape[0] + route.losses_bytes(raw.shape[0], 8, 2)
run = lambda: salsox.credible_ball(raw[0], raw, "VI", n_jobs=2)
""",
}

PRELUDE = """
import json, os, resource, numpy as np, salsox
def draws(H, n, k):
    return np.random.default_rng(0).integers(0, k, size=(H, n)).astype(np.int16)
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
"""

EPILOGUE = """
before = rss()
run()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"need": int(need), "grew": max(0, peak - before)}))
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
        rows.append([name, r["need"] / 2**20, r["grew"] / 2**20, r["grew"] / max(1, r["need"])])
    print_table(["call", "estimate MiB", "peak RSS growth MiB", "growth / estimate"], rows)


if __name__ == "__main__":
    main()
