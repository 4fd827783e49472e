"""CHIPS: high-probability sub-partitions (Page, Barrientos, Dahl & Dunson 2025).

A sub-partition gives cluster labels to some of the items and leaves the others unallocated
(label -1). Its posterior probability is the fraction of the draws whose restriction to the
allocated items is exactly it. CHIPS grows one greedily, an item at a time, keeping the
probability as high as it can; see :func:`chips`.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import inspect
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np

from .. import _core
from .._validation import as_partial_labels, byte_size, check_int, check_n_jobs, check_probability, check_seed
from .._validation import check_max_clusters, known_n_items
from ..engine import check_limit
from ..io import Draws, InItemOrder, as_draws, matched, pandas_index, refuse_similarity
from ..losses import Loss, get_loss
from ..metrics import as_truth
from ..search import salso
from ..search.salso_search import check_arguments
from ..search.salso_search import check_options as check_salso_options
from .chips_path import PathLabels
from .chips_path import MAX_ROWS, state_table_html, state_table_lines

__all__ = ["chips", "ChipsResult", "Unallocated"]


@dataclasses.dataclass(frozen=True)
class Unallocated:
    """The items a CHIPS run left unallocated when it stopped below the threshold.

    Attributes
    ----------
    items : ndarray of int
        Their indices, increasing.
    counts : ndarray of int
        For each, c_i: in how many of the consistent draws it joins the cluster (or a new one)
        that it joins most often.
    q : ndarray of float
        ``counts / H``: the probability the sub-partition would have with that item added.
    """

    items: np.ndarray
    counts: np.ndarray
    q: np.ndarray


@dataclasses.dataclass(frozen=True, eq=False)
class ChipsResult:
    """The result of :func:`chips`.

    One state (``mode == "single"``) or several rows (``"path"``, ``"all"``). Per-row
    attributes are arrays with one entry (or row) per state in path and all-candidates modes,
    scalars (or 1-D arrays) in single mode.

    Attributes
    ----------
    labels : ndarray of int, shape (n,) or (m, n); PathLabels in path mode
        The sub-partition(s): canonical labels 0..k-1 in order of first appearance, -1 for
        unallocated items. Path rows go from the largest subset to the smallest (the start:
        the empty sub-partition, or ``initial``); all-candidates rows from most items to fewest.
        A path's n + 1 rows are not stored (4 n^2 bytes): ``labels`` is then a read-only
        :class:`~salsox.uncertainty.chips_path.PathLabels` of shape (n + 1, n), int32, that
        rebuilds the rows asked for from the runs' steps (``labels[i]``, slices, index arrays,
        iteration give ndarrays; ``np.asarray(labels)`` builds them all).
    n_items : int or ndarray of int
        Number of allocated items. Along a path it decreases by one per row.
    probability : float or ndarray of float
        Posterior probability of each sub-partition (fraction of the draws consistent with it).
    auc : float or None
        Path mode: the area under the probability path, the sum over the path's rows except
        the full partition of ``probability / n`` (probability against the fraction of items
        allocated). It is 1 when all draws agree, smaller the more uncertain the clustering.
    unallocated : Unallocated, list of Unallocated, or None
        Single mode: the items left unallocated with their counts and q = c/H (empty when every
        item was allocated). All-candidates mode: one per row. Path mode: None.
    mode : str
        ``"path"``, ``"single"`` or ``"all"``.
    run : int or ndarray of int
        The run (random stream) each state comes from.
    threshold_used : float
        The threshold the runs stopped at.
    info : dict
        ``seed``, ``n_runs``, ``n_jobs``, and ``runs``: for every run, the sequence of its steps
        (``items`` allocated in order, their ``labels`` in creation order, and ``counts``: the
        number of consistent draws after each step, so probability ``counts / H``), and where it
        stopped, ``unallocated`` with ``unallocated_counts``. ``start_count`` is the number of
        draws consistent with the start.

    draws : Draws
        The draws it was computed from (kept for :meth:`threshold` and the properties below;
        not copied, not shown).
    completed : Estimate or None
        Single mode with ``complete``: the sub-partition completed by
        ``salso(draws, loss, fixed=labels)`` (its allocated items never move).

    :attr:`item_names` holds the draws' item names; :meth:`to_text` (also ``print(result)``)
    reports the clusters and the least certain unallocated items; :meth:`to_series` and
    :meth:`to_dataframe` give pandas tables indexed by item name; in a notebook the result
    shows as a table.

    ``consistent_draws`` and ``cluster_probability`` are computed on first access.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1, 2], [0, 0, 1, 1, 1], [0, 0, 1, 1, 2], [0, 0, 2, 1, 1]]
    >>> path = salsox.chips(draws, seed=1)             # threshold 0: the whole path
    >>> path.mode, path.n_items.tolist()
    ('path', [5, 4, 3, 2, 1, 0])
    >>> path.probability.tolist()
    [0.5, 0.75, 1.0, 1.0, 1.0, 1.0]
    """

    labels: Union[np.ndarray, PathLabels]
    n_items: Union[int, np.ndarray]
    probability: Union[float, np.ndarray]
    auc: Optional[float]
    unallocated: Union[Unallocated, List[Unallocated], None]
    mode: str
    run: Union[int, np.ndarray]
    threshold_used: float
    info: Dict[str, Any] = dataclasses.field(repr=False)
    draws: Draws = dataclasses.field(repr=False)
    completed: Optional[Any] = dataclasses.field(default=None, repr=False)

    @functools.cached_property
    def _consistency(self) -> tuple:
        blocks: Iterable[np.ndarray]
        if isinstance(self.labels, PathLabels):
            blocks = self.labels.chunks()  # rebuilt 256 rows at a time, never all at once
        else:
            blocks = [np.atleast_2d(self.labels)]
        masks: List[np.ndarray] = []
        together: List[np.ndarray] = []
        for rows in blocks:
            rows = np.ascontiguousarray(rows, dtype=np.int32)
            mask, t = _core.chips_consistency(self.draws._core, rows, int(self.info["n_jobs"]))
            masks.append(np.asarray(mask, dtype=bool))
            together.extend(np.asarray(c) / self.draws.n_draws for c in t)
        return np.concatenate(masks), together

    @property
    def consistent_draws(self) -> np.ndarray:
        """Boolean mask over the draws (shape (H,), or (m, H) for several rows): the draws whose
        restriction to the allocated items is the sub-partition (the set A). Summarise cluster
        parameters over these draws without label switching."""
        mask = self._consistency[0]
        return mask[0] if self.mode == "single" else mask

    @property
    def cluster_probability(self) -> Union[np.ndarray, List[np.ndarray]]:
        """For each CHIPS cluster, the fraction of all draws in which its members share a label
        (one array per row in path and all-candidates modes)."""
        together = self._consistency[1]
        return together[0] if self.mode == "single" else together

    @property
    def item_names(self) -> Optional[np.ndarray]:
        """The items' names when the draws carried them (DataFrame columns, xarray
        coordinates, a file's header), else None."""
        return self.draws.item_names

    def _index(self, pd: Any) -> Any:
        return pandas_index(self.item_names, self.draws.n_items)

    def to_series(self, name: str = "cluster") -> Any:
        """Single mode: the sub-partition as a ``pandas.Series`` indexed by item name (by
        position when unknown), -1 for unallocated items. Needs pandas (imported only here)."""
        pd = _pandas("ChipsResult.to_series()")
        if self.mode != "single":
            raise ValueError(f"to_series() shows one sub-partition (single mode), not mode {self.mode!r}; "
                             "use to_dataframe()")
        return pd.Series(np.asarray(self.labels), index=self._index(pd), name=name)

    def to_dataframe(self) -> Any:
        """A ``pandas.DataFrame``. Single mode: one row per item (indexed by name, or position
        when unknown) with its ``cluster`` (-1: unallocated), ``q`` (for an unallocated item,
        the probability the sub-partition would have with it added; NaN for allocated items)
        and, when completed, its ``completed`` cluster. Path and all-candidates modes: one
        row per state with ``n_items``, ``n_clusters``, ``probability`` and ``run``. Needs
        pandas (imported only here)."""
        pd = _pandas("ChipsResult.to_dataframe()")
        if self.mode == "single":
            q = np.full(self.draws.n_items, np.nan)
            u = self.unallocated
            if isinstance(u, Unallocated) and len(u.items):
                q[u.items] = u.q
            columns: Dict[str, Any] = {"cluster": np.asarray(self.labels), "q": q}
            if self.completed is not None:
                columns["completed"] = np.asarray(self.completed.labels)
            return pd.DataFrame(columns, index=self._index(pd))
        clusters = self._n_clusters()
        return pd.DataFrame(
            {
                "n_items": np.asarray(self.n_items),
                "n_clusters": clusters,
                "probability": np.asarray(self.probability),
                "run": np.asarray(self.run),
            },
            index=pd.Index(np.arange(clusters.shape[0]), name="state"),
        )

    def _n_clusters(self) -> np.ndarray:
        """Clusters of each row (path rows counted from the runs' steps, not rebuilt)."""
        if isinstance(self.labels, PathLabels):
            return self.labels.n_clusters()
        return np.atleast_2d(self.labels).max(axis=1) + 1

    def to_text(self, n_uncertain: int = 5, *, one_based: bool = False, max_rows: Optional[int] = MAX_ROWS) -> str:
        """A printable report, items by name when known (else by position, from 1 with
        ``one_based``). Single mode: the clusters with their first members, and the unallocated
        items, least certain (lowest q) first. Path and all-candidates modes: items and
        probability of each state, the first and last ones of more than ``max_rows`` (None:
        every state) with a line saying how many are not shown."""
        from ..summaries.display import item_label, items_preview

        names = self.item_names
        n = self.draws.n_items
        if self.mode != "single":
            clusters = self._n_clusters()
            lines = [f"CHIPS {self.mode}: {clusters.shape[0]} states of {n} items"
                     + (f", AUC {self.auc:.4g}" if self.auc is not None else "")]
            lines += state_table_lines(self.n_items, clusters, self.probability, max_rows)
            return "\n".join(lines)
        labels = np.asarray(self.labels)
        k = int(labels.max()) + 1 if np.any(labels >= 0) else 0
        shift = 1 if one_based else 0
        lines = [
            f"CHIPS: {self.n_items} of {n} items allocated in {k} clusters, probability {self.probability:.4g} "
            f"(threshold {self.threshold_used:.4g})",
            f"{'cluster':>7} {'size':>6}  items",
        ]
        for c in range(k):
            members = np.flatnonzero(labels == c)
            lines.append(f"{c + shift:>7d} {members.shape[0]:>6d}  {items_preview(members, names, one_based)}")
        u = self.unallocated
        if isinstance(u, Unallocated) and len(u.items):
            order = np.argsort(u.q, kind="stable")[: max(n_uncertain, 0)]
            shown = ", ".join(f"{item_label(int(u.items[j]), names, one_based)} (q {u.q[j]:.2f})" for j in order)
            lines.append(f"unallocated: {len(u.items)} items" + (f"; least certain: {shown}" if shown else ""))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        from ..summaries.display import html_block, html_table, items_preview

        text = self.to_text().splitlines()
        if self.mode != "single":
            return html_block(text[0], state_table_html(self.n_items, self._n_clusters(), self.probability))
        labels = np.asarray(self.labels)
        k = int(labels.max()) + 1 if np.any(labels >= 0) else 0
        rows = [
            (c, int(np.sum(labels == c)), items_preview(np.flatnonzero(labels == c), self.item_names))
            for c in range(k)
        ]
        extra = "" if not text[-1].startswith("unallocated") else f"<p>{html.escape(text[-1])}</p>"
        return html_block(text[0], html_table(("cluster", "size", "items"), rows)) + extra

    def threshold(
        self,
        gamma: float,
        *,
        n_runs: Optional[int] = None,
        n_jobs: Optional[int] = None,
        seed: Optional[int] = None,
        complete: Union[None, bool, Dict[str, Any]] = True,
        loss: Any = None,
        max_clusters: Optional[int] = None,
    ) -> "ChipsResult":
        """From a path: the largest sub-partition on the path with probability >= ``gamma``, grown
        again by CHIPS with that row's probability as the threshold, then completed by SALSO
        (R's ``threshold()``; ``complete=False`` skips the completion).

        ``n_runs``, ``n_jobs``, ``seed``, ``loss`` and ``max_clusters`` default to those of the
        path's call. Returns a single-mode result.
        """
        if self.mode != "path":
            raise ValueError(f"threshold() needs a path result (chips(..., path=True)), not mode {self.mode!r}")
        gamma = check_probability("gamma", gamma)
        probs = np.asarray(self.probability)
        ok = np.flatnonzero(probs >= gamma)
        if ok.size == 0:
            raise ValueError(
                f"gamma={gamma!r}: no sub-partition on the path has probability >= gamma "
                f"(the highest is {probs.max():.6g})"
            )
        row = int(ok[np.argmax(np.asarray(self.n_items)[ok])])
        return chips(
            self.draws,
            float(probs[row]),
            n_runs=self.info["n_runs"] if n_runs is None else n_runs,
            path=False,
            initial=InItemOrder(self.labels[row]),
            n_jobs=self.info["n_jobs"] if n_jobs is None else n_jobs,
            seed=self.info["seed"] if seed is None else seed,
            complete=complete,
            loss=self.info["loss"] if loss is None else loss,
            max_clusters=self.info["max_clusters"] if max_clusters is None else max_clusters,
        )


def _pandas(what: str) -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(f"{what} needs pandas: pip install pandas") from None
    return pd


def _read_only(run: Dict[str, Any]) -> Dict[str, Any]:
    """A run's steps, read-only: a path's labels are rebuilt from them."""
    for value in run.values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return run


def _check_flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__}")
    return bool(value)


def _check_initial(initial: Any, n: int) -> Optional[np.ndarray]:
    """-1 (unallocated) or any other integer labels, relabelled 0..k-1 by first appearance."""
    return as_partial_labels(initial, "initial", n, "unallocated")


def chips_bytes(n: int, h: int, n_runs: int, threads: int, mode: str) -> int:
    """Bytes :func:`chips` allocates for n items, h draws and ``n_runs`` runs on ``threads``
    threads in ``mode``: each run's steps (in the engine and again as arrays), each thread's
    run state, the rows' labels replayed from every run, and the rows returned. All-candidates
    and single modes return labels (n per run, held twice: the engine's, and the array they are
    copied into); a path's n + 1 rows are only (run, size, count) each, their labels rebuilt
    on demand from the runs' steps (:class:`~salsox.uncertainty.chips_path.PathLabels`)."""
    steps = n_runs * (24 * n + 24 * n)
    state = threads * (8 * n + 24 * h + 256)
    replay = n_runs * 4 * n
    rows = (n + 1) * 160 if mode == "path" else 2 * 4 * n * n_runs
    return steps + state + replay + rows


def _refuse_one_cluster(max_clusters: Any, n: int) -> None:
    """Known before the runs: one cluster leaves the completion nothing to search, and any
    CHIPS sub-partition of two clusters (found only after all the runs) would be refused."""
    if max_clusters == 1 and n > 1:
        raise ValueError(
            "max_clusters=1 leaves the completion a single answer, every item in one cluster, whatever "
            "the loss and the CHIPS sub-partition; pass max_clusters >= 2, or pass complete=False"
        )


def _check_completion_options(
    loss: Any, complete: Dict[str, Any], max_clusters: Optional[int], jobs: int, seed: int, n: Optional[int],
) -> None:
    """What :func:`_check_completion` can say without the draws (``n``: their number of
    items if known without reading them), said before they are read."""
    get_loss(loss)
    args: Dict[str, Any] = {"max_clusters": max_clusters, "n_jobs": jobs, "seed": seed, **complete}
    unknown = sorted(set(args) - _COMPLETE_OPTIONS)
    if unknown:
        raise TypeError(
            f"complete has {', '.join(map(repr, unknown))}, not salso arguments it may set: "
            f"{', '.join(sorted(_COMPLETE_OPTIONS))}"
        )
    if n is not None:
        _refuse_one_cluster(max_clusters, n)
    probe = {k: v for k, v in args.items() if k != "client"}
    try:
        if probe.get("initializer") is not None:
            # chips always fixes the sub-partition's items (check_arguments says the same later)
            raise ValueError(
                "fixed cannot be combined with initializer (its partitions ignore the fixed items); use initial"
            )
        check_salso_options(**probe)
    except (TypeError, ValueError) as err:
        raise type(err)(f"the completion (complete=, loss=): {err}") from None


def _check_completion(
    d: Draws, loss: Any, complete: Dict[str, Any], max_clusters: Optional[int], jobs: int, seed: int,
    start: Optional[np.ndarray], limit: int, runs_need: int,
) -> Tuple[Loss, Dict[str, Any]]:
    """The completion's loss and :func:`salsox.salso` arguments, checked before the CHIPS runs
    (a bad ``loss`` or ``complete`` entry fails at once, not after them). The completion runs
    while the runs' results are held: its ``memory_limit`` is what ``limit`` leaves after the
    runs' ``runs_need`` bytes (or ``complete``'s own, if lower)."""
    resolved = get_loss(loss)
    as_truth(d, resolved)
    args: Dict[str, Any] = {"max_clusters": max_clusters, "n_jobs": jobs, "seed": seed, **complete}
    unknown = sorted(set(args) - _COMPLETE_OPTIONS)
    if unknown:
        raise TypeError(
            f"complete has {', '.join(map(repr, unknown))}, not salso arguments it may set: "
            f"{', '.join(sorted(_COMPLETE_OPTIONS))}"
        )
    share = limit - runs_need
    own = args.get("memory_limit")
    if own is not None:
        try:
            own = check_limit(own)
        except (TypeError, ValueError) as err:
            raise type(err)(f"the completion (complete=, loss=): {err}") from None
    args["memory_limit"] = max(1, share if own is None else min(own, share))
    # The sub-partition is not known yet: checked with the start's items fixed (none by default).
    fixed = np.full(d.n_items, -1, dtype=np.int32) if start is None else start
    probe = dict(args)
    _refuse_one_cluster(max_clusters, d.n_items)
    if start is not None and max_clusters is not None and int(start.max(initial=-1)) + 1 > max_clusters:
        raise ValueError(
            f"max_clusters={max_clusters} is below the {int(start.max()) + 1} clusters of initial, which "
            "the completion keeps: raise max_clusters, or pass complete=False"
        )
    probe.pop("progress", None)
    probe.pop("client", None)
    try:
        c = check_arguments(d, resolved, fixed=fixed, **probe)
        # As salso checks it before its search: the tables of its threads, then the final evaluation.
        c["route"].check_memory(min(c["jobs"], c["n_runs"]), c["kd"], c["limit"])
        c["route"].check_losses_memory(1, c["kd"], c["jobs"], c["limit"])
    except MemoryError as err:
        raise MemoryError(
            f"the completion (complete=, loss=) has what memory_limit={limit} bytes leaves after the CHIPS "
            f"runs ({byte_size(runs_need)}), {byte_size(max(0, share))}: {err}"
        ) from None
    except (TypeError, ValueError) as err:
        raise type(err)(f"the completion (complete=, loss=): {err}") from None
    return resolved, args


# salso's arguments a completion may set (the draws, the loss and the fixed items are chips').
_COMPLETE_OPTIONS = frozenset(inspect.signature(salso).parameters) - {"draws", "loss", "fixed"}


def check_chips_options(
    threshold: Any = 0.0, *, n_runs: Any = 64, path: Any = None, all_candidates: Any = False, n_jobs: Any = None,
    seed: Any = None, complete: Any = None, loss: Any = "VI", max_clusters: Any = None, memory_limit: Any = None,
    n_items: Optional[int] = None,
) -> Tuple[float, int, str, int, int, Optional[Dict[str, Any]], int]:
    """:func:`chips`' arguments other than the draws and ``initial``, checked before the draws
    are read (``n_items``: their number of items when known without reading them). Returns
    the threshold, the number of runs, the mode, n_jobs, the seed, the completion's options
    (None: no completion) and the memory limit."""
    thr = check_probability("threshold", threshold)
    runs = check_int("n_runs", n_runs, minimum=1, maximum=1_000_000)
    if path is not None:
        path = _check_flag("path", path)
    all_candidates = _check_flag("all_candidates", all_candidates)
    if path and all_candidates:
        raise ValueError("path=True and all_candidates=True cannot be combined; choose one")
    use_path = (thr == 0.0) if path is None else path
    if all_candidates:
        use_path = False
    mode = "path" if use_path else ("all" if all_candidates else "single")
    jobs = check_n_jobs(n_jobs)
    seed = check_seed(seed)
    if complete is None:
        complete = mode == "single"
    if not isinstance(complete, dict):
        complete = {} if _check_flag("complete", complete) else None
    if complete is not None and mode != "single":
        raise ValueError(f"complete applies to a single sub-partition (threshold > 0), not to mode {mode!r}")
    if max_clusters is not None:
        check_max_clusters(max_clusters)
    limit = check_limit(memory_limit)
    if complete is not None:
        _check_completion_options(loss, complete, max_clusters, jobs, seed, n_items)
    return thr, runs, mode, jobs, seed, complete, limit


def chips(
    draws: Any,
    threshold: float = 0.0,
    *,
    n_runs: int = 64,
    path: Optional[bool] = None,
    all_candidates: bool = False,
    initial: Any = None,
    n_jobs: Optional[int] = None,
    seed: Optional[int] = None,
    complete: Union[None, bool, Dict[str, Any]] = None,
    loss: Any = "VI",
    max_clusters: Optional[int] = None,
    memory_limit: Optional[int] = None,
) -> ChipsResult:
    """High-probability sub-partitions by the CHIPS greedy search.

    Each run starts from the empty sub-partition (or ``initial``) and adds one item at a time:
    the unallocated item that joins some cluster (or a new one) in the largest number c_i of
    the draws still consistent with the sub-partition; it stops when ``q = c_i / H`` would fall
    below ``threshold``. Ties are broken at random. Runs are independent and run in parallel.

    Parameters
    ----------
    draws : array-like of shape (H, n), or Draws
        Posterior draws of the partition (any integer labels; see :class:`salsox.Draws`).
    threshold : float in [0, 1]
        Lowest probability of the sub-partition. 0 (the default) grows every run to the full
        partition, for the path.
    n_runs : int
        Number of runs (64 by default, as in R); run r uses the random stream (seed, r).
    path : bool, optional
        Return the path: for every subset size, the highest-probability state any run reached.
        Default: True when ``threshold == 0``, else False (single-best).
    all_candidates : bool
        Return every run's final state, most items first (instead of the single best).
    initial : array-like of n labels, optional
        A starting sub-partition: -1 for unallocated items, any other integers as cluster
        labels. Runs keep it and only add items. If its probability is already below
        ``threshold`` it is returned as it is, with its unallocated items' counts.
    n_jobs : int, optional
        Threads (default: the CPUs the process may use). Results do not depend on it.
    seed : int, optional
        Seed of the runs' random streams; default: a fresh one, reported in ``info["seed"]``.
    complete : bool or dict, optional
        Single mode: also complete the sub-partition into a full partition,
        ``completed = salso(draws, loss, fixed=labels, max_clusters=max_clusters, n_jobs=n_jobs,
        seed=seed, **complete)`` (a dict gives further :func:`salsox.salso` arguments). Every
        SALSO phase runs on the unallocated items only; the allocated ones keep their clusters.
        R's completion (random labels for the free items, then sweetening scans only) is
        ``complete=dict(prob_sequential=0, max_zealous=0)``. Default: True in single mode (so
        whenever ``threshold > 0`` and neither ``path`` nor ``all_candidates`` is asked for).
    loss : str or Loss, default "VI"
        The loss of the completion (any loss :func:`salsox.salso` takes).
    max_clusters : int, optional
        Cluster cap of the completion (default: as in :func:`salsox.salso`, at least the number
        of CHIPS clusters). With a completion it must be at least 2 (refused before the runs);
        below the clusters of the CHIPS sub-partition it is an error once the runs have found it.
    memory_limit : int, optional
        Bytes the call may take: the runs and the rows they give (O(n) per run: a path's rows
        are rebuilt from the runs' steps on demand, see ``ChipsResult.labels``) and the
        completion's search, which has what the runs leave (``complete=dict(memory_limit=...)``
        may lower its share); more is a MemoryError before any run. Default 16 GiB.

    Returns
    -------
    ChipsResult
        Single-best mode: among the runs' final states, the one with most items, then the
        highest probability. Path and all-candidates modes: one row per state. Remaining ties
        go to the lexicographically smallest canonical labels, so the choice depends neither
        on run order nor on threads.

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C; the runs stop promptly.

    Notes
    -----
    Unlike R's ``chips()``, there is no limit on the number of CHIPS clusters or draw labels,
    an initial sub-partition already below the threshold is returned rather than crashing, and
    path ties are not decided by run order.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1, 2], [0, 0, 1, 1, 1], [0, 0, 1, 1, 2], [0, 0, 2, 1, 1]]
    >>> res = salsox.chips(draws, 0.7, seed=1)       # items together in >= 70% of the draws
    >>> res.labels, res.probability
    (array([ 0,  0,  1, -1,  2], dtype=int32), 0.75)
    >>> res.completed.labels                         # completed by SALSO
    array([0, 0, 1, 1, 2])
    """
    refuse_similarity(draws, "draws", "chips")
    # Every argument that does not need the draws is checked before they are read.
    thr, runs, mode, jobs, seed, complete, limit = check_chips_options(
        threshold, n_runs=n_runs, path=path, all_candidates=all_candidates, n_jobs=n_jobs, seed=seed,
        complete=complete, loss=loss, max_clusters=max_clusters, memory_limit=memory_limit,
        n_items=known_n_items(draws),
    )
    d = as_draws(draws)
    # A partial partition is matched to the draws' items by name (salsox.io.item_index).
    if initial is not None:
        initial = matched(initial, d.item_names, d.n_items, "initial")[0]
    start = _check_initial(initial, d.n_items)
    need = chips_bytes(d.n_items, d.n_draws, runs, min(jobs, runs), mode)
    if need > limit:
        raise MemoryError(
            f"chips in {mode} mode needs about {byte_size(need)} ({runs} runs of {d.n_items} items), "
            f"more than memory_limit={limit} "
            "bytes; lower n_runs, ask for a single sub-partition (threshold > 0), or raise memory_limit"
        )
    completion = (
        None if complete is None
        else _check_completion(d, loss, complete, max_clusters, jobs, seed, start, limit, need)
    )

    raw = _core.chips(d._core, thr, runs, jobs, seed, mode, start)
    H, n = d.n_draws, d.n_items
    counts = np.asarray(raw["counts"])
    n_items = np.asarray(raw["n_items"])
    run = np.asarray(raw["run"])
    probability = counts / H
    unallocated = [
        None if u is None else Unallocated(np.asarray(u[0]), np.asarray(u[1]), np.asarray(u[1]) / H)
        for u in raw["unallocated"]
    ]
    info = {
        "seed": seed,
        "n_runs": runs,
        "n_jobs": jobs,
        "start_count": int(raw["start_count"]),
        "runs": [_read_only(dict(r)) for r in raw["runs"]],
        "loss": loss,
        "max_clusters": max_clusters,
    }
    labels: Any = np.asarray(raw["labels"])
    if mode == "path":
        steps_of = info["runs"]
        labels = PathLabels(np.asarray(raw["start_labels"]), [r["items"] for r in steps_of],
                            [r["labels"] for r in steps_of], np.asarray(raw["position"]),
                            n_items - int(raw["start_size"]))
    if mode == "single":
        completed = None
        if completion is not None:
            k = int(labels[0].max()) + 1
            if max_clusters is not None and k > max_clusters:
                raise ValueError(
                    f"max_clusters={max_clusters} is below the {k} clusters of the CHIPS sub-partition, which "
                    "its completion keeps: raise max_clusters (or the threshold), or pass complete=False"
                )
            completed = salso(d, completion[0], fixed=InItemOrder(labels[0]), **completion[1])
        return ChipsResult(
            labels=labels[0],
            n_items=int(n_items[0]),
            probability=float(probability[0]),
            auc=None,
            unallocated=unallocated[0],
            mode=mode,
            run=int(run[0]),
            threshold_used=thr,
            info=info,
            draws=d,
            completed=completed,
        )
    auc = float(probability[n_items < n].sum() / n) if mode == "path" else None
    return ChipsResult(
        labels=labels,
        n_items=n_items,
        probability=probability,
        auc=auc,
        unallocated=None if mode == "path" else [u for u in unallocated if u is not None],
        mode=mode,
        run=run,
        threshold_used=thr,
        info=info,
        draws=d,
    )
