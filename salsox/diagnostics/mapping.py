"""Partitions mapped to real numbers, for the convergence statistics.

Labels are arbitrary (label switching), so a partition-valued chain is diagnosed through
real-valued traces (Duttweiler, Klus, Coull and Thurston, "The Traceplot Thickens"; Lanfear,
Hua and Warren 2016 for trees): each draw's distance to a few reference draws, one trace per
reference, and each draw's number of clusters. The VI of every draw to the references is the
engine's WASABI kernel (``_core.particle_vi``: O(H n) per reference, threaded, Ctrl-C); the
other distances are the engine's count-table losses, with the draws as the estimates.

Also here: each draw's loss against an estimate (the per-draw loss trace whose mean is the
estimate's expected loss), for the Monte Carlo standard error of that expected loss.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Type

import numpy as np

from .. import _core
from ..io import Draws
from ..losses import ID, NID, NVI, OMARI, VI, Binder, ContingencyLoss, DecomposableLoss, Loss, PSMLoss

__all__ = [
    "DISTANCES", "check_distance", "resolve_distance", "distances_to", "loss_traces", "nearest_neighbour_tour",
    "DECIMALS",
]

# Distances (metrics on partitions) a mapping may use; "VI" runs the WASABI kernel.
DISTANCES: Dict[str, Type[Loss]] = {"VI": VI, "NVI": NVI, "ID": ID, "NID": NID, "binder": Binder}

# References per engine call: the kernel answers Ctrl-C between blocks of 64 draws, each of
# which visits every reference of the call, so a few at a time keep that prompt.
_REFS_PER_CALL = 16

# Mapped distances are rounded to this many decimals, so that distances equal in exact
# arithmetic tie whatever order the engine summed them in (R-hat and ESS rank the values).
DECIMALS = 10


def resolve_distance(distance: object) -> Tuple[str, Optional[Loss]]:
    """``(name, loss)`` of a distance: one of :data:`DISTANCES` (any case), any other loss the
    registry knows (a plugin's included, by name) or a :class:`Loss`; ``loss`` is None for
    Meila's VI, which the WASABI kernel computes. A PSM-based loss is no distance between two
    partitions: a ValueError, as is an unknown name.

    Examples
    --------
    >>> resolve_distance("vi"), resolve_distance("Binder")
    (('VI', None), ('binder', Binder(a=1.0, b=1.0)))
    >>> resolve_distance(salsox.VI(a=2, b=1))
    ('VI(a=2.0, b=1.0)', VI(a=2.0, b=1.0))
    """
    from ..losses import get_loss

    if isinstance(distance, str):
        for name in DISTANCES:
            if distance.lower() == name.lower():
                return name, None if name == "VI" else DISTANCES[name]()
    if not isinstance(distance, (str, Loss)):
        raise ValueError(f"distance must be a loss name or a salsox.losses.Loss, got {distance!r}")
    try:
        loss = get_loss(distance)
    except (ValueError, TypeError) as err:
        raise ValueError(f"distance: {err}") from None
    if isinstance(loss, PSMLoss):
        raise ValueError(
            f"distance {loss.name!r} is computed from a posterior similarity matrix, not between two partitions; "
            f"choose one of {sorted(DISTANCES)} or a loss between partitions"
        )
    if type(loss) is VI and loss.a == loss.b == 1.0:
        return "VI", None
    if type(loss) in (NVI, ID, NID) or (type(loss) is Binder and loss.a == loss.b == 1.0):
        return loss.name if type(loss) is not Binder else "binder", loss
    # A loss with parameters is named with them: "VI(a=2.0, b=1.0) to ref 0".
    return (repr(loss) if loss.params else loss.name), loss


def check_distance(distance: object) -> str:
    """The distance's name (:func:`resolve_distance`), or a ValueError."""
    return resolve_distance(distance)[0]


def distances_to(
    draws: Draws, references: np.ndarray, distance: str, n_jobs: int, metric: Optional[Loss] = None
) -> np.ndarray:
    """(H, R) distance of every draw to each reference (rows of canonical int32 labels), rounded
    to :data:`DECIMALS`: the VI kernel for ``"VI"``, otherwise ``metric`` (default the built-in
    of that name) with the draw as the estimate and the reference as the one draw."""
    refs = np.ascontiguousarray(references, dtype=np.int32)
    if distance == "VI" and metric is None:
        out = np.hstack(
            [
                np.asarray(_core.particle_vi(draws._core, refs[s : s + _REFS_PER_CALL], n_jobs))
                for s in range(0, refs.shape[0], _REFS_PER_CALL)
            ]
        )
    else:
        # Each draw as the estimate, the reference as the single "draw".
        metric = DISTANCES[distance]() if metric is None else metric
        rows = np.ascontiguousarray(draws.labels_matrix(), dtype=np.int32)
        out = np.column_stack([metric._route(Draws(r[None, :])).losses(rows, n_jobs) for r in refs])
    return np.round(out, DECIMALS)


class _TransposedDecomposable(DecomposableLoss):
    """A decomposable loss with its draw and estimate terms swapped."""

    def __init__(self, inner: DecomposableLoss) -> None:
        self.inner = inner
        self.name = inner.name

    @property
    def _scale(self) -> float:
        return self.inner._scale

    def draw_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return self.inner.estimate_term(counts, n)

    def estimate_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return self.inner.draw_term(counts, n)

    def cell_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        return self.inner.cell_term(counts, n)


class _TransposedContingency(ContingencyLoss):
    """A general loss evaluated on the transposed contingency tables."""

    def __init__(self, inner: ContingencyLoss) -> None:
        self.inner = inner
        self.name = inner.name
        self.vectorized = bool(getattr(inner, "vectorized", True))

    def loss(self, tables: np.ndarray) -> Any:
        return self.inner.loss(np.swapaxes(tables, -1, -2))


def _transposed(loss: Loss) -> Optional[Loss]:
    """The loss with the roles of draw and estimate swapped: VI and Binder swap their costs a
    and b, the other built-in count losses are symmetric, a plugin's decomposable loss swaps its
    draw and estimate terms and a general one reads its tables transposed. None otherwise (a
    count-sum formula)."""
    kind = type(loss)
    if kind in (VI, Binder):
        return kind(a=loss.b, b=loss.a)  # type: ignore[attr-defined]
    if kind in (OMARI, NVI, ID, NID):
        return loss
    if isinstance(loss, DecomposableLoss):
        return _TransposedDecomposable(loss)
    if isinstance(loss, ContingencyLoss):
        return _TransposedContingency(loss)
    return None


def loss_traces(estimates: np.ndarray, draws: Draws, loss: Loss, n_jobs: int) -> np.ndarray:
    """(M, H) loss of each estimate (rows of canonical labels) against each draw: a row's mean
    is that estimate's expected loss. NaN for a PSM-based loss, whose expected loss is no mean
    over draws (``VI.lb``, ``omARI.approx``)."""
    est = np.ascontiguousarray(estimates, dtype=np.int32)
    m = est.shape[0]
    if isinstance(loss, PSMLoss):
        return np.full((m, draws.n_draws), np.nan)
    if type(loss) is VI and loss.a == loss.b == 1.0:
        # Meila's VI: the WASABI kernel, one pass over the draws for all estimates.
        return np.asarray(_core.particle_vi(draws._core, est, n_jobs)).T.copy()
    swapped = _transposed(loss)
    if swapped is not None:
        # One engine call per estimate: the draws as estimates, the estimate as the one "draw".
        rows = np.ascontiguousarray(draws.labels_matrix(), dtype=np.int32)
        return np.stack([np.asarray(swapped._route(Draws(e[None, :])).losses(rows, n_jobs)) for e in est])
    # A count-sum formula: each draw on its own (an engine call per draw).
    matrix = draws.labels_matrix()
    return np.array(
        [[loss._route(Draws(matrix[h : h + 1])).losses(e[None, :], 1)[0] for h in range(draws.n_draws)] for e in est],
        dtype=np.float64,
    )


def nearest_neighbour_tour(dist: np.ndarray) -> np.ndarray:
    """A travelling salesman's tour of M points by the nearest-neighbour rule, from a (M, M)
    distance matrix: start at the point farthest from the others on average (an end of the
    cloud), then always go to the nearest point not yet visited (ties: the lowest index).
    Returns each point's position in the tour, the value of genMCMCDiag's ``ts`` map
    (Duttweiler et al.): draws close in the tour are close as partitions.

    Examples
    --------
    >>> x = np.array([0.0, 5.0, 1.0, 4.0, 2.0])
    >>> nearest_neighbour_tour(np.abs(x[:, None] - x[None, :]))
    array([4, 0, 3, 1, 2])
    """
    m = dist.shape[0]
    position = np.empty(m, dtype=np.intp)
    visited = np.zeros(m, dtype=bool)
    current = int(np.argmax(dist.sum(axis=1)))
    for step in range(m):
        position[current] = step
        visited[current] = True
        if step + 1 < m:
            current = int(np.argmin(np.where(visited, np.inf, dist[current])))
    return position
