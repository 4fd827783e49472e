"""Peak memory of each public call that takes memory_limit, against the smallest limit it accepts.

For every case (a public function and an input kind) the benchmark

1. finds the smallest ``memory_limit`` the call accepts: with every engine entry point that
   does work replaced by one that raises, a limit is accepted when the call gets as far as the
   engine and refused when it raises MemoryError first (bisection, to 0.5%); that limit is the
   call's own estimate of what it allocates, sub-calls included;
2. runs the call with that limit in a fresh process and takes its peak resident set
   (``VmHWM``, reset just before the call through ``/proc/self/clear_refs``) less the resident
   set just before the call, after ``malloc_trim(0)`` has returned the memory the set-up freed
   (pages a warm-up call left resident would otherwise hide the call's own allocations). The
   inputs are built before the call and not counted; converting them (an int64 array or a
   DataFrame into the engine's labels) is.

Targets (issue 49): peak / limit at most 1.2 (the limit holds) and limit / peak at most 2 (the
estimate is not so loose that it refuses calls that would fit).

    python benchmarks/bench_memory.py
    python benchmarks/bench_memory.py --cases psm chips
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Dict, List

from _common import print_table

# Each case defines call(limit): the public call with memory_limit=limit, on inputs built here.
CASES: Dict[str, str] = {
    "psm, Draws (n=4,000)": """
d = salsox.Draws(draws(200, 4000, 8))
call = lambda limit: salsox.psm(d, n_jobs=2, memory_limit=limit)
""",
    "partition_loss VI, 1 estimate k=400, Draws": """
d = salsox.Draws(draws(3000, 2000, 400))
est = np.arange(2000) % 400
salsox.partition_loss(est[:1000][None, :], salsox.Draws(draws(4, 1000, 400)), "VI", n_jobs=2)  # threads started
call = lambda limit: salsox.partition_loss(est, d, "VI", n_jobs=2, memory_limit=limit)
""",
    "partition_loss VI.lb (PSM route), Draws": """
d = salsox.Draws(draws(200, 4000, 8))
est = np.arange(4000) % 8
call = lambda limit: salsox.partition_loss(est, d, "VI.lb", n_jobs=2, memory_limit=limit)
""",
    "partition_loss ContingencyLoss, 1 estimate, Draws": """
d = salsox.Draws(draws(3000, 2000, 20))
est = np.arange(2000) % 20
call = lambda limit: salsox.partition_loss(est, d, "omari-numpy", n_jobs=2, memory_limit=limit)
""",
    "salso VI, Draws": """
d = salsox.Draws(noisy(3000, 2000, 20))
call = lambda limit: salsox.salso(d, "VI", n_runs=2, n_jobs=2, seed=1, max_scans=1, memory_limit=limit)
""",
    "salso VI, int64 array": """
raw = noisy(3000, 2000, 20).astype(np.int64)
call = lambda limit: salsox.salso(raw, "VI", n_runs=2, n_jobs=2, seed=1, max_scans=1, memory_limit=limit)
""",
    "salso ContingencyLoss, Draws (full batches)": """
d = salsox.Draws(noisy(3000, 40, 10))
call = lambda limit: salsox.salso(d, "omari-numpy", n_runs=2, n_jobs=2, seed=1, max_scans=1, max_zealous=0,
                                  memory_limit=limit)
""",
    "dlso, Draws": """
d = salsox.Draws(draws(1500, 2000, 8))
call = lambda limit: salsox.dlso(d, "VI", n_jobs=2, memory_limit=limit)
""",
    "credible_ball, int64 array": """
raw = draws(5000, 2000, 8).astype(np.int64)
call = lambda limit: salsox.credible_ball(raw[0], raw, "VI", n_jobs=2, memory_limit=limit)
""",
    "chips path, Draws (n=3,000)": """
d = salsox.Draws(draws(200, 3000, 8))
call = lambda limit: salsox.chips(d, n_runs=8, n_jobs=2, seed=1, memory_limit=limit)
""",
    "chips threshold + completion, Draws": """
d = salsox.Draws(noisy(3000, 2000, 20))
call = lambda limit: salsox.chips(d, 0.5, n_runs=8, n_jobs=2, seed=1, memory_limit=limit,
                                  complete=dict(n_runs=2, max_scans=1))
""",
    "wasabi ++, int16 array": """
raw = salsox.canonicalize_labels(noisy(4000, 2000, 8))
call = lambda limit: salsox.wasabi(raw, 1, n_starts=2, max_iter=1, n_jobs=2, seed=1, memory_limit=limit)
""",
    "wasabi topvi, int16 array": """
raw = salsox.canonicalize_labels(noisy(1000, 1500, 8))
call = lambda limit: salsox.wasabi(raw, 2, init="topvi", n_starts=2, max_iter=1, n_jobs=2, seed=1,
                                   memory_limit=limit)
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

# The engine entry points that do a call's work (the memory checks come before them).
WORK = (
    "callback_losses", "chips", "coclustering", "countsum_losses", "countsum_scores", "expected_losses",
    "pairwise_losses", "particle_vi", "psm_matrix", "salso_callback", "salso_coclustering_binder",
    "salso_counts", "salso_countsum", "salso_psm",
)

PROBE = f"""
class Accepted(Exception):
    pass
def accept(*args, **kwargs):
    raise Accepted()
for name in {WORK!r}:
    setattr(salsox._core, name, accept)
def accepted(limit):
    try:
        call(limit)
    except MemoryError:
        return False
    except Accepted:
        return True
    raise RuntimeError("the call finished without reaching the engine")
hi = 1 << 20
while not accepted(hi):
    hi *= 2
lo = hi // 2 if hi > 1 << 20 else 1
while hi - lo > max(1, hi // 200):
    mid = (lo + hi) // 2
    if accepted(mid):
        hi = mid
    else:
        lo = mid
print(json.dumps({{"limit": hi}}))
"""

MEASURE = """
import ctypes, time
# Hands memory freed by the set-up (a warm-up call's buffers in the threads' malloc arenas) back
# to the system: reused pages already resident would hide what the call allocates.
ctypes.CDLL("libc.so.6").malloc_trim(0)
before = rss()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # resets the peak resident set (VmHWM) to the current one
t0 = time.perf_counter()
call(LIMIT)
seconds = time.perf_counter() - t0
with open("/proc/self/status") as f:
    peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
print(json.dumps({"grew": max(0, peak - before), "seconds": seconds}))
"""


def _run(name: str, script: str) -> dict:
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{name}: {out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=None, help="case names (prefixes) to run")
    args = parser.parse_args()
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "unknown CPU")
    print(f"CPU: {cpu}, load average {os.getloadavg()[0]:.1f}")
    rows: List[List[object]] = []
    for name, body in CASES.items():
        if args.cases and not any(name.startswith(c) for c in args.cases):
            continue
        limit = _run(name, PRELUDE + body + PROBE)["limit"]
        r = _run(name, PRELUDE + body + f"LIMIT = {limit}\n" + MEASURE)
        grew = max(1, r["grew"])
        rows.append([name, limit / 2**20, grew / 2**20, grew / limit, limit / grew, r["seconds"]])
        print(name, "done", flush=True)
    print_table(["call", "smallest limit MiB", "peak growth MiB", "peak / limit", "limit / peak", "seconds"], rows)
    over = [row[0] for row in rows if row[3] > 1.2 or row[4] > 2.0]
    print("outside the targets (peak / limit <= 1.2, limit / peak <= 2):", ", ".join(map(str, over)) or "none")


if __name__ == "__main__":
    main()
