"""Count-sum formulas compiled to native code (salsox/engine/countsum_jit.py, llvmlite, installed
with the test extras): the compiled dense scores must give the node loops' bits, run by run and
score by score, on every SIMD path, the kernel turned off through _core.EngineOptions.countsum_jit."""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

import salsox
from salsox import _core
from salsox.engine import countsum_jit
from salsox.plugins import CountSumLoss
from conftest import load_draws
from test_countsum import pairs
from test_countsum_dense import LOSSES, OPTIONS
from test_engine_simd import _random_draws

PAIRS = {"X": ("cell", pairs), "B": ("estimate", pairs), "A": ("draw", pairs)}
# Every operation the kernel compiles that LOSSES do not use: neg, not, log2, pow of two Full
# values, comparisons of each kind, and/or, max, ne, and where with Full branches.
EVERY_OP = CountSumLoss(
    "every-op",
    PAIRS,
    "where(A + B == 0, 0, (A + B - 2 * X) / (1 + A + B) * (1 + 0.5 * ((X > A) + (X >= B) + (X <= 1)"
    " + (X != B) + (not X) + ((X > 0) and (A > X)) + ((X == 0) or (B < X))) / 7"
    " + 0.01 * abs(-log2(1 + X) + max(X, A) * 0 + (1 + X / (1 + B)) ** (1 / (1 + A)) - 1)))",
)
ALL = LOSSES + [EVERY_OP]


def _engine(jit: bool, simd: str = "") -> Any:
    """The engine's settings with the kernel on or off (the options struct, not the environment)."""
    engine = _core.EngineOptions()
    engine.countsum_jit = jit
    if simd:
        engine.simd = simd
    return engine


def _runs(x: np.ndarray, loss: CountSumLoss, cap: int, n_runs: int, engine: Any) -> List[Dict[str, Any]]:
    draws = _core.CompactDraws(np.ascontiguousarray(x, dtype=np.int32))
    compiled = loss._count_loss(draws.n)
    assert compiled.dense_kernel  # llvmlite comes with the test extras: every formula here compiles
    raw = _core.salso_countsum(draws, compiled, cap, n_runs, seed=5, engine=engine, **OPTIONS)
    runs = [{key: (float(v).hex() if key == "loss" else v) for key, v in r.items() if key not in ("seconds", "threads")}
            for r in raw["runs"]]
    return runs + [{"labels": np.asarray(raw["labels"]).tolist()}]


@pytest.mark.parametrize("loss", ALL, ids=[x.name for x in ALL])
def test_compiled_formulas_give_the_node_loops_runs(loss: CountSumLoss) -> None:
    # 8-bit counts with up to 21 and 41 candidate slots (the gathers of rows up to 32 wide and
    # the plain one), and 32-bit counts (300 items).
    problems = [(np.asarray(load_draws("iris")[:300]), 20, 3), (_random_draws(4, n=70, k=20), 40, 2),
                (_random_draws(5, H=40, n=300, k=24), 30, 2)]
    for x, cap, runs in problems:
        want = _runs(x, loss, cap, runs, _engine(False, "baseline"))
        for path in _core.simd_paths():
            for jit in (False, True):
                assert _runs(x, loss, cap, runs, _engine(jit, path)) == want, (loss.name, path, jit)


def test_compiled_scores_are_the_node_loops_bits() -> None:
    # Score by score, allocated items (moves) and unallocated ones (adds), on a problem whose
    # blocks end mid-vector (slots not a multiple of four).
    x = np.asarray(load_draws("galaxy")[:150])
    draws = salsox.Draws(x)
    labels = np.unique(np.random.default_rng(3).integers(0, 6, draws.n_items), return_inverse=True)[1]
    labels = labels.astype(np.int32)
    for loss in ALL:
        compiled = loss._count_loss(draws.n_items)
        assert compiled.dense_kernel
        for item, allocated in ((0, True), (7, True), (81, True), (7, False)):
            want = _core.countsum_scores(draws._core, compiled, labels, item, allocated, engine=_engine(False))
            got = _core.countsum_scores(draws._core, compiled, labels, item, allocated, engine=_engine(True))
            assert [float(v).hex() for v in got] == [float(v).hex() for v in want], (loss.name, item, allocated)


def test_kernels_are_compiled_once_per_formula() -> None:
    loss = CountSumLoss("once", PAIRS, "where(A + B == 0, 0, (A + B - 2 * X) / (A + B + 0.25))")
    first = loss._count_loss(60)
    count = len(countsum_jit._kernels)
    second = loss._count_loss(60)
    assert first.dense_kernel and second.dense_kernel
    assert len(countsum_jit._kernels) == count
    # Parameters are constants of the formula, read at run time: one kernel for every value, and
    # each value's scores those of the node loops.
    scaled = CountSumLoss("scaled-once", PAIRS, "where(A + B == 0, 0, (A + B - 2 * X) / (A + B + c))",
                          params={"c": 1.0})
    draws = salsox.Draws(_random_draws(2, H=40, n=40, k=5))
    labels = (np.arange(40) % 4).astype(np.int32)
    for c in (0.5, 2.0):
        compiled = scaled.with_params(c=c)._count_loss(40)
        got = [_core.countsum_scores(draws._core, compiled, labels, 3, True, engine=_engine(jit))
               for jit in (True, False)]
        assert [float(v).hex() for v in got[0]] == [float(v).hex() for v in got[1]], c
    assert len(countsum_jit._kernels) == count + 1


def test_without_llvmlite_the_node_loops_run_and_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise ImportError("No module named 'llvmlite'")

    monkeypatch.setattr(countsum_jit, "_binding", missing)
    compiled = LOSSES[0]._count_loss(30)
    assert not compiled.dense_kernel and not countsum_jit.kernel_available()
    assert 'pip install "salsox[jit]"' in countsum_jit.why_not_compiled(compiled)


def test_a_formula_llvmlite_cannot_compile_falls_back_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> None:
        raise AttributeError("module 'llvmlite.binding' has no attribute 'create_pass_builder'")

    monkeypatch.setattr(countsum_jit, "_compile", broken)
    monkeypatch.setattr(countsum_jit, "_kernels", {})
    loss = CountSumLoss("uncompiled", PAIRS, "where(A + B == 0, 0, (A + B - 2 * X) / (A + B + 0.5))")
    with pytest.warns(RuntimeWarning, match="uncompiled.*could not compile the formula with llvmlite"):
        assert not loss._count_loss(30).dense_kernel
    assert not loss._count_loss(30).dense_kernel  # not tried again
    assert "could not compile" in countsum_jit.why_not_compiled(loss._count_loss(30))
    x = _random_draws(3, H=30, n=30, k=4)
    assert salsox.salso(x, loss, n_runs=2, seed=1, n_jobs=1).expected_loss >= 0.0
