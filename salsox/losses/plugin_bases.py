"""Base classes of plugin losses (re-exported by :mod:`salsox.plugins`).

* :class:`DecomposableLoss` -- the loss is a sum of a function of each draw cluster's size,
  of each estimate cluster's size and of each contingency-table cell (the form of Binder and
  VI). The engine tabulates the three functions once for counts 0..n and then searches at
  native speed (the count-table route).
* :class:`ContingencyLoss` -- any function of the contingency table between the estimate and a
  draw. The C++ search calls it, batched over draws and candidate moves, through a slower
  generic path (the callback route).
"""

from __future__ import annotations

import abc
from typing import Any, Optional

import numpy as np

from .. import _core
from ..engine import CallbackRoute, Route, table_function
from ..registry import PluginError, loss_label
from .base import CountLoss, Loss, _needs_draws

__all__ = ["DecomposableLoss", "ContingencyLoss"]

# Largest loss a decomposable plugin may reach: sums of it over ~1e18 draws stay finite.
_MAX_LOSS_BOUND = 1e290



class DecomposableLoss(CountLoss):
    """Base class of losses that decompose over counts, evaluated at native speed.

    The loss between a draw with clusters S and an estimate with clusters T of n items is::

        sum_S draw_term(|S|) + sum_T estimate_term(|T|) + sum_{S,T} cell_term(|S n T|)

    Subclasses set ``name`` and implement the three methods as vectorised numpy functions of
    an integer array of counts and of n; each must be 0 at count 0 (empty clusters and cells
    contribute nothing). The loss must be >= 0, and 0 when the partitions are equal.

    The terms are evaluated once per search for counts 0..n and checked: finite, 0 at 0, a
    partition at zero loss from itself and non-negative losses between the one-cluster and
    all-singletons partitions. Failures raise :class:`PluginError`.

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

    @abc.abstractmethod
    def draw_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        """Contribution of a draw cluster of each size in ``counts``."""

    @abc.abstractmethod
    def estimate_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        """Contribution of an estimate cluster of each size in ``counts``."""

    @abc.abstractmethod
    def cell_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        """Contribution of a contingency-table cell of each count in ``counts``."""

    def _count_loss(self, n: int) -> "_core.CountLoss":
        who = _loss_label(self)
        counts = np.arange(n + 1, dtype=np.int64)
        tables = []
        for method in ("draw_term", "estimate_term", "cell_term"):
            try:
                values = np.asarray(getattr(self, method)(counts, n), dtype=np.float64)
            except Exception as err:
                raise PluginError(f"{who}: {method} raised {type(err).__name__}: {err}") from err
            if values.shape != counts.shape:
                raise PluginError(f"{who}: {method} returned shape {values.shape}, expected {counts.shape}")
            if not np.all(np.isfinite(values)):
                raise PluginError(f"{who}: {method} returned NaN or infinite values")
            if values[0] != 0.0:
                raise PluginError(f"{who}: {method}(0) must be 0, got {values[0]!r}")
            tables.append(values)
        # Any loss is a sum of at most n terms of each kind: bounded by n * (the three largest
        # terms). Far below the float range, no sum the engine forms (over draws too) overflows
        # to inf or NaN.
        bound = float(n) * sum(float(np.max(np.abs(t))) for t in tables)
        if not bound <= _MAX_LOSS_BOUND:
            raise PluginError(
                f"{who}: terms this large (losses up to {bound:.3g} for n = {n}) overflow; "
                f"n * (max |draw_term| + max |estimate_term| + max |cell_term|) must be at most {_MAX_LOSS_BOUND:.0e}"
            )
        _check_decomposition(who, n, *tables)
        return _core.CountLoss.tabulated(*(t.tolist() for t in tables))


def _check_decomposition(who: str, n: int, g_draw: np.ndarray, g_est: np.ndarray, g_cell: np.ndarray) -> None:
    """Cheap sanity checks of a decomposable loss on the two extreme partitions."""
    scale = max(1.0, float(np.max(np.abs(np.concatenate([g_draw, g_est, g_cell])))) * n)
    tol = 1e-9 * scale
    same_one = g_draw[n] + g_est[n] + g_cell[n]
    same_singletons = n * (g_draw[1] + g_est[1] + g_cell[1])
    for what, value in (("one cluster", same_one), ("all singletons", same_singletons)):
        if abs(value) > tol:
            raise PluginError(f"{who}: the loss of {what} against itself is {float(value)!r}, not 0")
    one_vs_singletons = g_draw[n] + n * g_est[1] + n * g_cell[1]
    singletons_vs_one = n * g_draw[1] + g_est[n] + n * g_cell[1]
    for what, value in (
        ("estimate all singletons, draw one cluster", one_vs_singletons),
        ("estimate one cluster, draw all singletons", singletons_vs_one),
    ):
        if value < -tol:
            raise PluginError(f"{who}: negative loss {float(value)!r} ({what})")


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
