"""Base classes of plugin losses (re-exported by :mod:`salsox.plugins`).

* :class:`DecomposableLoss` -- the loss is a sum of a function of each draw cluster's size,
  of each estimate cluster's size and of each contingency-table cell (the form of Binder and
  VI): a :class:`~salsox.plugins.CountSumLoss` with the additive formula
  ``draw_term + estimate_term + cell_term``. The engine tabulates the three functions once
  for counts 0..n and then searches at native speed (the tabulated losses).
* :class:`ContingencyLoss` -- any function of the contingency table between the estimate and a
  draw. The C++ search calls it, batched over draws and candidate moves, through a slower
  generic path (the callback route).
"""

from __future__ import annotations

import abc
from typing import Any, Dict, Mapping, Optional, cast

import numpy as np

from ..engine import CallbackRoute, Route, table_function
from ..registry import loss_label
from .base import Loss, _needs_draws
from .countsum import CountSumLoss

__all__ = ["DecomposableLoss", "ContingencyLoss"]


class DecomposableLoss(CountSumLoss):
    """Base class of losses that decompose over counts, evaluated at native speed.

    The loss between a draw with clusters S and an estimate with clusters T of n items is::

        sum_S draw_term(|S|) + sum_T estimate_term(|T|) + sum_{S,T} cell_term(|S n T|)

    Subclasses set ``name`` and implement the three methods as vectorised numpy functions of
    an integer array of counts and of n; each must be 0 at count 0 (empty clusters and cells
    contribute nothing). The loss must be >= 0, and 0 when the partitions are equal.

    This is a :class:`~salsox.plugins.CountSumLoss` with three sums (``draw_term``,
    ``estimate_term`` and ``cell_term``, each its method) and the formula
    ``draw_term + estimate_term + cell_term``, kept as a convenience: a subclass defines its
    own ``__init__`` and ``params`` (as any :class:`~salsox.losses.Loss`), and does not call
    ``CountSumLoss.__init__``. The terms are evaluated once per search for counts 0..n and
    checked as a count sum's are: finite, 0 at 0, zero loss of a few partitions against
    themselves, not negative between the one-cluster and all-singletons partitions, and small
    enough not to overflow; every per-draw loss of a reported value (``expected_loss``,
    :func:`salsox.partition_loss`) must then be >= 0. Failures raise :class:`PluginError`.

    Examples
    --------
    >>> class HalfBinder(salsox.plugins.DecomposableLoss):
    ...     # Binder's loss with a = b = 0.5, written as a plugin
    ...     name = "half-binder"
    ...     def draw_term(self, counts, n):
    ...         return 0.5 * (counts / n) ** 2
    ...     def estimate_term(self, counts, n):
    ...         return 0.5 * (counts / n) ** 2
    ...     def cell_term(self, counts, n):
    ...         return -(counts / n) ** 2
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1]]
    >>> ours = salsox.partition_loss([0, 0, 1, 1], draws, HalfBinder())
    >>> bool(np.isclose(ours, salsox.partition_loss([0, 0, 1, 1], draws, salsox.Binder(0.5, 0.5))))
    True
    >>> salsox.salso(draws, HalfBinder(), seed=1).labels    # as salso(draws, "binder")
    array([0, 0, 1, 2])
    """

    sums = {
        "draw_term": ("draw", "draw_term"),
        "estimate_term": ("estimate", "estimate_term"),
        "cell_term": ("cell", "cell_term"),
    }
    formula = "draw_term + estimate_term + cell_term"

    def __init__(self) -> None:
        """Subclasses take their own parameters (see :attr:`params`); the formula is compiled
        when first used."""

    @abc.abstractmethod
    def draw_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        """Contribution of a draw cluster of each size in ``counts``."""

    @abc.abstractmethod
    def estimate_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        """Contribution of an estimate cluster of each size in ``counts``."""

    @abc.abstractmethod
    def cell_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        """Contribution of a contingency-table cell of each count in ``counts``."""

    # Parameters, equality and repr as for any Loss (a subclass's params property), not from
    # a count sum's formula parameters.
    @property
    def params(self) -> Dict[str, float]:
        return {}

    def with_params(self, **values: float) -> "DecomposableLoss":
        # Rebuilt as type(self)(**params), so a DecomposableLoss.
        return cast("DecomposableLoss", Loss.with_params(self, **values))

    __repr__ = Loss.__repr__
    __eq__ = Loss.__eq__
    __hash__ = Loss.__hash__

    def _formula_params(self) -> Mapping[str, float]:
        return {}  # the formula has none: the terms read the subclass's own attributes

    def _sum_label(self, key: str) -> str:
        return key  # the method's name: "cell_term raised ..."


class ContingencyLoss(Loss):
    """Base class of general losses: any function of the contingency table.

    Subclasses set ``name`` and implement :meth:`loss`. With ``vectorized = True`` (the
    default) it receives a batch of tables, int64 of shape (B, R, C) with draw clusters as rows
    and estimate clusters as columns, and returns B losses; the engine batches all draws and
    all candidate moves of one item into as few calls as memory allows (at most
    ``MAX_BATCH_CELLS`` cells each). With ``vectorized = False`` it receives one (R, C) table
    and returns a float, and the engine loops in Python: correct, but very slow.

    Tables may contain zero rows and columns (padding, empty clusters), which must not change
    the value, and during the search they may cover only some of the items (partial
    allocations), so compute n as ``tables.sum()`` per table, not from the data. The batch is
    read-only and reused after the call: copy it to keep it. Losses must be finite and >= 0
    (values above -1e-9 are taken as rounding and clamped to 0).

    Examples
    --------
    >>> class PairsApart(salsox.plugins.ContingencyLoss):
    ...     # twice the fraction of pairs on which the partitions disagree (Binder's), from the table
    ...     name = "pairs-apart"
    ...     def loss(self, tables):
    ...         n = tables.sum(axis=(1, 2)).astype(float)
    ...         rows = (tables.sum(axis=2) ** 2).sum(axis=1)
    ...         cols = (tables.sum(axis=1) ** 2).sum(axis=1)
    ...         cells = (tables ** 2).sum(axis=(1, 2))
    ...         return (rows + cols - 2 * cells) / n ** 2
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1]]
    >>> salsox.salso(draws, PairsApart(), n_runs=2, seed=1).labels    # as salso(draws, "binder")
    array([0, 0, 1, 2])
    """

    vectorized: bool = True

    @abc.abstractmethod
    def loss(self, tables: np.ndarray) -> Any:
        """Losses of ``tables`` (int64, (B, R, C) -> (B,), or (R, C) -> float if not vectorized)."""

    def _route(self, truth: Any, engine: Optional[str] = None) -> Route:
        _needs_draws(self, truth)
        if engine is not None:
            raise ValueError(f"engine applies to built-in count-based losses, not to {self.name!r}")
        who = _loss_label(self)
        tables_loss = table_function(self.loss, bool(getattr(self, "vectorized", True)), who)
        return CallbackRoute(truth, tables_loss, self.name, who)


def _loss_label(loss: Loss) -> str:
    """How errors name a loss: its name and the plugin providing it."""
    return loss_label(loss.name, type(loss).__name__)
