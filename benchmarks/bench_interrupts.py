"""Ctrl-C and a slow plugin loss (issue 49): seconds from SIGINT to KeyboardInterrupt in salso
with a ContingencyLoss whose every call lasts --call seconds, at n_jobs=2 (two runs, one on a
worker thread) and, as the baseline measured in the same run, at n_jobs=1.

SIGINT is sent with os.kill from a timer thread at --delays seconds after the call starts,
which land in different phases of the two threads' calls. Two losses:
  * "python": the call's time is spent in a pure-Python loop (a call in flight on the worker
    thread is cut short by the stop's KeyboardInterrupt);
  * "sleep": the call's time is spent in time.sleep (blocked in C on the worker thread: its
    call ends first).
The table gives, per loss and n_jobs, the fastest and slowest answer over the delays, and
whether any call of the loss started after SIGINT. Target: the "python" loss at n_jobs=2
within 0.5 s.

    python benchmarks/bench_interrupts.py
    python benchmarks/bench_interrupts.py --call 0.7 --delays 0.3 0.5 0.8 1.1 1.6
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time
from typing import List, Tuple

import numpy as np

import salsox
import salsox.engine.callback
from _common import print_table
from salsox.plugins import ContingencyLoss


class SlowBinder(ContingencyLoss):
    """Binder's loss from tables, each call lasting `seconds` (busy in Python, or asleep)."""

    name = "bench-slow-binder"

    def __init__(self, seconds: float, how: str) -> None:
        self.seconds, self.how = seconds, how
        self.starts: List[float] = []

    def loss(self, tables: np.ndarray) -> np.ndarray:
        self.starts.append(time.monotonic())
        if self.how == "sleep":
            time.sleep(self.seconds)
        else:
            end = time.monotonic() + self.seconds
            while time.monotonic() < end:
                pass
        n = tables.sum(axis=(1, 2)).astype(float)
        rows = (tables.sum(axis=2) ** 2).sum(axis=1)
        cols = (tables.sum(axis=1) ** 2).sum(axis=1)
        cells = (tables**2).sum(axis=(1, 2))
        return np.where(n > 0, (rows + cols - 2 * cells) / np.maximum(n, 1) ** 2, 0.0)


def seconds_to_stop(draws: np.ndarray, loss: SlowBinder, n_jobs: int, delay: float) -> Tuple[float, int]:
    """Seconds from SIGINT (sent `delay` seconds into salso) to KeyboardInterrupt, and the calls
    of the loss started after SIGINT."""
    sent: List[float] = []

    def interrupt() -> None:
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    loss.starts.clear()
    timer = threading.Timer(delay, interrupt)
    timer.start()
    try:
        salsox.salso(draws, loss, n_runs=2, n_jobs=n_jobs, seed=1, max_clusters=5)
    except KeyboardInterrupt:
        answered = time.monotonic()
    else:
        timer.cancel()
        raise RuntimeError(f"salso ended before SIGINT at {delay} s: raise the call's seconds")
    finally:
        timer.join()
    return answered - sent[0], sum(t > sent[0] for t in loss.starts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--call", type=float, default=0.7, help="seconds of each call of the loss")
    parser.add_argument("--delays", type=float, nargs="*", default=[0.3, 0.5, 0.8, 1.1, 1.6])
    args = parser.parse_args()
    # One batch a call of about one draw's tables: each item's score takes many calls.
    salsox.engine.callback.MAX_BATCH_CELLS = 300
    draws = np.random.default_rng(3).integers(0, 5, size=(80, 30))
    rows = []
    for how in ("python", "sleep"):
        for n_jobs in (1, 2):
            loss = SlowBinder(args.call, how)
            answers = [seconds_to_stop(draws, loss, n_jobs, d) for d in args.delays]
            seconds = [s for s, _ in answers]
            rows.append([how, n_jobs, args.call, min(seconds), max(seconds), sum(c for _, c in answers)])
    print_table(["loss", "n_jobs", "call s", "fastest s", "slowest s", "calls after SIGINT"], rows)
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "unknown CPU")
    print(f"CPU: {cpu}, load average {os.getloadavg()[0]:.1f}, SIGINT at {args.delays} s")


if __name__ == "__main__":
    main()
