"""The public entry points: :func:`wasabi` and :func:`elbow`."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import numbers
import threading
import time
from typing import Any, List, Optional, Tuple, Union

import numpy as np

from ..._cpus import usable_cpus
from ..._validation import byte_size, check_int, check_max_clusters, check_n_jobs, check_seed
from ...engine import check_limit
from ...losses import VI
from ...io import convert_foreign_named
from ...io import aligned
from ...io.draws import check_item_names
from .contributions import draws_matrix
from .draws import DrawSet, group_costs, unique_rows
from .fit import Settings, StartResult, Stopped, run_start
from .init import INIT_METHODS, fixed_particles, plus_plus, top_vi
from .memory import wasabi_bytes
from .result import Elbow, WasabiResult

__all__ = ["wasabi", "elbow"]


def _check_eps(eps: Any) -> float:
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be a non-negative number, got {type(eps).__name__}")
    value = float(eps)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    return value


def _check_init(init: Any) -> Union[str, Any]:
    if isinstance(init, str):
        if init not in INIT_METHODS:
            raise ValueError(
                f"init must be '++', 'topvi' or an array of starting partitions (n_particles x n), got {init!r}"
            )
    return init


def check_wasabi_options(
    n_particles: Any,
    *,
    init: Any = "++",
    n_starts: Any = 10,
    max_iter: Any = 30,
    eps: Any = 0.01,
    mini_batch: Any = None,
    n_runs: Any = 1,
    max_clusters: Any = None,
    n_jobs: Any = None,
    seed: Any = None,
    memory_limit: Any = None,
) -> Tuple[Any, ...]:
    """:func:`wasabi`'s arguments other than the draws, checked (the same defaults): before
    the draws are read, by wasabi and by :func:`elbow` for its keywords."""
    n_particles = check_int("n_particles", n_particles, minimum=1)
    init = _check_init(init)
    n_starts = check_int("n_starts", n_starts, minimum=1)
    max_iter = check_int("max_iter", max_iter, minimum=0)
    eps = _check_eps(eps)
    if mini_batch is not None:
        mini_batch = check_int("mini_batch", mini_batch, minimum=1)
    n_runs = check_int("n_runs", n_runs, minimum=1, maximum=10_000)
    if max_clusters is not None:
        max_clusters = check_max_clusters(max_clusters)
    jobs = check_n_jobs(n_jobs)
    seed = check_seed(seed)
    limit = check_limit(memory_limit)
    return n_particles, init, n_starts, max_iter, eps, mini_batch, n_runs, max_clusters, jobs, seed, limit


def wasabi(
    draws: Any,
    n_particles: int,
    *,
    init: Any = "++",
    n_starts: int = 10,
    max_iter: int = 30,
    eps: float = 0.01,
    mini_batch: Optional[int] = None,
    n_runs: int = 1,
    max_clusters: Optional[int] = None,
    n_jobs: Optional[int] = None,
    seed: Optional[int] = None,
    memory_limit: Optional[int] = None,
) -> WasabiResult:
    """Summarise a clustering posterior by a few weighted partitions (WASABI).

    Finds L partitions ("particles") c_1..c_L minimising the Wasserstein distance, with VI as
    ground metric, between the draws' empirical distribution and sum_l w_l delta(c_l):
    W = (1/H) sum_h min_l VI(draw_h, c_l), with w_l the share of draws nearest to c_l
    (Balocchi & Wade, arXiv:2506.16295). A single point estimate can hide a multimodal
    posterior; a few weighted particles show it.

    Parameters
    ----------
    draws : array-like (H, n), Draws, xarray DataArray or (InferenceData, name)
        Posterior draws of the partition.
    n_particles : int
        L >= 1, at most the number of distinct partitions among the draws.
    init : {"++", "topvi"} or array-like of shape (L, n), default "++"
        Starting particles: "++" (a random draw among every 10th, then draws picked with
        probability proportional to their VI to the nearest particle so far), "topvi" (the L
        average/complete-linkage cuts of 1 - PSM of smallest expected VI; deterministic) or
        given distinct partitions.
    n_starts : int, default 10
        Starts; the one of smallest W is returned. They run in parallel.
    max_iter : int, default 30
        Full-batch iterations per start (0: the starting particles, assigned).
    eps : float, default 0.01
        A start stops when an iteration lowers W by at most ``eps * log2(n)`` bits.
    mini_batch : int, optional
        Draws per mini-batch: iterate on random batches first (up to ``max_iter`` times,
        until an update lowers W on its own batch by at most the tolerance), then finish with
        full-batch iterations. Default: full batches only.
    n_runs : int, default 1
        SALSO runs per particle update: one warm-started from the current particle, the
        others fresh; the particle changes only if one is strictly better for its group.
    max_clusters : int, optional
        Most clusters a SALSO update may give a particle (a particle that is a draw, or given in
        ``init``, keeps its own). Default: twice the most clusters among the group's draws and
        its current particle, at most n (a group's best partition can have more clusters than
        any of its draws).
    n_jobs : int, optional
        Threads (default: the CPUs the process may use): starts run in parallel (at most one
        per CPU), each with a share of them.
    seed : int, optional
        Start s uses the random stream (seed, s): the same seed gives the same result for
        any ``n_jobs``. Default: a fresh seed, reported in ``info["seed"]``.
    memory_limit : int, optional
        Bytes the call may allocate (the distinct draws, and per start running at once a
        particle's group of draws with its search's count tables; see
        ``salsox.uncertainty.wasabi.memory.wasabi_bytes``); more is a MemoryError before any
        start. Default 16 GiB.

    Returns
    -------
    WasabiResult
        ``particles`` (heaviest first), ``weights``, ``distance`` (W), ``assignment``,
        ``evi``, ``history`` and methods ``meet()`` and ``evi_contributions()``.

    Notes
    -----
    Each iteration assigns every draw to its nearest particle (ties at random); a particle
    left without draws (or equal to another) takes a draw from a group of two or more distinct
    partitions, picked with probability proportional to its VI; a group of a single distinct
    partition makes it its particle; otherwise the particle becomes the SALSO estimate (VI)
    of its group's draws, warm-started from it and kept when nothing better is found, so W
    never increases. The VI of all draws to the particles is one engine call, O(H n) per
    particle. The reported assignment, weights and W are those of the final particles.

    Examples
    --------
    Two modes, three draws each: one particle per mode.

    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 2], [0, 1, 1, 1], [0, 1, 1, 1], [0, 1, 1, 2]]
    >>> result = salsox.wasabi(draws, 2, seed=1)
    >>> result.particles
    array([[0, 0, 1, 1],
           [0, 1, 1, 1]])
    >>> result.weights, round(result.distance, 4)
    (array([0.5, 0.5]), 0.1981)
    >>> result.assignment
    array([0, 0, 0, 1, 1, 1])
    """
    started = time.perf_counter()
    # Every argument that does not need the draws is checked before they are read.
    checked = check_wasabi_options(
        n_particles, init=init, n_starts=n_starts, max_iter=max_iter, eps=eps, mini_batch=mini_batch, n_runs=n_runs,
        max_clusters=max_clusters, n_jobs=n_jobs, seed=seed, memory_limit=memory_limit,
    )
    n_particles, init, n_starts, max_iter, eps, mini_batch, n_runs, max_clusters, jobs, seed, limit = checked
    draws, found, _ = convert_foreign_named(draws)  # once: an xarray or ArviZ input is converted here
    matrix = draws_matrix(draws)
    names = check_item_names(found, matrix.shape[1])
    h, n = matrix.shape
    if max_clusters is not None:
        max_clusters = min(max_clusters, n)
    first, inverse = unique_rows(matrix)
    ds = DrawSet(matrix[first], np.bincount(inverse, minlength=len(first)).astype(np.int64))
    if n_particles > ds.n_unique:
        raise ValueError(
            f"n_particles={n_particles} is more than the {ds.n_unique} distinct partitions among the draws "
            "(each would be a particle at W = 0, the rest duplicates); ask for at most that many"
        )
    # Starting particles are matched to the draws' items by name (salsox.io.item_index).
    given = None if isinstance(init, str) else fixed_particles(aligned(init, names, n, "init"), n_particles, n)
    # Starts at once: no more than the CPUs (more Python threads would only take turns on
    # them, each holding the GIL for its numpy steps); each start's engine calls share n_jobs.
    workers = min(jobs, n_starts, usable_cpus())
    need = _memory_needed(ds, h, n_particles, workers, max(1, jobs // workers), max_clusters, init)
    if need > limit:
        raise MemoryError(
            f"wasabi needs about {byte_size(need)} ({workers} starts at once on {h} draws of {n} items), "
            f"more than memory_limit={limit} bytes; lower n_jobs (fewer starts at once) or raise memory_limit"
        )
    stop = threading.Event()
    settings = Settings(
        n_particles=n_particles,
        max_iter=max_iter,
        tolerance=eps * math.log2(n) if n > 1 else 0.0,
        mini_batch=mini_batch,
        n_runs=n_runs,
        n_jobs=max(1, jobs // workers),
        max_clusters=max_clusters,
        stop=stop,
    )
    thinned = np.unique(inverse[::10])  # distinct rows of every 10th draw (the first "++" pick)

    def one_start(start: int) -> StartResult:
        rng = np.random.default_rng(np.random.SeedSequence([seed, start]))
        if given is not None:
            particles = given
        elif init == "topvi":
            particles = top_vi(ds, matrix, n_particles, rng, settings.n_jobs, settings.check)
        else:
            particles = plus_plus(ds, thinned, n_particles, rng, settings.n_jobs, settings.check)
        return run_start(ds, inverse, particles, rng, settings)

    results = _run_all(one_start, n_starts, workers, stop)
    distances = np.array([r.distance for r in results])
    best_start = int(np.argmin(distances))  # the first on ties
    best = results[best_start]
    sizes, sums = group_costs(ds, best.vi, best.assignment, n_particles)
    order = np.argsort(-sizes, kind="stable")  # heaviest first
    rank = np.empty(n_particles, dtype=np.intp)
    rank[order] = np.arange(n_particles)
    return WasabiResult(
        particles=best.particles[order].astype(np.intp),
        weights=sizes[order] / h,
        distance=best.distance,
        assignment=rank[best.assignment][inverse],
        evi=sums[order] / sizes[order],
        history=np.asarray(best.history),
        n_iter=best.n_iter,
        converged=best.converged,
        start_distances=distances,
        info={
            "seed": seed,
            "best_start": best_start,
            "init": init if isinstance(init, str) else "fixed",
            "n_runs": n_runs,
            "mini_batch": mini_batch,
            "batch_history": best.batch_history,
            "replaced": best.replaced,
            "n_distinct_draws": ds.n_unique,
            "seconds": time.perf_counter() - started,
        },
        draws=matrix,
        item_names=names,
    )


def _memory_needed(ds: DrawSet, h: int, n_particles: int, workers: int, threads: int,
                   max_clusters: Optional[int], init: Any) -> int:
    """Bytes the call will allocate (:func:`wasabi_bytes`), the count tables of a particle's
    search scaled from the distinct draws' to all h draws (the largest group)."""
    n = ds.unique.shape[1]
    cap = max_clusters or min(n, 2 * int(ds.draws._core.kmax))
    tables = VI()._route(ds.draws).memory_bytes(threads, cap) * h // max(1, ds.n_unique)
    topvi = isinstance(init, str) and init == "topvi"
    label_bytes = int(ds.draws.label_bits) // 8
    return wasabi_bytes(h, n, ds.n_unique, n_particles, workers, tables, label_bytes, topvi=topvi)


def _run_all(one_start: Any, n_starts: int, workers: int, stop: threading.Event) -> List[StartResult]:
    """Every start, in parallel threads when ``workers`` > 1 (the engine releases the GIL).
    A failure or Ctrl-C stops the other starts (at their next check, within about half a
    second) before it propagates."""
    if workers <= 1:
        return [one_start(s) for s in range(n_starts)]
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="salsox-wasabi")
    futures: List["concurrent.futures.Future[StartResult]"] = []
    try:
        futures = [pool.submit(one_start, s) for s in range(n_starts)]
        pending = set(futures)
        while pending and not stop.is_set():
            # Short waits: the calling thread must run Python code to answer Ctrl-C promptly.
            done, pending = concurrent.futures.wait(
                pending, timeout=0.1, return_when=concurrent.futures.FIRST_EXCEPTION
            )
            if any(f.exception() is not None for f in done):
                stop.set()
    except BaseException:  # Ctrl-C while waiting
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    # The error that stopped the call, not a start's Stopped that followed it.
    for f in futures:
        err = None if f.cancelled() else f.exception()
        if err is not None and not isinstance(err, Stopped):
            raise err
    return [f.result() for f in futures]


def elbow(draws: Any, max_particles: int, **kwargs: Any) -> Elbow:
    """W of :func:`wasabi` for L = 1..max_particles, to choose the number of particles.

    Parameters
    ----------
    draws : array-like (H, n), Draws, xarray DataArray or (InferenceData, name)
    max_particles : int
        Largest L; capped at the number of distinct partitions among the draws (where W = 0).
    **kwargs
        Passed to :func:`wasabi` (``init``, ``n_starts``, ``seed``, ...); with a ``seed``
        every L uses it.

    Returns
    -------
    Elbow
        ``n_particles``, ``distance`` (the fitted W, non-increasing in L up to search error)
        and the ``results``.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 2], [0, 1, 1, 1], [0, 1, 1, 1], [0, 1, 1, 2]]
    >>> curve = salsox.wasabi_elbow(draws, 3, seed=1)
    >>> curve.n_particles
    array([1, 2, 3])
    >>> curve.distance.round(4)
    array([0.7296, 0.1981, 0.0833])
    """
    if "n_particles" in kwargs:
        raise TypeError("elbow() sets n_particles itself: give max_particles")
    max_particles = check_int("max_particles", max_particles, minimum=1)
    if "draws" in kwargs:
        raise TypeError("elbow() got multiple values for argument 'draws'")
    try:  # wasabi's keywords, checked before the draws are read (an unknown one is named)
        check_wasabi_options(1, **kwargs)
    except TypeError as err:
        if "unexpected keyword argument" in str(err):
            raise TypeError(f"elbow() {str(err).split('() ', 1)[-1]}") from None
        raise
    draws, found, _ = convert_foreign_named(draws)
    matrix = draws_matrix(draws)
    first, _ = unique_rows(matrix)
    top = min(max_particles, len(first))
    if "seed" not in kwargs or kwargs["seed"] is None:
        kwargs["seed"] = check_seed(None)
    names = check_item_names(found, matrix.shape[1])
    results = [dataclasses.replace(wasabi(matrix, L, **kwargs), item_names=names) for L in range(1, top + 1)]
    return Elbow(
        n_particles=np.arange(1, top + 1),
        distance=np.array([r.distance for r in results]),
        results=results,
    )
