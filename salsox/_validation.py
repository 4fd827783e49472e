"""Argument checks shared by the public functions; every message names the argument."""

from __future__ import annotations

import math
import numbers
import os
import re
from typing import Any, Optional

import numpy as np

__all__ = [
    "byte_size",
    "check_cost",
    "check_int",
    "check_max_clusters",
    "check_probability",
    "check_n_jobs",
    "check_seed",
    "as_label_matrix",
]


def _as_float(name: str, value: numbers.Real) -> float:
    """``float(value)``, with an error naming ``name`` for integers beyond float range."""
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} is too large: an integer beyond float range") from None


def check_cost(name: str, value: Any) -> float:
    """A finite, strictly positive real (a loss cost such as ``a`` or ``b``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive real number, got {type(value).__name__}")
    value = _as_float(name, value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return value


def byte_size(nbytes: int) -> str:
    """A byte count for a message: bytes below a KiB, else KiB, MiB or GiB with one decimal
    (so that a small need does not read "0 MiB")."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} bytes"


def check_int(name: str, value: Any, *, minimum: int, maximum: Optional[int] = None) -> int:
    """An integer within [minimum, maximum]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


# What a cap of 0 clusters means where it is refused: R's salso spells "no cap" maxNClusters = 0.
MAX_CLUSTERS_ZERO = "0 is how R's salso asks for the default cap (maxNClusters = 0); here pass None, the default"


def check_max_clusters(value: Any, name: str = "max_clusters") -> int:
    """A cap on the number of clusters: an integer >= 1. ``0``, R's ``maxNClusters = 0`` (no
    cap), gets a message saying to pass None; the caller handles None itself.

    Examples
    --------
    >>> check_max_clusters(4)
    4
    >>> try:
    ...     check_max_clusters(0)
    ... except ValueError as err:
    ...     print(err)
    max_clusters=0: 0 is how R's salso asks for the default cap (maxNClusters = 0); here pass None, the default
    """
    if not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Integral) and int(value) == 0:
        raise ValueError(f"{name}=0: {MAX_CLUSTERS_ZERO}")
    return check_int(name, value, minimum=1)


def check_probability(name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a probability, got {type(value).__name__}")
    value = _as_float(name, value)
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return value


def max_threads() -> int:
    """The most threads one setting may ask for: the cores, and at least 256."""
    from . import _core

    return max(int(_core.max_threads()) if _core.has_openmp() else 1, 256)


def check_n_jobs(n_jobs: Any) -> int:
    """None or -1: the CPUs this process may use (see :mod:`salsox._cpus`); otherwise a
    positive number of threads."""
    from . import _core
    from ._cpus import cpu_info, usable_cpus

    if n_jobs is not None:
        n_jobs = check_int("n_jobs", n_jobs, minimum=-1)
        if n_jobs == 0:
            raise ValueError(
                "n_jobs must be a positive number of threads, or -1/None for the CPUs the process may use, got 0"
            )
    if not _core.has_openmp():
        return 1
    info = cpu_info()
    # The engine's loops and crews keep no more threads awake than the CPUs allowed here (the
    # cgroup quota too, which the OpenMP runtime's count of CPUs ignores).
    _core.set_usable_cpus(usable_cpus(info))
    if n_jobs is None or n_jobs == -1:
        return info.default
    # Results never depend on n_jobs; absurd thread counts are capped rather than started.
    return min(n_jobs, max_threads())


def check_seed(seed: Any) -> int:
    """A seed in [0, 2**64); None draws one from the operating system."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be a non-negative integer or None, got {type(seed).__name__}")
    seed = int(seed)
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    return seed


def unwrap_estimate(x: Any) -> Any:
    """An Estimate's labels (duck-typed: this layer cannot import it); anything else as is."""
    if hasattr(x, "labels") and hasattr(x, "expected_loss") and hasattr(x, "n_clusters"):
        return x.labels
    return x


def looks_like_similarity(arr: Any) -> bool:
    """Whether ``arr`` is a bare similarity matrix, as R salso detects one: a float n x n
    matrix, symmetric, with entries in [0, 1], ones on its diagonal and at least one entry
    strictly between 0 and 1 (a 0/1 matrix could be draws too). The tolerances are those of
    :class:`salsox.PSM`."""
    if not isinstance(arr, np.ndarray) or arr.dtype.kind != "f" or arr.ndim != 2:
        return False
    if arr.shape[0] != arr.shape[1] or arr.shape[0] == 0 or not np.all(np.isfinite(arr)):
        return False
    return bool(
        np.all((arr >= 0) & (arr <= 1))
        and np.any((arr > 0) & (arr < 1))
        and np.allclose(np.diag(arr), 1.0, rtol=0, atol=1e-12)
        and np.allclose(arr, arr.T, rtol=0, atol=1e-12)
    )


# Columns that samplers and their readers add beside the labels: never items. Stan's lp__ and
# the other names ending in "__" (accept_stat__, stepsize__, ...) are matched by their suffix;
# posterior's .chain/.iteration/.draw, CODA's and PyMC's iteration counters; PyMC's and
# ArviZ's sample_stats; NumPyro's extra fields; the log density and the pointwise
# log-likelihood. A name written with "[]" also matches its indexed forms, as CmdStan
# ("log_lik.3"), cmdstanpy, posterior and ArviZ ("log_lik[3]", "log_lik[1,2]") write them.
_BOOKKEEPING = frozenset({
    # iteration counters
    "iter", "iteration", "draw", "chain", "sample", ".chain", ".iteration", ".draw", "warmup",
    # log density and log-likelihood (pointwise: indexed)
    "lp", "logp", "log_density", "log_prior", "log_joint",
    "log_lik[]", "loglik[]", "log_likelihood[]", "log_lik_pointwise[]",
    # PyMC / ArviZ sample_stats
    "acceptance_rate", "diverging", "divergences", "energy", "energy_error", "max_energy_error",
    "step_size", "step_size_bar", "tree_depth", "n_steps", "reached_max_treedepth",
    "perf_counter_diff", "perf_counter_start", "process_time_diff", "index_in_trajectory",
    "largest_eigval", "smallest_eigval",
    # NumPyro's extra fields
    "potential_energy", "num_steps", "accept_prob", "mean_accept_prob", "adapt_state",
})

# A trailing index as samplers write it: "[3]", "[1,2]" (brackets), ".3", ".1.2" (CmdStan).
_INDEX = re.compile(r"(\[[^\[\]]*\]|(\.[0-9]+)+)$")


def is_bookkeeping(column: Any) -> bool:
    """Whether a column name is a sampler's bookkeeping column, not an item: an iteration
    counter (``iter``, ``chain``, ``.draw``), Stan's ``lp__`` and the other names ending in
    ``__``, the log density or a pointwise log-likelihood (``log_lik``, ``log_lik[3]``,
    ``log_lik.3``), a sample statistic of PyMC, ArviZ or NumPyro (``diverging``,
    ``accept_prob``, ...). A tuple (a MultiIndex column) is judged by its last level. Case and
    surrounding spaces are ignored.

    Examples
    --------
    >>> [is_bookkeeping(c) for c in ("lp__", "log_lik[12]", "log_lik.12", "Chain", "z[3]", "sample.3")]
    [True, True, True, True, False, False]
    >>> is_bookkeeping(("sample_stats", "lp")), is_bookkeeping(("posterior", "z[0]"))
    (True, False)
    """
    if isinstance(column, tuple) and column:
        column = column[-1]
    text = column.strip().lower() if isinstance(column, str) else ""
    if not text:
        return False
    if text in _BOOKKEEPING or (text.endswith("__") and len(text) > 2):
        return True
    base = _INDEX.sub("", text)
    return base + "[]" in _BOOKKEEPING


def check_label_frame(x: Any, name: str) -> None:
    """A pandas DataFrame of labels: every column must hold integer labels. A sampler's
    bookkeeping column (``iter``, ``chain``, ``lp__``, ...), a string column or a column of
    non-integral floats is refused naming it, never read as an item."""
    columns = getattr(x, "columns", None)
    dtypes = getattr(x, "dtypes", None)
    if columns is None or dtypes is None or not hasattr(x, "iloc"):
        return
    for position, (column, dtype) in enumerate(zip(list(columns), list(dtypes))):
        shown = repr(column)
        if is_bookkeeping(column):
            raise ValueError(
                f"{name}: column {shown} of the DataFrame is a sampler's bookkeeping column, not an item's "
                f"cluster labels; select the label columns, e.g. frame.drop(columns=[{shown}]) "
                "(or pass frame.to_numpy() with item_names= if it truly is an item)"
            )
        kind = getattr(dtype, "kind", "O")
        values = x.iloc[:, position]
        if kind == "f":
            v = np.asarray(values, dtype=np.float64)
            finite = v[np.isfinite(v)]
            if finite.size < v.size or np.any(finite != np.round(finite)):
                raise ValueError(
                    f"{name}: column {shown} of the DataFrame holds non-integral or missing values; "
                    "every column must hold one item's integer cluster labels"
                )
        elif kind not in "biu":
            sample = [v for v in values.tolist() if not isinstance(v, (int, np.integer)) or isinstance(v, bool)]
            if sample:
                raise ValueError(
                    f"{name}: column {shown} of the DataFrame holds {type(sample[0]).__name__} values "
                    f"(e.g. {sample[0]!r}), not integer cluster labels"
                )


def known_n_items(x: Any) -> Optional[int]:
    """The number of items of draws ``x`` when it is known without reading them (a Draws, a
    PSM, a 2-D array or DataFrame), else None: for checks made before any work on the draws."""
    n = getattr(x, "n_items", None)
    if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
        return int(n)
    shape = getattr(x, "shape", None)
    if isinstance(x, (np.ndarray,)) or type(x).__name__ == "DataFrame":
        if isinstance(shape, tuple) and len(shape) == 2:
            return int(shape[1])
    return None


def as_integer_array(x: Any, name: str, *, negative: Optional[str] = None) -> np.ndarray:
    """An integer ndarray from an array-like of labels (or an Estimate), rejecting what is not
    clearly labels. ``negative`` says what a negative label means to the caller (``fixed=``'s
    -1, a free item): uint64 labels beyond int64, which the int64 view would make negative,
    are then refused rather than reinterpreted."""
    x = unwrap_estimate(x)
    check_label_frame(x, name)
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be an array of integer labels, got a string")
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{name} must be a rectangular array of integer labels ({err})") from None
    if arr.dtype == object:
        # Nested lists of unequal length, mixed objects, or an object array (e.g. from pandas).
        # Let numpy infer the element type, then apply the same checks as to a numeric array:
        # a non-integral float must be refused here too, never truncated by an int cast.
        try:
            arr = np.array(arr.tolist())
        except (ValueError, TypeError, OverflowError):
            arr = np.empty(0, dtype=object)  # ragged: refused below
        if arr.dtype == object and arr.size and _all_python_integers(arr):
            beyond = max(arr.ravel().tolist(), key=abs)
            raise ValueError(
                f"{name} contains integer labels beyond the 64-bit range (e.g. {beyond}); only which items share "
                "a label matters, so relabel them first, e.g. np.unique(np.asarray(labels, dtype=object), "
                "return_inverse=True)[1]"
            )
        if arr.dtype == object or arr.dtype.kind not in "biuf":
            raise ValueError(
                f"{name} must be a rectangular array of integer labels (got ragged or non-numeric input)"
            )
    kind = arr.dtype.kind
    if kind in "iuf" and not arr.dtype.isnative:
        # Big-endian data (e.g. a .npy file written elsewhere): the engine reads native integers.
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if kind == "b":
        return arr.astype(np.int32)
    if kind in "iu":
        if arr.dtype == np.uint64:
            if negative is not None and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
                raise ValueError(
                    f"{name} contains uint64 labels beyond the int64 range (up to {int(arr.max())}); read as "
                    f"int64 they would be negative, and {negative}: relabel them, e.g. "
                    "np.unique(labels, return_inverse=True)[1]"
                )
            # A bijection onto int64: only label identity matters.
            return arr.view(np.int64) if arr.flags.c_contiguous else np.ascontiguousarray(arr).view(np.int64)
        return arr
    if kind == "f":
        if arr.size and not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains NaN or infinite values; labels must be integers")
        if arr.size and not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} contains non-integral values; labels must be integers")
        if arr.size and np.max(np.abs(arr)) >= 2.0**62:
            raise ValueError(f"{name} contains labels too large to represent exactly")
        return arr.astype(np.int64)
    raise TypeError(f"{name} must contain integer labels, got dtype {arr.dtype}")


def _all_python_integers(arr: np.ndarray) -> bool:
    """Whether every element of an object array is an integer (not a bool): numpy keeps such
    an array as objects only when some integer is beyond the 64-bit range."""
    return all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in arr.ravel().tolist())


def as_label_matrix(x: Any, name: str, n: Optional[int] = None) -> tuple[np.ndarray, bool]:
    """Labels as an M x n int32 matrix, each row relabelled to 0..q-1.

    Returns the matrix and whether the input was a single 1-D partition.
    """
    arr = as_integer_array(x, name)
    single = arr.ndim == 1
    if single:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 1-D partition or a 2-D matrix of partitions, got {arr.ndim}-D")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has no items")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} has no partitions")
    if n is not None and arr.shape[1] != n:
        raise ValueError(f"{name} has {arr.shape[1]} items but the draws have {n}")
    return relabel_rows(arr), single


def as_partial_labels(x: Any, name: str, n: int, free: str) -> Optional[np.ndarray]:
    """n labels of a partial partition: -1 for an item without a cluster (``free`` says what such
    an item is, for messages), other integers >= 0 naming clusters. Returns int32 labels with the
    clusters renumbered 0..k-1 in order of first appearance (-1 kept), or None for None."""
    if x is None:
        return None
    try:
        is_mask = np.asarray(unwrap_estimate(x)).dtype.kind == "b"
    except (ValueError, TypeError):
        is_mask = False  # ragged or odd input: as_integer_array says what is wrong
    if is_mask:  # True/False would silently become two clusters
        raise ValueError(
            f"{name} is a boolean mask; it takes labels: -1 for {free} items, a cluster label (>= 0) "
            f"for the others, e.g. np.where(mask, labels, -1)"
        )
    arr = as_integer_array(x, name, negative=f"-1 means {free} items")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of n labels (-1 for {free} items), got {arr.ndim}-D")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} labels but the draws have {n} items")
    unset = arr == -1
    if np.any(arr[~unset] < 0):
        raise ValueError(f"{name}: use -1 for {free} items; other labels must be >= 0")
    out = np.full(n, -1, dtype=np.int32)
    if not np.all(unset):
        _, first, inverse = np.unique(arr[~unset], return_index=True, return_inverse=True)
        rank = np.argsort(np.argsort(first))  # clusters by first appearance
        out[~unset] = rank[inverse.reshape(-1)]
    return out


_RELABEL_CHUNK = 2**20  # labels relabelled at once (see relabel_rows)


def relabel_bytes(m: int, n: int, chunk: int = _RELABEL_CHUNK) -> int:
    """Bytes :func:`relabel_rows` of an m x n matrix allocates at most: its int32 result and the
    temporaries of one chunk (60 bytes a label, and 8 more for the copy of a chunk of rows
    picked among canonical ones). ``chunk``: labels a caller hands it at once, if fewer."""
    return 4 * m * n + 68 * min(m * n, max(n, min(chunk, _RELABEL_CHUNK)))


def relabel_rows(arr: np.ndarray) -> np.ndarray:
    """Each row relabelled to 0..q-1 in order of first appearance (vectorised)."""
    # Rows already canonical (restricted growth strings, e.g. from set_partitions) are kept.
    canonical = _canonical_rows(arr)
    if np.all(canonical):
        return arr.astype(np.int32, copy=False)
    m, n = arr.shape
    if np.any(canonical):
        out = arr.astype(np.int32)
        # The other rows a chunk at a time: a copy of all of them took 8 bytes a label more.
        rows = np.flatnonzero(~canonical)
        step = max(1, _RELABEL_CHUNK // max(n, 1))
        for lo in range(0, len(rows), step):
            pick = rows[lo : lo + step]
            out[pick] = relabel_rows(arr[pick])
        return out
    # Its temporaries take about 60 bytes a label: rows in chunks of about 2**20 labels keep
    # them to some 60 MiB, whatever the number of rows (the same labels).
    rows_per_chunk = max(1, _RELABEL_CHUNK // n)
    if m > rows_per_chunk:
        out = np.empty((m, n), dtype=np.int32)
        for lo in range(0, m, rows_per_chunk):
            out[lo : lo + rows_per_chunk] = relabel_rows(arr[lo : lo + rows_per_chunk])
        return out
    order = np.argsort(arr, axis=1, kind="stable")
    ordered = np.take_along_axis(arr, order, axis=1)
    start = np.ones((m, n), dtype=bool)
    start[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    group_sorted = np.cumsum(start, axis=1) - 1
    group = np.empty((m, n), dtype=np.int64)
    np.put_along_axis(group, order, group_sorted, axis=1)
    # A stable sort puts each group's first occurrence at its start: rank groups by it.
    first = np.full((m, n), n, dtype=np.int64)
    rows = np.nonzero(start)[0]
    first[rows, group_sorted[start]] = order[start]
    rank = np.argsort(np.argsort(first, axis=1, kind="stable"), axis=1, kind="stable")
    return np.take_along_axis(rank, group, axis=1).astype(np.int32)


def _canonical_rows(arr: np.ndarray) -> np.ndarray:
    """Which rows are restricted growth strings (0 first, each label at most 1 + those before)."""
    m, n = arr.shape
    rows_per_chunk = max(1, _RELABEL_CHUNK // max(n, 1))
    if n > m and m > rows_per_chunk:
        # Long rows a chunk at a time: their temporaries (about 20 bytes a label) stay within
        # relabel_bytes' chunk, and Ctrl-C lands between chunks.
        return np.concatenate([_canonical_rows(arr[lo : lo + rows_per_chunk]) for lo in range(0, m, rows_per_chunk)])
    if n > m:  # few long rows
        running_max = np.maximum.accumulate(arr, axis=1)
        return (arr[:, 0] == 0) & np.all((arr[:, 1:] <= running_max[:, :-1] + 1) & (arr[:, 1:] >= 0), axis=1)
    # Many short rows: column by column is much faster than reductions along short rows.
    running = arr[:, 0].copy()
    ok = running == 0
    for j in range(1, n):
        column = arr[:, j]
        ok &= (column <= running + 1) & (column >= 0)
        np.maximum(running, column, out=running)
    return ok
