"""Plugin losses against the built-in VI: native-speed decomposable plugins and the generic path.

For each dataset, times the 16-run SALSO search (n_jobs=1, fixed seed) with
  * the built-in VI,
  * "vi-plugin": VI re-declared as a DecomposableLoss (tabulated, native speed),
  * "vi-numpy": VI as a ContingencyLoss in numpy, run through the generic (callback) path,
  * "omari-numpy" against the built-in omARI, the other generic-path example,
and prints seconds, the ratio to the built-in VI measured in the same run, the ratio to the
built-in version of the same loss, the expected loss, and the sweetening scans of the runs
(equivalent losses computed with different rounding can break near-ties differently, so
their runs may take different numbers of scans). Target: the decomposable plugin within 1.5x
of the built-in VI. Generic-path searches whose 16 runs would take longer than
--budget seconds are timed on fewer runs and extrapolated to 16 (marked "~" in the table, with
the number of runs timed); their expected loss is then the best of the runs timed.

Count-sum losses (CountSumLoss formulas, evaluated natively by the engine) are timed against
the built-in loss they are compared with in the issue: "jaccard" and "fowlkes-mallows" (from
the example plugin package) against the built-in omARI (same pair counts, a different
formula), and NVI written as a count sum ("nvi-countsum"; "nvi-countsum-dense" with a clamp
that is never active) against the built-in NVI. Target: within 1.5x. "synthetic" is a draw set
of 1,000 items x 500 draws (benchmarks/synthetic.py). With llvmlite installed (salsox[jit]) the
formulas are compiled to machine code; without it the engine's node loops run them
(benchmarks/bench_ablation.py --countsum times both in one build). The last line says which ran.

Needs the example plugins installed:
    pip install ./plugins/salsox-example-losses ./plugins/salsox-hclust-init

Usage: python benchmarks/bench_plugins.py [--datasets iris ex1 synthetic] [--seed 0] [--budget 180]
                                          [--paths VI omARI jaccard ...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import salsox
from _common import best_time, load_draws, print_table
from salsox.plugins import ContingencyLoss, CountSumLoss
from synthetic import synthetic_draws

RUNS = 16


class VINumpy(ContingencyLoss):
    """VI (bits) from whole contingency tables: the generic-path twin of the built-in VI."""

    name = "vi-numpy"

    def __init__(self) -> None:
        self._f = np.zeros(1)  # x log2 x for x = 0..len-1, grown on demand

    def _xlog2x(self, top: int) -> np.ndarray:
        if top >= len(self._f):
            x = np.arange(2 * top + 2, dtype=np.float64)
            self._f = x * np.log2(np.maximum(x, 1.0))
        return self._f

    def loss(self, tables: np.ndarray) -> np.ndarray:
        B = len(tables)
        rows = np.einsum("brc->br", tables)
        cols = np.einsum("brc->bc", tables)
        m = np.einsum("br->b", rows)
        f = self._xlog2x(int(m.max()) if B else 0)
        cells = f[tables.reshape(B, -1)].sum(axis=1)  # a gather: x log2 x read from a table
        total = f[rows].sum(axis=1) + f[cols].sum(axis=1) - 2.0 * cells
        return np.maximum(total, 0.0) / np.maximum(m, 1)


def _xlog2x(counts: np.ndarray, n: int) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    return c * np.log2(np.maximum(c, 1.0))


# The built-in NVI as a count-sum formula (entropies clamped at 0, as the built-in does), and the
# same with a (never active) clamp at 0 around it.
_HD, _HE, _HJ = "max(0, log2(n) - D / n)", "max(0, log2(n) - E / n)", "max(0, log2(n) - J / n)"
_ENTROPY_SUMS = {"J": ("cell", _xlog2x), "E": ("estimate", _xlog2x), "D": ("draw", _xlog2x)}
NVI_COUNTSUM = CountSumLoss(
    name="nvi-countsum",
    sums=_ENTROPY_SUMS,
    formula=f"where({_HJ} <= 1e-12 * max(1, log2(n)), 0, 1 - ({_HD} + {_HE} - {_HJ}) / {_HJ})",
)
NVI_DENSE = CountSumLoss(
    name="nvi-countsum-dense",
    sums=_ENTROPY_SUMS,
    formula=f"where({_HJ} <= 1e-12 * max(1, log2(n)), 0, max(0, 1 - ({_HD} + {_HE} - {_HJ}) / {_HJ}))",
)


def _compiler() -> str:
    """How the engine ran the count-sum formulas: compiled (llvmlite) or by its node loops."""
    from salsox.engine import countsum_jit

    if not countsum_jit.kernel_available():
        return "the engine's node loops (llvmlite not installed)"
    import llvmlite

    return f"compiled with llvmlite {llvmlite.__version__} (salsox[jit])"


def dataset(name: str) -> np.ndarray:
    if name == "synthetic":
        return synthetic_draws(1000, 500, k=10, seed=1)
    return load_draws(name)


def timed(draws, loss, seed: int, budget: float, fast_repeat: int):
    """(seconds for 16 runs, runs actually timed, estimate)."""
    probe_t0 = time.perf_counter()
    probe = salsox.salso(draws, loss, n_runs=1, n_jobs=1, seed=seed)
    one = time.perf_counter() - probe_t0
    if one * RUNS <= budget:
        repeat = fast_repeat if one * RUNS * fast_repeat <= budget else 1
        seconds, est = best_time(lambda: salsox.salso(draws, loss, n_runs=RUNS, n_jobs=1, seed=seed), repeat)
        return seconds, RUNS, est
    runs = int(max(1, min(RUNS - 1, budget // one)))
    if runs == 1:
        return one * RUNS, 1, probe
    t0 = time.perf_counter()
    est = salsox.salso(draws, loss, n_runs=runs, n_jobs=1, seed=seed)
    return (time.perf_counter() - t0) * RUNS / runs, runs, est


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="*", default=["iris", "ex1", "synthetic"])
    parser.add_argument("--paths", nargs="*", default=None, help="loss names to time (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=180.0, help="seconds allowed per generic-path search")
    parser.add_argument("--repeat", type=int, default=3, help="fast timings keep the fastest of this many")
    args = parser.parse_args()

    salsox.plugins.register(VINumpy)  # runtime registration, as in a notebook
    paths = [
        ("VI", "built-in VI", "VI"),
        ("vi-plugin", "decomposable plugin VI", "VI"),
        ("vi-numpy", "generic path VI (numpy)", "VI"),
        ("omARI", "built-in omARI", "omARI"),
        ("omari-numpy", "generic path omARI (numpy)", "omARI"),
        ("jaccard", "count-sum Jaccard", "omARI"),
        ("fowlkes-mallows", "count-sum Fowlkes-Mallows", "omARI"),
        ("NVI", "built-in NVI", "NVI"),
        ("nvi-countsum", "count-sum NVI", "NVI"),
        ("nvi-countsum-dense", "count-sum NVI, clamped (dense)", "NVI"),
    ]
    if args.paths:
        chosen = {p.lower() for p in args.paths}
        chosen |= {builtin.lower() for loss, _, builtin in paths if loss.lower() in chosen}
        paths = [p for p in paths if p[0].lower() in chosen]
    salsox.plugins.register(NVI_COUNTSUM)
    salsox.plugins.register(NVI_DENSE)
    rows, decomposable, countsum = [], [], []
    for name in args.datasets:
        draws = salsox.Draws(dataset(name))
        seconds = {}
        for loss, label, builtin in paths:
            t, runs, est = timed(draws, loss, args.seed, args.budget, args.repeat)
            seconds[loss] = t
            ratio = t / seconds["VI"] if "VI" in seconds else float("nan")
            same = t / seconds[builtin]
            when = f"{t:.3g}" if runs == RUNS else f"~{t:.3g} ({runs} runs x {RUNS}/{runs})"
            scans = sum(r["scans"] for r in est.info["runs"])
            vs_vi = f"{ratio:.2f}x" if "VI" in seconds else "-"
            rows.append([name, label, when, vs_vi, f"{same:.2f}x", est.expected_loss, est.n_clusters,
                         f"{scans} / {len(est.info['runs'])}"])
            if loss == "vi-plugin":
                decomposable.append((name, ratio))
            if label.startswith("count-sum"):
                countsum.append((name, loss, builtin, same))
        print(f"... {name} done", flush=True)
    print(f"\nSALSO, {RUNS} runs, n_jobs=1, seed={args.seed}; seconds are the fastest of {args.repeat} "
          f"when quick; '~' = timed on fewer runs and extrapolated to {RUNS}")
    print_table(["dataset", "loss path", "seconds", "vs built-in VI", "vs built-in same loss",
                 "expected loss", "k", "scans / runs"], rows)
    if countsum:
        print(f"count-sum formulas: {_compiler()}")
    if decomposable:
        worst = max(r for _, r in decomposable)
        print(f"decomposable plugin VI vs built-in VI: worst {worst:.2f}x (target <= 1.5x: "
              f"{'met' if worst <= 1.5 else 'NOT met'})")
    for data, loss, builtin, same in countsum:
        print(f"count-sum {loss} vs built-in {builtin} on {data}: {same:.2f}x (target <= 1.5x: "
              f"{'met' if same <= 1.5 else 'NOT met'})")


if __name__ == "__main__":
    main()
