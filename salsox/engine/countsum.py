"""The count-sum route: a loss given as a formula in per-draw count sums (CountSumLoss),
searched and evaluated by the engine's count-sum state (countsum_state.hpp)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Dict

import numpy as np

from .. import _core
from ..registry import PluginError
from .counts import CountsRoute

__all__ = ["CountSumRoute"]

# Per-draw losses this far below zero are rounding noise; further below is an error.
NEGATIVE_TOLERANCE = 1e-9


@dataclasses.dataclass
class CountSumRoute(CountsRoute):
    """A :class:`~salsox.plugins.CountSumLoss` on draws: count tables plus running per-draw sums;
    every evaluated per-draw loss is checked (>= 0 and finite)."""

    engine = "counts"  # the count-table engine, with a count-sum state

    def memory_bytes(self, threads: int, max_clusters: int) -> int:
        d = self._draws()
        return threads * int(_core.countsum_bytes(d._core, max_clusters, self.count_loss(d.n_items)))

    def search(self, options: Dict[str, Any]) -> Dict[str, Any]:
        d = self._draws()
        return _core.salso_countsum(d._core, self.count_loss(d.n_items), **options)

    def losses(self, estimates: np.ndarray, n_jobs: int) -> np.ndarray:
        """Expected losses of the canonical rows ``estimates``; a negative or non-finite per-draw
        loss is a :class:`~salsox.plugins.PluginError` showing the table."""
        d = self._draws()
        compiled = self.count_loss(d.n_items)
        est = np.ascontiguousarray(estimates, dtype=np.int32)
        values, bad = _core.countsum_losses(d._core, compiled, est, n_jobs, NEGATIVE_TOLERANCE)
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
