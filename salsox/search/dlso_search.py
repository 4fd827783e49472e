"""DLSO: the draw with the smallest expected loss."""

from __future__ import annotations

import time
from typing import Any, Optional, Union

import numpy as np

from .._validation import as_label_matrix, byte_size, check_n_jobs, relabel_bytes, relabel_rows
from ..engine import check_limit, finite_losses
from ..io import Draws, aligned
from ..losses import Loss, get_loss
from ..metrics import as_truth
from .estimate import Estimate

__all__ = ["dlso"]

# Labels of the draws relabelled at once: a quarter of relabel_rows' own chunk keeps the
# temporaries (counted by relabel_bytes whether or not the draws need them) small beside the
# candidates themselves.
_CHUNK = 2**18


def dlso(
    draws: Any,
    loss: Union[str, Loss] = "VI",
    *,
    candidates: Any = None,
    n_jobs: Optional[int] = None,
    memory_limit: Optional[int] = None,
) -> Estimate:
    """The draw (or candidate) with the smallest Monte Carlo expected loss (Dahl 2006's
    least-squares idea).

    Parameters
    ----------
    draws : array-like (H, n), Draws, or PSM
        Posterior draws; a PSM (or bare similarity matrix) only with ``candidates`` and a loss
        a PSM determines.
    loss : str or Loss, default "VI"
    candidates : array-like (M, n) or (n,), or Estimate, optional
        The partitions to choose from (R's ``dlso(truth, loss, estimate=)``). Default: the
        draws themselves.
    n_jobs : int, optional
        Threads (default: the CPUs the process may use).
    memory_limit : int, optional
        Bytes the evaluation may allocate (the candidates taken from the draws, contingency
        tables, a PSM built from draws); more is a MemoryError up front. Default 16 GiB.

    Returns
    -------
    Estimate
        ``info["candidate"]`` is the row chosen (and ``info["draw"]`` the draw, without
        ``candidates``); the first of equal minimisers wins.

    Costs O(H M n) for count-based losses (M = H without ``candidates``).

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1], [0, 0, 1, 1]]
    >>> est = salsox.dlso(draws, "binder")     # the draw with the least expected loss
    >>> est.labels, est.info["draw"]
    (array([0, 0, 1, 1]), 0)
    """
    loss = get_loss(loss)
    jobs = check_n_jobs(n_jobs)
    limit = check_limit(memory_limit)
    truth = as_truth(draws, loss)
    if candidates is None and not isinstance(truth, Draws):
        raise ValueError("dlso needs draws, not a PSM, unless candidates= are given")
    start = time.perf_counter()
    route = loss._route(truth)
    if candidates is None:
        # The draws as int32 label rows (relabelled a chunk at a time), and their evaluation.
        h, n = truth.n_draws, truth.n_items  # type: ignore[union-attr]
        need = relabel_bytes(h, n, _CHUNK) + route.losses_bytes(h, int(truth._core.kmax), jobs)  # type: ignore[union-attr]
        if need > limit:
            raise MemoryError(
                f"dlso over the {h} draws needs about {byte_size(need)} (the draws as {h} x {n} label rows "
                f"and their evaluation), more than memory_limit={limit} bytes; raise memory_limit or give "
                "fewer candidates="
            )
        # Draws with sparse labels are stored relabelled in value order; the loss engines take
        # estimates labelled in order of first appearance.
        candidates = np.empty((h, n), dtype=np.int32)
        step = max(1, _CHUNK // n)  # rows relabelled a chunk at a time (see relabel_rows)
        for lo in range(0, h, step):
            rows = range(lo, min(h, lo + step))
            candidates[lo : lo + step] = relabel_rows(np.stack([truth.draw(r) for r in rows]))  # type: ignore[union-attr]
        from_draws = True
    else:
        # Candidates are matched to the draws' items by name (salsox.io.item_index).
        candidates = aligned(candidates, truth.item_names, truth.n_items, "candidates")
        candidates = as_label_matrix(candidates, "candidates", truth.n_items)[0]
        from_draws = False
        route.check_losses_memory(len(candidates), int(candidates.max(initial=0)) + 1, jobs, limit)
    values = finite_losses(route.losses(candidates, jobs), loss)
    best = int(np.argmin(values))
    labels, _ = as_label_matrix(candidates[best], "labels")
    labels = labels[0].astype(np.intp)
    info = {
        "candidate": best,
        "draw": best if from_draws else None,
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
