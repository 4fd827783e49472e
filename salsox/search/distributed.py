"""Runs of one SALSO search spread over a Dask cluster (``salso(..., client=...)``).

The engine route's payload (draws, co-clustering counts or PSM) is scattered to the workers
once; each task takes the route without it, binds it to the worker's copy and runs a contiguous
batch of runs with the C++ engine, using the same random streams as a local
call (run r always uses stream (seed, r)), and the best run is chosen exactly as locally:
smallest loss, ties to the lowest run index. A fixed seed therefore gives the identical
estimate locally and on a cluster.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .._validation import check_n_jobs
from ..engine import Route

__all__ = ["run_on_dask", "batches"]


def batches(n_runs: int, n_batches: int) -> List[Tuple[int, int]]:
    """Contiguous [start, stop) run ranges of near-equal size."""
    n_batches = max(1, min(n_runs, n_batches))
    edges = np.linspace(0, n_runs, n_batches + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def _run_batch(route: Route, payload: Any, options: Dict[str, Any], start: int, stop: int) -> Dict[str, Any]:
    """Runs start..stop-1 of a search (executed on a worker), on ``payload``."""
    opts = dict(options)
    if opts.get("n_jobs") == -1:
        opts["n_jobs"] = _worker_threads()
    opts["n_runs"] = stop - start
    opts["first_run"] = start
    if opts.get("initial") is not None:
        opts["initial"] = np.ascontiguousarray(opts["initial"][start:stop])
        opts["initial_used"] = np.ascontiguousarray(opts["initial_used"][start:stop])
    return route.with_payload(payload).search(opts)


def _worker_threads() -> int:
    """Threads of the Dask worker running this task (all cores when not on a worker)."""
    try:
        from distributed import get_worker

        return max(1, int(get_worker().state.nthreads))
    except (ImportError, ValueError, AttributeError):
        return check_n_jobs(None)


def run_on_dask(
    client: Any,
    route: Route,
    options: Dict[str, Any],
    progress: Optional[Callable[[int, int, float, float], None]] = None,
) -> Dict[str, Any]:
    """The engine's result for ``options["n_runs"]`` runs of ``route``, computed on ``client``'s workers;
    ``progress(done, total, best, seconds)`` hears of each batch as it comes back."""
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - exercised only without dask installed
        raise ImportError('client= needs dask.distributed: pip install "salsox[dask]"') from None
    if not isinstance(client, Client):
        raise TypeError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
    route.check_shippable()
    workers = client.scheduler_info().get("workers", {})
    if not workers:
        raise RuntimeError("the Dask cluster has no workers")
    n_runs = options["n_runs"]
    # Two batches per worker balance uneven run times without much per-task overhead.
    ranges = batches(n_runs, 2 * len(workers))
    # hash=False: a key of its own per call. With content-hashed keys, a second search on the same
    # draws reuses the first one's key, whose data the scheduler may release when that call's
    # futures go ("lost dependencies").
    local_jobs = check_n_jobs(None if options.get("n_jobs", -1) == -1 else options["n_jobs"])
    scattered = client.scatter(route.payload(local_jobs), broadcast=True, hash=False)
    shipped = route.with_payload(None)  # each task carries the route, not its data
    futures = [
        client.submit(_run_batch, shipped, scattered, options, a, b, pure=False, retries=2)
        for a, b in ranges
    ]
    results = []
    start = time.perf_counter()
    best, done = math.inf, 0
    for (a, b), future in zip(ranges, futures):
        try:
            results.append(future.result())
        except Exception as err:
            for f in futures:
                f.cancel()
            raise RuntimeError(
                f"runs {a}..{b - 1} failed on the Dask cluster after retries: {err!r}; "
                "no estimate is returned rather than a worse one"
            ) from err
        if progress is not None:
            raw = results[-1]
            done += raw["runs_done"]
            if raw["best"] >= 0:
                best = min(best, raw["runs"][raw["best"]]["loss"])
            progress(done, n_runs, best, time.perf_counter() - start)
    return _merge(ranges, results)


def _merge(ranges: List[Tuple[int, int]], results: List[Dict[str, Any]]) -> Dict[str, Any]:
    runs: List[Dict[str, Any]] = []
    best, best_loss, labels = -1, np.inf, None
    for raw in results:  # batches in run order
        if raw["best"] >= 0:
            loss = raw["runs"][raw["best"]]["loss"]
            if loss < best_loss:  # strict: ties keep the lower run index, as locally
                best, best_loss, labels = len(runs) + raw["best"], loss, raw["labels"]
        runs.extend(raw["runs"])
    return {
        "runs": runs,
        "best": best,
        "runs_done": sum(r["runs_done"] for r in results),
        "budget_exhausted": any(r["budget_exhausted"] for r in results),
        "seconds": max(r["seconds"] for r in results),
        "labels": labels,
    }
