"""The PSM route: losses computed from the posterior similarity matrix alone."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Optional, Union

import numpy as np

from .. import _core
from .._validation import byte_size
from ..io import PSM, Draws
from .base import Route, psm_bytes, psm_matrix

__all__ = ["PSMRoute"]


@dataclasses.dataclass
class PSMRoute(Route):
    """``kind`` ("binder", "VI.lb", "omARI.approx") with unit costs ``a``, ``b``, on a PSM given
    or built from the draws (once, on first use)."""

    truth: Union[Draws, PSM, None]
    kind: str
    a: float = 1.0
    b: float = 1.0
    loss_scale: float = 1.0
    matrix: Optional[np.ndarray] = dataclasses.field(default=None, repr=False)

    engine = "psm"

    @property
    def scale(self) -> float:
        return self.loss_scale

    def _n(self) -> int:
        if self.truth is None:  # pragma: no cover - only shipped routes lack it
            raise RuntimeError("route without its truth")
        return self.truth.n_items

    def memory_bytes(self, threads: int, max_clusters: int) -> int:
        n = self._n()
        # The float64 n x n matrix built from draws, and each thread's state.
        square = 0 if isinstance(self.truth, PSM) else psm_bytes(n)
        return square + threads * (20 * n + 24 * max_clusters + 64)

    def memory_message(self, need: int, threads: int, max_clusters: int, limit: int) -> str:
        n = self._n()
        return (
            f"engine='psm' needs about {byte_size(need)} (the {n} x {n} matrix and "
            f"{threads} search states), more than memory_limit={limit} bytes; use a count-based "
            "loss (e.g. 'VI' or 'binder'), lower n_jobs, or raise memory_limit"
        )

    def payload(self, n_jobs: int) -> Any:
        if self.matrix is None:
            if isinstance(self.truth, PSM):
                self.matrix = self.truth.matrix
            else:
                assert self.truth is not None
                self.matrix = psm_matrix(self.truth, n_jobs)
        return self.matrix

    def with_payload(self, payload: Any) -> "PSMRoute":
        return dataclasses.replace(self, matrix=payload, truth=None if payload is None else self.truth)

    def search(self, options: Dict[str, Any]) -> Dict[str, Any]:
        matrix = self.payload(options.get("n_jobs", 1))
        return _core.salso_psm(matrix, self.kind, self.a, self.b, **options)

    def losses_bytes(self, n_estimates: int, max_clusters: int, n_jobs: int) -> int:
        n = self._n() if self.matrix is None else self.matrix.shape[0]
        square = 0 if self.matrix is not None or isinstance(self.truth, PSM) else psm_bytes(n)
        return square + max(1, min(n_jobs, n_estimates)) * (20 * n + 24 * max_clusters + 64)

    def losses(self, estimates: np.ndarray, n_jobs: int) -> np.ndarray:
        matrix = self.payload(n_jobs)
        values = np.asarray(_core.pairwise_losses(matrix, self.kind, self.a, self.b, estimates, n_jobs))
        return values * self.loss_scale
