"""DLSO: the draw with the smallest expected loss."""

from __future__ import annotations

import time
from typing import Any, Optional, Union

import numpy as np

from .._validation import as_label_matrix, check_n_jobs, relabel_rows
from ..io import Draws
from ..losses import Loss, get_loss
from ..metrics import as_truth
from .estimate import Estimate

__all__ = ["dlso"]


def dlso(draws: Any, loss: Union[str, Loss] = "VI", *, n_jobs: Optional[int] = None) -> Estimate:
    """The draw with the smallest Monte Carlo expected loss (Dahl 2006's least-squares idea).

    Costs O(H^2 n) for count-based losses: every draw is scored against all draws.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1], [0, 0, 1, 1]]
    >>> est = salsox.dlso(draws, "binder")     # the draw with the least expected loss
    >>> est.labels, est.info["draw"]
    (array([0, 0, 1, 1]), 0)
    """
    loss = get_loss(loss)
    truth = as_truth(draws, loss)
    if not isinstance(truth, Draws):
        raise ValueError("dlso needs draws, not a PSM")
    jobs = check_n_jobs(n_jobs)
    start = time.perf_counter()
    # Draws with sparse labels are stored relabelled in value order; the loss engines take
    # estimates labelled in order of first appearance.
    candidates = relabel_rows(np.stack([truth.draw(h) for h in range(truth.n_draws)]))
    values = loss._route(truth).losses(candidates, jobs)
    best = int(np.argmin(values))
    labels, _ = as_label_matrix(candidates[best], "labels")
    labels = labels[0].astype(np.intp)
    info = {
        "draw": best,
        "seconds": time.perf_counter() - start,
        "loss": loss.name,
        "loss_params": loss.params,
        "engine": "dlso",
    }
    return Estimate(
        labels=labels,
        expected_loss=float(values[best]),
        n_clusters=int(labels.max()) + 1,
        loss=loss,
        info=info,
        truth=truth,
    )
