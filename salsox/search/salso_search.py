"""The SALSO search (Dahl, Johnson & Mueller 2022): :func:`salso`."""

from __future__ import annotations

import time
from typing import Any, Dict, Optional, Union

import numpy as np

from .._warnings import warn_at_caller
from .._validation import (
    as_label_matrix,
    byte_size,
    check_int,
    check_max_clusters,
    check_n_jobs,
    check_probability,
    check_seed,
    max_threads,
)
from .._cpus import usable_cpus
from ..engine import Route, finite_losses
from ..io import PSM, Draws, aligned
from ..losses import Loss, get_loss
from ..metrics import as_truth
from ..progress import ProgressBar, ProgressCallback, engine_callback
from ..progress import close as close_progress
from .estimate import Estimate
from .fixed import check_fixed, check_initial, n_fixed_clusters

__all__ = ["salso", "check_arguments", "check_options"]

# Count tables larger than this (bytes, per thread) are refused up front rather than risking an
# out-of-memory kill; override with salso(..., memory_limit=...).
DEFAULT_MEMORY_LIMIT = 16 * 2**30

# More runs than this need a time budget (`seconds`).
MAX_RUNS_WITHOUT_BUDGET = 1_000_000


def salso(
    draws: Any,
    loss: Union[str, Loss] = "VI",
    *,
    max_clusters: Optional[int] = None,
    n_runs: int = 16,
    max_zealous: int = 10,
    prob_sequential: float = 0.5,
    prob_singletons: float = 0.0,
    max_scans: Optional[int] = None,
    seconds: Optional[float] = None,
    n_jobs: Optional[int] = None,
    seed: Optional[int] = None,
    memory_limit: Optional[int] = None,
    engine: Optional[str] = None,
    initializer: Any = None,
    prob_initializer: Optional[float] = None,
    client: Any = None,
    inner_jobs: Optional[int] = None,
    progress: Union[None, bool, ProgressCallback] = None,
    fixed: Any = None,
    initial: Any = None,
) -> Estimate:
    """Partition estimate minimising the Monte Carlo expected loss, by the SALSO algorithm.

    Parameters
    ----------
    draws : array-like (H, n), Draws, or PSM
        Posterior draws of the partition (one row per draw, any integer labels). PSM-based
        losses (``"VI.lb"``, ``"omARI.approx"``, and ``"binder"``) also accept a :class:`PSM`;
        for them a bare float square 0/1 matrix, symmetric with ones on the diagonal (such as
        ``np.eye(n)``), is refused as ambiguous: wrap it in :class:`PSM` or :class:`Draws`.
    loss : str or Loss, default "VI"
        The loss to minimise (see :mod:`salsox.losses`), e.g. ``"binder"``, ``VI(a=0.5)``.
    max_clusters : int, optional
        Cap on the number of clusters, never exceeded. Default: the largest number of clusters
        in any draw (n for a PSM).
    n_runs : int, default 16
        Independent runs; the best is kept.
    max_zealous : int, default 10
        Clusters tried per round of zealous updates (0 disables them). Only clusters of two or
        more items without fixed items are tried (sweetening already moves a singleton's item,
        as in R). A round in which an update is accepted is followed by sweetening and a new
        round, until a round accepts none, so ``info["zealous_attempts"]`` can exceed it.
    prob_sequential : float, default 0.5
        Probability that a run starts by sequential allocation rather than random labels.
    prob_singletons : float, default 0
        Probability that a sequential allocation first puts the first ``max_clusters`` items
        of its random order in singletons, then allocates the others one by one (R's
        ``probSingletonsInitialization``; such runs report ``initialization ==
        "singletons"``). At 0 the runs are exactly those of a search without it.
    max_scans : int, optional
        Cap on sweetening scans per run (default: until a scan changes nothing).
    seconds : float, optional
        Time budget: no new run starts when it would be exceeded (at least one run is done);
        ``info["runs_done"]`` says how many ran.
    n_jobs : int, optional
        Threads; runs are spread over them (default: the CPUs the process may use).
    seed : int, optional
        Run r uses the random stream (seed, r): the same seed gives the same estimate for any
        ``n_jobs`` (unless ``seconds`` stops runs early). Default: a fresh seed, reported in
        ``info["seed"]``.
    memory_limit : int, optional
        Bytes the search may allocate for its tables (default 16 GiB); larger requests fail
        up front with a MemoryError saying how much was needed.
    engine : {"counts", "coclustering"}, optional
        Binder only: count tables (O(H k) per move) or exact co-clustering counts (O(n) per
        move, n x n memory). Default: chosen from n, H and k.
    initializer : str, Initializer or callable, optional
        Starting partitions from a plugin initialiser (a registered name such as
        ``"psm-hclust"``, a :class:`salsox.plugins.Initializer`, or a function
        ``f(draws, max_clusters, rng) -> labels``), called before the search with the draws
        relabelled 0..k-1 and, for run r, ``Generator(PCG64(SeedSequence([seed, r])))``.
    prob_initializer : float, optional
        Probability that a run starts from ``initializer`` rather than from the built-in
        initialisations (chosen by ``prob_sequential``). Default 1 when ``initializer`` is
        given.
    inner_jobs : int, optional
        Threads inside each run, over draws (count-table engine: the table updates of every
        loss, the scores of Binder/VI/decomposable losses). Default: the ``n_jobs`` threads
        help each other, a thread with no run left (or none to start with, when ``n_runs`` is
        smaller than ``n_jobs``) sharing the passes of the runs still going, from 1,024 draws
        (shorter passes take less time than handing them to another core); so a search does
        not end with threads idle while the last runs finish. ``1`` keeps every run on one
        thread; more opens that many threads per pass in every run. Results do not depend
        on it.
    client : dask.distributed.Client, optional
        Spread the runs over a Dask cluster (``pip install "salsox[dask]"``): the draws are
        scattered once, batches of runs execute on the workers with the C++ engine, and the
        best is kept. Run r uses the same random stream as locally, so a fixed seed gives the
        identical estimate. Each task uses ``n_jobs`` threads on its worker (default: the
        worker's thread count). Not available for general (ContingencyLoss) plugin losses.
    progress : bool or callable, optional
        Report progress while searching: ``True`` draws a :class:`~salsox.progress.ProgressBar`
        on stderr (runs done / total, best loss so far, elapsed time); a callable is called
        with a :class:`~salsox.progress.SearchProgress` from the calling thread each time a run
        finishes, about twice a second in between, and once at the end (on a Dask cluster:
        as batches of runs come back). An exception it raises stops the search and is re-raised.
    fixed : array-like of n int, optional
        Fixed items: -1 for a free item, any other integer >= 0 for the fixed cluster of a
        fixed item. Items with equal fixed labels stay in one cluster, items with different
        ones in different clusters, and no fixed item ever moves: initialisation starts from
        the fixed clusters (sequential allocation places only the free items; random labels
        are drawn for free items only), sweetening moves only free items, and zealous updates
        never dissolve a cluster holding fixed items. Free items may join fixed clusters.
        This completes a partial partition (e.g. from :func:`salsox.chips`) under any loss
        and engine. All -1 gives the same estimate as no ``fixed``. When ``max_clusters`` is
        not given it is raised to the number of fixed clusters if needed; a ``max_clusters``
        below it is an error. R's completion (random labels for the free items, then
        sweetening only) is ``prob_sequential=0, max_zealous=0``.
    initial : array-like of int, shape (n,) or (m, n), optional
        Warm starts: run r starts from partition ``initial[r % m]`` (instead of sequential
        allocation or random labels), then sweetens and tries zealous updates as usual. Each
        must have at most ``max_clusters`` clusters and agree with ``fixed``. Not combined
        with ``initializer``. Runs report ``initialization == "initial"``.

    Returns
    -------
    Estimate

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C, promptly, with no result.

    Examples
    --------
    >>> draws = np.array([[1, 1, 2, 2, 3], [1, 1, 2, 2, 2], [1, 1, 1, 2, 2], [1, 1, 2, 2, 3]])
    >>> est = salsox.salso(draws, "VI", seed=1)
    >>> est.labels
    array([0, 0, 1, 1, 2])
    >>> est.n_clusters, round(est.expected_loss, 4)
    (3, 0.4755)
    >>> salsox.salso(draws, salsox.Binder(a=2, b=1), seed=1).n_clusters   # separating costs more
    2
    """
    loss = get_loss(loss)
    # Every option that does not depend on the draws is checked before they are read.
    check_options(
        max_clusters=max_clusters, n_runs=n_runs, max_zealous=max_zealous, prob_sequential=prob_sequential,
        prob_singletons=prob_singletons, max_scans=max_scans, seconds=seconds, n_jobs=n_jobs, seed=seed,
        memory_limit=memory_limit, engine=engine, initializer=initializer, prob_initializer=prob_initializer,
        inner_jobs=inner_jobs, initial=initial, progress=progress,
    )
    truth = as_truth(draws, loss)
    n = truth.n_items
    # Fixed items and warm starts are matched to the draws' items by name (salsox.io.item_index).
    fixed = None if fixed is None else aligned(fixed, truth.item_names, n, "fixed")
    initial = None if initial is None else aligned(initial, truth.item_names, n, "initial")
    c = check_arguments(
        truth, loss, max_clusters=max_clusters, n_runs=n_runs, max_zealous=max_zealous,
        prob_sequential=prob_sequential, prob_singletons=prob_singletons, max_scans=max_scans,
        seconds=seconds, n_jobs=n_jobs, seed=seed, memory_limit=memory_limit, engine=engine,
        initializer=initializer, prob_initializer=prob_initializer, inner_jobs=inner_jobs, fixed=fixed,
        initial=initial,
    )
    n_runs, kd, jobs, seed, limit, route = c["n_runs"], c["kd"], c["jobs"], c["seed"], c["limit"], c["route"]
    fixed_labels, default_cap = c["fixed_labels"], c["default_cap"]
    bar = ProgressBar() if progress is True else progress
    report = engine_callback(bar, scale=route.scale)
    options: Dict[str, Any] = dict(
        inner_threads=c["inner"],
        max_clusters=kd,
        n_runs=n_runs,
        max_zealous=c["max_zealous"],
        prob_sequential=c["prob_sequential"],
        prob_singletons=c["prob_singletons"],
        max_scans=c["max_scans"],
        seconds=c["budget"],
        n_jobs=jobs,
        seed=seed,
    )
    threads = min(jobs, n_runs)
    start = time.perf_counter()
    init_name = None
    if fixed_labels is not None:
        options["fixed"] = fixed_labels
    if initializer is not None or initial is not None:
        from .initializers import initial_partitions

        # The starting partitions are made up front, one row of n labels per run.
        need = n_runs * (4 * n + 1)
        if need > limit:
            raise MemoryError(
                f"{'an initializer' if initial is None else 'initial'} with n_runs={n_runs} needs "
                f"{byte_size(need)} of starting "
                f"partitions (n_runs x {n} labels), more than memory_limit={limit} bytes; lower "
                "n_runs (a seconds budget ends the search early anyway) or raise memory_limit"
            )

        if initial is not None:
            options["initial"], options["initial_used"] = check_initial(initial, n, kd, n_runs, fixed_labels)
        else:
            options["initial"], options["initial_used"], init_name = initial_partitions(
                initializer, c["prob_init"], truth, kd, n_runs, seed
            )
    route.check_memory(threads, kd, limit)
    route.check_losses_memory(1, kd, jobs, limit)  # the final evaluation, once the tables are freed
    # Draws given as an array: the engine's copy made of them is held through the search too.
    held = truth.nbytes if isinstance(truth, Draws) and truth is not draws else 0
    if held:
        tables = max(route.memory_bytes(threads, kd), route.losses_bytes(1, kd, jobs))
        if held + tables > limit:
            raise MemoryError(
                f"salso needs about {byte_size(held + tables)}: the engine's copy of the draws ({byte_size(held)}; "
                f"a Draws made once is not copied again) and the search's tables ({byte_size(tables)}), more "
                f"than memory_limit={limit} bytes; lower max_clusters or n_jobs, or raise memory_limit"
            )
    try:
        if client is not None:
            from .distributed import run_on_dask

            if n_jobs is None or n_jobs == -1:
                options["n_jobs"] = -1  # each task: all of its worker's threads
            raw = run_on_dask(client, route, options, progress=report)
        else:
            # Threads beyond the runs only help them, and no more of them than the CPUs run at
            # once (the engine's crew): a larger team would only be started and put to sleep.
            engine_jobs = max(min(jobs, n_runs), min(jobs, usable_cpus()))
            raw = route.search({**options, "n_jobs": engine_jobs, "progress": report})
    finally:
        close_progress(bar)
    est = _estimate_from(raw, truth, loss, route, options, time.perf_counter() - start)
    est.info["initializer"] = init_name
    if initial is not None:  # the engine calls every given start "initializer"
        for r in [est.info, *est.info["runs"]]:
            if r["initialization"] == "initializer":
                r["initialization"] = "initial"
    _warn_as_r(est, n_runs, default_cap=default_cap, n=n)
    return est


def check_options(
    *,
    max_clusters: Optional[int] = None,
    n_runs: int = 16,
    max_zealous: int = 10,
    prob_sequential: float = 0.5,
    prob_singletons: float = 0.0,
    max_scans: Optional[int] = None,
    seconds: Optional[float] = None,
    n_jobs: Optional[int] = None,
    seed: Optional[int] = None,
    memory_limit: Optional[int] = None,
    engine: Optional[str] = None,
    initializer: Any = None,
    prob_initializer: Optional[float] = None,
    inner_jobs: Optional[int] = None,
    initial: Any = None,
    progress: Any = None,
) -> None:
    """:func:`salso`'s options that do not depend on the draws, checked before the draws are
    read (the same checks :func:`check_arguments` makes again, with the draws, later)."""
    n_runs = check_int("n_runs", n_runs, minimum=1)
    if n_runs > MAX_RUNS_WITHOUT_BUDGET and seconds is None:
        raise ValueError(
            f"n_runs={n_runs} would not finish; give a time budget with seconds= (runs then stop "
            f"when it is spent) or at most {MAX_RUNS_WITHOUT_BUDGET:,} runs"
        )
    check_int("max_zealous", max_zealous, minimum=0)
    check_probability("prob_sequential", prob_sequential)
    check_probability("prob_singletons", prob_singletons)
    if max_scans is not None:
        check_int("max_scans", max_scans, minimum=1)
    _check_seconds(seconds)
    check_n_jobs(n_jobs)
    check_seed(seed)
    if max_clusters is not None:
        check_max_clusters(max_clusters)
    if initial is not None and initializer is not None:
        raise ValueError("give initial (starting partitions) or initializer, not both")
    if memory_limit is not None:
        check_int("memory_limit", memory_limit, minimum=1)
    if engine is not None and engine not in ("counts", "coclustering"):
        raise ValueError(f"engine must be 'counts' or 'coclustering', got {engine!r}")
    if initializer is not None:
        from .initializers import get_initializer

        get_initializer(initializer)  # an unknown name or a wrong type, named
    if initializer is None and prob_initializer is not None:
        raise ValueError("prob_initializer needs an initializer")
    if prob_initializer is not None:
        check_probability("prob_initializer", prob_initializer)
    if inner_jobs is not None:
        check_int("inner_jobs", inner_jobs, minimum=1, maximum=max_threads())
    if progress is not None and not isinstance(progress, bool) and not callable(progress):
        raise TypeError(f"progress must be None, a bool or a callable, got {type(progress).__name__}")


def _check_seconds(seconds: Any) -> float:
    """``seconds`` as a budget in seconds (0.0: none)."""
    if seconds is None:
        return 0.0
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float, np.integer, np.floating)):
        raise TypeError(f"seconds must be a number, got {type(seconds).__name__}")
    try:
        budget = float(seconds)
    except OverflowError:  # an integer beyond float range, e.g. 10**400
        raise ValueError("seconds must be finite and > 0, got an integer too large for a float") from None
    if not np.isfinite(budget) or budget <= 0:
        raise ValueError(f"seconds must be finite and > 0, got {seconds!r}")
    return budget


def check_arguments(
    truth: Union[Draws, PSM],
    loss: Loss,
    *,
    max_clusters: Optional[int] = None,
    n_runs: int = 16,
    max_zealous: int = 10,
    prob_sequential: float = 0.5,
    prob_singletons: float = 0.0,
    max_scans: Optional[int] = None,
    seconds: Optional[float] = None,
    n_jobs: Optional[int] = None,
    seed: Optional[int] = None,
    memory_limit: Optional[int] = None,
    engine: Optional[str] = None,
    initializer: Any = None,
    prob_initializer: Optional[float] = None,
    inner_jobs: Optional[int] = None,
    fixed: Any = None,
    initial: Any = None,
) -> Dict[str, Any]:
    """:func:`salso`'s arguments checked, before any work (also by callers that run a search
    later, such as :func:`salsox.chips`' completion); the checked values by name."""
    n = truth.n_items
    n_runs = check_int("n_runs", n_runs, minimum=1)
    if n_runs > MAX_RUNS_WITHOUT_BUDGET and seconds is None:
        raise ValueError(
            f"n_runs={n_runs} would not finish; give a time budget with seconds= (runs then stop "
            f"when it is spent) or at most {MAX_RUNS_WITHOUT_BUDGET:,} runs"
        )
    n_runs = min(n_runs, 2**62)
    # Counts beyond what any search can use are clamped to the engine's integer range.
    max_zealous = min(check_int("max_zealous", max_zealous, minimum=0), 2**31 - 1)
    prob_sequential = check_probability("prob_sequential", prob_sequential)
    prob_singletons = check_probability("prob_singletons", prob_singletons)
    max_scans = 0 if max_scans is None else min(check_int("max_scans", max_scans, minimum=1), 2**62)
    budget = _check_seconds(seconds)
    jobs = check_n_jobs(n_jobs)
    seed = check_seed(seed)
    if max_clusters is None:
        kd = truth.max_clusters if isinstance(truth, Draws) else n
    else:
        kd = check_max_clusters(max_clusters)
        kd = min(kd, n)  # more clusters than items cannot be formed
    fixed_labels = check_fixed(fixed, n)
    n_fixed = n_fixed_clusters(fixed_labels)
    default_cap = max_clusters is None and n_fixed <= kd  # the draws' cap, not raised for fixed
    if n_fixed > kd:
        if max_clusters is not None:
            raise ValueError(f"max_clusters={max_clusters} is below the number of fixed clusters ({n_fixed})")
        kd = n_fixed
    if initial is not None and initializer is not None:
        raise ValueError("give initial (starting partitions) or initializer, not both")
    if fixed_labels is not None and initializer is not None:
        raise ValueError(
            "fixed cannot be combined with initializer (its partitions ignore the fixed items); use initial"
        )
    limit = DEFAULT_MEMORY_LIMIT if memory_limit is None else check_int("memory_limit", memory_limit, minimum=1)
    route = loss._route(truth, engine)  # the loss binds itself to its engine
    if initializer is None and prob_initializer is not None:
        raise ValueError("prob_initializer needs an initializer")
    prob_init = 1.0 if prob_initializer is None else check_probability("prob_initializer", prob_initializer)
    # Each of the threads over runs starts inner_jobs threads: bounded like n_jobs, but refused
    # rather than capped (thousands of threads exhaust the process).
    inner = 0 if inner_jobs is None else check_int("inner_jobs", inner_jobs, minimum=1, maximum=max_threads())
    return dict(
        n_runs=n_runs, max_zealous=max_zealous, prob_sequential=prob_sequential,
        prob_singletons=prob_singletons, max_scans=max_scans, budget=budget, jobs=jobs, seed=seed, kd=kd,
        fixed_labels=fixed_labels, default_cap=default_cap, limit=limit, route=route, prob_init=prob_init,
        inner=inner,
    )


def _warn_as_r(est: Estimate, n_runs: int, default_cap: bool, n: int) -> None:
    """R salso's two warnings, as :class:`SalsoxWarning`, shown at the user's call."""
    done = est.info["runs_done"]
    if done < n_runs and est.info["budget_exhausted"]:
        warn_at_caller(
            f"only {done} of the requested {n_runs} run{'s were' if n_runs != 1 else ' was'} done "
            "before the seconds budget ran out: raise seconds or lower n_runs",
        )
    cap = est.info["max_clusters"]
    # A cap of n items cannot bind, and a cap of 1 means every draw is one cluster, which the
    # estimate then matches exactly (R warns in both cases too, uselessly).
    if default_cap and 1 < cap < n and est.n_clusters == cap:
        warn_at_caller(
            f"the estimate has {cap} clusters, the default cap (the most clusters in any draw): "
            "a larger max_clusters may give a better estimate",
        )


def _estimate_from(
    raw: Dict[str, Any], truth: Union[Draws, PSM], loss: Loss, route: Route, options: Dict[str, Any], elapsed: float
) -> Estimate:
    if raw["best"] < 0:  # pragma: no cover - at least one run always completes
        raise RuntimeError("the search finished no run")
    labels, _ = as_label_matrix(np.asarray(raw["labels"]), "labels")
    labels = labels[0].astype(np.intp)
    # Split over the draws and the search's threads (the same bits whatever their number).
    jobs = options["n_jobs"] if options["n_jobs"] > 0 else check_n_jobs(None)
    value = float(finite_losses(route.losses(labels[None, :].astype(np.int32), jobs), loss)[0])
    best = raw["runs"][raw["best"]]
    info: Dict[str, Any] = {
        "initialization": best["initialization"],
        "scans": best["scans"],
        "zealous_attempts": best["zealous_attempts"],
        "zealous_accepts": best["zealous_accepts"],
        "best_run": raw["runs"][raw["best"]]["run"],
        "runs_done": raw["runs_done"],
        "runs_requested": options["n_runs"],
        "budget_exhausted": raw["budget_exhausted"],
        "seconds": elapsed,
        "seed": options["seed"],
        "max_clusters": options["max_clusters"],
        "n_jobs": options["n_jobs"],
        "engine": route.engine,
        "loss": loss.name,
        "loss_params": loss.params,
        # The engine works with unit costs (see Binder/VI): per-run losses back in the loss's scale.
        "runs": [dict(r, loss=r["loss"] * route.scale) for r in raw["runs"]],
    }
    return Estimate(
        labels=labels, expected_loss=value, n_clusters=int(labels.max()) + 1, loss=loss, info=info, truth=truth
    )
