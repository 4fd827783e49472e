"""The callback route: general Python losses of contingency tables, called by the C++ search.

A :class:`salsox.plugins.ContingencyLoss` is searched by the engine's generic path, which
batches all draws and all candidate moves of one item into as few calls of the Python loss as
memory allows (at most ``MAX_BATCH_CELLS`` cells each).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, Optional

import numpy as np

from .. import _core
from .._validation import byte_size
from ..io import Draws
from ..registry import PluginError
from .base import Route

__all__ = ["CallbackRoute", "MAX_BATCH_CELLS", "PLUGIN_BATCH_COPIES", "table_function"]

# Largest batch of tables the generic path hands a loss at once (int64 cells, 32 MiB).
MAX_BATCH_CELLS = 1 << 22

# What memory_limit counts for a loss's own work on a batch: this many arrays of the batch's
# size (float64 or int64) held at once by the loss (docs/plugins.md states it).
PLUGIN_BATCH_COPIES = 1

# Losses this far below zero are rounding noise (clamped to 0); further below is an error.
_NEGATIVE_TOLERANCE = 1e-9


def table_function(evaluate: Callable[[Any], Any], vectorized: bool, who: str) -> Callable[[np.ndarray], np.ndarray]:
    """A loss of tables (``ContingencyLoss.loss``) wrapped for the engine: validated float64
    output, errors naming the plugin (``who``)."""

    def tables_loss(tables: np.ndarray) -> np.ndarray:
        count = tables.shape[0]
        try:
            raw = np.asarray(evaluate(tables) if vectorized else [evaluate(t) for t in tables])
            # Complex values would lose their imaginary part (with only a ComplexWarning).
            values = raw if raw.dtype.kind == "c" else np.array(raw, dtype=np.float64)
        except Exception as err:
            raise PluginError(f"{who}: loss() raised {type(err).__name__}: {err}") from err
        if values.dtype.kind == "c":
            raise PluginError(f"{who}: loss() returned complex values ({values.dtype}); losses must be real")
        if values.shape != (count,):
            raise PluginError(f"{who}: loss() returned shape {values.shape} for {count} tables, expected ({count},)")
        if not np.all(np.isfinite(values)):
            raise PluginError(f"{who}: loss() returned NaN or infinite values")
        if count and values.min() < 0.0:
            low = float(values.min())
            if low < -_NEGATIVE_TOLERANCE:
                raise PluginError(f"{who}: loss() returned a negative loss ({low!r}); losses must be >= 0")
            np.maximum(values, 0.0, out=values)
        return values

    return tables_loss



@dataclasses.dataclass
class CallbackRoute(Route):
    """A loss of contingency tables computed in Python (``tables_loss``: validated, see
    :func:`table_function`), on draws. Not available on Dask: the callback runs in this process."""

    draws: Optional[Draws]
    tables_loss: Callable[[np.ndarray], np.ndarray]
    loss_name: str
    who: str  # how errors name the loss

    engine = "python"

    def _draws(self) -> Draws:
        if self.draws is None:  # pragma: no cover - never shipped
            raise RuntimeError("route without its draws")
        return self.draws

    def _batch_bytes(self, columns: int, tables_per_draw: int) -> int:
        """One batch of the tables of every draw, ``tables_per_draw`` a draw, each padded to the
        most draw clusters x ``columns``: the int64 cells (at most MAX_BATCH_CELLS, unless one
        table is larger), what the loss holds while it works on them (PLUGIN_BATCH_COPIES arrays
        as large), and the draws' order and the losses (TableLayout)."""
        d = self._draws()
        table = int(d.max_clusters) * columns
        cells = min(max(MAX_BATCH_CELLS, table), d.n_draws * tables_per_draw * table)
        return 8 * cells * (1 + PLUGIN_BATCH_COPIES) + 24 * d.n_draws

    def memory_bytes(self, threads: int, max_clusters: int) -> int:
        """Per thread: its count tables (int32, every draw cluster x the estimate's slots, rows
        padded to a cache line) and one batch of an item's moves (max_clusters + 1 tables a
        draw, of max_clusters + 1 columns)."""
        d = self._draws()
        rows = int(np.sum(d.clusters_per_draw, dtype=np.int64))
        slots = max_clusters + 1
        tables = 4 * rows * (-(-slots // 16) * 16)
        return threads * (tables + self._batch_bytes(slots, slots) + 16 * d.n_items)

    def losses_bytes(self, n_estimates: int, max_clusters: int, n_jobs: int) -> int:
        """Given estimates are evaluated on the calling thread, each batch's tables counted
        straight from the draws (no count tables): one batch of one table a draw, and the losses."""
        return self._batch_bytes(max(1, max_clusters), 1) + 8 * n_estimates

    def memory_message(self, need: int, threads: int, max_clusters: int, limit: int) -> str:
        return (
            f"the search needs about {byte_size(need)} of count tables and table batches "
            f"({threads} threads), more than memory_limit={limit} bytes; lower max_clusters or "
            "n_jobs, or raise memory_limit"
        )

    def search(self, options: Dict[str, Any]) -> Dict[str, Any]:
        # Python callbacks run under the GIL: no threads inside a run here.
        opts = {k: v for k, v in options.items() if k != "inner_threads"}
        return _core.salso_callback(self._draws()._core, self.tables_loss, max_cells=MAX_BATCH_CELLS, **opts)

    def losses(self, estimates: np.ndarray, n_jobs: int) -> np.ndarray:
        est = np.ascontiguousarray(estimates, dtype=np.int32)
        values = np.asarray(_core.callback_losses(self._draws()._core, self.tables_loss, est, MAX_BATCH_CELLS))
        if not np.all(np.isfinite(values)):  # finite losses whose sum over the draws overflowed
            bad = float(values[~np.isfinite(values)][0])
            raise PluginError(
                f"{self.who}: the expected loss is {bad!r}: its losses are too large to sum over the draws"
            )
        return values

    def check_shippable(self) -> None:
        raise ValueError(f"loss {self.loss_name!r} runs in Python and cannot be sent to a Dask cluster")

    def payload(self, n_jobs: int) -> Any:
        return self._draws()

    def with_payload(self, payload: Any) -> "CallbackRoute":
        return dataclasses.replace(self, draws=payload)
