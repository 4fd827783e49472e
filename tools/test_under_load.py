"""Run the test suite beside a CPU hog: ``nproc * 4`` busy processes (issue 49: the suite must
pass on a machine at load 10).

    python tools/test_under_load.py                          # the whole suite, tests/
    python tools/test_under_load.py -- tests/test_distributed.py -x
    python tools/test_under_load.py --per-cpu 2 --seconds 600 -- tests/test_cpus.py

Everything after ``--`` goes to pytest (default: ``tests -q``). The hogs are bounded in time
twice over: each stops by itself after ``--seconds`` (and as soon as this script's process is
gone, even if it was killed), and the script kills them when pytest ends, on Ctrl-C and on
SIGTERM. pytest itself is stopped once ``--seconds`` have passed. Prints the load average
before and after, the time taken and pytest's exit status, which is the script's.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType
from typing import List, Optional

ROOT = Path(__file__).resolve().parents[1]

# A hog: busy until its deadline or until its parent (this script) is gone, checking both
# every few million operations so that it stays busy in between.
HOG = """
import os, sys, time
deadline, parent = float(sys.argv[1]), int(sys.argv[2])
while time.time() < deadline and os.getppid() == parent:
    for _ in range(1_000_000):
        pass
"""


def _cpus() -> int:
    """CPUs this process may run on (what ``nproc`` prints)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def start_hogs(count: int, seconds: float) -> List["subprocess.Popen[bytes]"]:
    """``count`` busy processes, each ending by itself after ``seconds`` or when we end."""
    deadline = time.time() + seconds
    return [
        subprocess.Popen([sys.executable, "-c", HOG, repr(deadline), str(os.getpid())],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(count)
    ]


def stop_hogs(hogs: List["subprocess.Popen[bytes]"]) -> None:
    """Kills the hogs this script started (by their process ids) and reaps them."""
    for hog in hogs:
        if hog.poll() is None:
            hog.kill()
    for hog in hogs:
        hog.wait()


def run_pytest(pytest_args: List[str], seconds: float) -> int:
    """pytest's exit status, or 124 if it was stopped after ``seconds``. It runs in a session of
    its own, so that stopping it also stops what it started (Dask workers, test scripts)."""
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *pytest_args], cwd=ROOT, start_new_session=True)
    try:
        return proc.wait(timeout=max(1.0, seconds))
    except subprocess.TimeoutExpired:
        print(f"pytest stopped after --seconds: {seconds:.0f} s left when it started", flush=True)
        return 124
    finally:
        # Also on Ctrl-C or SIGTERM here: its session does not get the terminal's Ctrl-C.
        if proc.poll() is None:
            _stop_session(proc)


def _stop_session(proc: "subprocess.Popen[bytes]") -> None:
    """SIGTERM to the process group of ``proc`` (its session), SIGKILL after 10 s."""
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    own, pytest_args = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-cpu", type=int, default=4, help="busy processes per CPU (default 4)")
    parser.add_argument("--seconds", type=float, default=3600.0,
                        help="stop the hogs and pytest after this long (default 3600)")
    args = parser.parse_args(own)
    if args.per_cpu < 0:
        parser.error("--per-cpu must be >= 0")
    if not args.seconds > 0:
        parser.error("--seconds must be > 0")
    pytest_args = pytest_args or ["tests", "-q"]
    count = _cpus() * args.per_cpu
    hogs: List["subprocess.Popen[bytes]"] = []

    def on_signal(signum: int, _frame: Optional[FrameType]) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    start = time.monotonic()
    try:
        hogs = start_hogs(count, args.seconds)
        time.sleep(min(5.0, args.seconds / 10))  # let the load average climb a little first
        print(f"{count} busy processes on {_cpus()} CPUs; load average {os.getloadavg()[0]:.1f}", flush=True)
        code = run_pytest(pytest_args, args.seconds - (time.monotonic() - start))
        load = os.getloadavg()[0]
    finally:
        stop_hogs(hogs)
    print(f"pytest exit status {code} after {time.monotonic() - start:.0f} s; load average at the end {load:.1f}")
    return code


if __name__ == "__main__":
    sys.exit(main())
