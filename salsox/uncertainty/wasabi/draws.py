"""The draws as WASABI uses them: distinct partitions with their multiplicities, and the VI of
each to the particles (the engine's ``particle_vi``, O(H n) per particle).

Posterior samples often repeat partitions, and every step of the method depends on a draw only
through its partition: working on the distinct ones with counts is exact and makes a group
holding a single distinct partition easy to recognise (its best particle is that partition).
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

import numpy as np

from ... import _core
from ...io import Draws

__all__ = ["DrawSet", "unique_rows", "vi_matrix", "nearest", "group_costs", "distance"]

# Label cells processed at once when hashing or comparing rows (bounds temporaries).
_CHUNK_CELLS = 1 << 21


def unique_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First-occurrence index of each distinct row and each row's distinct-row index.

    Rows are hashed (a random linear map modulo 2**64, fixed seed) and the hashes sorted, which
    is much faster than sorting whole rows; equal hashes are then checked row by row, and a
    collision (vanishingly rare) falls back to ``np.unique(axis=0)``.
    """
    h, n = matrix.shape
    weights = np.random.default_rng(0x5A5AB1).integers(1, 2**63, size=n, dtype=np.int64).astype(np.uint64) | 1
    keys = np.empty(h, dtype=np.uint64)
    step = max(1, _CHUNK_CELLS // n)
    with np.errstate(over="ignore"):
        for s in range(0, h, step):
            block = matrix[s : s + step].astype(np.uint64)
            keys[s : s + step] = (block * weights).sum(axis=1, dtype=np.uint64)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    for s in range(0, h, step):
        if not np.array_equal(matrix[s : s + step], matrix[first[inverse[s : s + step]]]):
            _, first, inverse = np.unique(matrix, axis=0, return_index=True, return_inverse=True)
            return first, inverse.reshape(-1)
    return first, inverse


@dataclasses.dataclass
class DrawSet:
    """Distinct canonical partitions ``unique`` (U x n) with multiplicities ``counts`` (U,)."""

    unique: np.ndarray
    counts: np.ndarray
    draws: Draws = dataclasses.field(init=False, repr=False)  # the rows, held by the engine

    def __post_init__(self) -> None:
        self.draws = Draws(self.unique)

    @property
    def n_unique(self) -> int:
        return int(self.unique.shape[0])

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def expand(self, rows: np.ndarray) -> np.ndarray:
        """The draws of distinct rows ``rows``, each repeated by its multiplicity."""
        return np.repeat(self.unique[rows], self.counts[rows], axis=0)

    def subset(self, counts: np.ndarray) -> "DrawSet":
        """The draw set with multiplicities ``counts`` (U,), keeping the rows with a count."""
        keep = np.flatnonzero(counts)
        return DrawSet(self.unique[keep], counts[keep].astype(np.int64))


def vi_matrix(
    ds: DrawSet, particles: np.ndarray, n_jobs: int, check: Optional[Callable[[], None]] = None
) -> np.ndarray:
    """U x L VI (bits) of each distinct draw to each particle (rows of canonical labels).

    ``check`` is called before the engine starts and about every 50 ms while it works, on this
    thread; an exception from it stops the call and propagates. On a start's worker thread it
    is the only way to stop the call: Python runs signal handlers on the main thread only.
    """
    p = np.ascontiguousarray(particles, dtype=np.int32)
    if p.ndim == 1:
        p = p[None, :]
    if check is not None:
        check()
    return np.asarray(_core.particle_vi(ds.draws._core, p, n_jobs, stop=check))


def nearest(vi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each row's column of smallest VI, ties broken at random (``rng`` is used only for ties)."""
    best = vi.min(axis=1, keepdims=True)
    tied = vi == best
    if not np.any(tied.sum(axis=1) > 1):
        return np.argmin(vi, axis=1)
    noise = rng.random(vi.shape)
    noise[~tied] = -1.0
    return np.argmax(noise, axis=1)


def group_costs(ds: DrawSet, vi: np.ndarray, assignment: np.ndarray, n_particles: int) -> tuple[np.ndarray, np.ndarray]:
    """Per particle: the number of draws assigned to it and the sum of their VI to it."""
    own = vi[np.arange(vi.shape[0]), assignment]
    sizes = np.bincount(assignment, weights=ds.counts, minlength=n_particles)
    sums = np.bincount(assignment, weights=ds.counts * own, minlength=n_particles)
    return sizes, sums


def distance(ds: DrawSet, vi: np.ndarray, assignment: np.ndarray) -> float:
    """W: the mean VI of the draws to their particles."""
    own = vi[np.arange(vi.shape[0]), assignment]
    return float(np.dot(ds.counts, own) / ds.total)
