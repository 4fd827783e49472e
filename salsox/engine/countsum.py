"""The count-sum route: a loss given as a formula in per-draw count sums (CountSumLoss, and
DecomposableLoss, an additive one), searched by the engine's count-sum state
(countsum_state.hpp) or, for an additive formula, by its tabulated losses (count_table.hpp), and
evaluated with a check of every per-draw loss."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Dict, Optional

import numpy as np

from .. import _core
from .._cpus import cpu_info
from ..registry import PluginError
from .counts import CountsRoute

__all__ = ["CountSumRoute", "CompiledCountSum"]

# Per-draw losses this far below zero are rounding noise; further below is an error.
NEGATIVE_TOLERANCE = 1e-9


@dataclasses.dataclass(frozen=True)
class CompiledCountSum:
    """A count-sum loss compiled for the n items of one search."""

    #: The formula (``_core.CountSumLoss``): every reported loss is evaluated, per draw, with it.
    formula: Any
    #: An additive formula's tabulated form (``_core.CountLoss``), which the search runs on.
    tabulated: Optional[Any] = None
    #: Per-draw losses below minus this are an error (rounding scales with the terms).
    tolerance: float = NEGATIVE_TOLERANCE


@dataclasses.dataclass
class CountSumRoute(CountsRoute):
    """A count-sum loss on draws: count tables plus running per-draw sums (or, for an additive
    formula, the tabulated losses' count tables); every evaluated per-draw loss is checked
    (>= 0 and finite). The loss is compiled once per route, that is once per search."""

    # n -> the loss compiled for n items (CompiledCountSum)
    count_loss: Callable[[int], Any]
    compiled_loss: Optional[CompiledCountSum] = dataclasses.field(default=None, init=False, repr=False)

    engine = "counts"  # the count-table engine, with a count-sum state or a tabulated loss

    def compiled(self) -> CompiledCountSum:
        """The loss compiled for the draws' n items (on the first call; not shipped to Dask)."""
        if self.compiled_loss is None:
            self.compiled_loss = self.count_loss(self._draws().n_items)
        return self.compiled_loss

    def memory_bytes(self, threads: int, max_clusters: int) -> int:
        d, c = self._draws(), self.compiled()
        if c.tabulated is not None:
            return threads * int(_core.count_table_bytes(d._core, max_clusters, c.tabulated))
        return threads * int(_core.countsum_bytes(d._core, max_clusters, c.formula))

    def losses_bytes(self, n_estimates: int, max_clusters: int, n_jobs: int) -> int:
        """Each thread's block of contingency tables (at most 64 draws' and 1 MiB, or one
        draw's when larger; see draw_blocks.hpp) and that block's per-draw losses, plus every
        draw's loss when fewer estimates than threads split one estimate's draws."""
        d = self._draws()
        table = 4 * max(1, int(d._core.kmax)) * max(1, max_clusters)
        block_draws = max(1, min(64, (1 << 20) // table))
        threads = max(1, min(n_jobs, cpu_info().affinity))  # the engine's loops take no more
        split = 8 * d.n_draws if n_estimates < threads else 0
        return threads * (block_draws * (table + 8) + 1024) + split + 8 * n_estimates

    def search(self, options: Dict[str, Any]) -> Dict[str, Any]:
        d, c = self._draws(), self.compiled()
        if c.tabulated is not None:
            return _core.salso_counts(d._core, c.tabulated, **options)
        return _core.salso_countsum(d._core, c.formula, **options)

    def losses(self, estimates: np.ndarray, n_jobs: int) -> np.ndarray:
        """Expected losses of the canonical rows ``estimates``; a negative or non-finite per-draw
        loss is a :class:`~salsox.plugins.PluginError` showing the table."""
        d = self._draws()
        compiled = self.compiled().formula
        est = np.ascontiguousarray(estimates, dtype=np.int32)
        values, bad = _core.countsum_losses(d._core, compiled, est, n_jobs, self.compiled().tolerance)
        if bad is not None:
            row, h, value = bad
            what = "negative" if math.isfinite(value) else "non-finite"
            raise PluginError(
                f"{compiled.label}: {what} loss {value!r} against draw {h} (a loss must be >= 0, and 0 when "
                f"the estimate equals the draw); {_table_text(est[row], np.asarray(d.draw(h)))}"
            )
        return np.asarray(values)


def _table_text(est: np.ndarray, draw: np.ndarray) -> str:
    """The contingency table of one estimate and one draw, for error messages."""
    ke, kd = int(est.max()) + 1, int(draw.max()) + 1
    cells = np.zeros((kd, ke), dtype=np.int64)
    np.add.at(cells, (draw, est), 1)
    with np.printoptions(threshold=400, linewidth=100):
        return (
            f"estimate cluster sizes {np.bincount(est, minlength=ke)}, draw cluster sizes "
            f"{np.bincount(draw, minlength=kd)}, cells (draw clusters x estimate clusters)\n{cells}"
        )
