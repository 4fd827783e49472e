"""Dense count-sum scores (cpp/include/salsox/countsum_dense.hpp): the block evaluation is
compiled once per instruction set, and every path must give the same bits, run by run (each
run's expected loss as float.hex, labels, scans and zealous counts), so that a difference in
any score, not only in the best run, shows. The formulas cover every node kind the dense
blocks run (outer combinations, fused pairs, sqrt, libm calls, comparisons, where). Each
path is forced through the options struct (_core.EngineOptions), never the environment, and
compared with the portable one: baseline instructions, node loops (no llvmlite kernel), no
fused pairs, rows of the runtime width."""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

import salsox
from salsox import _core
from salsox.plugins import CountSumLoss
from conftest import load_draws
from test_countsum import pairs, xlog2x
from test_engine_simd import _random_draws

OPTIONS: Dict[str, Any] = dict(max_zealous=10, prob_sequential=0.5, max_scans=0, seconds=0.0, n_jobs=1)


PAIRS = {"X": ("cell", pairs), "B": ("estimate", pairs), "A": ("draw", pairs)}
ENTROPY = {"J": ("cell", xlog2x), "E": ("estimate", xlog2x), "D": ("draw", xlog2x)}
HD, HE, HJ = "max(0, log2(n) - D / n)", "max(0, log2(n) - E / n)", "max(0, log2(n) - J / n)"

LOSSES = [
    CountSumLoss("jaccard-d", PAIRS, "where(A + B - X == 0, 0, 1 - X / (A + B - X))"),
    CountSumLoss("fm-d", PAIRS, "1 - where(A * B == 0, A + B == 0, X / sqrt(A * B))"),
    # sqrt of a per-draw x per-slot product and of a cell expression, exp, log, pow, abs, min.
    CountSumLoss(
        "mixed-d",
        PAIRS,
        "where(A + B == 0, 0, abs(sqrt(A + B - X) - sqrt(X + 0 * A)) / sqrt(A + B)"
        " + min(1, exp(-X / (1 + A)) * log(1 + B) ** 0.5) * (X < A))",
    ),
    # a / sqrt(b) fused with a constant numerator, and a result `x * constant` that the
    # accumulation loop applies (the constant on the right; Fowlkes-Mallows has it on the left).
    CountSumLoss("scaled-d", PAIRS, "(A + B - 2 * X) * (1 / sqrt(1 + A * B + X)) * 0.5"),
    # a - p / q fused with a per-draw array a (the pairs of the draw the estimate splits, as a
    # share of 1 + A; X <= A), guarded by A + B.
    CountSumLoss("subdiv-d", PAIRS, "where(A + B == 0, 0, A / (1 + A) - X / (1 + A))"),
    CountSumLoss("nmi-sqrt-d", ENTROPY,
                 f"where(max({HD}, {HE}) <= 1e-12, 0, where(min({HD}, {HE}) <= 1e-12, 1, "
                 f"max(0, 1 - ({HD} + {HE} - {HJ}) / sqrt({HD} * {HE}))))"),
]


# The count-sum paths of EngineOptions, all off: the portable path every other is compared with.
PORTABLE: Dict[str, Any] = dict(simd="baseline", countsum_jit=False, countsum_fused=False, countsum_row_widths=False)
PATHS = ["countsum_fused", "countsum_row_widths"]


def engine_with(**settings: Any) -> Any:
    """The portable path with `settings` changed (the options struct, not the environment)."""
    engine = _core.EngineOptions()
    for name, value in {**PORTABLE, **settings}.items():
        setattr(engine, name, value)
    return engine


def settings_to_compare() -> List[Dict[str, Any]]:
    """Each SIMD path with each node-loop path on alone, and with all of them on."""
    out = []
    for simd in _core.simd_paths():
        out += [dict(simd=simd)] + [{"simd": simd, p: True} for p in PATHS]
        out.append(dict(simd=simd, **{p: True for p in PATHS}))
    return out[1:]  # the first is the portable path itself


def _record(x: np.ndarray, loss: CountSumLoss, max_clusters: int, n_runs: int, seed: int,
            engine: Any) -> List[Dict[str, Any]]:
    draws = _core.CompactDraws(np.ascontiguousarray(x, dtype=np.int32))
    compiled = loss._count_loss(draws.n)
    raw = _core.salso_countsum(draws, compiled, max_clusters, n_runs, seed=seed, engine=engine, **OPTIONS)
    runs = [{key: (float(v).hex() if key == "loss" else v) for key, v in r.items() if key not in ("seconds", "threads")}
            for r in raw["runs"]]
    return runs + [{"best": raw["best"], "labels": np.asarray(raw["labels"]).tolist()}]


@pytest.mark.parametrize("loss", LOSSES, ids=[x.name for x in LOSSES])
def test_every_path_gives_the_same_runs(loss: CountSumLoss) -> None:
    # Blocks of one draw (many slots) and of many draws, cluster caps that bind and do not.
    problems = [(np.asarray(load_draws("iris")[:300]), 20, 3), (np.asarray(load_draws("galaxy")[:400]), 20, 3),
                (_random_draws(2, n=70, k=20), 40, 2)]
    for x, cap, runs in problems:
        want = _record(x, loss, cap, runs, seed=7, engine=engine_with())
        for setting in settings_to_compare():
            assert _record(x, loss, cap, runs, seed=7, engine=engine_with(**setting)) == want, (loss.name, setting)


@pytest.mark.parametrize("H, n, k, cap", [(40, 300, 24, 30)])
def test_every_path_gives_the_same_runs_with_wider_counts(H: int, n: int, k: int, cap: int) -> None:
    # Tables count in 8 bits up to 255 items and 32 bits beyond (count_types.hpp); the AVX2
    # gather of a pair-count cell sum reads the counts as vectors of each width, in rows of up
    # to 32 slots (a cap of 30 reaches them).
    x = _random_draws(5, H=H, n=n, k=k)
    loss = LOSSES[0]  # Jaccard: its cell sum's increment is the count itself
    want = _record(x, loss, cap, 2, seed=1, engine=engine_with())
    for setting in settings_to_compare():
        assert _record(x, loss, cap, 2, seed=1, engine=engine_with(**setting)) == want, setting


def test_scores_are_the_formula_of_the_moved_partitions() -> None:
    # The score of every candidate slot is H times the expected loss of the partition with the
    # item moved there, each draw's formula evaluated on its own, on the portable path; every
    # other path (the llvmlite kernel included) gives the portable path's bits.
    x = np.asarray(load_draws("galaxy")[:150])
    draws = salsox.Draws(x)
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 5, draws.n_items).astype(np.int32)
    labels = np.unique(labels, return_inverse=True)[1].astype(np.int32)
    settings = settings_to_compare() + [dict(simd=p, countsum_jit=True) for p in _core.simd_paths()]
    for loss in LOSSES:
        compiled = loss._count_loss(draws.n_items)
        for item, allocated in ((0, True), (7, True), (81, True), (7, False)):
            q = labels.max() + 1
            moved = np.repeat(labels[None, :], q + 1, axis=0)
            moved[:, item] = np.arange(q + 1)
            want = salsox.partition_loss(moved, draws, loss) * draws.n_draws
            portable = _core.countsum_scores(draws._core, compiled, labels, item, allocated, engine=engine_with())
            np.testing.assert_allclose(portable, want, rtol=1e-12, atol=1e-9, err_msg=f"{loss.name} {item}")
            for setting in settings:
                engine = engine_with(**setting)
                got = _core.countsum_scores(draws._core, compiled, labels, item, allocated, engine=engine)
                # Bit for bit (a last-bit difference would not show above).
                assert [float(v).hex() for v in got] == [float(v).hex() for v in portable], (loss.name, item, setting)


def _runs(x: np.ndarray, loss: CountSumLoss, max_clusters: int, n_runs: int, n_jobs: int = 1) -> List[Dict[str, Any]]:
    draws = _core.CompactDraws(np.ascontiguousarray(x, dtype=np.int32))
    raw = _core.salso_countsum(draws, loss._count_loss(draws.n), max_clusters, n_runs, seed=7,
                               **{**OPTIONS, "n_jobs": n_jobs})
    runs = [{key: (float(v).hex() if key == "loss" else v) for key, v in r.items() if key not in ("seconds", "threads")}
            for r in raw["runs"]]
    return runs + [{"best": raw["best"], "labels": np.asarray(raw["labels"]).tolist()}]


@pytest.mark.parametrize("name", ["fm-d", "nvi-unclamped"])
def test_a_helping_thread_gives_the_same_runs(name: str) -> None:
    from test_countsum import NVI_UNCLAMPED

    loss = NVI_UNCLAMPED if name == "nvi-unclamped" else next(x for x in LOSSES if x.name == name)
    problems = [(np.asarray(load_draws("galaxy")[:1200]), 20, 3), (_random_draws(2, n=70, k=20), 40, 2)]
    for x, cap, runs in problems:
        assert _runs(x, loss, cap, runs, n_jobs=2) == _runs(x, loss, cap, runs), name


def test_a_new_slot_past_the_table_width_is_read_as_empty() -> None:
    # Tables widen as slots open (7, 14, 28... slots). Count-sum states read the counts of the
    # slot an item goes to before the table widened for it, so a new slot at the edge read the
    # neighbouring row's counts: the running sums went wrong until the next recomputation and
    # runs took other moves than the built-in loss (run 0 here ended 1.6e-4 worse).
    from test_countsum import NVI_UNCLAMPED

    x = _random_draws(2, n=70, k=20)
    builtin = salsox.salso(x, "NVI", seed=7, n_runs=4, max_clusters=40, n_jobs=1)
    countsum = salsox.salso(x, NVI_UNCLAMPED, seed=7, n_runs=4, max_clusters=40, n_jobs=1)
    for a, b in zip(builtin.info["runs"], countsum.info["runs"]):
        assert b["loss"] == pytest.approx(a["loss"], rel=1e-12) and b["scans"] == a["scans"]
    assert np.array_equal(builtin.labels, countsum.labels)
