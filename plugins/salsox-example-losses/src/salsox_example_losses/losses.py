"""VI and Binder re-declared as decomposable losses, and omARI on the generic path."""

from __future__ import annotations

from typing import Dict

import numpy as np

from salsox.plugins import ContingencyLoss, DecomposableLoss


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
