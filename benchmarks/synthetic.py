"""Synthetic posterior draws of a partition, for sizes beyond the shared data.

A true partition of n items into k clusters (cluster c holds a contiguous block of items, so
clusters c and c+1 are "neighbours"); in each draw every uncertain item moves to a
neighbouring cluster with probability `p_move`, and with small probabilities a pair of
neighbouring clusters is merged or a cluster is split in two. Labels are generated draw by
draw in uint8/uint16, so memory stays at the size of the compact draws.
"""

from __future__ import annotations

import numpy as np


def synthetic_draws(
    n: int,
    H: int,
    k: int = 10,
    *,
    uncertain: float = 0.2,
    p_move: float = 0.3,
    p_merge: float = 0.05,
    p_split: float = 0.05,
    seed: int = 0,
) -> np.ndarray:
    """H x n draws (uint8 when labels fit, else uint16) around a k-cluster truth."""
    rng = np.random.default_rng(seed)
    truth = (np.arange(n) * k // n).astype(np.int64)
    is_uncertain = rng.random(n) < uncertain
    idx = np.flatnonzero(is_uncertain)
    dtype = np.uint8 if 2 * k + 2 <= 256 else np.uint16
    out = np.empty((H, n), dtype=dtype)
    for h in range(H):
        labels = truth.copy()
        moving = idx[rng.random(idx.size) < p_move]
        step = rng.choice(np.array([-1, 1]), size=moving.size)
        labels[moving] = np.clip(labels[moving] + step, 0, k - 1)
        if rng.random() < p_merge and k > 1:
            c = rng.integers(0, k - 1)
            labels[labels == c + 1] = c
        if rng.random() < p_split:
            c = rng.integers(0, k)
            members = np.flatnonzero(labels == c)
            labels[members[rng.random(members.size) < 0.5]] = k + c  # a new cluster
        out[h] = labels
    return out
