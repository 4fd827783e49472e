"""The result of a search: :class:`Estimate`."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Optional, Union

import numpy as np

from ..io import PSM, Draws
from ..losses import Loss

__all__ = ["Estimate"]


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
        ``"random"`` or ``"initializer"``; ``initializer`` names the one used, if any), its
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

    def summary(
        self, draws: Any = None, *, exemplar: str = "similarity", order: str = "similarity",
        n_jobs: Optional[int] = None,
    ) -> Any:
        """Per-item and per-cluster summary under this loss, against the draws (or PSM) the
        estimate was computed from, or against ``draws`` when given.

        Returns a :class:`salsox.Summary`; see :func:`salsox.summarize` (``exemplar="score"``
        and ``order="score"`` or ``"hclust"`` give R's rules).
        """
        from ..summaries import summarize

        if draws is None:
            if self.truth is None:
                raise ValueError("this Estimate does not hold its draws; pass draws= to summary()")
            draws = self.truth
        return summarize(self.labels, draws, self.loss, exemplar=exemplar, order=order, n_jobs=n_jobs)

    def __repr__(self) -> str:
        return (
            f"Estimate(n_clusters={self.n_clusters}, expected_loss={self.expected_loss:.10g}, "
            f"loss={self.loss!r}, sizes={self.sizes.tolist()})"
        )
