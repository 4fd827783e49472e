"""What every engine route offers, and the memory checks they share."""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, Dict, Optional

import numpy as np

from .. import _core
from .._validation import byte_size
from ..io import Draws

__all__ = ["Route", "check_square_memory", "finite_losses", "psm_matrix", "DEFAULT_MEMORY_LIMIT", "check_limit"]

# Largest n x n matrix built without an explicit request (bytes).
PSM_MEMORY_LIMIT = 8 * 2**30

# What a call may allocate when its memory_limit is not given (bytes), as salso's tables.
DEFAULT_MEMORY_LIMIT = 16 * 2**30


def check_limit(limit: Any) -> int:
    """``memory_limit``: None for the default, or a positive number of bytes."""
    if limit is None:
        return DEFAULT_MEMORY_LIMIT
    from .._validation import check_int

    return check_int("memory_limit", limit, minimum=1)


def check_square_memory(n: int, what: str) -> None:
    """Refuse an n x n float64 matrix beyond :data:`PSM_MEMORY_LIMIT`."""
    need = 8 * n * n
    if need > PSM_MEMORY_LIMIT:
        raise MemoryError(
            f"{what} needs the {n} x {n} matrix ({need / 2**30:.1f} GiB), more than the "
            f"{PSM_MEMORY_LIMIT / 2**30:.0f} GiB salsox builds without being asked; use a "
            "count-based loss (e.g. 'VI' or 'binder'), which never builds it"
        )


def finite_losses(values: Any, loss: Any) -> np.ndarray:
    """``values`` (expected losses) as float64, or a ValueError naming ``loss`` when one
    overflowed to inf (or is NaN): costs so large that float64 cannot hold the loss."""
    values = np.asarray(values, dtype=np.float64)
    if values.size and not np.all(np.isfinite(values)):
        bad = values[~np.isfinite(values)][0]
        raise ValueError(
            f"loss {loss!r}: the expected loss is {float(bad)!r}: its values overflow float64 (costs or "
            "parameters too large); scale them down (a common factor on the costs does not change the "
            "estimate)"
        )
    return values


def psm_bytes(n: int) -> int:
    """Bytes :func:`psm_matrix` allocates: the float64 matrix, built in place."""
    return 8 * n * n


def psm_matrix(draws: Draws, n_jobs: int, memory_limit: Optional[int] = None) -> np.ndarray:
    """The posterior similarity matrix of ``draws`` (n x n float64); a MemoryError up front when
    it would take more than ``memory_limit`` bytes (default: :data:`PSM_MEMORY_LIMIT`)."""
    n = draws.n_items
    if memory_limit is None:
        check_square_memory(n, "psm")
    elif psm_bytes(n) > memory_limit:
        raise MemoryError(
            f"psm needs the {n} x {n} matrix ({byte_size(psm_bytes(n))}), more than "
            f"memory_limit={memory_limit} bytes; raise memory_limit, or use a count-based loss, "
            "which never builds it"
        )
    return _core.psm_matrix(draws._core, n_jobs)


@dataclasses.dataclass
class Route(abc.ABC):
    """One kind of loss bound to the C++ engine, for one truth (draws or a PSM).

    A loss's ``_route(truth, engine)`` returns one; ``salso``, ``dlso``, ``partition_loss``,
    the summaries and the Dask runner call only these methods, whatever the kind of loss.
    Losses come back in the loss's own scale; ``search`` returns the engine's raw dict, whose
    losses are in engine units (multiply by :attr:`scale`).
    """

    #: The engine's name, reported as ``Estimate.info["engine"]``.
    engine = ""

    @property
    def scale(self) -> float:
        """Engine losses times this are the loss's own values."""
        return 1.0

    @abc.abstractmethod
    def memory_bytes(self, threads: int, max_clusters: int) -> int:
        """Bytes a search on ``threads`` threads with at most ``max_clusters`` clusters allocates."""

    @abc.abstractmethod
    def memory_message(self, need: int, threads: int, max_clusters: int, limit: int) -> str:
        """Why a search needing ``need`` bytes is refused under ``limit``."""

    def check_memory(self, threads: int, max_clusters: int, limit: int) -> None:
        """MemoryError, up front, when the search would allocate more than ``limit`` bytes."""
        need = self.memory_bytes(threads, max_clusters)
        if need > limit:
            raise MemoryError(self.memory_message(need, threads, max_clusters, limit))

    @abc.abstractmethod
    def search(self, options: Dict[str, Any]) -> Dict[str, Any]:
        """One engine call of the SALSO search; ``options`` are the engine's keyword arguments."""

    @abc.abstractmethod
    def losses(self, estimates: np.ndarray, n_jobs: int) -> np.ndarray:
        """Expected loss of each canonical int32 row of ``estimates``."""

    def losses_bytes(self, n_estimates: int, max_clusters: int, n_jobs: int) -> int:
        """Bytes :meth:`losses` allocates for ``n_estimates`` partitions of up to ``max_clusters``
        clusters on ``n_jobs`` threads: by default one search state per thread used (the routes
        whose evaluation differs say so)."""
        return self.memory_bytes(max(1, min(n_jobs, n_estimates)), max_clusters)

    def check_losses_memory(self, m: int, max_clusters: int, n_jobs: int, limit: int) -> None:
        """MemoryError, up front, when :meth:`losses` of ``m`` partitions of up to
        ``max_clusters`` clusters would allocate more than ``limit`` bytes."""
        need = self.losses_bytes(m, max_clusters, n_jobs)
        if need > limit:
            raise MemoryError(
                f"evaluating {m} partition{'s' if m != 1 else ''} needs about {byte_size(need)} "
                f"({self.engine} engine, {n_jobs} thread{'s' if n_jobs != 1 else ''}), more than "
                f"memory_limit={limit} bytes; lower n_jobs or raise memory_limit"
            )

    # What Dask ships: the payload is scattered to the workers once, the route without it goes
    # with every task and is bound to the worker's copy there.

    def check_shippable(self) -> None:
        """Raise if this route cannot run on a Dask cluster (all but the callback route can)."""
        return None

    @abc.abstractmethod
    def payload(self, n_jobs: int) -> Any:
        """The data the engine searches (built on first use)."""

    @abc.abstractmethod
    def with_payload(self, payload: Any) -> "Route":
        """This route searching ``payload`` (a copy; None drops it, for shipping)."""
