"""Loss values of given partitions: partition_loss, RI, ARI, and the posterior similarity matrix."""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import numpy as np

from .._validation import (
    as_integer_array,
    as_label_matrix,
    check_label_frame,
    check_n_jobs,
    looks_like_similarity,
    relabel_rows,
    unwrap_estimate,
)
from ..engine import check_limit, finite_losses, psm_matrix
from ..io import PSM, Draws, align, aligned, as_draws, convert_foreign, convert_foreign_named, labels_and_names
from ..io.item_index import is_labels_like
from ..losses import Loss, get_loss
from .two_partitions import needs_numpy_route, two_partition_loss

__all__ = ["PSM", "psm", "partition_loss", "RI", "ARI", "as_truth", "canonicalize_labels"]

def psm(draws: Any, n_jobs: Optional[int] = None, *, memory_limit: Optional[int] = None) -> np.ndarray:
    """Posterior similarity matrix: the fraction of draws in which items i and j are together.

    Parameters
    ----------
    draws : array-like (H, n) or Draws; or one partition (n,) or an Estimate
        Posterior draws. One partition gives its adjacency matrix (1 where two items share a
        cluster, else 0), as R's ``psm`` of a single clustering.
    n_jobs : int, optional
        Threads (default: the CPUs the process may use).
    memory_limit : int, optional
        Bytes the matrix may take (8 n^2, built in place); more is a MemoryError up front.
        Default: 8 GiB.

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
    draws = unwrap_estimate(draws)
    jobs = check_n_jobs(n_jobs)
    limit = None if memory_limit is None else check_limit(memory_limit)
    if not isinstance(draws, Draws) and _ndim(draws) == 1:
        draws = as_integer_array(draws, "draws").reshape(1, -1)
    return psm_matrix(as_draws(draws), jobs, limit)


def canonicalize_labels(labels: Any) -> np.ndarray:
    """Labels in canonical form: 0, 1, ... in order of first appearance (R salso's
    ``canonicalize_cluster_labels``, whose labels start at 1).

    Parameters
    ----------
    labels : array-like (n,) or (M, n), or Estimate
        One partition, or one per row (each row relabelled on its own).

    Returns
    -------
    ndarray of int32, the shape of ``labels``.

    Examples
    --------
    >>> from salsox import canonicalize_labels
    >>> canonicalize_labels([7, 7, 3, 9, 3])
    array([0, 0, 1, 2, 1], dtype=int32)
    """
    rows, single = as_label_matrix(labels, "labels")
    return rows[0] if single else rows


def _ndim(x: Any) -> Optional[int]:
    """Dimensions of an array-like, or None when it is not one (let the checks that follow
    produce their own message)."""
    try:
        return int(np.ndim(x))
    except (ValueError, TypeError):
        return None


Truth = Union[Draws, PSM, np.ndarray, Any]


def as_truth(truth: Any, loss: Loss, name: str = "draws") -> Union[Draws, PSM]:
    """Draws, or a PSM for PSM-based losses (given as :class:`PSM` or computed from draws).

    A bare float matrix that is a similarity matrix (square, symmetric, entries in [0, 1],
    ones on the diagonal, some entry strictly between 0 and 1: R salso's test) is a PSM for
    the losses a PSM determines (``"binder"``, ``"VI.lb"``, ``"omARI.approx"``) and refused
    with a clear message for the others; a bare float 0/1 one is refused for losses that take
    either, since it could be either: wrap it in :class:`PSM` or :class:`Draws`. Any other
    float matrix with fractional entries is refused with a hint to :class:`PSM`. An Estimate
    is one partition. ``name`` is the argument named in errors.
    """
    if isinstance(truth, PSM):
        return truth
    if isinstance(truth, Draws):
        return truth
    if name == "truth" and is_labels_like(truth):  # partition_loss's one named partition (Series, dict...)
        values, names = labels_and_names(truth, name)
        return Draws(as_integer_array(values, name).reshape(1, -1), item_names=names)
    # xarray DataArray / ArviZ InferenceData (optional); their item names, or a DataFrame's, are kept
    truth, names, dim = convert_foreign_named(unwrap_estimate(truth))
    check_label_frame(truth, name)  # a DataFrame's iter, lp__ or string columns are not items
    arr = truth
    if not isinstance(truth, np.ndarray):
        try:
            arr = np.asarray(truth)
        except (ValueError, TypeError):
            arr = truth  # let Draws produce the message
    if isinstance(arr, np.ndarray) and arr.ndim == 1:
        arr = arr.reshape(1, -1)  # one partition: loss between two partitions
    if looks_like_similarity(arr):
        if loss._accepts_psm:
            return PSM(arr, item_names=names)
        raise ValueError(
            f"{name} is a similarity matrix (square, symmetric, entries in [0, 1], ones on the "
            f"diagonal), but loss {loss.name!r} needs the draws themselves: pass the H x n draws. "
            "A similarity matrix determines only 'binder', 'VI.lb' and 'omARI.approx'"
        )
    if loss._accepts_psm and _looks_like_binary_psm(arr):
        raise ValueError(
            f"{name} is a square 0/1 float matrix that is symmetric with ones on its diagonal: it could be "
            f"a similarity matrix or {arr.shape[0]} draws, which give different {loss.name!r} "
            "answers. Wrap it: salsox.PSM(matrix) for a similarity matrix, salsox.Draws(matrix) "
            "for draws"
        )
    if _has_fractions(arr):
        raise ValueError(
            f"{name} contains non-integral values: draws are integer labels. A similarity matrix "
            "must be square and symmetric with entries in [0, 1] and ones on the diagonal; "
            "salsox.PSM(matrix) says which of these fails"
        )
    try:
        return Draws(arr, item_names=names, item_dim=dim)
    except ValueError as err:
        text = str(err)
        if name == "draws" or not text.startswith("draws"):
            raise
        raise ValueError(name + text[len("draws"):]) from None  # the argument the caller named


def _has_fractions(arr: Any) -> bool:
    """A finite float matrix with some non-integral entry (draws it cannot be)."""
    if not isinstance(arr, np.ndarray) or arr.dtype.kind != "f" or arr.ndim != 2 or not arr.size:
        return False
    finite = arr[np.isfinite(arr)]
    return bool(np.any(finite != np.round(finite)))


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
    estimate: Any,
    truth: Any,
    loss: Union[str, Loss] = "VI",
    *,
    n_jobs: Optional[int] = None,
    memory_limit: Optional[int] = None,
) -> Union[float, np.ndarray]:
    """Loss of ``estimate`` against ``truth``.

    The estimate comes first, the reverse of R's ``partition.loss(truth, estimate, loss)``;
    keywords (``partition_loss(truth=draws, estimate=labels)``) read the same in both. A
    matrix of partitions as ``estimate`` with one partition as ``truth`` is refused: it is
    what R's argument order looks like.

    Parameters
    ----------
    estimate : array-like (n,) or (M, n), or Estimate
        One partition, or M partitions (one per row), as integer labels.
    truth : array-like (n,) or (H, n), Estimate, Draws, or PSM
        One partition (the loss between two partitions) or H posterior draws (the Monte Carlo
        expected loss, i.e. the mean over draws). PSM-based losses (``"VI.lb"``,
        ``"omARI.approx"``; ``"binder"`` too) also take a :class:`PSM` or a bare similarity
        matrix (square, symmetric, in [0, 1], unit diagonal); given draws, they compute it.
    loss : str or Loss
        See :mod:`salsox.losses`.
    n_jobs : int, optional
        Threads (default: the CPUs the process may use): across the M estimates, or across the draws of each
        when there are fewer estimates than threads. Results do not depend on it.
    memory_limit : int, optional
        Bytes the evaluation may allocate (its contingency tables, a PSM built from draws);
        more is a MemoryError up front. Default 16 GiB.

    Returns
    -------
    float, or ndarray of shape (M,) when ``estimate`` is 2-D.

    Count-based losses cost O(H n) per estimate. Between two partitions the built-in count
    losses take any number of clusters (beyond the engine's 65,536 per partition they are
    computed from the sparse contingency table, so ``RI`` and ``ARI`` too); draws hold at most
    65,536 clusters per draw.

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
    jobs = check_n_jobs(n_jobs)
    limit = check_limit(memory_limit)
    _check_argument_order(unwrap_estimate(estimate), truth)
    pair = _between_two_partitions(estimate, truth, loss)
    if pair is not None:
        return float(pair[0]) if np.ndim(unwrap_estimate(estimate)) == 1 else pair
    t = as_truth(truth, loss, "truth")
    n = t.n_items
    # The estimate's items matched to the truth's by name (salsox.io.item_index).
    est, single = as_label_matrix(aligned(estimate, t.item_names, n, "estimate", against="truth"), "estimate", n)
    route = loss._route(t)
    route.check_losses_memory(len(est), int(est.max(initial=0)) + 1, jobs, limit)
    values = finite_losses(route.losses(est, jobs), loss)
    return float(values[0]) if single else values


def _between_two_partitions(estimate: Any, truth: Any, loss: Loss) -> Optional[np.ndarray]:
    """The losses of ``estimate`` against ``truth`` when ``truth`` is one partition and a
    partition has more clusters than the engine's tables hold (numpy, no table needed); None
    otherwise (the engine computes them)."""
    if is_labels_like(truth):
        truth, names = labels_and_names(truth, "truth")
        estimate = aligned(estimate, names, len(truth), "estimate", against="truth")
    truth = unwrap_estimate(convert_foreign(truth))
    if isinstance(truth, (Draws, PSM)) or hasattr(truth, "iloc"):
        return None
    shape: Tuple[int, ...] = tuple(np.shape(truth)) if _ndim(truth) is not None else ()
    if not (len(shape) == 1 or (len(shape) == 2 and shape[0] == 1 and shape[-1] > 1)):
        return None
    if isinstance(truth, np.ndarray) and truth.dtype.kind == "f":
        return None  # as_truth's checks (a similarity matrix, fractions) apply
    rows, _ = as_label_matrix(truth, "truth")
    est, _ = as_label_matrix(estimate, "estimate", rows.shape[1])
    if not any(needs_numpy_route(e, rows[0]) for e in est):
        return None
    values = [two_partition_loss(e, rows[0], loss) for e in est]
    if any(v is None for v in values):
        return None  # a plugin's loss: the engine refuses, naming the argument
    return finite_losses(np.array(values, dtype=np.float64), loss)


def _check_argument_order(estimate: Any, truth: Any) -> None:
    """Refuse the argument order of R's ``partition.loss(truth, estimate)``."""
    hint = (
        "did you mean partition_loss(estimate, draws)? (salsox takes the estimate first, "
        "R's partition.loss the truth)"
    )
    if isinstance(estimate, (Draws, PSM)):
        raise TypeError(f"estimate must be partition labels, got a {type(estimate).__name__}: {hint}")
    if isinstance(truth, (Draws, PSM)):
        return
    if _ndim(estimate) == 2 and _ndim(unwrap_estimate(convert_foreign(truth))) == 1:
        raise ValueError(
            f"estimate is a matrix of partitions but truth is one partition: {hint}. To score "
            "several partitions against one partition, pass truth as a 1 x n matrix ([truth])"
        )


def _losses(est: np.ndarray, truth: Union[Draws, PSM], loss: Loss, n_jobs: int) -> np.ndarray:
    """Loss values of canonical label rows ``est`` (engine call, inputs already validated)."""
    return finite_losses(loss._route(truth).losses(est, n_jobs), loss)


def _partition_and_truth(x: Any, y: Any) -> tuple:
    """(one partition, its truth) from RI/ARI's arguments: one of them may be draws (an H x n
    matrix or Draws), the other must be one partition. Their order does not matter, as the
    indices are symmetric. Items are matched by name (salsox.io.item_index): the partition comes
    back in the truth's item order, the truth as a Draws or as bare canonical labels."""
    x_draws, y_draws = (
        isinstance(v, Draws) or (not is_labels_like(v) and _ndim(convert_foreign(v)) == 2) for v in (x, y)
    )
    if x_draws and y_draws:
        raise ValueError("x and y are both matrices: give one partition, and one partition or a draws matrix")
    if isinstance(x, PSM) or isinstance(y, PSM):
        raise ValueError("RI and ARI need partitions or draws, not a PSM")
    partition, truth, names = (y, x, ("y", "x")) if x_draws else (x, y, ("x", "y"))
    values, item_names = labels_and_names(partition, names[0])
    rows, _ = as_label_matrix(values, names[0])
    t: Union[Draws, np.ndarray]
    if x_draws or y_draws:
        t = as_draws(truth)
        target, n = t.item_names, t.n_items
    else:
        other, target = labels_and_names(truth, names[1])
        t = as_label_matrix(other, names[1])[0]
        n = t.shape[1]
        if item_names is None and target is None and n != rows.shape[1]:
            raise ValueError(f"x has {rows.shape[1]} items but y has {n}")
    take = align(target, n, item_names, rows.shape[1], names[0], against=names[1])
    return (rows[0] if take is None else rows[0][take]), t


def _unnamed_loss(partition: np.ndarray, truth: Any, loss: str) -> float:
    """The loss of a partition already matched to ``truth``'s items (Draws or label rows)."""
    if isinstance(truth, Draws):
        return float(_losses(relabel_rows(partition[None, :]), truth, get_loss(loss), 1)[0])
    return float(partition_loss(partition, truth, loss, n_jobs=1))


def RI(x: Any, y: Any) -> float:
    """Rand index between two partitions (1 = identical); with draws, the expected Rand index.

    Parameters
    ----------
    x, y : array-like (n,), Estimate, or one of them an (H, n) draws matrix / Draws
        Two partitions, or one partition and posterior draws (in either order, as the index is
        symmetric): the result is then the mean Rand index over the draws, as R's
        ``RI(truth = draws, estimate)`` means.

    Examples
    --------
    >>> salsox.RI([0, 0, 1, 1], [0, 0, 1, 2])
    0.8333333333333334
    >>> salsox.RI([0, 0, 1], [7, 7, 3])      # only which items share a label matters
    1.0
    """
    partition, truth = _partition_and_truth(x, y)
    n = partition.shape[0]
    if n == 1:
        return 1.0
    binder = _unnamed_loss(partition, truth, "binder")
    return 1.0 - binder * n / (n - 1)


def ARI(x: Any, y: Any) -> float:
    """Adjusted Rand index between two partitions; 1 for identical partitions (also trivial
    ones). With draws (an (H, n) matrix or Draws as either argument), the mean ARI over them.

    Examples
    --------
    >>> round(salsox.ARI([0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 2]), 4)
    0.4444
    >>> salsox.ARI([0, 0, 1], [7, 7, 3])
    1.0
    """
    partition, truth = _partition_and_truth(x, y)
    return 1.0 - _unnamed_loss(partition, truth, "omARI")
