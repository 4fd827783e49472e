"""Record every run of a set of engine searches, to compare two builds run for run.

Each case calls the engine (salsox._core) directly with fixed options and seeds, so that two
builds of the same binding signatures can be compared even when the Python layer differs.
Writes JSON: per case, each run's loss (as float.hex), scans, zealous attempts and accepts and
initialisation, and the best labels.

Usage:
    python tools/compare_runs.py record OUT.json [--quick] [--jobs N]
    python tools/compare_runs.py diff A.json B.json

--jobs runs every search on N threads (default 1): a record on N threads must equal the record
on one, run for run, since the threads never change a result.

Count-sum formulas (COUNT_SUMS) are compiled by the Python layer of the build being recorded;
with llvmlite installed they run on the compiled kernel, which gives the node loops' bits (to
record the node loops themselves, pass engine=_core.EngineOptions() with countsum_jit = False).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
COUNT_LOSSES = [("binder", 1.0, 1.0), ("binder", 4 / 3, 2 / 3), ("VI", 1.0, 1.0), ("VI", 2 / 3, 4 / 3),
                ("omARI", 1.0, 1.0), ("NVI", 1.0, 1.0), ("ID", 1.0, 1.0), ("NID", 1.0, 1.0)]

# Count-sum formulas (salsox.plugins.CountSumLoss) over pair counts and entropies: fused nodes
# (where(cmp), a - p / q, a / sqrt(q)) and the outer combinations.
_HD, _HE, _HJ = "max(0, log2(n) - D / n)", "max(0, log2(n) - E / n)", "max(0, log2(n) - J / n)"
COUNT_SUMS = [
    ("jaccard", "pairs", "where(A + B - X == 0, 0, 1 - X / (A + B - X))"),
    ("fowlkes-mallows", "pairs", "1 - where(A * B == 0, A + B == 0, X / sqrt(A * B))"),
    ("nvi", "entropy", f"where({_HJ} <= 1e-12 * max(1, log2(n)), 0, 1 - ({_HD} + {_HE} - {_HJ}) / {_HJ})"),
    ("nvi-dense", "entropy",
     f"where({_HJ} <= 1e-12 * max(1, log2(n)), 0, max(0, 1 - ({_HD} + {_HE} - {_HJ}) / {_HJ}))"),
]


def count_sum_loss(name: str, sums: str, formula: str) -> Any:
    from salsox.plugins import CountSumLoss

    def pairs(c: np.ndarray, n: int) -> np.ndarray:
        c = np.asarray(c, dtype=np.float64)
        return c * (c - 1) / 2

    def xlog2x(c: np.ndarray, n: int) -> np.ndarray:
        c = np.asarray(c, dtype=np.float64)
        return c * np.log2(np.maximum(c, 1.0))

    if sums == "pairs":
        table = {"X": ("cell", pairs), "B": ("estimate", pairs), "A": ("draw", pairs)}
    else:
        table = {"J": ("cell", xlog2x), "E": ("estimate", xlog2x), "D": ("draw", xlog2x)}
    return CountSumLoss(name=f"compare-{name}", sums=table, formula=formula)


def load(name: str, H: int) -> np.ndarray:
    with np.load(SHARED / "data" / f"{name}_draws.npz") as f:
        return np.ascontiguousarray(np.asarray(f["draws"])[:H], dtype=np.int32)


def summary(raw: Dict[str, Any]) -> Dict[str, Any]:
    runs = [{k: (float(v).hex() if k == "loss" else v) for k, v in r.items() if k not in ("seconds", "threads")}
            for r in raw["runs"]]
    return {"runs": runs, "best": raw["best"], "labels": np.asarray(raw["labels"]).tolist()}


def record(quick: bool, jobs: int = 1) -> Dict[str, Any]:
    from salsox import _core

    # An editable install in this interpreter takes precedence over PYTHONPATH: say which build.
    print(f"recording the build at {_core.__file__}", file=sys.stderr)

    common = dict(max_zealous=10, prob_sequential=0.5, max_scans=0, seconds=0.0, n_jobs=jobs)
    out: Dict[str, Any] = {}
    sets = [("iris", 1000, 8, 20), ("galaxy", 2000, 8, 20), ("ex1", 1000, 4, 30)]
    if quick:
        sets = sets[:1]
    for name, H, runs, cap in sets:
        x = load(name, H)
        draws = _core.CompactDraws(x)
        n = draws.n
        for kind, a, b in COUNT_LOSSES:
            loss = _core.CountLoss.builtin(kind, a, b, n)
            for seed in (1, 2):
                raw = _core.salso_counts(draws, loss, cap, runs, seed=seed, **common)
                out[f"counts/{name}/{kind}/{a:.3f}/{seed}"] = summary(raw)
        co = _core.coclustering(draws)
        raw = _core.salso_coclustering_binder(co, draws.H, 1.0, 1.0, cap, runs, seed=3, **common)
        out[f"coclustering/{name}"] = summary(raw)
        psm = np.ascontiguousarray(co / draws.H, dtype=np.float64)
        for kind in ("binder", "VI.lb", "omARI.approx"):
            raw = _core.salso_psm(psm, kind, 1.0, 1.0, cap, runs, seed=4, **common)
            out[f"psm/{name}/{kind}"] = summary(raw)
    # Count-sum formulas: 8-bit counts (iris, galaxy) and 32-bit counts (ex1 beside ex2, 400 items).
    ex = np.hstack([load("ex1", 300)[:, :200], load("ex2", 300)[:, :200] + 200])
    sets = [("iris", load("iris", 500)), ("galaxy", load("galaxy", 1000)), ("ex12", np.ascontiguousarray(ex))]
    for name, x in sets[:1] if quick else sets:
        draws = _core.CompactDraws(x)
        for loss_name, sums, formula in COUNT_SUMS:
            formula_ = count_sum_loss(loss_name, sums, formula)._count_loss(draws.n)
            raw = _core.salso_countsum(draws, formula_, 12, 4, seed=6, **common)
            out[f"countsum/{name}/{loss_name}"] = summary(raw)
    # The generic (callback) path, Binder written in numpy on a small problem.
    x = load("iris", 100)
    draws = _core.CompactDraws(x)

    def binder(tables: np.ndarray) -> np.ndarray:
        t = tables.astype(np.float64)
        cells = (t * t).sum(axis=(1, 2))
        rows = (t.sum(axis=2) ** 2).sum(axis=1)
        cols = (t.sum(axis=1) ** 2).sum(axis=1)
        return (rows + cols - 2 * cells) / 150.0**2

    raw = _core.salso_callback(draws, binder, max_cells=1 << 22, max_clusters=10, n_runs=2, seed=5, **common)
    out["callback/iris/binder"] = summary(raw)
    return out


def diff(a: Dict[str, Any], b: Dict[str, Any]) -> int:
    bad = 0
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            print(f"{key}: only in {'B' if key not in a else 'A'}")
            bad += 1
        elif a[key] != b[key]:
            print(f"{key}: differs")
            for ra, rb in zip(a[key]["runs"], b[key]["runs"]):
                if ra != rb:
                    print(f"   A {ra}\n   B {rb}")
            bad += 1
    print(f"{len(set(a) | set(b))} cases, {bad} differ")
    return 1 if bad else 0


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out")
    rec.add_argument("--quick", action="store_true")
    rec.add_argument("--jobs", type=int, default=1, help="threads per search (default 1)")
    dif = sub.add_parser("diff")
    dif.add_argument("a")
    dif.add_argument("b")
    args = parser.parse_args(argv)
    if args.cmd == "record":
        Path(args.out).write_text(json.dumps(record(args.quick, args.jobs)))
        return 0
    return diff(json.loads(Path(args.a).read_text()), json.loads(Path(args.b).read_text()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
