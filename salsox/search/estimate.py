"""The result of a search: :class:`Estimate`."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Optional, Union

import numpy as np

from ..io import PSM, Draws, labels_series
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
    from, so that :meth:`summary` needs no arguments; it is not copied and not shown. Item
    names given with the draws (DataFrame columns, xarray coordinates, a file's header) are
    in :attr:`item_names`.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1]]
    >>> est = salsox.salso(draws, "VI", seed=1)
    >>> est.labels, est.n_clusters, est.sizes
    (array([0, 0, 1, 2]), 3, array([2, 1, 1]))
    >>> round(est.expected_loss, 4)
    0.3962
    >>> import pandas as pd
    >>> named = salsox.salso(pd.DataFrame(draws, columns=list("wxyz")), seed=1)
    >>> named.to_series().to_dict()
    {'w': 0, 'x': 0, 'y': 1, 'z': 2}
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
        return summarize(self, draws, self.loss, exemplar=exemplar, order=order, n_jobs=n_jobs)

    @property
    def item_names(self) -> Optional[np.ndarray]:
        """Names of the items, from the draws (or PSM) searched; None when they had none."""
        return getattr(self.truth, "item_names", None)

    @property
    def item_dim(self) -> str:
        """Name of the item dimension: an xarray input's, else ``"item"``."""
        return getattr(self.truth, "item_dim", None) or "item"

    def to_series(self, name: str = "cluster") -> Any:
        """The labels as a ``pandas.Series`` indexed by item name (by position when unknown).

        Needs pandas (imported only here).
        """
        return labels_series(self.labels, self.item_names, name, self.item_dim)

    def to_dataframe(self) -> Any:
        """One row per item (indexed as :meth:`to_series`): its ``cluster`` and that cluster's
        ``size``. Needs pandas."""
        frame = self.to_series().to_frame()
        frame["size"] = self.sizes[self.labels]
        return frame

    def to_xarray(self, name: str = "cluster") -> Any:
        """The labels as an ``xarray.DataArray`` over the item dimension, with the item names
        as its coordinate when known; the loss and expected loss are in its ``attrs``.

        Needs xarray (``pip install "salsox[xarray]"``, imported only here).
        """
        try:
            import xarray as xr
        except ImportError:
            raise ImportError('Estimate.to_xarray() needs xarray: pip install "salsox[xarray]"') from None
        dim = self.item_dim
        names = self.item_names
        coords = None if names is None else {dim: np.asarray(names)}
        attrs = {"loss": repr(self.loss), "expected_loss": self.expected_loss, "n_clusters": self.n_clusters}
        return xr.DataArray(np.asarray(self.labels), dims=(dim,), coords=coords, name=name, attrs=attrs)

    def _repr_html_(self) -> str:
        from ..summaries.display import html_block, html_table, items_preview

        rows = [
            (k, size, items_preview(np.flatnonzero(self.labels == k), self.item_names))
            for k, size in enumerate(self.sizes.tolist())
        ]
        title = (
            f"Estimate: {self.n_clusters} clusters of {self.labels.shape[0]} items, "
            f"expected {self.loss!r} loss {self.expected_loss:.6g}"
        )
        return html_block(title, html_table(("cluster", "size", "items"), rows))

    def __repr__(self) -> str:
        return (
            f"Estimate(n_clusters={self.n_clusters}, expected_loss={self.expected_loss:.10g}, "
            f"loss={self.loss!r}, sizes={self.sizes.tolist()})"
        )
