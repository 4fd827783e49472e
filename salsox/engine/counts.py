"""Count-table routes: the contingency-table engine, and co-clustering counts for Binder."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from .. import _core
from .._validation import byte_size
from ..io import Draws
from .base import Route, check_square_memory

__all__ = ["CountsRoute", "CoclusteringRoute"]

CountLossFactory = Callable[[int], "_core.CountLoss"]


@dataclasses.dataclass
class CountsRoute(Route):
    """A loss tabulated by the engine (built-ins and decomposable plugins), on draws."""

    draws: Optional[Draws]
    count_loss: CountLossFactory  # n -> the engine's tabulated loss
    loss_scale: float = 1.0

    engine = "counts"

    @property
    def scale(self) -> float:
        return self.loss_scale

    def _draws(self) -> Draws:
        if self.draws is None:  # pragma: no cover - a shipped route is always bound first
            raise RuntimeError("route without its draws")
        return self.draws

    def memory_bytes(self, threads: int, max_clusters: int) -> int:
        d = self._draws()
        return threads * int(_core.count_table_bytes(d._core, max_clusters, self.count_loss(d.n_items)))

    def memory_message(self, need: int, threads: int, max_clusters: int, limit: int) -> str:
        d = self._draws()
        return (
            f"the search needs about {byte_size(need)} of count tables ({threads} threads x "
            f"{d._core.kmax} draw clusters x {max_clusters} estimate clusters x {d.n_draws} draws), "
            f"more than memory_limit={limit} bytes; lower max_clusters or n_jobs, or raise memory_limit"
        )

    def search(self, options: Dict[str, Any]) -> Dict[str, Any]:
        d = self._draws()
        return _core.salso_counts(d._core, self.count_loss(d.n_items), **options)

    def losses(self, estimates: np.ndarray, n_jobs: int) -> np.ndarray:
        d = self._draws()
        values = np.asarray(_core.expected_losses(d._core, self.count_loss(d.n_items), estimates, n_jobs))
        return values * self.loss_scale

    def losses_bytes(self, n_estimates: int, max_clusters: int, n_jobs: int) -> int:
        return int(_core.expected_losses_bytes(self._draws()._core, max_clusters, n_estimates, n_jobs))

    def payload(self, n_jobs: int) -> Any:
        return self._draws()

    def with_payload(self, payload: Any) -> "CountsRoute":
        return dataclasses.replace(self, draws=payload)


@dataclasses.dataclass
class CoclusteringRoute(CountsRoute):
    """Binder searched with exact co-clustering counts (O(n) per move, an n x n matrix);
    evaluated with count tables, like :class:`CountsRoute`."""

    unit_costs: Tuple[float, float] = (1.0, 1.0)
    counts: Optional[Tuple[np.ndarray, int]] = dataclasses.field(default=None, repr=False)

    engine = "coclustering"

    def memory_bytes(self, threads: int, max_clusters: int) -> int:
        n = self._draws().n_items
        # The int32 n x n counts, and each thread's state (a few arrays of n and of max_clusters).
        return 4 * n * n + threads * (20 * n + 24 * max_clusters + 64)

    def memory_message(self, need: int, threads: int, max_clusters: int, limit: int) -> str:
        n = self._draws().n_items
        return (
            f"engine='coclustering' needs about {byte_size(need)} (the {n} x {n} matrix and "
            f"{threads} search states), more than memory_limit={limit} bytes; use a count-based "
            "loss (e.g. 'VI' or 'binder'), lower n_jobs, or raise memory_limit"
        )

    def payload(self, n_jobs: int) -> Any:
        if self.counts is None:
            d = self._draws()
            check_square_memory(d.n_items, "engine='coclustering'")
            self.counts = (_core.coclustering(d._core, n_jobs), d.n_draws)
        return self.counts

    def with_payload(self, payload: Any) -> "CoclusteringRoute":
        return dataclasses.replace(self, counts=payload, draws=None if payload is None else self.draws)

    def search(self, options: Dict[str, Any]) -> Dict[str, Any]:
        co, h = self.payload(options.get("n_jobs", 1)) if self.counts is None else self.counts
        return _core.salso_coclustering_binder(co, h, *self.unit_costs, **options)
