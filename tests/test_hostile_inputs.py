"""A table of hostile inputs for every public function and CLI command.

Wrong types, NaN/inf, empty, one item, one draw, huge label values, more than 65,535 clusters,
mismatched shapes, non-contiguous and read-only arrays, negative/zero/huge parameters. Each
must give either a clear exception (the right type, a message naming the culprit) or the
correct answer, and never modify its input: every array is passed read-only and compared with
a copy afterwards.

Cases that could take the process down (huge thread counts, huge allocations) run in a
subprocess with a 4 GiB address-space limit, so that a failure is a test failure rather than a
crashed test run or an exhausted machine.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import inspect
import re
import math
import os
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type, Union

import numpy as np
import pytest

import salsox
from salsox import PSM

# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

# A small, valid problem: 4 draws of 5 items, labels starting at 1 with gaps.
BASE = np.array([[1, 1, 2, 2, 3], [1, 1, 1, 2, 2], [5, 5, 6, 6, 6], [1, 2, 2, 3, 3]], dtype=np.int64)
N = BASE.shape[1]
EST = np.array([0, 0, 1, 1, 1])


def ro(x: Any, dtype: Any = None) -> np.ndarray:
    """A read-only copy (layout preserved for views: see the callers)."""
    a = np.array(x, dtype=dtype, copy=True)
    a.setflags(write=False)
    return a


def ro_view(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (keeps non-contiguity and strides)."""
    v = a.view()
    v.setflags(write=False)
    return v


def canonical(labels: Sequence[int]) -> np.ndarray:
    _, first, inverse = np.unique(np.asarray(labels), return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inverse.reshape(-1)]


def relabel_huge(draws: np.ndarray) -> np.ndarray:
    """The same partitions with labels spread over the whole int64 range."""
    values = np.array([np.iinfo(np.int64).min, -(2**62), -1, 0, 2**40, 2**62, np.iinfo(np.int64).max])
    out = np.empty_like(draws, dtype=np.int64)
    for h, row in enumerate(draws):
        out[h] = values[canonical(row) % len(values)]
        assert len(np.unique(row)) <= len(values)
    return out


def one_draw_many_clusters(k: int) -> np.ndarray:
    """One draw of k items, each alone (k clusters), labels shuffled."""
    return ro(np.random.default_rng(0).permutation(k)[None, :])


# Valid draws in hostile forms, all the same partitions as BASE (the answers must not change).
def valid_draws_variants() -> Dict[str, Callable[[], np.ndarray]]:
    fortran = np.asfortranarray(BASE)
    wide = np.zeros((BASE.shape[0], 2 * N), dtype=np.int64)
    wide[:, ::2] = BASE
    reversed_ = BASE[::-1, ::-1].copy()[::-1, ::-1]  # negative strides, same order as BASE
    return {
        "int64": lambda: ro(BASE),
        "int32": lambda: ro(BASE, np.int32),
        "int8": lambda: ro(BASE, np.int8),
        "uint8": lambda: ro(BASE, np.uint8),
        "uint16": lambda: ro(BASE, np.uint16),
        "uint32": lambda: ro(BASE, np.uint32),
        "uint64-huge": lambda: ro(BASE.astype(np.uint64) + np.uint64(2**64 - 100)),
        "int64-huge-labels": lambda: ro(relabel_huge(BASE)),
        "float-integral": lambda: ro(BASE, np.float64),
        "float32-integral": lambda: ro(BASE, np.float32),
        "negative-labels": lambda: ro(-BASE),
        "fortran-order": lambda: ro_view(fortran),
        "non-contiguous": lambda: ro_view(wide[:, ::2]),
        "negative-strides": lambda: ro_view(reversed_),
        "transposed-view": lambda: ro_view(BASE.T.copy().T),
        "nested-list": lambda: BASE.tolist(),
        "tuple-of-tuples": lambda: tuple(tuple(r) for r in BASE.tolist()),
    }


# Invalid draws: (value, exception type, message pattern).
BAD_DRAWS: Dict[str, Tuple[Callable[[], Any], Type[BaseException], str]] = {
    "string": (lambda: "1 2 3", (TypeError, ValueError), "draws|string"),
    "bytes": (lambda: b"\x01\x02", (TypeError, ValueError), "draws|string"),
    "None": (lambda: None, (TypeError, ValueError), "draws|label"),
    "scalar": (lambda: 3, ValueError, "draws|2-D|1-D|0-D"),
    "dict": (lambda: {"a": 1}, (TypeError, ValueError), "draws|label"),
    "ragged": (lambda: [[1, 2, 3], [1, 2]], ValueError, "draws|ragged|rectangular"),
    "strings-array": (lambda: ro([["a", "b"], ["c", "d"]]), TypeError, "draws|dtype|integer"),
    "object-array": (lambda: ro(np.array([[1, "x"], [2, 3]], dtype=object)), (TypeError, ValueError), "draws|integer"),
    "complex": (lambda: ro(BASE.astype(complex)), TypeError, "draws|dtype|integer"),
    "datetime": (lambda: ro(BASE.astype("datetime64[s]")), TypeError, "draws|dtype|integer"),
    "nan": (lambda: ro(np.where(BASE == 2, np.nan, BASE)), ValueError, "NaN"),
    "inf": (lambda: ro(np.where(BASE == 2, np.inf, BASE)), ValueError, "infinite"),
    "-inf": (lambda: ro(np.where(BASE == 2, -np.inf, BASE)), ValueError, "infinite"),
    "non-integral": (lambda: ro(BASE + 0.5), ValueError, "integ"),
    "float-too-large": (lambda: ro(BASE * 1e300), ValueError, "large"),
    "empty-list": (lambda: [], ValueError, "draws|items|empty|no "),
    "empty-0xn": (lambda: ro(np.empty((0, 5), dtype=np.int64)), ValueError, "no draws|H = 0|no partitions"),
    "empty-Hx0": (lambda: ro(np.empty((4, 0), dtype=np.int64)), ValueError, "no items|n = 0"),
    "3-D": (lambda: ro(BASE[None]), ValueError, "2-D|3-D"),
    "65537-clusters": (lambda: one_draw_many_clusters(65537), ValueError, "65536"),
}


# ---------------------------------------------------------------------------------------------
# The case table
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    """``make()`` returns (function, args, kwargs); then either ``raises`` or ``check(result)``."""

    id: str
    make: Callable[[], Tuple[Callable[..., Any], Sequence[Any], Dict[str, Any]]]
    raises: Union[None, Type[BaseException], Tuple[Type[BaseException], ...]] = None
    match: Optional[str] = None
    check: Optional[Callable[[Any], None]] = None
    isolated: bool = False  # run in a subprocess under an address-space limit
    or_raises: Optional[Type[BaseException]] = None  # an acceptable alternative to ``check``


CASES: List[Case] = []


def _lazy(x: Any) -> bool:
    """A zero-argument lambda stands for an input built afresh for each run."""
    if not (callable(x) and getattr(x, "__name__", "") == "<lambda>"):
        return False
    params = inspect.signature(x).parameters.values()
    return all(p.default is not inspect.Parameter.empty for p in params)


def case(
    id: str,
    fn: Callable[..., Any],
    *args: Any,
    raises: Any = None,
    match: Optional[str] = None,
    check: Optional[Callable[[Any], None]] = None,
    isolated: bool = False,
    **kwargs: Any,
) -> None:
    """Register ``fn(*args, **kwargs)``; zero-argument lambdas among the arguments are built per run."""

    def make() -> Tuple[Callable[..., Any], Sequence[Any], Dict[str, Any]]:
        return fn, [a() if _lazy(a) else a for a in args], {k: v() if _lazy(v) else v for k, v in kwargs.items()}

    add(Case(id, make, raises, match, check, isolated))


def add(c: Case) -> None:
    assert c.id not in {x.id for x in CASES}, c.id
    assert (c.raises is None) != (c.check is None) or c.or_raises, c.id
    CASES.append(c)


# Reference answers, computed on the plain int64 C-contiguous BASE.
def _ref_salso(loss: Any = "VI", **kw: Any) -> salsox.Estimate:
    return salsox.salso(BASE, loss, seed=7, n_jobs=1, n_runs=4, **kw)


def same_estimate(loss: Any = "VI", **kw: Any) -> Callable[[Any], None]:
    def check(est: Any) -> None:
        ref = _ref_salso(loss, **kw)
        np.testing.assert_array_equal(est.labels, ref.labels)
        assert est.expected_loss == ref.expected_loss
        assert est.n_clusters == ref.n_clusters

    return check


def equals(expected: Any, rel: float = 0.0) -> Callable[[Any], None]:
    def check(got: Any) -> None:
        exp = expected() if callable(expected) else expected
        if rel:
            np.testing.assert_allclose(got, exp, rtol=rel, atol=0)
        else:
            np.testing.assert_array_equal(got, exp)

    return check


def finite_nonnegative(got: Any) -> None:
    value = got.expected_loss if isinstance(got, salsox.Estimate) else got
    assert np.all(np.isfinite(value)) and np.all(np.asarray(value) >= 0), value


def one_item_estimate(est: Any) -> None:
    np.testing.assert_array_equal(est.labels, [0])
    assert est.n_clusters == 1 and est.expected_loss == 0.0


def same_draws_as_base(rows: Any) -> None:
    assert len(rows) == BASE.shape[0]
    for r, b in zip(rows, BASE):
        np.testing.assert_array_equal(canonical(r), canonical(b))


def one_item_enumeration(res: Any) -> None:
    np.testing.assert_array_equal(res.labels, [0])
    assert res.expected_loss == 0.0, res.expected_loss


def capped_at_two(est: Any) -> None:
    assert est.n_clusters <= 2, est.n_clusters
    assert np.isfinite(est.expected_loss), est.expected_loss


def at_least_one_run(est: Any) -> None:
    # A budget too small for any run still completes one (documented), with a real estimate.
    assert est.info["runs_done"] == 1 and est.info["budget_exhausted"], est.info
    finite_nonnegative(est)


def equals_draw(draw: Sequence[int]) -> Callable[[Any], None]:
    def check(est: Any) -> None:
        np.testing.assert_array_equal(est.labels, canonical(draw))
        assert est.expected_loss == 0.0

    return check


def exact_binder(estimate: Sequence[int], draws: np.ndarray, a: float, b: float) -> float:
    """The n-invariant generalised Binder loss in exact rational arithmetic."""
    n = len(estimate)
    total = Fraction(0)
    for row in draws:
        table: Dict[Tuple[int, int], int] = {}
        for x, y in zip(row.tolist(), list(estimate)):
            table[(x, y)] = table.get((x, y), 0) + 1
        s = Fraction(0)
        for x in set(row.tolist()):
            s += Fraction(a) * Fraction(int(np.sum(row == x))) ** 2
        for y in set(estimate):
            s += Fraction(b) * Fraction(sum(1 for v in estimate if v == y)) ** 2
        for c in table.values():
            s -= (Fraction(a) + Fraction(b)) * Fraction(c) ** 2
        total += s / n**2
    return float(total / len(draws))


LOSS_NAMES = ["VI", "binder", "omARI", "NVI", "ID", "NID", "VI.lb", "omARI.approx"]

# ---- draws-taking functions: every invalid draws value ---------------------------------------
DRAWS_FUNCTIONS: Dict[str, Callable[[Any], Tuple[Callable[..., Any], Sequence[Any], Dict[str, Any]]]] = {
    "salso": lambda d: (salsox.salso, [d], dict(seed=1, n_runs=2)),
    "salso-VI.lb": lambda d: (salsox.salso, [d, "VI.lb"], dict(seed=1, n_runs=2)),
    "partition_loss": lambda d: (salsox.partition_loss, [ro(EST), d], {}),
    "psm": lambda d: (salsox.psm, [d], {}),
    "Draws": lambda d: (salsox.Draws, [d], {}),
    "dlso": lambda d: (salsox.dlso, [d], {}),
    "minimize_by_enumeration": lambda d: (salsox.minimize_by_enumeration, [d], {}),
}

for fname, build in DRAWS_FUNCTIONS.items():
    for dname, (value, exc, pattern) in BAD_DRAWS.items():
        if dname == "65537-clusters" and fname == "minimize_by_enumeration":
            continue  # its limit of 12 items applies first
        if dname == "65537-clusters" and fname == "partition_loss":
            continue  # one draw is one partition: any number of clusters (tests/test_reader_edges.py)
        add(
            Case(
                f"{fname}[draws={dname}]",
                (lambda b, v: lambda: b(v()))(build, value),
                raises=exc,
                match=pattern + "|truth",
            )
        )

# Valid draws in hostile forms give the answers of the plain matrix.
for dname, value in valid_draws_variants().items():
    case(f"salso[draws={dname}]", salsox.salso, value, seed=7, n_jobs=1, n_runs=4, check=same_estimate())
    case(
        f"salso-binder[draws={dname}]",
        salsox.salso,
        value,
        "binder",
        seed=7,
        n_jobs=1,
        n_runs=4,
        check=same_estimate("binder"),
    )
    case(
        f"partition_loss[draws={dname}]",
        salsox.partition_loss,
        lambda: ro(EST),
        value,
        "VI",
        check=equals(lambda: salsox.partition_loss(EST, BASE, "VI")),
    )
    case(f"psm[draws={dname}]", salsox.psm, value, check=equals(lambda: salsox.psm(BASE)))
    case(
        f"dlso[draws={dname}]",
        salsox.dlso,
        value,
        check=lambda est: np.testing.assert_array_equal(est.labels, salsox.dlso(BASE).labels),
    )
    case(
        f"minimize_by_enumeration[draws={dname}]",
        salsox.minimize_by_enumeration,
        value,
        "binder",
        check=lambda res: np.testing.assert_array_equal(
            res.labels, salsox.minimize_by_enumeration(BASE, "binder").labels
        ),
    )
    case(
        f"Draws[draws={dname}]",
        lambda d: [salsox.Draws(d).draw(h) for h in range(BASE.shape[0])],
        value,
        check=same_draws_as_base,
    )

# One item, one draw, both; 65,536 clusters (the most supported) in one draw.
ONE_ITEM = lambda: ro([[3], [7], [1]])
ONE_DRAW = lambda: ro([[4, 4, 9, 9, 1, 4]])
for loss in LOSS_NAMES:
    case(f"salso[one-item,{loss}]", salsox.salso, ONE_ITEM, loss, seed=1, check=one_item_estimate)
    case(f"salso[one-draw,{loss}]", salsox.salso, ONE_DRAW, loss, seed=1, check=equals_draw([4, 4, 9, 9, 1, 4]))
    case(f"salso[one-item-one-draw,{loss}]", salsox.salso, lambda: ro([[5]]), loss, seed=1, check=one_item_estimate)
    case(f"partition_loss[one-item,{loss}]", salsox.partition_loss, lambda: ro([0]), ONE_ITEM, loss, check=equals(0.0))
    case(
        f"partition_loss[one-draw,{loss}]",
        salsox.partition_loss,
        lambda: ro([7, 7, 0, 0, 3, 7]),
        ONE_DRAW,
        loss,
        check=equals(0.0),
    )
    case(f"dlso[one-item,{loss}]", salsox.dlso, ONE_ITEM, loss, check=one_item_estimate)
    case(
        f"minimize_by_enumeration[one-item,{loss}]",
        salsox.minimize_by_enumeration,
        ONE_ITEM,
        loss,
        check=one_item_enumeration,
    )
case("psm[one-item]", salsox.psm, ONE_ITEM, check=equals(np.ones((1, 1))))
case(
    "psm[one-draw]",
    salsox.psm,
    ONE_DRAW,
    check=equals(
        lambda: (canonical([4, 4, 9, 9, 1, 4])[:, None] == canonical([4, 4, 9, 9, 1, 4])[None, :]).astype(float)
    ),
)
case(
    "Draws[one-item]", lambda d: (salsox.Draws(d).n_items, salsox.Draws(d).max_clusters), ONE_ITEM, check=equals((1, 1))
)
case(
    "Draws[65536-clusters]",
    lambda d: (salsox.Draws(d).max_clusters, salsox.Draws(d).label_bits),
    lambda: one_draw_many_clusters(65536),
    check=equals((65536, 16)),
)
case(
    "partition_loss[65536-clusters,one-cluster-estimate]",
    salsox.partition_loss,
    lambda: ro(np.zeros(65536, dtype=np.int64)),
    lambda: one_draw_many_clusters(65536),
    "binder",
    check=equals(1.0 - 1.0 / 65536, rel=1e-12),
)
case(
    "salso[65536-clusters,capped]",
    salsox.salso,
    lambda: one_draw_many_clusters(65536),
    max_clusters=2,
    n_runs=1,
    max_scans=1,
    max_zealous=0,
    seed=1,
    check=capped_at_two,
)
# The estimate of 65,536 singletons against 65,536 singletons: 17 GB of count tables if done
# naively; a clear MemoryError or the answer 0 are both fine, a crash is not.
add(
    Case(
        "partition_loss[65536-clusters,singletons-estimate]",
        lambda: (salsox.partition_loss, [ro(np.arange(65536)), one_draw_many_clusters(65536), "VI"], {}),
        check=equals(0.0),
        or_raises=MemoryError,
        isolated=True,
    )
)

# ---- salso parameters ------------------------------------------------------------------------
D = lambda: ro(BASE)
P = "VI"
bad_params: List[Tuple[str, Dict[str, Any], Any, str]] = [
    # loss
    ("loss=123", dict(loss=123), TypeError, "loss"),
    ("loss=None", dict(loss=None), TypeError, "loss"),
    ("loss=unknown", dict(loss="no-such-loss"), ValueError, "unknown loss"),
    ("loss=empty-string", dict(loss=""), ValueError, "unknown loss"),
    ("loss=list", dict(loss=["VI"]), TypeError, "loss"),
    # max_clusters
    ("max_clusters=0", dict(max_clusters=0), ValueError, "max_clusters"),
    ("max_clusters=-1", dict(max_clusters=-1), ValueError, "max_clusters"),
    ("max_clusters=2.5", dict(max_clusters=2.5), TypeError, "max_clusters"),
    ("max_clusters=str", dict(max_clusters="3"), TypeError, "max_clusters"),
    ("max_clusters=True", dict(max_clusters=True), TypeError, "max_clusters"),
    ("max_clusters=nan", dict(max_clusters=float("nan")), TypeError, "max_clusters"),
    # n_runs
    ("n_runs=0", dict(n_runs=0), ValueError, "n_runs"),
    ("n_runs=-3", dict(n_runs=-3), ValueError, "n_runs"),
    ("n_runs=1.0", dict(n_runs=1.0), TypeError, "n_runs"),
    ("n_runs=None", dict(n_runs=None), TypeError, "n_runs"),
    ("n_runs=2**62", dict(n_runs=2**62), (ValueError, MemoryError), "n_runs"),
    ("n_runs=2**64", dict(n_runs=2**64), (ValueError, MemoryError, OverflowError), "n_runs"),
    # max_zealous
    ("max_zealous=-1", dict(max_zealous=-1), ValueError, "max_zealous"),
    ("max_zealous=0.5", dict(max_zealous=0.5), TypeError, "max_zealous"),
    # prob_sequential
    ("prob_sequential=-0.1", dict(prob_sequential=-0.1), ValueError, "prob_sequential"),
    ("prob_sequential=1.5", dict(prob_sequential=1.5), ValueError, "prob_sequential"),
    ("prob_sequential=nan", dict(prob_sequential=float("nan")), ValueError, "prob_sequential"),
    ("prob_sequential=inf", dict(prob_sequential=float("inf")), ValueError, "prob_sequential"),
    ("prob_sequential=str", dict(prob_sequential="0.5"), TypeError, "prob_sequential"),
    # max_scans
    ("max_scans=0", dict(max_scans=0), ValueError, "max_scans"),
    ("max_scans=-1", dict(max_scans=-1), ValueError, "max_scans"),
    ("max_scans=1.5", dict(max_scans=1.5), TypeError, "max_scans"),
    # seconds
    ("seconds=0", dict(seconds=0), ValueError, "seconds"),
    ("seconds=-1", dict(seconds=-1.0), ValueError, "seconds"),
    ("seconds=nan", dict(seconds=float("nan")), ValueError, "seconds"),
    ("seconds=inf", dict(seconds=float("inf")), ValueError, "seconds"),
    ("seconds=str", dict(seconds="1"), TypeError, "seconds"),
    # n_jobs
    ("n_jobs=0", dict(n_jobs=0), ValueError, "n_jobs"),
    ("n_jobs=-2", dict(n_jobs=-2), ValueError, "n_jobs"),
    ("n_jobs=1.5", dict(n_jobs=1.5), TypeError, "n_jobs"),
    ("n_jobs=str", dict(n_jobs="2"), TypeError, "n_jobs"),
    # seed
    ("seed=-1", dict(seed=-1), ValueError, "seed"),
    ("seed=2**64", dict(seed=2**64), ValueError, "seed"),
    ("seed=1.5", dict(seed=1.5), TypeError, "seed"),
    ("seed=str", dict(seed="1"), TypeError, "seed"),
    # memory_limit, engine, initializer
    ("memory_limit=0", dict(memory_limit=0), ValueError, "memory_limit"),
    ("memory_limit=-1", dict(memory_limit=-1), ValueError, "memory_limit"),
    ("memory_limit=1", dict(memory_limit=1), MemoryError, "memory_limit"),
    ("engine=bogus", dict(engine="bogus"), ValueError, "engine"),
    ("engine=3", dict(engine=3), (TypeError, ValueError), "engine"),
    ("engine=coclustering-VI", dict(engine="coclustering"), ValueError, "coclustering"),
    ("initializer=unknown", dict(initializer="no-such-initializer"), ValueError, "initializer|no-such-initializer"),
    ("initializer=123", dict(initializer=123), (TypeError, ValueError), "initializer"),
    ("prob_initializer-alone", dict(prob_initializer=0.5), ValueError, "prob_initializer"),
    (
        "prob_initializer=2",
        dict(prob_initializer=2.0, initializer=lambda d, k, rng: np.zeros(d.shape[1])),
        ValueError,
        "prob_initializer",
    ),
    ("progress=str", dict(progress="yes"), TypeError, "progress"),
    ("progress=3", dict(progress=3), TypeError, "progress"),
    ("unknown-keyword", dict(n_run=3), TypeError, "n_run"),
]
for pid, kw, exc, pattern in bad_params:
    kw = dict(kw)
    loss = kw.pop("loss", P)
    case(f"salso[{pid}]", salsox.salso, D, loss, raises=exc, match=pattern, **kw)

# Losses with bad costs fail when constructed.
for cls in (salsox.Binder, salsox.VI):
    for pid, kw, exc in [
        ("a=0", dict(a=0.0), ValueError),
        ("a=-1", dict(a=-1.0), ValueError),
        ("b=0", dict(b=0), ValueError),
        ("a=nan", dict(a=float("nan")), ValueError),
        ("b=inf", dict(b=float("inf")), ValueError),
        ("a=str", dict(a="1"), TypeError),
        ("b=True", dict(b=True), TypeError),
        ("a=None", dict(a=None), TypeError),
        ("a=complex", dict(a=1j), TypeError),
    ]:
        # The message names the offending cost and what is wrong with it.
        what = "must be finite and > 0" if exc is ValueError else "must be a positive real number"
        case(f"{cls.__name__}[{pid}]", cls, raises=exc, match=f"^{pid[0]} {what}, got ", **kw)
    case(
        f"get_loss[{cls.name},a=-1]",
        salsox.losses.get_loss,
        cls.name,
        a=-1.0,
        raises=ValueError,
        match=r"^a must be finite and > 0, got -1\.0",
    )

# Huge parameters that are meaningful give the answer of their largest effective value.
case(
    "salso[max_clusters=10**30]",
    salsox.salso,
    D,
    seed=7,
    n_jobs=1,
    n_runs=4,
    max_clusters=10**30,
    check=same_estimate(max_clusters=N),
)
case(
    "salso[max_zealous=2**40]",
    salsox.salso,
    D,
    seed=7,
    n_jobs=1,
    n_runs=4,
    max_zealous=2**40,
    check=same_estimate(max_zealous=N),
)
case("salso[max_scans=2**70]", salsox.salso, D, seed=7, n_jobs=1, n_runs=4, max_scans=2**70, check=same_estimate())
case("salso[seconds=1e300]", salsox.salso, D, seed=7, n_jobs=1, n_runs=4, seconds=1e300, check=same_estimate())
case(
    "salso[seconds=tiny]",
    salsox.salso,
    D,
    seed=7,
    n_jobs=1,
    n_runs=4,
    seconds=5e-324,
    check=at_least_one_run,
)
case(
    "salso[memory_limit=2**70]", salsox.salso, D, seed=7, n_jobs=1, n_runs=4, memory_limit=2**70, check=same_estimate()
)
case("salso[seed=2**64-1]", salsox.salso, D, seed=2**64 - 1, n_jobs=1, check=finite_nonnegative)
case(
    "salso[numpy-int-params]",
    salsox.salso,
    D,
    seed=np.uint64(7),
    n_jobs=np.int8(1),
    n_runs=np.int64(4),
    check=same_estimate(),
)
case("salso[n_jobs=10**6]", salsox.salso, D, seed=7, n_runs=4, n_jobs=10**6, isolated=True, check=same_estimate())
case(
    "salso[VI.lb,n_jobs=10**6]",
    salsox.salso,
    D,
    "VI.lb",
    seed=7,
    n_runs=4,
    n_jobs=10**6,
    isolated=True,
    check=same_estimate("VI.lb"),
)
case("salso[n_runs=10**9]", salsox.salso, D, seed=7, n_runs=10**9, seconds=0.5, isolated=True, check=finite_nonnegative)
# Extreme but valid costs: a finite, accurate loss (or a clear exception), never NaN or 0 for
# estimates that differ from the draws.
for pid, loss in [
    ("Binder(1e308,1e308)", salsox.Binder(1e308, 1e308)),
    ("VI(1e308,1e308)", salsox.VI(1e308, 1e308)),
    ("Binder(1e-300,1e-300)", salsox.Binder(1e-300, 1e-300)),
]:
    case(f"salso[{pid}]", salsox.salso, D, loss, seed=1, check=finite_nonnegative)
    case(f"partition_loss[{pid}]", salsox.partition_loss, lambda: ro(EST), D, loss, check=finite_nonnegative)
case(
    "partition_loss[Binder(1e200,1)]",
    salsox.partition_loss,
    lambda: ro(np.zeros(N, int)),
    D,
    salsox.Binder(1e200, 1.0),
    check=equals(exact_binder([0] * N, BASE, 1e200, 1.0), rel=1e-9),
)
case(
    "partition_loss[Binder(1,1e-17)]",
    salsox.partition_loss,
    lambda: ro(np.arange(N)),
    D,
    salsox.Binder(1.0, 1e-17),
    check=equals(exact_binder(list(range(N)), BASE, 1.0, 1e-17), rel=1e-9),
)

# ---- partition_loss --------------------------------------------------------------------------
for eid, est, exc, pattern in [
    ("estimate=too-long", lambda: ro(np.zeros(N + 1, int)), ValueError, "estimate.*items|items"),
    ("estimate=too-short", lambda: ro(np.zeros(N - 1, int)), ValueError, "estimate.*items|items"),
    ("estimate=2-D-wrong-width", lambda: ro(np.zeros((3, N + 2), int)), ValueError, "estimate"),
    ("estimate=3-D", lambda: ro(np.zeros((2, 2, N), int)), ValueError, "estimate"),
    ("estimate=empty", lambda: ro(np.zeros(0, int)), ValueError, "estimate"),
    ("estimate=0xn", lambda: ro(np.zeros((0, N), int)), ValueError, "estimate"),
    ("estimate=nan", lambda: ro([0, 1, np.nan, 1, 0]), ValueError, "NaN"),
    ("estimate=inf", lambda: ro([0, 1, np.inf, 1, 0]), ValueError, "infinite"),
    ("estimate=non-integral", lambda: ro([0, 1, 0.5, 1, 0]), ValueError, "integ"),
    ("estimate=strings", lambda: ro(["a"] * N), TypeError, "estimate"),
    ("estimate=string", lambda: "00111", TypeError, "estimate"),
    ("estimate=None", lambda: None, (TypeError, ValueError), "estimate"),
    ("estimate=ragged", lambda: [[0, 1], [0]], ValueError, "estimate"),
    ("estimate=complex", lambda: ro(np.zeros(N, complex)), TypeError, "estimate"),
]:
    case(f"partition_loss[{eid}]", salsox.partition_loss, est, D, raises=exc, match=pattern)
for eid, est, ref in [
    ("estimate=negative-labels", lambda: ro([0, -1, -1, 0, 0]), [0, 1, 1, 0, 0]),
    ("estimate=negative-labels-2", lambda: ro([0, 1, -1, 1, 0]), [0, 1, 2, 1, 0]),
    ("estimate=all-negative", lambda: ro([-5, -5, -7, -7, -7]), [0, 0, 1, 1, 1]),
    ("estimate=huge-labels", lambda: ro([2**62, 2**62, -(2**63), -(2**63), 5]), [0, 0, 1, 1, 2]),
    ("estimate=uint64-max", lambda: ro(np.array([2**64 - 1, 0, 0, 2**64 - 1, 3], dtype=np.uint64)), [0, 1, 1, 0, 2]),
    ("estimate=bool", lambda: ro([True, True, False, False, False]), [0, 0, 1, 1, 1]),
    ("estimate=float-integral", lambda: ro([3.0, 3.0, 1.0, 1.0, 1.0]), [0, 0, 1, 1, 1]),
    ("estimate=list", lambda: [9, 9, 8, 8, 8], [0, 0, 1, 1, 1]),
    ("estimate=non-contiguous", lambda: ro_view(np.array([0, 9, 0, 9, 1, 9, 1, 9, 1, 9])[::2]), [0, 0, 1, 1, 1]),
    ("estimate=negative-stride", lambda: ro_view(np.array([1, 1, 1, 0, 0])[::-1]), [0, 0, 1, 1, 1]),
]:
    for loss in ("VI", "binder", "omARI", "VI.lb"):
        case(
            f"partition_loss[{eid},{loss}]",
            salsox.partition_loss,
            est,
            D,
            loss,
            check=equals((lambda r, lo: lambda: salsox.partition_loss(r, BASE, lo))(ref, loss)),
        )
MANY = np.array([[0, 0, 1, 1, 1], [0, 1, 2, 3, 4], [7, 7, 7, 7, 7]])
case(
    "partition_loss[estimates=fortran]",
    salsox.partition_loss,
    lambda: ro_view(np.asfortranarray(MANY)),
    D,
    check=equals(lambda: salsox.partition_loss(MANY, BASE)),
)
case(
    "partition_loss[estimates=non-contiguous]",
    salsox.partition_loss,
    lambda: ro_view(np.repeat(MANY, 2, axis=1)[:, ::2]),
    D,
    check=equals(lambda: salsox.partition_loss(MANY, BASE)),
)
case(
    "partition_loss[truth=1-D]",
    salsox.partition_loss,
    lambda: ro(EST),
    lambda: ro(BASE[0]),
    check=equals(lambda: salsox.partition_loss(EST, BASE[:1])),
)
case(
    "partition_loss[truth=mismatched]",
    salsox.partition_loss,
    lambda: ro(EST),
    lambda: ro(BASE[:, :4]),
    raises=ValueError,
    match="items",
)
case(
    "partition_loss[psm+VI]",
    salsox.partition_loss,
    lambda: ro(EST),
    lambda: PSM(salsox.psm(BASE)),
    "VI",
    raises=ValueError,
    match="PSM|draws",
)
case(
    "partition_loss[psm+VI.lb]",
    salsox.partition_loss,
    lambda: ro(EST),
    lambda: PSM(salsox.psm(BASE)),
    "VI.lb",
    check=equals(lambda: salsox.partition_loss(EST, BASE, "VI.lb")),
)
case(
    "partition_loss[psm-mismatched]",
    salsox.partition_loss,
    lambda: ro(EST),
    lambda: PSM(np.eye(4)),
    "VI.lb",
    raises=ValueError,
    match="items",
)
for nid, nj, exc in [("0", 0, ValueError), ("-2", -2, ValueError), ("1.5", 1.5, TypeError), ("str", "1", TypeError)]:
    case(
        f"partition_loss[n_jobs={nid}]",
        salsox.partition_loss,
        lambda: ro(EST),
        D,
        n_jobs=nj,
        raises=exc,
        match="n_jobs",
    )
    case(f"psm[n_jobs={nid}]", salsox.psm, D, n_jobs=nj, raises=exc, match="n_jobs")
    case(f"dlso[n_jobs={nid}]", salsox.dlso, D, n_jobs=nj, raises=exc, match="n_jobs")
case("partition_loss[loss=bad]", salsox.partition_loss, lambda: ro(EST), D, 3.5, raises=TypeError, match="loss")
case(
    "partition_loss[n_jobs=10**6]",
    salsox.partition_loss,
    lambda: ro(MANY),
    D,
    n_jobs=10**6,
    isolated=True,
    check=equals(lambda: salsox.partition_loss(MANY, BASE)),
)
case("psm[n_jobs=10**6]", salsox.psm, D, n_jobs=10**6, isolated=True, check=equals(lambda: salsox.psm(BASE)))
case(
    "dlso[n_jobs=10**6]",
    salsox.dlso,
    D,
    n_jobs=10**6,
    isolated=True,
    check=lambda est: np.testing.assert_array_equal(est.labels, salsox.dlso(BASE).labels),
)

# ---- PSM ---------------------------------------------------------------------------------------
for pid, m, exc in [
    ("non-square", lambda: ro(np.ones((2, 3))), ValueError),
    ("empty", lambda: ro(np.ones((0, 0))), ValueError),
    ("1-D", lambda: ro(np.ones(3)), ValueError),
    ("nan", lambda: ro([[1.0, np.nan], [np.nan, 1.0]]), ValueError),
    ("above-1", lambda: ro([[1.0, 1.5], [1.5, 1.0]]), ValueError),
    ("negative", lambda: ro([[1.0, -0.1], [-0.1, 1.0]]), ValueError),
    ("asymmetric", lambda: ro([[1.0, 0.2], [0.3, 1.0]]), ValueError),
    ("diagonal", lambda: ro([[0.9, 0.2], [0.2, 1.0]]), ValueError),
    ("strings", lambda: ro([["a", "b"], ["c", "d"]]), (TypeError, ValueError)),
    ("None", lambda: None, (TypeError, ValueError)),
]:
    case(f"PSM[{pid}]", PSM, m, raises=exc, match="psm")
case("salso[psm+VI]", salsox.salso, lambda: PSM(salsox.psm(BASE)), "VI", raises=ValueError, match="PSM|draws")
case(
    "salso[psm+VI.lb,fortran]",
    salsox.salso,
    lambda: PSM(ro_view(np.asfortranarray(salsox.psm(BASE)))),
    "VI.lb",
    seed=7,
    n_jobs=1,
    n_runs=4,
    check=same_estimate("VI.lb"),
)
case("salso[psm-1x1]", salsox.salso, lambda: PSM(np.ones((1, 1))), "VI.lb", seed=1, check=one_item_estimate)
case("dlso[psm]", salsox.dlso, lambda: PSM(salsox.psm(BASE)), "VI.lb", raises=ValueError, match="PSM|draws")

# ---- RI, ARI ---------------------------------------------------------------------------------
for f in (salsox.RI, salsox.ARI):
    fn = f.__name__
    for pid, x, y, exc, pattern in [
        ("lengths", [0, 1, 1], [0, 1], ValueError, "items|length"),
        # One matrix is draws (the expected index); two are refused.
        ("2-D", [[0, 1], [1, 0]], [[0, 1]], ValueError, "both matrices"),
        ("empty", [], [], ValueError, "items|empty"),
        ("nan", [0, np.nan], [0, 1], ValueError, "NaN"),
        ("strings", ["a", "b"], [0, 1], TypeError, "dtype|integer"),
        ("None", None, [0, 1], (TypeError, ValueError), "x|label"),
        ("scalar", 3, 4, ValueError, "partition|1-D|0-D|items"),
    ]:
        case(
            f"{fn}[{pid}]",
            f,
            (lambda v: lambda: ro(v) if isinstance(v, list) and v and not isinstance(v[0], str) else v)(x),
            lambda y=y: ro(y),
            raises=exc,
            match=pattern,
        )
    for pid, x, y, ref in [
        ("one-item", [3], [4], 1.0),
        ("identical-huge", [2**62, 2**62, -(2**63), 0], [1, 1, 2, 3], 1.0),
        ("identical-uint64", np.array([2**64 - 1, 0, 0], dtype=np.uint64), [5, 6, 6], 1.0),
        ("negative", [0, -1, -1, 0], [1, 2, 2, 1], 1.0),
        ("singletons-vs-one", [0, 1, 2, 3], [0, 0, 0, 0], 0.0),
        ("non-contiguous", np.array([0, 9, 0, 9, 1, 9, 1, 9])[::2], [0, 0, 1, 1], 1.0),
    ]:
        expected: Any = ref  # RI and ARI of singletons against one cluster are both 0
        case(
            f"{fn}[{pid}]",
            f,
            (lambda v: lambda: ro_view(v) if isinstance(v, np.ndarray) else ro(v))(x),
            lambda y=y: ro(y),
            check=equals(expected),
        )

# ---- Draws -------------------------------------------------------------------------------------
case("Draws[draw-index=out-of-range]", lambda d: salsox.Draws(d).draw(99), D, raises=IndexError, match="draw")
case("Draws[draw-index=-1]", lambda d: salsox.Draws(d).draw(-1), D, raises=IndexError, match="draw")
case("Draws[of-Draws]", lambda d: salsox.Draws(salsox.Draws(d)).n_draws, D, check=equals(BASE.shape[0]))

# ---- dlso ------------------------------------------------------------------------------------
case("dlso[loss=unknown]", salsox.dlso, D, "nope", raises=ValueError, match="unknown loss")
case("dlso[one-draw]", salsox.dlso, ONE_DRAW, check=equals_draw([4, 4, 9, 9, 1, 4]))

# ---- minimize_by_enumeration -----------------------------------------------------------------
case(
    "minimize_by_enumeration[n=13]",
    salsox.minimize_by_enumeration,
    lambda: ro(np.zeros((2, 13), int)),
    raises=ValueError,
    match=r"n = 13 items; minimize_by_enumeration supports at most n = 12",
)
for pid, cs, exc in [
    ("0", 0, ValueError),
    ("-1", -1, ValueError),
    ("1.5", 1.5, TypeError),
    ("True", True, TypeError),
    ("str", "8", TypeError),
]:
    case(
        f"minimize_by_enumeration[chunk_size={pid}]",
        salsox.minimize_by_enumeration,
        D,
        chunk_size=cs,
        raises=exc,
        match="chunk_size",
    )
case(
    "minimize_by_enumeration[chunk_size=2**70]",
    salsox.minimize_by_enumeration,
    D,
    "binder",
    chunk_size=2**70,
    check=lambda r: np.testing.assert_array_equal(r.labels, salsox.minimize_by_enumeration(BASE, "binder").labels),
)
case(
    "minimize_by_enumeration[chunk_size=1]",
    salsox.minimize_by_enumeration,
    D,
    "binder",
    chunk_size=1,
    check=lambda r: np.testing.assert_array_equal(r.labels, salsox.minimize_by_enumeration(BASE, "binder").labels),
)
case(
    "minimize_by_enumeration[loss=unknown]",
    salsox.minimize_by_enumeration,
    D,
    "nope",
    raises=ValueError,
    match="unknown loss",
)
case(
    "minimize_by_enumeration[psm+VI.lb]",
    salsox.minimize_by_enumeration,
    lambda: PSM(salsox.psm(BASE)),
    "VI.lb",
    check=lambda r: np.testing.assert_array_equal(r.labels, salsox.minimize_by_enumeration(BASE, "VI.lb").labels),
)


# ---- bell --------------------------------------------------------------------------------------
def bell_by_stirling(n: int) -> int:
    """Bell numbers as sums of Stirling numbers of the second kind (independent of salsox)."""
    row = [1]  # S(0, 0)
    for m in range(1, n + 1):
        new = [0] * (m + 1)
        for k in range(1, m + 1):
            new[k] = k * (row[k] if k < len(row) else 0) + row[k - 1]
        row = new
    return sum(row)


for pid, v, exc in [
    ("-1", -1, ValueError),
    ("1.5", 1.5, TypeError),
    ("str", "3", TypeError),
    ("True", True, TypeError),
    ("None", None, TypeError),
    ("nan", float("nan"), TypeError),
    ("list", [3], TypeError),
]:
    what = "must be >= 0" if exc is ValueError else "must be an integer"
    case(f"bell[n={pid}]", salsox.bell, v, raises=exc, match=f"^n {what}, got ")
for v in (0, 1, 2, 5, 12, 13, 200):
    case(f"bell[n={v}]", salsox.bell, v, check=equals(bell_by_stirling(v)))
case("bell[n=np.int64]", salsox.bell, np.int64(6), check=equals(203))


# ---------------------------------------------------------------------------------------------
# Running cases
# ---------------------------------------------------------------------------------------------

CASE_BY_ID = {c.id: c for c in CASES}


def _arrays(obj: Any) -> List[np.ndarray]:
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, PSM):
        return [obj.matrix]
    if isinstance(obj, (list, tuple)):
        return [a for x in obj for a in _arrays(x)]
    if isinstance(obj, dict):
        return [a for x in obj.values() for a in _arrays(x)]
    return []


def _snapshot(obj: Any) -> Any:
    """A deep copy of lists / arrays, to check that nothing was modified."""
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, list):
        return [_snapshot(x) for x in obj]
    return obj


def execute(c: Case) -> None:
    fn, args, kwargs = c.make()
    arrays = _arrays(list(args)) + _arrays(kwargs)
    copies = [a.copy() for a in arrays]
    flags = [a.flags.writeable for a in arrays]
    lists = [(x, _snapshot(x)) for x in list(args) + list(kwargs.values()) if isinstance(x, list)]
    if c.raises is not None:
        with pytest.raises(c.raises, match=c.match) as info:
            fn(*args, **kwargs)
        message = str(info.value)
        assert "incompatible function arguments" not in message, f"a raw binding error leaked: {message[:300]}"
        assert len(message) < 1000, f"not a clear message: {message[:1000]}"
    else:
        try:
            result = fn(*args, **kwargs)
        except Exception as err:
            if c.or_raises is None or not isinstance(err, c.or_raises):
                raise
        else:
            assert c.check is not None
            # A check asserts; one that returned a value (a boolean the runner would ignore)
            # is a check that cannot fail.
            returned = c.check(result)
            assert returned is None, f"the check of {c.id} returned {returned!r} instead of asserting"
    for a, before, writable in zip(arrays, copies, flags):
        np.testing.assert_array_equal(a, before, err_msg="the input array was modified")
        assert a.flags.writeable == writable, "the input array's flags were changed"
    for x, before in lists:
        assert x == before, "the input list was modified"


def run_case(case_id: str) -> None:
    """Entry point of an isolated case's subprocess."""
    execute(CASE_BY_ID[case_id])


_ASAN = "asan" in os.environ.get("LD_PRELOAD", "")
_ISOLATION_PRELUDE = """
import resource, sys
limit = {limit}
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.path.insert(0, {tests!r})
import test_hostile_inputs
test_hostile_inputs.run_case({case_id!r})
"""


def run_isolated(case_id: str) -> None:
    if _ASAN:
        pytest.skip("address-space limits do not work under AddressSanitizer")
    if not sys.platform.startswith("linux"):
        pytest.skip("needs an address-space limit (RLIMIT_AS), reliable on Linux only")
    prog = _ISOLATION_PRELUDE.format(limit=4 * 2**30, tests=str(Path(__file__).parent), case_id=case_id)
    env = dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0")
    try:
        proc = subprocess.run(
            [sys.executable, "-c", prog],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=tempfile.gettempdir(),
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case_id}: no answer within 180 s")
    if proc.returncode != 0:
        how = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        pytest.fail(f"{case_id}: the process failed ({how}):\n{proc.stderr[-3000:]}")


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_hostile_input(case_id: str) -> None:
    c = CASE_BY_ID[case_id]
    if c.isolated:
        run_isolated(case_id)
    else:
        execute(c)


def test_the_table_covers_every_public_function() -> None:
    covered = {cid.split("[")[0] for cid in CASE_BY_ID}
    for name in (
        "salso",
        "partition_loss",
        "psm",
        "RI",
        "ARI",
        "Draws",
        "dlso",
        "minimize_by_enumeration",
        "bell",
        "PSM",
    ):
        assert name in covered, name


@pytest.mark.parametrize("fn", ["salso", "partition_loss", "psm", "dlso", "Draws", "RI"])
def test_writable_inputs_are_not_modified(fn: str) -> None:
    """Read-only inputs cannot be written; writable ones (C, Fortran, strided) must not be either."""
    layouts = {
        "c": BASE.copy(),
        "fortran": np.asfortranarray(BASE),
        "strided": np.repeat(BASE, 2, axis=1)[:, ::2],
        "int32": BASE.astype(np.int32),
        "uint8": BASE.astype(np.uint8),
        "float": BASE.astype(np.float64),
    }
    for name, arr in layouts.items():
        before = arr.copy()
        est = EST.copy()
        if fn == "salso":
            salsox.salso(arr, seed=1, n_runs=2)
        elif fn == "partition_loss":
            salsox.partition_loss(est, arr)
            salsox.partition_loss(arr, arr)
        elif fn == "psm":
            salsox.psm(arr)
        elif fn == "dlso":
            salsox.dlso(arr)
        elif fn == "Draws":
            salsox.Draws(arr)
        else:
            salsox.RI(arr[0], arr[1])
            salsox.ARI(arr[0], arr[1])
        np.testing.assert_array_equal(arr, before, err_msg=name)
        np.testing.assert_array_equal(est, EST)
        assert arr.flags.writeable


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class CLICase:
    id: str
    argv: List[str]  # "{name}" fields are file paths in the case's directory
    status: int  # expected exit status
    stderr: Optional[str] = None  # regex the one-line error must match
    stdout: Optional[Callable[[str], None]] = None


def _labels_out(expected: Sequence[int]) -> Callable[[str], None]:
    def check(out: str) -> None:
        got = [int(x) for x in out.split()]
        assert got == list(canonical(expected)), out

    return check


def _float_out(expected: float) -> Callable[[str], None]:
    def check(out: str) -> None:
        values = [float(x) for x in out.split()]
        assert len(values) == 1 and math.isclose(values[0], expected, rel_tol=1e-9, abs_tol=1e-12), out

    return check


CLI_FILES: Dict[str, Callable[[Path], None]] = {
    "draws.csv": lambda p: np.savetxt(p, BASE, fmt="%d", delimiter=","),
    "draws.npy": lambda p: np.save(p, BASE),
    "labels.csv": lambda p: np.savetxt(p, EST[None, :], fmt="%d", delimiter=","),
    "labels-long.csv": lambda p: np.savetxt(p, np.zeros((1, N + 2)), fmt="%d", delimiter=","),
    "empty.csv": lambda p: p.write_text(""),
    "comments.csv": lambda p: p.write_text("# nothing here\n\n"),
    "nan.csv": lambda p: p.write_text("1,2,nan\n1,1,2\n"),
    "inf.csv": lambda p: p.write_text("1,2,inf\n1,1,2\n"),
    "text.csv": lambda p: p.write_text("a,b,c\nd,e,f\n"),
    "ragged.csv": lambda p: p.write_text("1,2,3\n1,2\n"),
    "fraction.csv": lambda p: p.write_text("1,2,2.5\n1,1,2\n"),
    "huge.csv": lambda p: p.write_text("1e300,1,1\n1,1,2\n"),
    # Distinct integers that are one apart beyond 2**53 (equal as float64): three clusters.
    "beyond-2-53.csv": lambda p: p.write_text("9007199254740993,9007199254740992,1\n" * 3),
    "binary.csv": lambda p: p.write_bytes(bytes(range(256)) * 4),
    "one-item.csv": lambda p: p.write_text("3\n7\n1\n"),
    "one-draw.csv": lambda p: p.write_text("4,4,9,9,1\n"),
    "object.npy": lambda p: np.save(p, np.array([[1, "a"]], dtype=object), allow_pickle=True),
    "3d.npy": lambda p: np.save(p, BASE[None]),
    "strings.npy": lambda p: np.save(p, np.array([["a", "b"]])),
    "truncated.npy": lambda p: p.write_bytes(b"\x93NUMPY\x01\x00garbage"),
    "65537.npy": lambda p: np.save(p, np.arange(65537)[None, :]),
    "not-npz.npz": lambda p: p.write_bytes(b"PK\x03\x04 not really a zip"),
    "dir": lambda p: p.mkdir(),
}

CLI_CASES: List[CLICase] = [
    # Command line itself.
    CLICase("no-arguments", [], 2),
    CLICase("unknown-command", ["frobnicate"], 2, "invalid choice|frobnicate"),
    CLICase("estimate-no-draws", ["estimate"], 2, "DRAWS|required|arguments"),
    CLICase("estimate-unknown-option", ["estimate", "{draws.csv}", "--bogus"], 2, "bogus|unrecognized"),
    # Files.
    CLICase("estimate-missing-file", ["estimate", "{missing.csv}"], 1, "not found"),
    CLICase("estimate-directory", ["estimate", "{dir}"], 1, "directory"),
    CLICase("estimate-empty-file", ["estimate", "{empty.csv}"], 1, "empty"),
    CLICase("estimate-only-comments", ["estimate", "{comments.csv}"], 1, "empty"),
    CLICase("estimate-nan", ["estimate", "{nan.csv}"], 1, "NaN|nan"),
    CLICase("estimate-inf", ["estimate", "{inf.csv}"], 1, "infinite|inf"),
    CLICase("estimate-text", ["estimate", "{text.csv}"], 1, "not a number"),
    CLICase("estimate-ragged", ["estimate", "{ragged.csv}"], 1, "ragged|fields"),
    CLICase("estimate-fraction", ["estimate", "{fraction.csv}"], 1, "integ"),
    CLICase("estimate-huge-float", ["estimate", "{huge.csv}"], 1, "large"),
    CLICase("estimate-binary", ["estimate", "{binary.csv}"], 1, "text|number"),
    CLICase("estimate-object-npy", ["estimate", "{object.npy}"], 1, "objects|pickle|numeric"),
    CLICase("estimate-3d-npy", ["estimate", "{3d.npy}"], 1, "2-D"),
    CLICase("estimate-strings-npy", ["estimate", "{strings.npy}"], 1, "numeric|dtype"),
    CLICase("estimate-truncated-npy", ["estimate", "{truncated.npy}"], 1, "npy"),
    CLICase("estimate-bad-npz", ["estimate", "{not-npz.npz}"], 1, "npz"),
    CLICase("estimate-65537-clusters", ["estimate", "{65537.npy}", "--max-clusters", "2"], 1, "65536"),
    # Valid edge cases: correct answers.
    CLICase("estimate-one-item", ["estimate", "{one-item.csv}", "--seed", "1"], 0, stdout=_labels_out([0])),
    CLICase("estimate-one-draw", ["estimate", "{one-draw.csv}", "--seed", "1"], 0, stdout=_labels_out([4, 4, 9, 9, 1])),
    CLICase(
        "estimate-integers-beyond-2**53",
        ["estimate", "{beyond-2-53.csv}", "--seed", "1"],
        0,
        stdout=_labels_out([0, 1, 2]),
    ),
    CLICase(
        "estimate-npy",
        ["estimate", "{draws.npy}", "--seed", "1"],
        0,
        stdout=lambda out: _labels_out(salsox.salso(BASE, seed=1, n_jobs=1).labels)(out),
    ),
    # Options.
    CLICase("estimate-runs-0", ["estimate", "{draws.csv}", "--runs", "0"], 2, "runs"),
    CLICase("estimate-runs-text", ["estimate", "{draws.csv}", "--runs", "many"], 2, "runs"),
    CLICase("estimate-runs-negative", ["estimate", "{draws.csv}", "--runs", "-4"], 2, "runs"),
    CLICase("estimate-jobs-0", ["estimate", "{draws.csv}", "--jobs", "0"], 2, "--jobs"),
    CLICase("estimate-jobs-negative", ["estimate", "{draws.csv}", "--jobs", "-5"], 2, "--jobs"),
    CLICase("estimate-seed-negative", ["estimate", "{draws.csv}", "--seed", "-1"], 2, "--seed"),
    CLICase("estimate-seed-huge", ["estimate", "{draws.csv}", "--seed", str(2**70)], 2, "--seed"),
    CLICase("estimate-loss-unknown", ["estimate", "{draws.csv}", "--loss", "nope"], 2, "--loss nope: unknown loss"),
    CLICase("estimate-a-negative", ["estimate", "{draws.csv}", "--loss", "binder", "--a", "-1"], 2, "--a must"),
    CLICase("estimate-a-nan", ["estimate", "{draws.csv}", "--loss", "binder", "--a", "nan"], 2, "--a must"),
    CLICase("estimate-b-inf", ["estimate", "{draws.csv}", "--loss", "VI", "--b", "inf"], 2, "--b must"),
    CLICase("estimate-a-for-omARI", ["estimate", "{draws.csv}", "--loss", "omARI", "--a", "2"], 2, "--a/--b: .*costs"),
    CLICase("estimate-max-clusters-0", ["estimate", "{draws.csv}", "--max-clusters", "0"], 2, "max-clusters"),
    CLICase(
        "estimate-max-zealous-negative", ["estimate", "{draws.csv}", "--max-zealous", "-1"], 2, "--max-zealous"
    ),
    CLICase("estimate-seconds-0", ["estimate", "{draws.csv}", "--seconds", "0"], 2, "--seconds"),
    CLICase("estimate-seconds-nan", ["estimate", "{draws.csv}", "--seconds", "nan"], 2, "--seconds"),
    CLICase("estimate-out-missing-dir", ["estimate", "{draws.csv}", "--out", "{no-such-dir}/x.txt"], 1, "cannot write"),
    CLICase(
        "estimate-jobs-huge",
        ["estimate", "{draws.csv}", "--jobs", "1000000", "--seed", "1"],
        0,
        stdout=lambda out: _labels_out(salsox.salso(BASE, seed=1, n_jobs=1).labels)(out),
    ),
    # loss
    CLICase("loss-mismatched", ["loss", "{labels-long.csv}", "{draws.csv}"], 1, "items"),
    CLICase("loss-missing-labels", ["loss", "{missing.csv}", "{draws.csv}"], 1, "not found"),
    CLICase(
        "loss-ok",
        ["loss", "{labels.csv}", "{draws.csv}"],
        0,
        stdout=_float_out(float(salsox.partition_loss(EST, BASE))),
    ),
    CLICase("loss-nan-draws", ["loss", "{labels.csv}", "{nan.csv}"], 1, "NaN|nan|items"),
    # psm
    CLICase("psm-digits-0", ["psm", "{draws.csv}", "--digits", "0"], 2, "digits"),
    CLICase("psm-empty", ["psm", "{empty.csv}"], 1, "empty"),
    CLICase(
        "psm-one-item",
        ["psm", "{one-item.csv}"],
        0,
        stdout=lambda out: None if out.strip() == "1" else pytest.fail(out),
    ),
    CLICase("psm-jobs-huge", ["psm", "{draws.csv}", "--jobs", "1000000"], 0),
    # summary, ball, tune
    CLICase("summary-nan", ["summary", "{nan.csv}"], 1, "NaN|nan"),
    CLICase("summary-labels-mismatched", ["summary", "{draws.csv}", "--labels", "{labels-long.csv}"], 1, "items"),
    CLICase("summary-one-item", ["summary", "{one-item.csv}", "--seed", "1"], 0),
    CLICase("ball-level-2", ["ball", "{draws.csv}", "--level", "2"], 2, "level"),
    CLICase("ball-level-0", ["ball", "{draws.csv}", "--level", "0"], 2, "level"),
    CLICase("ball-empty", ["ball", "{empty.csv}"], 1, "empty"),
    CLICase("ball-one-draw", ["ball", "{one-draw.csv}", "--seed", "1"], 0),
    CLICase("tune-k-0", ["tune", "{draws.csv}", "-k", "0"], 2, "clusters"),
    CLICase("tune-no-k", ["tune", "{draws.csv}"], 2, "clusters|required"),
    CLICase("tune-k-too-many", ["tune", "{draws.csv}", "-k", "1000", "--seed", "1"], 2, "--clusters 1000 .*items"),
    CLICase("tune-b-negative", ["tune", "{draws.csv}", "-k", "2", "--b", "-1"], 2, "--b must"),
    CLICase("tune-empty", ["tune", "{empty.csv}", "-k", "2"], 1, "empty"),
    # plugins, demo
    CLICase("plugins-extra-argument", ["plugins", "extra"], 2, "unrecognized|extra"),
    CLICase("demo-runs-0", ["demo", "--runs", "0"], 2, "runs"),
    CLICase("demo-jobs-0", ["demo", "--jobs", "0"], 2, "--jobs"),
]


def _cli_env() -> Dict[str, str]:
    env = dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0")
    env.pop("SALSOX_DEBUG", None)
    return env


def _run_cli(c: CLICase, directory: Path) -> subprocess.CompletedProcess:
    argv = [re.sub(r"\{([^}]+)\}", lambda m: str(directory / m.group(1)), a) for a in c.argv]
    # Not from the repository root, where `python -m salsox` would import the source tree.
    return subprocess.run(
        [sys.executable, "-m", "salsox", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tempfile.gettempdir(),
        env=_cli_env(),
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def cli_results(
    tmp_path_factory: pytest.TempPathFactory,
) -> Dict[str, Tuple[subprocess.CompletedProcess, Dict[str, bytes]]]:
    """Every CLI case, run concurrently (each is a fresh interpreter), with the files' bytes before."""
    directory = tmp_path_factory.mktemp("hostile-cli")
    for name, write in CLI_FILES.items():
        write(directory / name)
    before = {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        futures = {c.id: pool.submit(_run_cli, c, directory) for c in CLI_CASES}
        procs = {cid: f.result() for cid, f in futures.items()}
    after = {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}
    changed = {name for name in before if after.get(name) != before[name]}
    return {cid: (proc, {"changed": changed}) for cid, proc in procs.items()}  # type: ignore[misc]


@pytest.mark.parametrize("cid", [c.id for c in CLI_CASES])
def test_cli_hostile_input(cid: str, cli_results: Dict[str, Any]) -> None:
    c = next(x for x in CLI_CASES if x.id == cid)
    proc, extra = cli_results[cid]
    assert not extra["changed"], f"input files were modified: {extra['changed']}"
    detail = f"argv={c.argv}\nstatus={proc.returncode}\nstdout={proc.stdout[-1000:]}\nstderr={proc.stderr[-2000:]}"
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}\n{detail}"
    assert proc.returncode == c.status, detail
    assert "Traceback" not in proc.stderr, detail
    assert "internal error" not in proc.stderr, detail
    if c.status != 0:
        assert proc.stdout == "", detail
        lines = proc.stderr.strip().splitlines()
        if c.status == 1:
            assert len(lines) == 1 and lines[0].startswith("salsox: error:"), detail
        if c.status == 2 and c.argv:  # a bad argument: one line in the option's words (issue 47)
            assert len(lines) == 1 and re.match(r"salsox( \S+)?: error: ", lines[0]), detail
            assert not re.search(r"\b(n_jobs|max_zealous|max_clusters|n_clusters|n_runs)\b", lines[0]), detail
        if c.stderr is not None:
            assert re.search(c.stderr, proc.stderr, flags=re.IGNORECASE), detail
    elif c.stdout is not None:
        c.stdout(proc.stdout)
