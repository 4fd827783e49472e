"""The SALSO search (Dahl, Johnson & Mueller 2022): ``salso``, ``dlso`` and the Estimate result."""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Dict, Optional, Union

import numpy as np

from . import _core
from ._validation import (
    as_label_matrix,
    check_int,
    check_n_jobs,
    check_probability,
    check_seed,
    max_threads,
    relabel_rows,
)
from ._fixed import check_fixed, check_initial, n_fixed_clusters
from .countsum import CountSumLoss, countsum_bytes, salso_countsum
from .draws import Draws
from .evaluation import PSM, _check_square_memory, _losses, as_truth, psm
from .losses import CountLoss, Loss, PSMLoss, get_loss
from .progress import ProgressBar, ProgressCallback, engine_callback
from .progress import close as close_progress

__all__ = ["Estimate", "salso", "dlso"]

# Count tables larger than this (bytes, per thread) are refused up front rather than risking an
# out-of-memory kill; override with salso(..., memory_limit=...).
DEFAULT_MEMORY_LIMIT = 16 * 2**30

# More runs than this need a time budget (`seconds`).
MAX_RUNS_WITHOUT_BUDGET = 1_000_000


@dataclasses.dataclass(frozen=True, eq=False)
class Estimate:
    """A point estimate of the partition.

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
        Canonical cluster labels: 0..k-1 in order of first appearance.
    expected_loss : float
        Its Monte Carlo expected loss, equal to ``partition_loss(labels, draws, loss)``.
    n_clusters : int
    loss : Loss
        The loss that was minimised.
    info : dict
        How it was found: ``initialization`` of the winning run (``"sequential"``,
        ``"random"``, ``"initializer"`` or ``"initial"``, a warm start from ``salso(...,
        initial=)``; ``initializer`` names the one used, if any), its
        ``scans`` and ``zealous_attempts``/``zealous_accepts``,
        ``runs_done``/``runs_requested``, ``budget_exhausted``, ``seconds``, ``seed``,
        ``max_clusters``, ``engine``, ``loss`` and its ``loss_params``, and ``runs``: a list
        with every run's loss and statistics.

    The estimate keeps a reference to the (validated, compact) draws or PSM it was computed
    from, so that :meth:`summary` needs no arguments; it is not copied and not shown.
    """

    labels: np.ndarray
    expected_loss: float
    n_clusters: int
    loss: Loss
    info: Dict[str, Any]
    truth: Union[Draws, PSM, None] = dataclasses.field(default=None, repr=False)

    @property
    def sizes(self) -> np.ndarray:
        """Size of each cluster."""
        return np.bincount(self.labels, minlength=self.n_clusters)

    def summary(self, draws: Any = None, *, n_jobs: Optional[int] = None) -> Any:
        """Per-item and per-cluster summary under this loss, against the draws (or PSM) the
        estimate was computed from, or against ``draws`` when given.

        Returns a :class:`salsox.summary.Summary`; see :func:`salsox.summarize`.
        """
        from .summary import summarize

        if draws is None:
            if self.truth is None:
                raise ValueError("this Estimate does not hold its draws; pass draws= to summary()")
            draws = self.truth
        return summarize(self.labels, draws, self.loss, n_jobs=n_jobs)

    def __repr__(self) -> str:
        return (
            f"Estimate(n_clusters={self.n_clusters}, expected_loss={self.expected_loss:.10g}, "
            f"loss={self.loss!r}, sizes={self.sizes.tolist()})"
        )


def _engine_for(loss: Loss, truth: Union[Draws, PSM], engine: Optional[str]) -> str:
    if isinstance(truth, PSM) or isinstance(loss, PSMLoss):
        if isinstance(truth, PSM) and not (isinstance(loss, PSMLoss) or loss.name == "binder"):
            raise ValueError(f"loss {loss.name!r} needs draws, not a PSM")
        return "psm"
    if not isinstance(loss, CountLoss):
        if engine is not None:
            raise ValueError(f"engine applies to built-in count-based losses, not to {loss.name!r}")
        return "python"
    if engine is not None:
        if engine not in ("counts", "coclustering"):
            raise ValueError(f"engine must be 'counts' or 'coclustering', got {engine!r}")
        if engine == "coclustering" and loss.name != "binder":
            raise ValueError("engine='coclustering' is available for the binder loss only")
        return engine
    if loss.name == "binder":
        n, H = truth.n_items, truth.n_draws
        mean_k = float(np.mean(truth.clusters_per_draw))
        # A move costs O(n) with co-clustering counts and O(H k) with count tables.
        if n <= 8192 and n <= H * mean_k:
            return "coclustering"
    return "counts"


def salso(
    draws: Any,
    loss: Union[str, Loss] = "VI",
    *,
    max_clusters: Optional[int] = None,
    n_runs: int = 16,
    max_zealous: int = 10,
    prob_sequential: float = 0.5,
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
        Clusters tried per round of zealous updates (0 disables them). A round in which an
        update is accepted is followed by sweetening and a new round, until a round accepts
        none, so ``info["zealous_attempts"]`` can exceed it.
    prob_sequential : float, default 0.5
        Probability that a run starts by sequential allocation rather than random labels.
    max_scans : int, optional
        Cap on sweetening scans per run (default: until a scan changes nothing).
    seconds : float, optional
        Time budget: no new run starts when it would be exceeded (at least one run is done);
        ``info["runs_done"]`` says how many ran.
    n_jobs : int, optional
        Threads; runs are spread over them (default: all cores).
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
        Threads inside each run, over draws (count-table engine, Binder/VI/decomposable
        losses). Default: the threads left over when ``n_runs`` is smaller than ``n_jobs``,
        if draws x max_clusters >= 2,000,000 (a parallel region per item costs a few
        microseconds, worth it only for long passes). Results do not depend on it.
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
    """
    loss = get_loss(loss)
    truth = as_truth(draws, loss)
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
    max_scans = 0 if max_scans is None else min(check_int("max_scans", max_scans, minimum=1), 2**62)
    if seconds is None:
        budget = 0.0
    else:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float, np.integer, np.floating)):
            raise TypeError(f"seconds must be a number, got {type(seconds).__name__}")
        try:
            budget = float(seconds)
        except OverflowError:  # an integer beyond float range, e.g. 10**400
            raise ValueError("seconds must be finite and > 0, got an integer too large for a float") from None
        if not np.isfinite(budget) or budget <= 0:
            raise ValueError(f"seconds must be finite and > 0, got {seconds!r}")
    jobs = check_n_jobs(n_jobs)
    seed = check_seed(seed)
    if max_clusters is None:
        kd = truth.max_clusters if isinstance(truth, Draws) else n
    else:
        kd = check_int("max_clusters", max_clusters, minimum=1)
        kd = min(kd, n)  # more clusters than items cannot be formed
    fixed_labels = check_fixed(fixed, n)
    n_fixed = n_fixed_clusters(fixed_labels)
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
    chosen = _engine_for(loss, truth, engine)
    if initializer is None and prob_initializer is not None:
        raise ValueError("prob_initializer needs an initializer")
    prob_init = 1.0 if prob_initializer is None else check_probability("prob_initializer", prob_initializer)
    # Each of the threads over runs starts inner_jobs threads: bounded like n_jobs, but refused
    # rather than capped (thousands of threads exhaust the process).
    inner = 0 if inner_jobs is None else check_int("inner_jobs", inner_jobs, minimum=1, maximum=max_threads())
    bar = ProgressBar() if progress is True else progress
    report = engine_callback(bar, scale=getattr(loss, "_scale", 1.0))
    options: Dict[str, Any] = dict(
        inner_threads=inner,
        max_clusters=kd,
        n_runs=n_runs,
        max_zealous=max_zealous,
        prob_sequential=prob_sequential,
        max_scans=max_scans,
        seconds=budget,
        n_jobs=jobs,
        seed=seed,
    )
    threads = min(jobs, n_runs)
    start = time.perf_counter()
    init_name = None
    if fixed_labels is not None:
        options["fixed"] = fixed_labels
    if initializer is not None or initial is not None:
        from .plugins import initial_partitions

        # The starting partitions are made up front, one row of n labels per run.
        need = n_runs * (4 * n + 1)
        if need > limit:
            raise MemoryError(
                f"{'an initializer' if initial is None else 'initial'} with n_runs={n_runs} needs "
                f"{need / 2**20:.0f} MiB of starting "
                f"partitions (n_runs x {n} labels), more than memory_limit={limit} bytes; lower "
                "n_runs (a seconds budget ends the search early anyway) or raise memory_limit"
            )

        if initial is not None:
            options["initial"], options["initial_used"] = check_initial(initial, n, kd, n_runs, fixed_labels)
        else:
            options["initial"], options["initial_used"], init_name = initial_partitions(
                initializer, prob_init, truth, kd, n_runs, seed
            )
    if chosen in ("psm", "coclustering"):
        # The n x n matrix the engine builds from draws (float64 PSM or int32 counts), and
        # each thread's state (a few arrays of n and of max_clusters).
        square = 0 if isinstance(truth, PSM) else (8 if chosen == "psm" else 4) * n * n
        need = square + threads * (20 * n + 24 * kd + 64)
        if need > limit:
            raise MemoryError(
                f"engine={chosen!r} needs about {need / 2**20:.1f} MiB (an {n} x {n} matrix and "
                f"{threads} search states), more than memory_limit={limit} bytes; use a count-based "
                "loss (e.g. 'VI' or 'binder'), lower n_jobs, or raise memory_limit"
            )
    if chosen == "psm":
        payload: Any = truth.matrix if isinstance(truth, PSM) else psm(truth, jobs)
    elif chosen == "coclustering":
        assert isinstance(truth, Draws)  # _engine_for picks this engine for draws only
        _check_square_memory(n, "engine='coclustering'")
        payload = (_core.coclustering(truth._core, jobs), truth.n_draws)
    elif chosen == "counts":
        assert isinstance(truth, Draws)  # _engine_for picks this engine for draws only
        need = threads * _count_table_bytes(truth, kd, loss)
        if need > limit:
            raise MemoryError(
                f"the search needs about {need / 2**20:.0f} MiB of count tables ({threads} threads x "
                f"{truth._core.kmax} draw clusters x {kd} estimate clusters x {truth.n_draws} draws), "
                f"more than memory_limit={limit} bytes; lower max_clusters or n_jobs, or raise memory_limit"
            )
        payload = truth
    else:
        from .plugins import python_loss_bytes

        need = threads * python_loss_bytes(truth, kd)
        if need > limit:
            raise MemoryError(
                f"the search needs about {need / 2**20:.0f} MiB of count tables and table batches "
                f"({threads} threads), more than memory_limit={limit} bytes; lower max_clusters or "
                "n_jobs, or raise memory_limit"
            )
        payload = truth
    try:
        if client is not None:
            from .distributed import run_on_dask

            if n_jobs is None or n_jobs == -1:
                options["n_jobs"] = -1  # each task: all of its worker's threads
            raw = run_on_dask(client, chosen, payload, loss, options, progress=report)
        else:
            raw = run_engine(chosen, payload, loss, {**options, "progress": report})
    finally:
        close_progress(bar)
    est = _estimate_from(raw, truth, loss, chosen, options, time.perf_counter() - start)
    est.info["initializer"] = init_name
    if initial is not None:  # the engine calls every given start "initializer"
        for r in [est.info, *est.info["runs"]]:
            if r["initialization"] == "initializer":
                r["initialization"] = "initial"
    return est


def run_engine(chosen: str, payload: Any, loss: Loss, options: Dict[str, Any]) -> Dict[str, Any]:
    """One call of the engine ``chosen`` on ``payload`` (a PSM matrix, (co-clustering counts,
    H), or Draws); ``options`` are the engine's keyword arguments."""
    if chosen == "psm":
        kind, (a, b) = (loss._kind, (1.0, 1.0)) if isinstance(loss, PSMLoss) else ("binder", loss._unit_costs)  # type: ignore[attr-defined]
        return _core.salso_psm(payload, kind, a, b, **options)
    if chosen == "coclustering":
        co, H = payload
        return _core.salso_coclustering_binder(co, H, *loss._unit_costs, **options)  # type: ignore[attr-defined]
    if chosen == "counts":
        if isinstance(loss, CountSumLoss):
            return salso_countsum(payload, loss, options)
        return _core.salso_counts(payload._core, loss._count_loss(payload.n_items), **options)  # type: ignore[attr-defined]
    from .plugins import salso_python_loss

    # Python callbacks run under the GIL: no threads inside a run there.
    return salso_python_loss(payload, loss, {k: v for k, v in options.items() if k != "inner_threads"})


def _count_table_bytes(d: Draws, kd: int, loss: Loss) -> int:
    """Bytes one search thread's count-table state takes (as the engine sizes it)."""
    if isinstance(loss, CountSumLoss):
        return countsum_bytes(d, kd, loss)
    return int(_core.count_table_bytes(d._core, kd, loss._count_loss(d.n_items)))  # type: ignore[attr-defined]


def _estimate_from(
    raw: Dict[str, Any], truth: Union[Draws, PSM], loss: Loss, engine: str, options: Dict[str, Any], elapsed: float
) -> Estimate:
    if raw["best"] < 0:  # pragma: no cover - at least one run always completes
        raise RuntimeError("the search finished no run")
    labels, _ = as_label_matrix(np.asarray(raw["labels"]), "labels")
    labels = labels[0].astype(np.intp)
    value = float(_losses(labels[None, :].astype(np.int32), truth, loss, 1)[0])
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
        "engine": engine,
        "loss": loss.name,
        "loss_params": loss.params,
        # The engine works with unit costs (see Binder/VI): per-run losses back in the loss's scale.
        "runs": [dict(r, loss=r["loss"] * getattr(loss, "_scale", 1.0)) for r in raw["runs"]],
    }
    return Estimate(
        labels=labels, expected_loss=value, n_clusters=int(labels.max()) + 1, loss=loss, info=info, truth=truth
    )


def dlso(draws: Any, loss: Union[str, Loss] = "VI", *, n_jobs: Optional[int] = None) -> Estimate:
    """The draw with the smallest Monte Carlo expected loss (Dahl 2006's least-squares idea).

    Costs O(H^2 n) for count-based losses: every draw is scored against all draws.
    """
    loss = get_loss(loss)
    truth = as_truth(draws, loss)
    if not isinstance(truth, Draws):
        raise ValueError("dlso needs draws, not a PSM")
    jobs = check_n_jobs(n_jobs)
    start = time.perf_counter()
    # Draws with sparse labels are stored relabelled in value order; the loss engines take
    # estimates labelled in order of first appearance.
    candidates = relabel_rows(np.stack([truth.draw(h) for h in range(truth.n_draws)]))
    values = _losses(candidates, truth, loss, jobs)
    best = int(np.argmin(values))
    labels, _ = as_label_matrix(candidates[best], "labels")
    labels = labels[0].astype(np.intp)
    info = {
        "draw": best,
        "seconds": time.perf_counter() - start,
        "loss": loss.name,
        "loss_params": loss.params,
        "engine": "dlso",
    }
    return Estimate(
        labels=labels,
        expected_loss=float(values[best]),
        n_clusters=int(labels.max()) + 1,
        loss=loss,
        info=info,
        truth=truth,
    )
