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

from typing import Any, Dict, Optional, Type

import numpy as np

from .. import _core
from ..io import Draws
from ..losses import ID, NID, NVI, OMARI, VI, Binder, ContingencyLoss, DecomposableLoss, Loss, PSMLoss

__all__ = ["DISTANCES", "check_distance", "distances_to", "loss_traces", "DECIMALS"]

# Distances (metrics on partitions) a mapping may use; "VI" runs the WASABI kernel.
DISTANCES: Dict[str, Type[Loss]] = {"VI": VI, "NVI": NVI, "ID": ID, "NID": NID, "binder": Binder}

# References per engine call: the kernel answers Ctrl-C between blocks of 64 draws, each of
# which visits every reference of the call, so a few at a time keep that prompt.
_REFS_PER_CALL = 16

# Mapped distances are rounded to this many decimals, so that distances equal in exact
# arithmetic tie whatever order the engine summed them in (R-hat and ESS rank the values).
DECIMALS = 10


def check_distance(distance: object) -> str:
    """The distance's name, or a ValueError listing the choices."""
    if isinstance(distance, str):
        for name in DISTANCES:
            if distance.lower() == name.lower():
                return name
    raise ValueError(f"distance must be one of {sorted(DISTANCES)}, got {distance!r}")


def distances_to(draws: Draws, references: np.ndarray, distance: str, n_jobs: int) -> np.ndarray:
    """(H, R) distance of every draw to each reference (rows of canonical int32 labels), rounded
    to :data:`DECIMALS`."""
    refs = np.ascontiguousarray(references, dtype=np.int32)
    if distance == "VI":
        out = np.hstack(
            [
                np.asarray(_core.particle_vi(draws._core, refs[s : s + _REFS_PER_CALL], n_jobs))
                for s in range(0, refs.shape[0], _REFS_PER_CALL)
            ]
        )
    else:
        # Symmetric losses: each draw as the estimate, the reference as the single "draw".
        metric = DISTANCES[distance]()
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
