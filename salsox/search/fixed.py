"""Validation of ``salso(..., fixed=, initial=)``: fixed items and warm starts for the runs."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from .._validation import as_integer_array, as_partial_labels, relabel_rows


def check_fixed(fixed: Any, n: int) -> Optional[np.ndarray]:
    """``fixed``: n labels, -1 for free items, other integers >= 0 naming fixed clusters.

    Returns int32 labels with the fixed clusters renumbered 0..F-1 in order of first appearance
    (-1 kept), or None when ``fixed`` is None.
    """
    return as_partial_labels(fixed, "fixed", n, "free")


def n_fixed_clusters(fixed: Optional[np.ndarray]) -> int:
    """Number of fixed clusters F of labels from :func:`check_fixed`."""
    return 0 if fixed is None or not np.any(fixed >= 0) else int(fixed.max()) + 1


def check_initial(
    initial: Any, n: int, max_clusters: int, n_runs: int, fixed: Optional[np.ndarray]
) -> Tuple[np.ndarray, np.ndarray]:
    """Warm starts: one partition (n,) or m partitions (m, n); run r starts from row r % m.

    Each row is relabelled 0..q-1 by first appearance; it must have at most ``max_clusters``
    clusters and agree with ``fixed`` (items with equal fixed labels together, different fixed
    labels apart). Returns the engine's ``initial`` (n_runs, n) and ``initial_used`` (all ones).
    """
    arr = as_integer_array(initial, "initial", negative="labels must be >= 0")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"initial must be one partition (n,) or several (m, n), got {arr.ndim}-D")
    if arr.shape[0] == 0:
        raise ValueError("initial holds no partition")
    if arr.shape[1] != n:
        raise ValueError(f"initial has {arr.shape[1]} labels per partition but the draws have {n} items")
    if np.any(arr < 0):
        raise ValueError("initial: labels must be >= 0 (every item allocated)")
    rows = relabel_rows(arr)
    for r, row in enumerate(rows):
        q = int(row.max()) + 1
        if q > max_clusters:
            raise ValueError(f"initial partition {r} has {q} clusters, more than max_clusters={max_clusters}")
        if fixed is not None and np.any(fixed >= 0):
            on = fixed >= 0
            pairs = np.unique(np.stack([fixed[on], row[on]]), axis=1)
            # A fixed cluster must map to one initial cluster and vice versa.
            if len(np.unique(pairs[0])) != pairs.shape[1] or len(np.unique(pairs[1])) != pairs.shape[1]:
                raise ValueError(
                    f"initial partition {r} does not agree with fixed: items with equal fixed labels must "
                    "share a cluster and items with different fixed labels must not"
                )
    m = rows.shape[0]
    start = np.ascontiguousarray(rows[np.arange(n_runs) % m], dtype=np.int32)
    return start, np.ones(n_runs, dtype=np.uint8)
