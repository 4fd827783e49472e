"""Every optional fast path of the engine, turned off in turn in the same build (issue 38).

For every row of the speed table of docs/comparison.md (shared/reference/r_salso.csv: the
default 16-run search, one thread, seed 0) it times the search (CPU seconds of the process:
the search runs on one thread, and on a shared machine the CPU time moves far less with the
load than the wall time) with the engine's settings at their defaults and with each optional
path off, the calls taking turns (default, off 1, off 2, ..., default, ...) ``--repeat``
times, keeping the fastest of each. It checks that every setting
gives the same estimate and loss (the paths change speed only) and prints, per row, the ratio
off/on of each path (above 1: the path is faster; 1.10 is the bar a path must reach on at
least one row to stay, see docs/performance.md).

The paths and the setting that turns each off (environment variables of the engine, read once
per search into its options, cpp/include/salsox/options.hpp):

- ``avx2``: the AVX2 kernels against the portable ones (``SALSOX_SIMD=baseline`` against
  ``SALSOX_SIMD=avx2``);
- each entry of ``SWITCHES`` below (``--paths`` picks some).

``--countsum`` times the count-sum formulas instead (``_count_sums``: Jaccard, Fowlkes-Mallows,
NVI written as a count sum, and the penalised Jaccard of docs/plugins.md) on each dataset, the
same 16-run search, with each count-sum path off in turn through ``_core.EngineOptions`` (no
environment variable; ``COUNTSUM_PATHS``). The node-loop paths are judged where they run, with
the llvmlite kernel off (the engine without llvmlite); the kernel against the node loops.

    python benchmarks/bench_ablation.py                            # all 32 rows (minutes)
    python benchmarks/bench_ablation.py --datasets iris galaxy --repeat 2
    python benchmarks/bench_ablation.py --countsum --repeat 3
"""

from __future__ import annotations

import argparse
import datetime
import functools
import math
import os
import platform
import time
from typing import Callable, Dict, List, Optional, Tuple

import salsox
from _common import DATASETS, load_draws, loss_of, print_table, reference_rows, restored_env

# path name -> (environment: the settings with the path off, environment: the baseline it is
# compared with). Empty dicts mean the defaults.
Setting = Dict[str, str]
SIMD_PATHS: Dict[str, Tuple[Setting, Setting]] = {
    "avx2": ({"SALSOX_SIMD": "baseline"}, {"SALSOX_SIMD": "avx2"}),
}
SWITCHES: Dict[str, Tuple[Setting, Setting]] = {
    "cell_cache": ({"SALSOX_CELL_CACHE": "off"}, {}),
    "cell_lanes": ({"SALSOX_CELL_LANES": "off"}, {}),
}
VARIABLES = ("SALSOX_SIMD", "SALSOX_CELL_CACHE", "SALSOX_CELL_LANES")

# Count-sum path name -> (engine options with the path off, options it is compared with): each
# a dict of EngineOptions fields changed from the defaults.
COUNTSUM_PATHS: Dict[str, Tuple[Dict[str, bool], Dict[str, bool]]] = {
    "countsum_jit": ({"countsum_jit": False}, {}),
    "countsum_fused": ({"countsum_jit": False, "countsum_fused": False}, {"countsum_jit": False}),
    "countsum_row_widths": ({"countsum_jit": False, "countsum_row_widths": False}, {"countsum_jit": False}),
}


def _count_sums() -> Dict[str, object]:
    """The count-sum rows' losses: pair counts and entropies, dense and separable formulas."""
    import numpy as np
    from salsox.plugins import CountSumLoss

    def pairs(c: "np.ndarray", n: int) -> "np.ndarray":
        return c * (c - 1) / 2

    def xlog2x(c: "np.ndarray", n: int) -> "np.ndarray":
        c = np.asarray(c, dtype=np.float64)
        return c * np.log2(np.maximum(c, 1.0))

    def clusters(c: "np.ndarray", n: int) -> "np.ndarray":
        return (c > 0).astype(float)

    p = {"X": ("cell", pairs), "B": ("estimate", pairs), "A": ("draw", pairs)}
    e = {"J": ("cell", xlog2x), "E": ("estimate", xlog2x), "D": ("draw", xlog2x)}
    hd, he, hj = "max(0, log2(n) - D / n)", "max(0, log2(n) - E / n)", "max(0, log2(n) - J / n)"
    return {
        "jaccard": CountSumLoss("jaccard", p, "where(A + B - X == 0, 0, 1 - X / (A + B - X))"),
        "fowlkes-mallows": CountSumLoss("fowlkes-mallows", p, "1 - where(A * B == 0, A + B == 0, X / sqrt(A * B))"),
        "nvi-countsum": CountSumLoss(
            "nvi-countsum", e, f"where({hj} <= 1e-12 * max(1, log2(n)), 0, 1 - ({hd} + {he} - {hj}) / {hj})"),
        "jaccard-fewer-clusters": CountSumLoss(
            "jaccard-fewer-clusters",
            {**p, "K": ("estimate", clusters), "KD": ("draw", clusters)},
            "where(A + B - X == 0, 0, 1 - X / (A + B - X)) + lam * max(0, K - KD)", params={"lam": 0.05}),
    }


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _search(draws: "salsox.Draws", loss: object, setting: Setting) -> "salsox.Estimate":
    for name in VARIABLES:
        os.environ.pop(name, None)
    os.environ.update(setting)
    return salsox.salso(draws, loss, n_runs=16, n_jobs=1, seed=0)


def _best_cpu_times(calls: List[Callable[[], object]], repeat: int) -> List[Tuple[float, object]]:
    """Fastest CPU time of `repeat` calls of each, the calls taking turns."""
    best = [math.inf] * len(calls)
    results: List[object] = [None] * len(calls)
    for _ in range(repeat):
        for j, call in enumerate(calls):
            t0 = time.process_time()
            results[j] = call()
            best[j] = min(best[j], time.process_time() - t0)
    return list(zip(best, results))


def _countsum_search(draws: "salsox.Draws", loss: object, setting: Dict[str, bool]) -> "salsox.Estimate":
    """The default search with the count-sum engine given `setting` (salso's own call of
    _core.salso_countsum, with engine= added)."""
    from salsox import _core

    engine = _core.EngineOptions()
    for name, value in setting.items():
        setattr(engine, name, value)
    plain = _core.salso_countsum
    _core.salso_countsum = functools.partial(plain, engine=engine)
    try:
        return salsox.salso(draws, loss, n_runs=16, n_jobs=1, seed=0)
    finally:
        _core.salso_countsum = plain


def countsum_main(datasets: List[str], chosen: Optional[List[str]], repeat: int) -> None:
    """The count-sum rows: each COUNTSUM_PATHS entry off and on (see the module's docstring)."""
    paths = {k: v for k, v in COUNTSUM_PATHS.items() if chosen is None or k in chosen}
    settings: List[Dict[str, bool]] = [{}]
    for off, base in paths.values():
        for s in (off, base):
            if s not in settings:
                settings.append(s)
    print(f"CPU: {_cpu_name()} ({os.cpu_count()} logical CPUs); "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; load {os.getloadavg()[0]:.2f}")
    table, best = [], {k: 0.0 for k in paths}
    for dataset in datasets:
        draws = salsox.Draws(load_draws(dataset))
        for name, loss in _count_sums().items():
            calls = [functools.partial(_countsum_search, draws, loss, s) for s in settings]
            timed = _best_cpu_times(calls, repeat)
            first = timed[0][1]
            for (_, est), s in zip(timed, settings):
                if list(est.labels) != list(first.labels) or est.expected_loss != first.expected_loss:
                    raise SystemExit(f"{dataset} {name}: {s} changes the estimate")
            t = [x[0] for x in timed]
            ratios = [t[settings.index(off)] / t[settings.index(base)] for off, base in paths.values()]
            for k, r in zip(paths, ratios):
                best[k] = max(best[k], r)
            table.append([dataset, name, t[0]] + ratios)
            print(f"{dataset:7} {name:22} {t[0]:.3f} s  " + "  ".join(f"{k} {r:.2f}" for k, r in zip(paths, ratios)),
                  flush=True)
    print(f"\nload after: {os.getloadavg()[0]:.2f}; ratios are off/on (above 1: the path is faster)\n")
    print_table(["dataset", "count-sum loss", "default (CPU s)"] + [f"{k} off/on" for k in paths], table)
    print()
    print_table(["path", "best row", "keeps its place (>= 1.10)"],
                [[k, best[k], "yes" if best[k] >= 1.10 else "no"] for k in paths])


def main(argv: Optional[List[str]] = None) -> None:
    from salsox import _core

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--paths", nargs="*", default=None, help="paths to turn off (default: all this build has)")
    parser.add_argument("--repeat", type=int, default=3, help="keep the fastest of this many calls per setting")
    parser.add_argument("--countsum", action="store_true", help="the count-sum rows and paths instead")
    args = parser.parse_args(argv)
    if args.countsum:
        return countsum_main(args.datasets, args.paths, args.repeat)

    have = set(_core.simd_paths())
    paths = {k: v for k, v in SIMD_PATHS.items() if k in have}
    paths.update(SWITCHES)
    if args.paths is not None:
        paths = {k: v for k, v in paths.items() if k in args.paths}
    # The distinct settings to time, each once per turn.
    settings: List[Setting] = [{}]
    for off, base in paths.values():
        for s in (off, base):
            if s not in settings:
                settings.append(s)

    print(f"CPU: {_cpu_name()} ({os.cpu_count()} logical CPUs), SIMD paths {sorted(have)}; "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; load {os.getloadavg()[0]:.2f}")
    table, worst, best = [], {k: math.inf for k in paths}, {k: 0.0 for k in paths}
    with restored_env("SALSOX_SIMD"), restored_env("SALSOX_CELL_CACHE"), restored_env("SALSOX_CELL_LANES"):
        for ref in reference_rows():
            if ref["dataset"] not in args.datasets:
                continue
            draws, loss = salsox.Draws(load_draws(ref["dataset"])), loss_of(ref)
            calls = [functools.partial(_search, draws, loss, s) for s in settings]
            timed = _best_cpu_times(calls, args.repeat)
            first = timed[0][1]
            for (_, est), s in zip(timed, settings):
                if list(est.labels) != list(first.labels) or est.expected_loss != first.expected_loss:
                    raise SystemExit(f"{ref['dataset']} {ref['loss']}: {s} changes the estimate")
            t = {i: timed[i][0] for i in range(len(settings))}
            ratios = []
            for name, (off, base) in paths.items():
                r = t[settings.index(off)] / t[settings.index(base)]
                ratios.append(r)
                if first.info["engine"] == "counts":  # the paths act on count tables only
                    worst[name], best[name] = min(worst[name], r), max(best[name], r)
            table.append([ref["dataset"], ref["r_call"], first.info["engine"], t[0]] + ratios)
            print(f"{ref['dataset']:7} {ref['r_call']:14} {t[0]:.3f} s  " +
                  "  ".join(f"{k} {r:.2f}" for k, r in zip(paths, ratios)), flush=True)
    print(f"\nload after: {os.getloadavg()[0]:.2f}; ratios are off/on (above 1: the path is faster)\n")
    print_table(["dataset", "loss (R call)", "engine", "default (CPU s)"] + [f"{k} off/on" for k in paths], table)
    print()
    print("Over the rows searched on count tables (the others show the noise):")
    print_table(["path", "best row", "worst row", "keeps its place (>= 1.10)"],
                [[k, best[k], worst[k], "yes" if best[k] >= 1.10 else "no"] for k in paths])


if __name__ == "__main__":
    main()
