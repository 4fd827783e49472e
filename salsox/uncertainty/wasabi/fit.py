"""WASABI's iterations for one start: assign every draw to its nearest particle, refill empty
particles, move each particle to the SALSO estimate (VI) of its group, until W settles.

W = (1/H) sum_h min_l VI(draw_h, particle_l) never increases: a particle is replaced only by a
partition that is better for its group (strictly, by the same evaluation of both), a draw is
only ever moved to a particle at most as far, and a refilled particle is a draw of positive VI
that then sits at VI 0. Unlike the R package, duplicates are found by comparing canonical
labels, and the assignment, weights and W reported are those of the final particles.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, Dict, List, Optional

import numpy as np

from ...io import Draws, InItemOrder
from ...losses import VI
from ...metrics import partition_loss
from ...search import salso
from .draws import DrawSet, distance, nearest, vi_matrix

__all__ = ["Settings", "StartResult", "Stopped", "run_start"]

# A candidate must beat the current particle by more than this (relative) to replace it, so
# that rounding in the evaluation can never make particles flap between equals.
_IMPROVEMENT = 1e-12


class Stopped(Exception):
    """Raised inside a start when the whole call is being stopped (another start failed, or
    Ctrl-C in the calling thread)."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """What every start shares."""

    n_particles: int
    max_iter: int
    tolerance: float  # eps * log2(n)
    mini_batch: Optional[int]
    n_runs: int  # SALSO runs per particle update: one warm start, the others fresh
    n_jobs: int  # threads for this start's engine calls
    max_clusters: Optional[int]  # cap for the particles (None: twice the group's, at most n)
    stop: threading.Event

    def check(self) -> None:
        """Raises :class:`Stopped` once the call is being stopped. Called between steps and,
        through :func:`vi_matrix`, while the engine works: a start runs on a worker thread,
        where no signal handler runs, so this flag is all it can see of Ctrl-C."""
        if self.stop.is_set():
            raise Stopped()


@dataclasses.dataclass
class StartResult:
    """The outcome of one start, on the distinct draws of the full set."""

    particles: np.ndarray  # L x n int32, canonical
    vi: np.ndarray  # U x L
    assignment: np.ndarray  # U, particle of each distinct draw
    distance: float
    history: List[float]  # W at the start and after each full-batch iteration
    batch_history: List[Dict[str, float]]  # mini-batch iterations: W on the batch before/after
    n_iter: int
    converged: bool
    replaced: int  # particle updates accepted


def _fill_empty(
    ds: DrawSet, particles: np.ndarray, vi: np.ndarray, assignment: np.ndarray, rng: np.random.Generator,
    settings: Settings, strict: bool,
) -> np.ndarray:
    """Gives every empty particle a draw, until none is empty; returns the new assignment.

    An empty particle takes a draw from a group holding at least two distinct partitions
    (so the group keeps a draw), picked with probability proportional to its VI to its
    particle times its multiplicity. With fewer distinct draws than particles (possible in a
    mini-batch) that cannot always be done: ``strict=False`` then leaves the rest empty.
    """
    L = settings.n_particles
    while True:
        settings.check()
        sizes = np.bincount(assignment, minlength=L)
        empty = np.flatnonzero(sizes == 0)
        if len(empty) == 0:
            return assignment
        own = vi[np.arange(ds.n_unique), assignment]
        weight = ds.counts * own * (sizes[assignment] >= 2)
        total = weight.sum()
        if not total > 0:
            if strict:  # pragma: no cover - excluded by the check n_particles <= distinct draws
                raise RuntimeError("no draw can refill an empty particle")
            return assignment
        u = int(rng.choice(ds.n_unique, p=weight / total))
        particle = empty[0]
        particles[particle] = ds.unique[u]
        vi[:, particle] = vi_matrix(ds, ds.unique[u], settings.n_jobs, settings.check)[:, 0]
        assignment = nearest(vi, rng)


def _assign(
    ds: DrawSet, particles: np.ndarray, rng: np.random.Generator, settings: Settings, strict: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """VI matrix and nearest-particle assignment of ``ds``; duplicated particles (equal
    canonical labels, and only those) count as empty and are refilled."""
    vi = vi_matrix(ds, particles, settings.n_jobs, settings.check)
    _, first = np.unique(particles, axis=0, return_index=True)
    duplicate = np.ones(len(particles), dtype=bool)
    duplicate[first] = False
    vi[:, duplicate] = np.inf
    assignment = nearest(vi, rng)
    assignment = _fill_empty(ds, particles, vi, assignment, rng, settings, strict)
    return vi, assignment


def _update(
    ds: DrawSet, particles: np.ndarray, assignment: np.ndarray, rng: np.random.Generator, settings: Settings
) -> tuple[np.ndarray, int]:
    """Each particle becomes the best VI partition for its group (SALSO warm-started from it,
    plus fresh runs), kept when nothing found is strictly better. Returns (particles, number
    replaced)."""
    new = particles.copy()
    replaced = 0
    for particle in range(settings.n_particles):
        settings.check()
        rows = np.flatnonzero(assignment == particle)
        if len(rows) == 0:
            continue
        if len(rows) == 1:  # one distinct partition: it is the group's best particle (VI 0)
            if not np.array_equal(new[particle], ds.unique[rows[0]]):
                new[particle] = ds.unique[rows[0]]
                replaced += 1
            continue
        group = Draws(ds.expand(rows))
        current = particles[particle]
        # Particles are any partitions, and the group's best may have more clusters than its
        # draws (e.g. all singletons between disagreeing draws): twice as many are allowed.
        k_current = int(current.max()) + 1
        cap = settings.max_clusters or min(ds.unique.shape[1], 2 * max(group.max_clusters, k_current))
        max_clusters = max(cap, k_current)
        candidates = [current]
        stop_cb = _progress_stop(settings)
        warm = salso(
            group, VI(), n_runs=1, initial=InItemOrder(current), max_clusters=max_clusters,
            seed=int(rng.integers(2**63)), n_jobs=settings.n_jobs, progress=stop_cb,
        )
        candidates.append(np.asarray(warm.labels, dtype=np.int32))
        if settings.n_runs > 1:
            fresh = salso(
                group, VI(), n_runs=settings.n_runs - 1, max_clusters=max_clusters,
                seed=int(rng.integers(2**63)), n_jobs=settings.n_jobs, progress=stop_cb,
            )
            candidates.append(np.asarray(fresh.labels, dtype=np.int32))
        losses = np.asarray(partition_loss(np.stack(candidates), group, VI(), n_jobs=settings.n_jobs))
        best = int(np.argmin(losses))
        if losses[best] < losses[0] - _IMPROVEMENT * max(1.0, abs(float(losses[0]))):
            new[particle] = candidates[best]
            replaced += 1
    return new, replaced


def _progress_stop(settings: Settings) -> Any:
    """A salso progress callable that stops the search when the call is being stopped."""

    def check(_progress: Any) -> None:
        settings.check()

    return check


def _mini_batch_phase(
    ds: DrawSet, inverse: np.ndarray, particles: np.ndarray, rng: np.random.Generator, settings: Settings
) -> tuple[np.ndarray, List[Dict[str, float]]]:
    """Iterations on random batches of ``mini_batch`` draws. The stopping rule compares W on
    one and the same batch before and after its update (never W across different batches)."""
    history: List[Dict[str, float]] = []
    H = len(inverse)
    assert settings.mini_batch is not None
    for _ in range(settings.max_iter):
        settings.check()
        picked = rng.choice(H, size=settings.mini_batch, replace=False)
        batch = ds.subset(np.bincount(inverse[picked], minlength=ds.n_unique))
        vi, assignment = _assign(batch, particles, rng, settings, strict=False)
        before = distance(batch, vi, assignment)
        particles, _ = _update(batch, particles, assignment, rng, settings)
        vi_after = vi_matrix(batch, particles, settings.n_jobs, settings.check)
        after = distance(batch, vi_after, nearest(vi_after, rng))
        history.append({"before": before, "after": after})
        if before - after <= settings.tolerance:
            break
    return particles, history


def run_start(
    ds: DrawSet, inverse: np.ndarray, particles: np.ndarray, rng: np.random.Generator, settings: Settings
) -> StartResult:
    """Iterates from ``particles`` (distinct, canonical) until W changes by at most the
    tolerance or ``max_iter`` full-batch iterations are done; the result's assignment and W
    are those of its final particles."""
    particles = particles.astype(np.int32, copy=True)
    batch_history: List[Dict[str, float]] = []
    if settings.mini_batch is not None and settings.mini_batch < len(inverse):
        particles, batch_history = _mini_batch_phase(ds, inverse, particles, rng, settings)
    vi, assignment = _assign(ds, particles, rng, settings)
    w = distance(ds, vi, assignment)
    history = [w]
    converged = False
    replaced_total = 0
    n_iter = 0
    for _ in range(settings.max_iter):
        particles, replaced = _update(ds, particles, assignment, rng, settings)
        replaced_total += replaced
        n_iter += 1
        settings.check()
        vi, assignment = _assign(ds, particles, rng, settings)
        w_new = distance(ds, vi, assignment)
        history.append(w_new)
        change = w - w_new
        w = w_new
        if change <= settings.tolerance:
            converged = True
            break
    return StartResult(
        particles=particles, vi=vi, assignment=assignment, distance=w, history=history,
        batch_history=batch_history, n_iter=n_iter, converged=converged, replaced=replaced_total,
    )
