"""Loss values of given partitions: partition_loss, RI, ARI, and the posterior similarity matrix."""

from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np

from . import _core
from ._ecosystem import convert_foreign
from ._validation import as_label_matrix, check_n_jobs
from .countsum import CountSumLoss, countsum_losses
from .draws import Draws, as_draws
from .losses import CountLoss, Loss, PSMLoss, get_loss

__all__ = ["PSM", "psm", "partition_loss", "RI", "ARI", "as_truth"]

# Largest n x n matrix built without an explicit request (bytes).
_PSM_MEMORY_LIMIT = 8 * 2**30


class PSM:
    """A posterior similarity matrix, marked as such so it is never mistaken for draws.

    Parameters
    ----------
    matrix : array-like of shape (n, n)
        Symmetric, entries in [0, 1], ones on the diagonal.
    """

    matrix: np.ndarray

    def __init__(self, matrix: Any) -> None:
        if isinstance(matrix, PSM):
            self.matrix = matrix.matrix
            return
        try:
            m = np.asarray(matrix, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError("psm must be a numeric n x n matrix") from None
        if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
            raise ValueError(f"psm must be a non-empty square matrix, got shape {m.shape}")
        if not np.all(np.isfinite(m)):
            raise ValueError("psm contains NaN or infinite values")
        if np.any(m < 0) or np.any(m > 1):
            raise ValueError("psm entries must lie in [0, 1]")
        if not np.allclose(m, m.T, rtol=0, atol=1e-12):
            raise ValueError("psm must be symmetric")
        if not np.allclose(np.diag(m), 1.0, rtol=0, atol=1e-12):
            raise ValueError("psm must have ones on its diagonal")
        self.matrix = np.ascontiguousarray(m)
        self.matrix.setflags(write=False)

    @property
    def n_items(self) -> int:
        return int(self.matrix.shape[0])

    def __repr__(self) -> str:
        return f"PSM(n_items={self.n_items})"


def _check_square_memory(n: int, what: str) -> None:
    need = 8 * n * n
    if need > _PSM_MEMORY_LIMIT:
        raise MemoryError(
            f"{what} needs an {n} x {n} matrix ({need / 2**30:.1f} GiB), more than the "
            f"{_PSM_MEMORY_LIMIT / 2**30:.0f} GiB salsox builds without being asked; use a "
            "count-based loss (e.g. 'VI' or 'binder'), which never builds it"
        )


def psm(draws: Any, n_jobs: Optional[int] = None) -> np.ndarray:
    """Posterior similarity matrix: the fraction of draws in which items i and j are together.

    Parameters
    ----------
    draws : array-like (H, n) or Draws
    n_jobs : int, optional
        Threads (default: all cores).

    Returns
    -------
    ndarray of shape (n, n), float64
    """
    d = as_draws(draws)
    _check_square_memory(d.n_items, "psm")
    co = _core.coclustering(d._core, check_n_jobs(n_jobs))
    return co / float(d.n_draws)


Truth = Union[Draws, PSM, np.ndarray, Any]


def as_truth(truth: Any, loss: Loss, name: str = "draws") -> Union[Draws, PSM]:
    """Draws, or a PSM for PSM-based losses (given as :class:`PSM` or computed from draws).

    A bare float matrix with fractional entries, square, symmetric with a unit diagonal, is a
    PSM for a PSM-based loss; a bare float 0/1 one is refused for losses that take either
    (PSM-based ones and ``"binder"``), since it could be either: wrap it in :class:`PSM` or
    :class:`Draws`. ``name`` is the argument named in errors.
    """
    if isinstance(truth, PSM):
        return truth
    if isinstance(truth, Draws):
        return truth
    truth = convert_foreign(truth)  # xarray DataArray / ArviZ InferenceData (optional)
    arr = truth
    if not isinstance(truth, np.ndarray):
        try:
            arr = np.asarray(truth)
        except (ValueError, TypeError):
            arr = truth  # let Draws produce the message
    if isinstance(arr, np.ndarray) and arr.ndim == 1:
        arr = arr.reshape(1, -1)  # one partition: loss between two partitions
    if (
        isinstance(loss, PSMLoss)
        and isinstance(arr, np.ndarray)
        and arr.dtype.kind == "f"
        and arr.ndim == 2
        and arr.shape[0] == arr.shape[1]
        and arr.size
        and np.all(np.diag(arr) == 1.0)
        and np.any((arr > 0) & (arr < 1))
    ):
        return PSM(arr)  # a float matrix with fractional entries cannot be draws
    if (isinstance(loss, PSMLoss) or loss.name == "binder") and _looks_like_binary_psm(arr):
        raise ValueError(
            f"{name} is a square 0/1 float matrix that is symmetric with ones on its diagonal: it could be "
            f"a similarity matrix or {arr.shape[0]} draws, which give different {loss.name!r} "
            "answers. Wrap it: salsox.PSM(matrix) for a similarity matrix, salsox.Draws(matrix) "
            "for draws"
        )
    return Draws(arr)


def _looks_like_binary_psm(arr: Any) -> bool:
    """A bare float (or bool) n x n symmetric 0/1 matrix with a unit diagonal, n >= 3, not all ones.

    Such a matrix is what ``np.eye(n)`` or a thresholded similarity matrix looks like; read as
    draws or as a PSM it gives different answers (for n <= 2, or all ones, both readings
    agree), so a loss that accepts either refuses to guess. Integer matrices are labels: draws
    are integers, and a similarity matrix is not.
    """
    if not isinstance(arr, np.ndarray) or arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 3:
        return False
    if arr.dtype.kind not in "bf":
        return False
    binary = (arr == 0) | (arr == 1)
    return bool(np.all(binary) and np.all(np.diag(arr) == 1) and np.array_equal(arr, arr.T) and not np.all(arr == 1))


def partition_loss(
    estimate: Any, truth: Any, loss: Union[str, Loss] = "VI", *, n_jobs: Optional[int] = None
) -> Union[float, np.ndarray]:
    """Loss of ``estimate`` against ``truth``.

    Parameters
    ----------
    estimate : array-like (n,) or (M, n)
        One partition, or M partitions (one per row), as integer labels.
    truth : array-like (n,) or (H, n), Draws, or PSM
        One partition (the loss between two partitions) or H posterior draws (the Monte Carlo
        expected loss, i.e. the mean over draws). PSM-based losses (``"VI.lb"``,
        ``"omARI.approx"``; ``"binder"`` too) also take a :class:`PSM`; given draws, they
        compute it.
    loss : str or Loss
        See :mod:`salsox.losses`.
    n_jobs : int, optional
        Threads, used across the M estimates (default: all cores).

    Returns
    -------
    float, or ndarray of shape (M,) when ``estimate`` is 2-D.

    Count-based losses cost O(H n) per estimate.
    """
    loss = get_loss(loss)
    t = as_truth(truth, loss, "truth")
    n = t.n_items
    est, single = as_label_matrix(estimate, "estimate", n)
    jobs = check_n_jobs(n_jobs)
    values = _losses(est, t, loss, jobs)
    return float(values[0]) if single else values


def _losses(est: np.ndarray, truth: Union[Draws, PSM], loss: Loss, n_jobs: int) -> np.ndarray:
    """Loss values of canonical label rows ``est`` (engine call, inputs already validated)."""
    if isinstance(truth, PSM) or isinstance(loss, PSMLoss):
        if isinstance(loss, PSMLoss):
            kind, a, b = loss._kind, 1.0, 1.0
        elif loss.name == "binder":
            kind, (a, b) = "binder", loss._unit_costs  # type: ignore[attr-defined]
        else:
            raise ValueError(f"loss {loss.name!r} needs draws, not a PSM")
        matrix = truth.matrix if isinstance(truth, PSM) else psm(truth, n_jobs)
        return np.asarray(_core.pairwise_losses(matrix, kind, a, b, est, n_jobs)) * getattr(loss, "_scale", 1.0)
    if not isinstance(loss, CountLoss):
        from .plugins import evaluate_python_loss

        return evaluate_python_loss(loss, est, truth)
    if isinstance(loss, CountSumLoss):
        return countsum_losses(loss, est, truth, n_jobs)
    values = np.asarray(_core.expected_losses(truth._core, loss._count_loss(truth.n_items), est, n_jobs))
    return values * getattr(loss, "_scale", 1.0)


def _two_partitions(x: Any, y: Any) -> tuple:
    xs, x_single = as_label_matrix(x, "x")
    ys, y_single = as_label_matrix(y, "y")
    if not (x_single and y_single):
        raise ValueError("x and y must each be one 1-D partition")
    if xs.shape[1] != ys.shape[1]:
        raise ValueError(f"x has {xs.shape[1]} items but y has {ys.shape[1]}")
    return xs, ys


def RI(x: Any, y: Any) -> float:
    """Rand index between two partitions (1 = identical)."""
    xs, ys = _two_partitions(x, y)
    n = xs.shape[1]
    if n == 1:
        return 1.0
    binder = partition_loss(ys[0], xs[0], "binder", n_jobs=1)
    return 1.0 - binder * n / (n - 1)


def ARI(x: Any, y: Any) -> float:
    """Adjusted Rand index between two partitions; 1 for identical partitions (also trivial ones)."""
    xs, ys = _two_partitions(x, y)
    return 1.0 - float(partition_loss(ys[0], xs[0], "omARI", n_jobs=1))
