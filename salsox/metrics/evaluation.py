"""Loss values of given partitions: partition_loss, RI, ARI, and the posterior similarity matrix."""

from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np

from .._validation import as_label_matrix, check_n_jobs
from ..engine import psm_matrix
from ..io import PSM, Draws, as_draws, convert_foreign_named
from ..losses import Loss, PSMLoss, get_loss

__all__ = ["PSM", "psm", "partition_loss", "RI", "ARI", "as_truth"]

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

    Examples
    --------
    >>> salsox.psm([[0, 0, 1], [0, 1, 1]])
    array([[1. , 0.5, 0. ],
           [0.5, 1. , 0.5],
           [0. , 0.5, 1. ]])
    """
    return psm_matrix(as_draws(draws), check_n_jobs(n_jobs))


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
    # xarray DataArray / ArviZ InferenceData (optional); their item names, or a DataFrame's, are kept
    truth, names, dim = convert_foreign_named(truth)
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
        return PSM(arr, item_names=names)  # a float matrix with fractional entries cannot be draws
    if loss._accepts_psm and _looks_like_binary_psm(arr):
        raise ValueError(
            f"{name} is a square 0/1 float matrix that is symmetric with ones on its diagonal: it could be "
            f"a similarity matrix or {arr.shape[0]} draws, which give different {loss.name!r} "
            "answers. Wrap it: salsox.PSM(matrix) for a similarity matrix, salsox.Draws(matrix) "
            "for draws"
        )
    return Draws(arr, item_names=names, item_dim=dim)


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

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1]]
    >>> round(salsox.partition_loss([0, 0, 1, 1], draws, "VI"), 4)    # expected loss
    0.5629
    >>> salsox.partition_loss([[0, 0, 1, 1], [0, 0, 0, 0]], draws, "binder")   # one per row
    array([0.16666667, 0.5       ])
    >>> salsox.partition_loss([0, 0, 1, 1], [0, 0, 1, 2], "VI")       # two partitions
    0.5
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
    return loss._route(truth).losses(est, n_jobs)


def _two_partitions(x: Any, y: Any) -> tuple:
    xs, x_single = as_label_matrix(x, "x")
    ys, y_single = as_label_matrix(y, "y")
    if not (x_single and y_single):
        raise ValueError("x and y must each be one 1-D partition")
    if xs.shape[1] != ys.shape[1]:
        raise ValueError(f"x has {xs.shape[1]} items but y has {ys.shape[1]}")
    return xs, ys


def RI(x: Any, y: Any) -> float:
    """Rand index between two partitions (1 = identical).

    Examples
    --------
    >>> salsox.RI([0, 0, 1, 1], [0, 0, 1, 2])
    0.8333333333333334
    >>> salsox.RI([0, 0, 1], [7, 7, 3])      # only which items share a label matters
    1.0
    """
    xs, ys = _two_partitions(x, y)
    n = xs.shape[1]
    if n == 1:
        return 1.0
    binder = partition_loss(ys[0], xs[0], "binder", n_jobs=1)
    return 1.0 - binder * n / (n - 1)


def ARI(x: Any, y: Any) -> float:
    """Adjusted Rand index between two partitions; 1 for identical partitions (also trivial ones).

    Examples
    --------
    >>> round(salsox.ARI([0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 2]), 4)
    0.4444
    >>> salsox.ARI([0, 0, 1], [7, 7, 3])
    1.0
    """
    xs, ys = _two_partitions(x, y)
    return 1.0 - float(partition_loss(ys[0], xs[0], "omARI", n_jobs=1))
