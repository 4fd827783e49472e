"""The entry point :func:`diagnose`."""

from __future__ import annotations

import math
import numbers
import time
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from .._validation import byte_size, check_int, check_n_jobs, check_seed
from ..io import Draws, InItemOrder
from ..losses import Loss, get_loss
from ..search import Estimate, salso
from ..search.salso_search import DEFAULT_MEMORY_LIMIT
from . import _arviz
from .calibration import block_count, gap_test, rhat_null_max
from .chains import split_chains
from .mapping import distances_to, loss_traces, nearest_neighbour_tour, resolve_distance
from .result import Diagnosis

__all__ = ["diagnose"]


def _check_threshold(name: str, value: Any, minimum: float) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or value <= minimum:
        raise ValueError(f"{name} must be finite and > {minimum:g}, got {value!r}")
    return value


def _seed_of(seed: int, *path: int) -> int:
    """A 64-bit seed for one sub-task, from the call's seed and the task's position."""
    return int(np.random.SeedSequence([seed, *path]).generate_state(1, dtype=np.uint64)[0])


def check_options(
    *, loss: Any = "VI", distance: Any = "VI", n_references: Any = 5, n_runs: Any = 16, rhat_threshold: Any = 1.01,
    ess_threshold: Any = 100.0, alpha: Any = 0.01, n_permutations: Any = 999, gap_draws: Any = 250, ts: Any = False,
    seed: Any = None, n_jobs: Any = None, memory_limit: Any = None,
) -> Tuple[Loss, str, Optional[Loss], int, int, float, float, float, int, int, int, int, int]:
    """:func:`diagnose`'s arguments other than the draws and their chains, checked before
    they are read (``n_references`` against the number of draws later)."""
    loss = get_loss(loss)
    distance, metric = resolve_distance(distance)
    if not isinstance(ts, (bool, np.bool_)):
        raise TypeError(f"ts must be True or False, got {type(ts).__name__}")
    n_references = check_int("n_references", n_references, minimum=1)
    n_runs = check_int("n_runs", n_runs, minimum=1, maximum=100_000)
    rhat_threshold = _check_threshold("rhat_threshold", rhat_threshold, 1.0)
    ess_threshold = _check_threshold("ess_threshold", ess_threshold, 0.0)
    alpha = _check_threshold("alpha", alpha, 0.0)
    if alpha >= 1:
        raise ValueError(f"alpha must be below 1, got {alpha!r}")
    n_permutations = check_int("n_permutations", n_permutations, minimum=1, maximum=1_000_000)
    gap_draws = check_int("gap_draws", gap_draws, minimum=2, maximum=1_000_000)
    jobs = check_n_jobs(n_jobs)
    seed = check_seed(seed)
    limit = DEFAULT_MEMORY_LIMIT if memory_limit is None else check_int("memory_limit", memory_limit, minimum=1)
    return (
        loss, distance, metric, n_references, n_runs, rhat_threshold, ess_threshold, alpha, n_permutations,
        gap_draws, jobs, seed, limit,
    )


def diagnose(
    draws: Any,
    *,
    chains: Any = None,
    loss: Union[str, Loss] = "VI",
    distance: Union[str, Loss] = "VI",
    n_references: int = 5,
    n_runs: int = 16,
    rhat_threshold: float = 1.01,
    ess_threshold: float = 100.0,
    alpha: float = 0.01,
    n_permutations: int = 999,
    gap_draws: int = 250,
    ts: bool = False,
    seed: Optional[int] = None,
    n_jobs: Optional[int] = None,
    memory_limit: Optional[int] = None,
) -> Diagnosis:
    """Has the sampler converged? Convergence diagnostics for partition-valued MCMC chains.

    Labels mean nothing as numbers, so each draw is mapped to real values, and ArviZ's
    rank-normalised split R-hat and bulk/tail ESS (Vehtari et al. 2021) are computed on the
    mapped traces: each draw's distance to a few reference draws (Lanfear, Hua and Warren
    2016; Duttweiler, Klus, Coull and Thurston, "The Traceplot Thickens") and its number of
    clusters. Each chain also gets its own SALSO estimate, compared across chains and
    between the halves of the chain, and the Monte Carlo standard error of the expected
    loss is taken from the autocorrelated per-draw loss trace.

    Parameters
    ----------
    draws : (idata, "z"), xarray DataArray, array (C, N, n), list of (N, n) arrays, or (H, n)
        The chains: an ArviZ InferenceData with the name of the labels' variable, an xarray
        object with ``chain``, ``draw`` and one item dimension, a 3-D array, a list with one
        array (or :class:`Draws`) per chain, or one matrix with ``chains=``. At least two
        chains, of equal length, of at least 4 draws each.
    chains : array-like (H,), optional
        With an (H, n) matrix: each draw's chain id (rows of a chain kept in their order).
    loss : str or Loss, default "VI"
        The loss of the per-chain estimates (any loss of :func:`salsox.salso`).
    distance : str or Loss, default "VI"
        The ground distance of the mapping and of the comparisons between chains:
        ``"VI"`` (bits, the engine's WASABI kernel), ``"NVI"``, ``"ID"``, ``"NID"``,
        ``"binder"`` (Binder's loss with unit costs, the Rand distance), or any other loss
        between two partitions that :func:`salsox.losses.get_loss` resolves (a plugin's by
        name, a :class:`Loss` with parameters), each draw taken as the estimate and the other
        partition as the draw. Not a PSM-based loss.
    n_references : int, default 5
        Reference draws per chain, drawn at random: one mapped trace each, C x n_references
        in all. References from every chain make the mapping see each chain's region.
    n_runs : int, default 16
        SALSO runs of each chain's estimate. The halves' estimates are searched from the chain
        estimates as warm starts (the chain's own first; min(C, n_runs) runs each).
    rhat_threshold : float, default 1.01
        The least R-hat that flags a trace. The limit is the larger of it and the
        ``1 - alpha`` quantile of the largest R-hat over the traces when blocks of draws are
        relabelled between the chains at random (``diag.rhat_limit``): taking the maximum of
        many traces is allowed for.
    ess_threshold : float, default 100
        Bulk or tail ESS below this many per chain flags a trace. With fewer than twice as
        many draws per chain, a low ESS alone gives the verdict "too few draws to judge".
    alpha : float, default 0.01
        False-alarm rate of each calibrated test: the R-hat limit's quantile, and the
        p-value below which the gap between chains flags them.
    n_permutations : int, default 999
        Random relabellings of blocks of draws behind the R-hat limit and the gap's p-value
        (the smallest p-value is ``1 / (n_permutations + 1)``).
    gap_draws : int, default 250
        Draws per chain of the gap between chains: every pair of draws when the chains have
        at most this many (exact), otherwise every pair of this many evenly spaced ones.
    ts : bool, default False
        Also map the draws by a travelling salesman's tour (genMCMCDiag's ``ts``): a
        nearest-neighbour tour through the gap's draws, each draw's value its position in the
        tour (``diag.ts_trace``, with its R-hat and ESS in the verdict; not one of the traces
        the verdict's R-hat limit applies to).
    seed : int, optional
        The same seed gives the same result for any ``n_jobs``; default a fresh one, in
        ``info["seed"]``.
    n_jobs : int, optional
        Threads of the searches and of the distance computations (default: the CPUs the process may use).
    memory_limit : int, optional
        Bytes the searches' tables and the mapped traces may take (default 16 GiB); more is a
        MemoryError before any work.

    Returns
    -------
    Diagnosis
        ``status`` and ``converged``, ``verdict``, the traces with their ``rhat``,
        ``ess_bulk`` and ``ess_tail``, the gap between chains with its ``gap_pvalue``, the
        per-chain estimates and the distances between them.

    Notes
    -----
    Needs ArviZ (``pip install 'salsox[diagnostics]'``). Every argument is checked before any
    work. Cost: C searches of N draws and 2C warm-started ones of N/2, plus
    O(C N n) per reference for the mapping and per estimate for the loss traces (one engine
    call per estimate and chain; a count-sum formula loss takes one call per draw, slower),
    plus O((C S)^2 n) for the gap's distances (S = min(N, gap_draws)) and the relabellings of
    block sums (no draw is touched again).

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> draws = example_draws().draws                   # 500 draws of one chain
    >>> diag = salsox.diagnose(draws, chains=np.repeat([0, 1, 2, 3], 125), seed=1)
    >>> diag.n_chains, diag.n_draws, diag.trace_names[:2]
    (4, 125, ['n_clusters', 'VI to ref 0'])
    >>> bool(diag.rhat[0] < 1.05), diag.gap_exact          # 125 draws a chain: every pair
    (True, True)
    >>> diag.status in ("converged", "too few draws")
    True
    """
    started = time.perf_counter()
    az = _arviz.arviz()  # the missing dependency before anything else
    del az
    # Every argument but the draws and their chains is checked before they are read.
    loss, distance, metric, n_references, n_runs, rhat_threshold, ess_threshold, alpha, n_permutations, gap_draws, \
        jobs, seed, limit = check_options(
            loss=loss, distance=distance, n_references=n_references, n_runs=n_runs, rhat_threshold=rhat_threshold,
            ess_threshold=ess_threshold, alpha=alpha, n_permutations=n_permutations, gap_draws=gap_draws, ts=ts,
            seed=seed, n_jobs=n_jobs, memory_limit=memory_limit,
        )
    array, item_names, chain_ids = split_chains(draws, chains)
    c, h, n = array.shape
    n_references = check_int("n_references", n_references, minimum=1, maximum=h)
    chain_draws = [Draws(array[k], item_names=item_names) for k in range(c)]
    halves = [
        (Draws(array[k, : h // 2], item_names=item_names), Draws(array[k, h // 2 :], item_names=item_names))
        for k in range(c)
    ]
    sub = min(h, gap_draws)
    # The split's own copy of the labels (a list of chains is stacked, chains= reordered).
    copied = 0 if isinstance(draws, np.ndarray) and np.shares_memory(array, draws) else array.nbytes
    _check_memory(loss, chain_draws, c, h, n, n_references, jobs, min(n_runs, jobs), limit, sub, copied)

    stages: Dict[str, float] = {}
    mark = started

    def lap(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        stages[name] = now - mark
        mark = now

    lap("setup")
    # Per-chain estimates, then each half's, warm-started from them (its own chain's first).
    estimates: List[Estimate] = [
        salso(chain_draws[k], loss, n_runs=n_runs, n_jobs=jobs, seed=_seed_of(seed, 0, k), memory_limit=limit)
        for k in range(c)
    ]
    labels = np.stack([e.labels for e in estimates]).astype(np.int32)
    lap("chain_estimates")
    half_labels = np.empty((c, 2, n), dtype=np.int32)
    half_loss = np.empty((c, 2))
    for k in range(c):
        starts = labels[np.r_[k, np.delete(np.arange(c), k)][: min(c, n_runs)]]
        for side in (0, 1):
            part = halves[k][side]
            cap = max(part.max_clusters, int(starts.max()) + 1)
            est = salso(
                part, loss, n_runs=starts.shape[0], initial=InItemOrder(starts), max_clusters=cap, n_jobs=jobs,
                seed=_seed_of(seed, 1, k, side), memory_limit=limit,
            )
            half_labels[k, side] = est.labels
            half_loss[k, side] = est.expected_loss
    lap("half_estimates")

    # References: n_references draws of each chain, at distinct positions drawn at random.
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2]))
    ref_chain = np.repeat(np.arange(c), n_references)
    ref_draw = np.concatenate([np.sort(rng.choice(h, size=n_references, replace=False)) for _ in range(c)])
    references = np.stack([chain_draws[k].draw(int(t)) for k, t in zip(ref_chain, ref_draw)]).astype(np.int32)
    r = references.shape[0]

    # Mapped traces: (R, C, N) distances to the references, and the number of clusters.
    dist = np.stack([distances_to(chain_draws[k], references, distance, jobs, metric).T for k in range(c)], axis=1)
    clusters = np.stack([d.clusters_per_draw for d in chain_draws]).astype(np.float64)
    traces = np.concatenate([clusters[None], dist])
    names = ["n_clusters"] + [f"{distance} to ref {i}" for i in range(r)]
    lap("mapping")
    rhat = np.array([_arviz.rhat(t) for t in traces])
    ess_bulk = np.array([_arviz.ess_bulk(t) for t in traces])
    ess_tail = np.array([_arviz.ess_tail(t) for t in traces])
    lap("arviz")

    # Calibration: blocks of several autocorrelation times (from each chain's own ESS, which a
    # disagreement between chains does not lower), relabelled between the chains at random.
    tau = _autocorrelation_time(traces)
    blocks = block_count(h, tau)
    perm_rng = np.random.default_rng(np.random.SeedSequence([seed, 3]))
    _, null_max = rhat_null_max(traces, blocks, n_permutations, perm_rng)
    finite_null = null_max[~np.isnan(null_max)]
    rhat_quantile = float(np.quantile(finite_null, 1 - alpha, method="higher")) if finite_null.size else math.nan
    top = float(np.nanmax(rhat)) if (~np.isnan(rhat)).any() else math.nan
    rhat_pvalue = math.nan
    if finite_null.size and not math.isnan(top):
        rhat_pvalue = (1 + int(np.sum(finite_null >= top))) / (1 + finite_null.size)
    lap("rhat_calibration")

    # The gap between chains: all pairs of (an evenly spaced subset of) each chain's draws.
    positions = (np.arange(sub) * h) // sub
    subset = np.empty((c * sub, n), dtype=np.int32)
    for k in range(c):  # chain by chain: one chain's picked rows in the input's width at a time
        subset[k * sub : (k + 1) * sub] = array[k, positions]
    pair_dist = distances_to(Draws(subset), subset, distance, jobs, metric)
    pair_dist = (pair_dist + pair_dist.T) / 2  # the engine may round d(x, y) and d(y, x) apart
    np.fill_diagonal(pair_dist, 0.0)
    gap_blocks = min(blocks, sub)
    block_of = (np.arange(sub) * gap_blocks) // sub
    posterior_distance, gap, gap_pvalue, gap_null = gap_test(
        pair_dist, np.repeat(np.arange(c), sub), (np.arange(c)[:, None] * gap_blocks + block_of).ravel(), c,
        n_permutations, perm_rng,
    )
    ts_trace = None
    ts_stats = (math.nan, math.nan, math.nan)
    if ts:
        ts_trace = nearest_neighbour_tour(pair_dist).reshape(c, sub).astype(np.float64)
        ts_stats = (_arviz.rhat(ts_trace), _arviz.ess_bulk(ts_trace), _arviz.ess_tail(ts_trace))
    del pair_dist
    lap("gap")

    # Distances between the estimates, and between each chain's halves.
    estimate_distance = _pairwise(labels, labels, distance, jobs, metric)
    half_distance = np.array(
        [_pairwise(half_labels[k, :1], half_labels[k, 1:], distance, jobs, metric)[0, 0] for k in range(c)]
    )

    # Per-draw loss traces of every chain's estimate against every chain's draws.
    traced = np.stack([loss_traces(labels, chain_draws[j], loss, jobs) for j in range(c)], axis=1)  # (C, C, N)
    loss_matrix = traced.mean(axis=2)
    lap("loss_traces")
    chain_mcse = np.array([_arviz.mcse_mean(traced[k, k][None, :]) for k in range(c)])
    pooled = traced.mean(axis=(1, 2))
    mcse = np.array([_arviz.mcse_mean(traced[k]) for k in range(c)])
    if np.isnan(pooled).all():  # a PSM-based loss: no per-draw trace
        chain_mcse[:] = math.nan
        pooled = np.array([e.expected_loss for e in estimates])  # over own chains only
        mcse[:] = math.nan

    return Diagnosis(
        n_chains=c,
        n_draws=h,
        n_items=n,
        chain_ids=chain_ids,
        loss=loss,
        distance=distance,
        chain_estimates=estimates,
        chain_mcse=chain_mcse,
        loss_matrix=loss_matrix,
        expected_loss=pooled,
        mcse=mcse,
        loss_traces=traced,
        estimate_distance=estimate_distance,
        posterior_distance=posterior_distance,
        gap=gap,
        gap_pvalue=gap_pvalue,
        gap_draws=sub,
        gap_exact=sub == h,
        gap_null=gap_null,
        ts_trace=ts_trace,
        ts_rhat=ts_stats[0],
        ts_ess_bulk=ts_stats[1],
        ts_ess_tail=ts_stats[2],
        half_estimates=half_labels.astype(np.intp),
        half_distance=half_distance,
        half_expected_loss=half_loss,
        reference_draws=references.astype(np.intp),
        reference_chain=ref_chain,
        reference_draw=ref_draw,
        trace_names=names,
        traces=traces,
        rhat=rhat,
        ess_bulk=ess_bulk,
        ess_tail=ess_tail,
        rhat_threshold=rhat_threshold,
        ess_threshold=ess_threshold,
        rhat_limit=rhat_threshold if math.isnan(rhat_quantile) else max(rhat_threshold, rhat_quantile),
        rhat_pvalue=rhat_pvalue,
        rhat_null=null_max,
        alpha=alpha,
        n_permutations=n_permutations,
        blocks=blocks,
        info={
            "seed": seed,
            "n_runs": n_runs,
            "n_references": n_references,
            "seconds": time.perf_counter() - started,
            "stage_seconds": stages,
        },
        chain_draws=chain_draws,
    )


def _pairwise(a: np.ndarray, b: np.ndarray, distance: str, jobs: int, metric: Optional[Loss]) -> np.ndarray:
    """(len(a), len(b)) distances between label rows."""
    return distances_to(Draws(a), b, distance, jobs, metric)


def _autocorrelation_time(traces: np.ndarray) -> float:
    """Draws per effective draw within a chain: N / the bulk ESS of each chain on its own, the
    largest over the chains, the median over the traces that move (1 when none does)."""
    _, c, h = traces.shape
    taus = []
    for t in traces:
        ess = [_arviz.ess_bulk(t[k][None, :]) for k in range(c)]
        finite = [e for e in ess if math.isfinite(e) and e > 0]
        if finite:
            taus.append(h / min(finite))
    return float(np.median(taus)) if taus else 1.0


def _check_memory(
    loss: Loss, chain_draws: List[Draws], c: int, h: int, n: int, r: int, jobs: int, threads: int, limit: int,
    sub: int, copied: int,
) -> None:
    """A MemoryError before any work when the searches' tables or the traces exceed the limit."""
    for d in chain_draws:
        loss._route(d).check_memory(threads, d.max_clusters, limit)
    # The split's copy of the input and the compact chains and half chains; traces (references,
    # clusters and loss traces) and one chain's int32 labels at a time; the gap's draws (int32,
    # compact, and an int32 copy for distances other than VI) and their distances (twice: the
    # engine's and the symmetrised copy).
    label_bytes = chain_draws[0].label_bits // 8
    need = copied + 2 * c * h * n * label_bytes + 8 * c * h * (c * r + 1 + c) + 4 * h * n
    need += 2 * 4 * c * sub * n + label_bytes * c * sub * n + 2 * 8 * (c * sub) ** 2
    if need > limit:
        raise MemoryError(
            f"diagnose needs about {byte_size(need)} for the mapped traces ({c} chains x {h} draws x "
            f"{c * r + 1 + c} traces) and the gap's distances between {c} x {sub} draws, more than "
            f"memory_limit={limit} bytes; lower n_references or gap_draws, or raise memory_limit"
        )
