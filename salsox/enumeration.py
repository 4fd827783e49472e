"""Exhaustive enumeration of set partitions, for exact minimisation on tiny problems.

The number of partitions of ``n`` items is the Bell number ``bell(n)``, which
grows super-exponentially (``bell(12) = 4,213,597``, ``bell(13) = 27,644,437``),
so enumeration is only offered for ``n <= 12``.  It is meant for checking the
SALSO search on small problems: the partition it returns is the exact minimiser
of the Monte Carlo expected loss.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "MAX_ENUMERATION_ITEMS",
    "EnumerationResult",
    "bell",
    "lbell",
    "enumerate_partitions",
    "set_partitions",
    "minimize_by_enumeration",
]

#: Largest number of items for which :func:`set_partitions` and
#: :func:`minimize_by_enumeration` enumerate all partitions.
MAX_ENUMERATION_ITEMS = 12

_DEFAULT_CHUNK_SIZE = 1 << 16


def _as_count(value: Any, name: str) -> int:
    """Validate a non-negative integer argument and return it as a Python int."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got a bool")
    try:
        out = operator.index(value)
    except TypeError:
        raise TypeError(
            f"{name} must be an integer, got {type(value).__name__}"
        ) from None
    if out < 0:
        raise ValueError(f"{name} must be >= 0, got {out}")
    return out


def bell(n: int) -> int:
    """Bell number: the number of partitions of a set of ``n`` items.

    Parameters
    ----------
    n : int
        Number of items, ``n >= 0``.

    Returns
    -------
    int
        ``bell(n)`` as an exact Python integer (``bell(0) == 1``).

    Raises
    ------
    TypeError
        If ``n`` is not an integer.
    ValueError
        If ``n`` is negative.

    Examples
    --------
    >>> [bell(k) for k in range(8)]
    [1, 1, 2, 5, 15, 52, 203, 877]
    """
    n = _as_count(n, "n")
    # Bell triangle: each row starts with the last entry of the previous row.
    row = [1]
    for _ in range(n):
        new = [row[-1]]
        for value in row:
            new.append(new[-1] + value)
        row = new
    return row[0]


#: Up to this n, :func:`lbell` is the logarithm of the exact :func:`bell`.
_LBELL_EXACT = 300


def lbell(n: int) -> float:
    """Natural logarithm of the Bell number, ``log(bell(n))``, as R salso's ``lbell``.

    Exact (the logarithm of the integer) for ``n <= 300``; beyond, Dobinski's formula
    ``bell(n) = e^-1 sum_k k^n / k!`` summed in logarithms, to about 1e-15 relative, in
    O(n) time: ``lbell(10**6)`` is immediate where ``bell(10**6)`` has millions of digits.

    Examples
    --------
    >>> import math
    >>> from salsox import lbell
    >>> math.isclose(lbell(5), math.log(52))
    True
    >>> round(lbell(300), 4)
    1045.3322
    """
    n = _as_count(n, "n")
    if n <= _LBELL_EXACT:
        return math.log(bell(n))
    # k beyond 2n contributes less than e^-n relative to the peak (near n / log n).
    from scipy.special import gammaln  # deferred: scipy would double `import salsox`'s time

    k = np.arange(1, 2 * n + 16, dtype=np.float64)
    terms = n * np.log(k) - gammaln(k + 1.0)
    top = float(terms.max())
    return top + math.log(float(np.exp(terms - top).sum())) - 1.0


def enumerate_partitions(n: int) -> np.ndarray:
    """All partitions of ``n`` items, as R salso's ``enumerate.partitions``: one per row, in
    canonical labels (0, 1, ... in order of first appearance; R's start at 1), rows in
    lexicographic order (the one-cluster partition first, all singletons last).

    ``n <= 13`` as in R: ``bell(13)`` is 27.6 million rows, 360 MB of int8 labels.

    Examples
    --------
    >>> from salsox import enumerate_partitions
    >>> enumerate_partitions(3)
    array([[0, 0, 0],
           [0, 0, 1],
           [0, 1, 0],
           [0, 1, 1],
           [0, 1, 2]], dtype=int8)
    """
    return _partitions(n, 13, "enumerate_partitions")


def _labels_dtype(n: int) -> np.dtype:
    return np.dtype(np.int8) if n <= np.iinfo(np.int8).max + 1 else np.dtype(np.int32)


def set_partitions(n: int) -> np.ndarray:
    """All partitions of ``n`` items, as restricted growth strings.

    Row ``r`` is a label vector ``c`` with ``c[0] == 0`` and
    ``c[i] <= max(c[:i]) + 1``, so every partition appears exactly once, in its
    canonical labelling.  Rows are in lexicographic order: the first row is the
    one-cluster partition ``[0, ..., 0]`` and the last is the all-singletons
    partition ``[0, 1, ..., n - 1]``.

    Parameters
    ----------
    n : int
        Number of items, ``0 <= n <= 12``.

    Returns
    -------
    numpy.ndarray
        Array of shape ``(bell(n), n)`` and dtype ``int8``.  For ``n == 0`` it
        has shape ``(1, 0)`` (the empty partition).

    Raises
    ------
    TypeError
        If ``n`` is not an integer.
    ValueError
        If ``n`` is negative or larger than 12 (``bell(13)`` is 27.6 million).

    Notes
    -----
    Built column by column without Python loops over rows: every prefix of
    length ``k`` with largest label ``m`` is repeated ``m + 2`` times and
    extended by ``0, 1, ..., m + 1``.  For ``n = 12`` the result takes 51 MB.

    Examples
    --------
    >>> set_partitions(3)
    array([[0, 0, 0],
           [0, 0, 1],
           [0, 1, 0],
           [0, 1, 1],
           [0, 1, 2]], dtype=int8)
    """
    return _partitions(n, MAX_ENUMERATION_ITEMS, "set_partitions")


def _partitions(n: int, limit: int, caller: str) -> np.ndarray:
    """The restricted growth strings of length n (see set_partitions), for n <= limit."""
    n = _as_count(n, "n")
    if n > limit:
        raise ValueError(f"n must be <= {limit} for {caller}, got {n} (bell({n}) = {bell(n):,} partitions)")
    dtype = _labels_dtype(n)
    if n == 0:
        return np.zeros((1, 0), dtype=dtype)
    labels = np.zeros((1, 1), dtype=dtype)
    maxima = np.zeros(1, dtype=dtype)  # largest label of each prefix
    for _ in range(1, n):
        # Every prefix with largest label m gets m + 2 children: new label 0 .. m + 1.
        # int32 indices suffice: bell(12) = 4,213,597 rows.
        n_choices = maxima.astype(np.int32) + 2
        parent = np.repeat(np.arange(labels.shape[0], dtype=np.int32), n_choices)
        starts = np.cumsum(n_choices, dtype=np.int32) - n_choices
        new_label = np.arange(parent.size, dtype=np.int32)
        new_label -= starts[parent]
        new_label = new_label.astype(dtype)
        extended = np.empty((parent.size, labels.shape[1] + 1), dtype=dtype)
        np.take(labels, parent, axis=0, out=extended[:, :-1])
        extended[:, -1] = new_label
        labels = extended
        maxima = np.maximum(maxima[parent], new_label)
    return labels


@dataclass(frozen=True, eq=False)
class EnumerationResult:
    """Exact minimiser of the expected loss found by exhaustive enumeration.

    Attributes
    ----------
    labels : numpy.ndarray
        The minimising partition, a read-only ``int32`` vector of length ``n``
        in canonical form (first appearance order, labels ``0, 1, ...``).  When
        several partitions attain the minimum, the first in the lexicographic
        order of :func:`set_partitions` is returned.
    expected_loss : float
        Its (Monte Carlo expected) loss, as computed by
        :func:`salsox.partition_loss`.
    n_partitions : int
        Number of partitions scored, ``bell(n)``.
    """

    labels: np.ndarray
    expected_loss: float
    n_partitions: int

    @property
    def n_clusters(self) -> int:
        """Number of clusters of :attr:`labels`."""
        return int(self.labels.max()) + 1 if self.labels.size else 0


def _n_items(truth: Any) -> int:
    """Number of items of a truth argument (a partition, draws matrix or PSM)."""
    for attr in ("n_items", "n"):
        value = getattr(truth, attr, None)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
    shape = getattr(truth, "shape", None)
    if shape is None:
        matrix = getattr(truth, "matrix", None)
        if matrix is not None:
            shape = np.shape(matrix)
    if shape is None:
        try:
            shape = np.shape(truth)
        except ValueError as exc:  # ragged nested sequences
            raise ValueError(f"truth is not a valid partition or draws matrix: {exc}") from None
    if len(shape) not in (1, 2):
        raise ValueError(
            "truth must be a 1-D partition, an H x n draws matrix or a PSM, "
            f"got an array of shape {tuple(shape)}"
        )
    return int(shape[-1])


def minimize_by_enumeration(
    truth: Any,
    loss: Any = "VI",
    *,
    chunk_size: int = _DEFAULT_CHUNK_SIZE,
) -> EnumerationResult:
    """Exact minimiser of the expected loss, by scoring every partition.

    Every one of the ``bell(n)`` partitions of the ``n`` items is scored with
    ``salsox.partition_loss(chunk, truth, loss)``, ``chunk_size`` partitions at
    a time, and the first partition with the smallest loss is returned.

    Parameters
    ----------
    truth : array_like or salsox.PSM
        An ``H x n`` matrix of posterior draws (the expected loss is the mean
        over the draws), a single 1-D partition, or, for the PSM-based losses
        ``"VI.lb"`` and ``"omARI.approx"``, a :class:`salsox.PSM`.  Passed to
        :func:`salsox.partition_loss` unchanged.
    loss : str or loss object, default "VI"
        Any loss accepted by :func:`salsox.partition_loss`.
    chunk_size : int, default 65536
        Number of partitions scored per call; bounds the memory used.

    Returns
    -------
    EnumerationResult
        ``labels`` (canonical, ``int32``), ``expected_loss`` and
        ``n_partitions``.

    Raises
    ------
    ValueError
        If the number of items ``n`` of ``truth`` is 0 or larger than 12, or
        ``chunk_size`` is not positive; any error of
        :func:`salsox.partition_loss` (bad ``truth`` or ``loss``) propagates.
    TypeError
        If ``chunk_size`` is not an integer.

    Notes
    -----
    The cost is ``bell(n)`` loss evaluations, each ``O(H n)`` for a draws
    matrix: ``n = 12`` means 4.2 million partitions.

    Examples
    --------
    >>> import numpy as np
    >>> draws = np.array([[1, 1, 2], [1, 1, 1], [1, 2, 2]])
    >>> res = minimize_by_enumeration(draws, "binder")
    >>> res.labels.tolist(), res.n_partitions
    ([0, 0, 0], 5)
    """
    # Deferred, and looked up at call time: the tests swap in a reference implementation.
    from .metrics import evaluation

    chunk_size = _as_count(chunk_size, "chunk_size")
    if chunk_size == 0:
        raise ValueError("chunk_size must be >= 1, got 0")
    n = _n_items(truth)
    if n < 1:
        raise ValueError("truth must have at least one item (n >= 1), got n = 0")
    if n > MAX_ENUMERATION_ITEMS:
        raise ValueError(
            f"truth has n = {n} items; minimize_by_enumeration supports at most "
            f"n = {MAX_ENUMERATION_ITEMS} (bell({n}) = {bell(n):,} partitions). "
            "Use the SALSO search for larger problems."
        )

    if not hasattr(truth, "n_items") and np.ndim(truth) == 1:
        truth = np.asarray(truth)[None, :]  # one partition: partition_loss takes it as 1 x n
    partitions = set_partitions(n)
    total = partitions.shape[0]
    best_index = -1
    best_loss = np.inf
    for start in range(0, total, chunk_size):
        chunk = partitions[start : start + chunk_size]
        values = np.asarray(evaluation.partition_loss(chunk, truth, loss), dtype=np.float64)
        if values.shape != (chunk.shape[0],):
            raise RuntimeError(
                f"partition_loss returned shape {values.shape} for {chunk.shape[0]} estimates"
            )
        if np.isnan(values).any():
            bad = start + int(np.flatnonzero(np.isnan(values))[0])
            raise RuntimeError(
                f"partition_loss returned NaN for partition {partitions[bad].tolist()}"
            )
        k = int(np.argmin(values))  # first minimiser within the chunk
        if best_index < 0 or values[k] < best_loss:  # strict: earlier chunks win ties
            best_loss = float(values[k])
            best_index = start + k

    labels = partitions[best_index].astype(np.int32)
    labels.setflags(write=False)
    return EnumerationResult(labels=labels, expected_loss=best_loss, n_partitions=total)
