"""VI and Binder re-declared as decomposable losses, omARI on the generic path, and Jaccard,
Fowlkes-Mallows and a normalised mutual information as count-sum losses (native speed)."""

from __future__ import annotations

from typing import Dict

import numpy as np

from salsox.plugins import ContingencyLoss, CountSumLoss, DecomposableLoss


def _xlog2x(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    np.multiply(x, np.log2(x, where=x > 0, out=np.ones_like(x)), out=out, where=x > 0)
    return out


class _Costs:
    def __init__(self, a: float = 1.0, b: float = 1.0) -> None:
        if not (a > 0 and b > 0):
            raise ValueError(f"a and b must be > 0, got a={a!r}, b={b!r}")
        self.a = float(a)
        self.b = float(b)

    @property
    def params(self) -> Dict[str, float]:
        return {"a": self.a, "b": self.b}


class VIPlugin(_Costs, DecomposableLoss):
    r"""Generalised VI in bits, as the sum of per-cluster and per-cell terms.

    .. math:: \frac1n\Big[a \sum_S |S|\log_2|S| + b \sum_T |T|\log_2|T|
              - (a+b)\sum_{S,T} |S\cap T|\log_2|S\cap T|\Big]

    (the ``\log_2 n`` terms cancel). Equal to the built-in ``VI(a, b)``.
    """

    name = "vi-plugin"

    def draw_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return self.a * _xlog2x(counts) / n

    def estimate_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return self.b * _xlog2x(counts) / n

    def cell_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return -(self.a + self.b) * _xlog2x(counts) / n


class BinderPlugin(_Costs, DecomposableLoss):
    r"""Generalised Binder loss (n-invariant form), equal to the built-in ``Binder(a, b)``.

    .. math:: a \sum_S (|S|/n)^2 + b \sum_T (|T|/n)^2 - (a+b) \sum_{S,T} (|S \cap T|/n)^2
    """

    name = "binder-plugin"

    def draw_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return self.a * (counts / n) ** 2

    def estimate_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return self.b * (counts / n) ** 2

    def cell_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return -(self.a + self.b) * (counts / n) ** 2


class OMARINumpy(ContingencyLoss):
    """One minus the adjusted Rand index, from whole contingency tables, vectorised in numpy.

    Not decomposable (the ARI divides pair counts by each other), so it runs on the generic
    path. Identical trivial partitions (a zero denominator) score 0, as the built-in
    ``"omARI"``.
    """

    name = "omari-numpy"

    def loss(self, tables: np.ndarray) -> np.ndarray:
        B = tables.shape[0]
        flat = tables.reshape(B, -1)
        # einsum sums without temporaries; numpy's sum over a short last axis is much slower.
        rows = np.einsum("brc->br", tables)
        cols = np.einsum("brc->bc", tables)
        m = np.einsum("br->b", rows)
        # Pair counts: sum of x (x - 1) / 2 = (sum of x^2 - m) / 2, exact in int64.
        X = (np.einsum("bx,bx->b", flat, flat) - m) / 2.0
        A = (np.einsum("br,br->b", rows, rows) - m) / 2.0
        Bc = (np.einsum("bc,bc->b", cols, cols) - m) / 2.0
        mf = m.astype(np.float64)
        N = mf * (mf - 1.0) / 2.0
        out = np.zeros(B)
        ok = N > 0
        expected = A[ok] * Bc[ok] / N[ok]
        denom = 0.5 * (A[ok] + Bc[ok]) - expected
        nonzero = denom != 0.0
        value = np.zeros(expected.shape)
        value[nonzero] = 1.0 - (X[ok][nonzero] - expected[nonzero]) / denom[nonzero]
        out[ok] = value
        return out


def _pairs(counts: np.ndarray, n: int) -> np.ndarray:
    """Pairs of items among each count: c (c - 1) / 2."""
    c = np.asarray(counts, dtype=np.float64)
    return c * (c - 1) / 2


# Pair counts per draw: X pairs together in both partitions, B together in the estimate, A
# together in the draw.
_PAIR_SUMS = {"X": ("cell", _pairs), "B": ("estimate", _pairs), "A": ("draw", _pairs)}


class Jaccard(CountSumLoss):
    r"""Jaccard distance between the pair sets: :math:`1 - X / (A + B - X)`.

    X counts pairs of items together in both the draw and the estimate, A pairs together in
    the draw, B in the estimate. 0 when there is no pair at all (both all singletons).
    """

    name = "jaccard"
    sums = _PAIR_SUMS
    formula = "where(A + B - X == 0, 0, 1 - X / (A + B - X))"


class FowlkesMallows(CountSumLoss):
    r"""Fowlkes-Mallows distance: :math:`1 - X / \sqrt{A B}`.

    When one partition has no pairs (all singletons) the index is 0 (loss 1), unless both have
    none (equal partitions, loss 0).
    """

    name = "fowlkes-mallows"
    sums = _PAIR_SUMS
    formula = "1 - where(A * B == 0, A + B == 0, X / sqrt(A * B))"


def _xlog2x_of(counts: np.ndarray, n: int) -> np.ndarray:
    """x log2 x of each count (the sums of which give entropies)."""
    return _xlog2x(counts)


# Entropies (bits) of the draw, the estimate and the joint table from sums of x log2 x.
_HD = "max(0, log2(n) - D / n)"
_HE = "max(0, log2(n) - E / n)"
_HJ = "max(0, log2(n) - J / n)"
_TINY = "1e-12 * max(1, log2(n))"


class NMISqrt(CountSumLoss):
    r"""One minus the normalised mutual information, square-root normalisation (Strehl & Ghosh
    2002): :math:`1 - I / \sqrt{H_{draw} H_{est}}`, with :math:`I = H_{draw} + H_{est} - H_{joint}`.

    Equal partitions score 0; a single cluster against a partition with several scores 1
    (no information), and two single clusters 0.
    """

    name = "nmi-sqrt"
    sums = {"J": ("cell", _xlog2x_of), "E": ("estimate", _xlog2x_of), "D": ("draw", _xlog2x_of)}
    formula = (
        f"where(max({_HD}, {_HE}) <= {_TINY}, 0, where(min({_HD}, {_HE}) <= {_TINY}, 1, "
        f"max(0, 1 - ({_HD} + {_HE} - {_HJ}) / sqrt({_HD} * {_HE}))))"
    )
