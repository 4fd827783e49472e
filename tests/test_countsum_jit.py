"""Count-sum formulas compiled to native code (salsox/engine/countsum_jit.py, llvmlite, installed
with the test extras): the compiled dense scores must give the node loops' bits, run by run and
score by score, on every SIMD path; SALSOX_JIT chooses, and says so when it is misused."""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

import salsox
from salsox import _core
from salsox.engine import countsum_jit
from salsox.plugins import CountSumLoss
from conftest import load_draws
from test_countsum import NVI_UNCLAMPED, pairs
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


def _runs(x: np.ndarray, loss: CountSumLoss, cap: int, n_runs: int) -> List[Dict[str, Any]]:
    draws = _core.CompactDraws(np.ascontiguousarray(x, dtype=np.int32))
    compiled = loss._count_loss(draws.n)
    raw = _core.salso_countsum(draws, compiled, cap, n_runs, seed=5, **OPTIONS)
    runs = [{key: (float(v).hex() if key == "loss" else v) for key, v in r.items() if key not in ("seconds", "threads")}
            for r in raw["runs"]]
    return [{"kernel": compiled.dense_kernel}] + runs + [{"labels": np.asarray(raw["labels"]).tolist()}]


@pytest.mark.parametrize("loss", ALL, ids=[x.name for x in ALL])
def test_compiled_formulas_give_the_node_loops_runs(loss: CountSumLoss, monkeypatch: pytest.MonkeyPatch) -> None:
    # 8-bit counts with up to 21 and 41 candidate slots (the gathers of rows up to 32 wide and
    # the plain one), and 16-bit counts (300 items).
    problems = [(np.asarray(load_draws("iris")[:300]), 20, 3), (_random_draws(4, n=70, k=20), 40, 2),
                (_random_draws(5, H=40, n=300, k=24), 30, 2)]
    for x, cap, runs in problems:
        monkeypatch.setenv("SALSOX_SIMD", "baseline")
        monkeypatch.setenv("SALSOX_JIT", "off")
        want = _runs(x, loss, cap, runs)
        assert want[0] == {"kernel": False}
        for path in _core.simd_paths():
            monkeypatch.setenv("SALSOX_SIMD", path)
            for mode in ("off", "on"):
                monkeypatch.setenv("SALSOX_JIT", mode)
                got = _runs(x, loss, cap, runs)
                assert got[0] == {"kernel": mode == "on"}
                assert got[1:] == want[1:], (loss.name, path, mode)


def test_compiled_scores_are_the_node_loops_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    # Score by score, allocated items (moves) and unallocated ones (adds), on a problem whose
    # blocks end mid-vector (slots not a multiple of four).
    x = np.asarray(load_draws("galaxy")[:150])
    draws = salsox.Draws(x)
    labels = np.unique(np.random.default_rng(3).integers(0, 6, draws.n_items), return_inverse=True)[1]
    labels = labels.astype(np.int32)
    for loss in ALL:
        monkeypatch.setenv("SALSOX_JIT", "off")
        plain = loss._count_loss(draws.n_items)
        monkeypatch.setenv("SALSOX_JIT", "on")
        compiled = loss._count_loss(draws.n_items)
        assert compiled.dense_kernel and not plain.dense_kernel
        for item, allocated in ((0, True), (7, True), (81, True), (7, False)):
            want = _core.countsum_scores(draws._core, plain, labels, item, allocated)
            got = _core.countsum_scores(draws._core, compiled, labels, item, allocated)
            assert [float(v).hex() for v in got] == [float(v).hex() for v in want], (loss.name, item, allocated)


def test_kernels_are_compiled_once_per_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SALSOX_JIT", "on")
    loss = CountSumLoss("once", PAIRS, "where(A + B == 0, 0, (A + B - 2 * X) / (A + B + 0.25))")
    first = loss._count_loss(60)
    count = len(countsum_jit._kernels)
    second = loss._count_loss(60)
    assert first.dense_kernel and second.dense_kernel
    assert len(countsum_jit._kernels) == count
    # Parameters are constants of the formula, read at run time: one kernel for every value.
    scaled = CountSumLoss("scaled-once", PAIRS, "where(A + B == 0, 0, (A + B - 2 * X) / (A + B + c))",
                          params={"c": 1.0})
    x = _random_draws(2, H=40, n=40, k=5)
    found = [salsox.salso(x, scaled.with_params(c=c), n_runs=2, seed=3, n_jobs=1).expected_loss for c in (0.5, 2.0)]
    assert len(countsum_jit._kernels) == count + 1
    monkeypatch.setenv("SALSOX_JIT", "off")
    assert found == [salsox.salso(x, scaled.with_params(c=c), n_runs=2, seed=3, n_jobs=1).expected_loss
                     for c in (0.5, 2.0)]


def test_separable_formulas_are_scored_densely_when_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    # NVI as a count sum has a separable form, which the node loops use (sparse scores); compiled,
    # it is scored densely (faster). Both give the formula of the moved partitions, and the same
    # searches up to rounding.
    x = np.asarray(load_draws("galaxy")[:200])
    draws = salsox.Draws(x)
    labels = np.unique(np.random.default_rng(5).integers(0, 6, draws.n_items), return_inverse=True)[1]
    labels = labels.astype(np.int32)
    monkeypatch.setenv("SALSOX_JIT", "on")
    compiled = NVI_UNCLAMPED._count_loss(draws.n_items)
    assert compiled.sparse and compiled.dense_kernel
    for item in (0, 40):
        q = labels.max() + 1
        moved = np.repeat(labels[None, :], q + 1, axis=0)
        moved[:, item] = np.arange(q + 1)
        want = salsox.partition_loss(moved, draws, NVI_UNCLAMPED) * draws.n_draws
        got = _core.countsum_scores(draws._core, compiled, labels, item, True)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    dense = salsox.salso(draws, NVI_UNCLAMPED, n_runs=6, seed=2, n_jobs=1)
    monkeypatch.setenv("SALSOX_JIT", "off")
    sparse = salsox.salso(draws, NVI_UNCLAMPED, n_runs=6, seed=2, n_jobs=1)
    np.testing.assert_array_equal(dense.labels, sparse.labels)
    assert dense.expected_loss == pytest.approx(sparse.expected_loss, rel=1e-12)


def test_a_bad_setting_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SALSOX_JIT", "fast")
    with pytest.raises(ValueError, match="SALSOX_JIT must be one of auto, on, off; got 'fast'"):
        LOSSES[0]._count_loss(30)


def test_on_without_llvmlite_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise ImportError("No module named 'llvmlite'")

    monkeypatch.setattr(countsum_jit, "_binding", missing)
    monkeypatch.setenv("SALSOX_JIT", "on")
    with pytest.raises(ImportError, match=r'pip install "salsox\[jit\]"'):
        LOSSES[0]._count_loss(30)
    # auto falls back to the node loops, with the same results.
    monkeypatch.setenv("SALSOX_JIT", "auto")
    assert not LOSSES[0]._count_loss(30).dense_kernel
    assert not countsum_jit.kernel_available()


def test_a_formula_llvmlite_cannot_compile_falls_back_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> None:
        raise AttributeError("module 'llvmlite.binding' has no attribute 'create_pass_builder'")

    monkeypatch.setattr(countsum_jit, "_compile", broken)
    monkeypatch.setattr(countsum_jit, "_kernels", {})
    monkeypatch.setenv("SALSOX_JIT", "auto")
    loss = CountSumLoss("uncompiled", PAIRS, "where(A + B == 0, 0, (A + B - 2 * X) / (A + B + 0.5))")
    with pytest.warns(RuntimeWarning, match="uncompiled.*could not compile the formula with llvmlite"):
        assert not loss._count_loss(30).dense_kernel
    assert not loss._count_loss(30).dense_kernel  # not tried again
    x = _random_draws(3, H=30, n=30, k=4)
    est = salsox.salso(x, loss, n_runs=2, seed=1, n_jobs=1)
    monkeypatch.setenv("SALSOX_JIT", "off")
    assert salsox.salso(x, loss, n_runs=2, seed=1, n_jobs=1).expected_loss == est.expected_loss
    monkeypatch.setenv("SALSOX_JIT", "on")
    with pytest.raises(RuntimeError, match="could not compile"):
        loss._count_loss(30)
