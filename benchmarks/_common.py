"""Shared by the benchmark scripts: where the shared data is, timing, table printing, an
environment variable put back after a script has set it, and the timing of an engine setting
off and on."""

from __future__ import annotations

import contextlib
import csv
import functools
import os
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
DATASETS = ("iris", "galaxy", "ex1", "ex2")


def load_draws(name: str) -> np.ndarray:
    with np.load(SHARED / "data" / f"{name}_draws.npz") as f:
        return np.asarray(f["draws"])


def reference_rows() -> List[Dict[str, str]]:
    with open(SHARED / "reference" / "r_salso.csv", newline="") as f:
        return list(csv.DictReader(f))


def loss_of(row: Dict[str, str]):
    """The salsox loss for a row of r_salso.csv (paper parameterisation)."""
    import salsox

    family = row["family"]
    if family in ("binder", "VI"):
        return salsox.losses.get_loss(family, a=float(row["a"]), b=float(row["b"]))
    return salsox.losses.get_loss(family)


def best_time(fn: Callable[[], object], repeat: int = 3) -> Tuple[float, object]:
    """Fastest of `repeat` calls (the machine is shared: the minimum is the least noisy)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def best_times(fns: Sequence[Callable[[], object]], repeat: int = 3) -> List[Tuple[float, object]]:
    """Fastest of `repeat` calls of each function, the functions taking turns (a, b, a, b, ...):
    a change in the machine's load then touches all of them alike, which keeps their ratios
    fairer on a shared machine than timing each one's calls back to back."""
    best = [float("inf")] * len(fns)
    results: List[object] = [None] * len(fns)
    for _ in range(repeat):
        for j, fn in enumerate(fns):
            t0 = time.perf_counter()
            results[j] = fn()
            best[j] = min(best[j], time.perf_counter() - t0)
    return list(zip(best, results))


def engine_setting_main(doc: str, variable: str, losses: Sequence[str], what: str,
                        argv: Optional[List[str]] = None) -> None:
    """The command line of a script that times engine setting `variable` off and on
    (--datasets, --losses among `losses`, --repeat; see time_engine_setting)."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--losses", nargs="*", default=list(losses), choices=losses)
    parser.add_argument("--repeat", type=int, default=3, help="keep the fastest of this many calls per setting")
    args = parser.parse_args(argv)
    time_engine_setting(variable, args.datasets, args.losses, args.repeat, what)


def time_engine_setting(variable: str, datasets: Sequence[str], losses: Sequence[str], repeat: int,
                        what: str) -> None:
    """Times the default 16-run search on one thread with engine setting `variable` off and on
    (auto), taking turns, for every row of r_salso.csv in `datasets` and `losses`; checks that
    both give the same estimate and loss (the settings change speed only) and prints the times,
    their ratio off/on (above 1: `what` is faster) and the estimate's clusters."""

    import salsox

    def search(draws: "salsox.Draws", loss: object, setting: str) -> "salsox.Estimate":
        os.environ[variable] = setting
        return salsox.salso(draws, loss, n_runs=16, n_jobs=1, seed=0)

    table = []
    with restored_env(variable):
        for ref in reference_rows():
            if ref["dataset"] not in datasets or ref["loss"] not in losses:
                continue
            draws, loss = salsox.Draws(load_draws(ref["dataset"])), loss_of(ref)
            searches = [functools.partial(search, draws, loss, setting) for setting in ("off", "auto")]
            (t_off, off), (t_on, on) = best_times(searches, repeat)
            if list(off.labels) != list(on.labels) or off.expected_loss != on.expected_loss:
                raise SystemExit(f"{ref['dataset']} {ref['loss']}: the estimates differ with and without {what}")
            table.append([ref["dataset"], ref["r_call"], t_off, t_on, t_off / t_on, on.n_clusters])
            print(f"{ref['dataset']:7} {ref['r_call']:10} off {t_off:.3f} s  on {t_on:.3f} s  "
                  f"ratio {t_off / t_on:.2f}", flush=True)
    print()
    print_table(["dataset", "loss (R call)", "off (s)", "on (s)", "off/on", "clusters"], table)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for j, r in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
        if j == 0:
            print("  ".join("-" * w for w in widths))


def _fmt(c: object) -> str:
    if isinstance(c, float):
        return f"{c:.4g}" if abs(c) >= 1e-3 or c == 0 else f"{c:.3e}"
    return str(c)


@contextlib.contextmanager
def restored_env(name: str) -> Iterator[None]:
    """Puts environment variable `name` back as it was (or unset) when the block ends: the
    scripts that time an engine setting (SALSOX_SIMD, SALSOX_CELL_CACHE) set it per call."""
    saved = os.environ.get(name)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved
