"""Choosing the costs: find the Binder or VI cost ``a`` that gives a wanted number of clusters.

For fixed ``b``, Dahl, Johnson & Mueller (2022, section 4) note that ``a -> 0`` gives every
item its own cluster and ``a -> infinity`` puts all items in one cluster, and that the number
of clusters of the estimate falls as ``a`` grows. :func:`tune` brackets the wanted number of
clusters by doubling or halving ``a`` from ``a = b``, then bisects on ``log a``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Dict, List, Optional, Tuple

from .._validation import check_cost, check_int, check_seed
from ..io import Draws
from ..losses import VI, Binder
from .estimate import Estimate
from .salso_search import salso

__all__ = ["TuneResult", "tune"]

# a is searched within [b / _SPAN, b * _SPAN]: far beyond where the estimate stops changing.
_SPAN = 2.0**40


@dataclasses.dataclass(frozen=True, eq=False)
class TuneResult:
    """Result of :func:`tune`.

    Attributes
    ----------
    a, b : float
        The costs found (``b`` as given).
    loss : Binder or VI
        ``Binder(a, b)`` or ``VI(a, b)``.
    estimate : Estimate
        The estimate under that loss, with the wanted number of clusters.
    history : list of dict
        Every evaluation, in order: ``a``, ``n_clusters``, ``expected_loss``.
    seed : int
        The seed every search used (each ``a`` is searched with the same seed).

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> res = salsox.tune(example_draws().draws, "VI", 6, seed=1)
    >>> res.estimate.n_clusters, res.a < 1         # a < b: more clusters than VI's default
    (6, True)
    >>> len(res.history) > 0
    True
    """

    a: float
    b: float
    loss: Any
    estimate: Estimate
    history: List[Dict[str, float]]
    seed: int

    def __repr__(self) -> str:
        return (
            f"TuneResult(loss={self.loss!r}, n_clusters={self.estimate.n_clusters}, "
            f"expected_loss={self.estimate.expected_loss:.6g}, evaluations={len(self.history)})"
        )


def tune(
    draws: Any,
    loss: str = "binder",
    n_clusters: Optional[int] = None,
    *,
    b: float = 1.0,
    max_clusters: Optional[int] = None,
    rtol: float = 1e-4,
    max_evaluations: int = 60,
    n_runs: int = 16,
    seed: Optional[int] = None,
    n_jobs: Optional[int] = None,
    **salso_options: Any,
) -> TuneResult:
    """Find the cost ``a`` (with ``b`` fixed) whose SALSO estimate has ``n_clusters`` clusters.

    Parameters
    ----------
    draws : array-like (H, n), Draws, xarray DataArray or (InferenceData, name)
        Posterior draws of the partition.
    loss : {"binder", "VI"}, default "binder"
        The generalised loss whose cost ``a`` is tuned.
    n_clusters : int
        Wanted number of clusters, 1 <= n_clusters <= n.
    b : float, default 1.0
        The fixed cost of joining items that are apart in the truth.
    max_clusters : int, optional
        Cap passed to :func:`salso` (default: the larger of ``n_clusters`` and the most clusters
        in any draw, so that the wanted number can always be formed).
    rtol : float, default 1e-4
        Bisection stops when the bracket ``[a_lo, a_hi]`` satisfies ``a_hi / a_lo < 1 + rtol``.
    max_evaluations : int, default 60
        Cap on the number of searches.
    n_runs, seed, n_jobs, **salso_options
        Passed to :func:`salso`. The same seed is used for every ``a`` (a fresh one when
        None), so the number of clusters is a deterministic function of ``a``.

    Returns
    -------
    TuneResult

    Raises
    ------
    ValueError
        When ``n_clusters`` cannot be reached: it exceeds the number of items or
        ``max_clusters``, or the number of clusters jumps over it as ``a`` varies (the message
        gives the two ``a`` values and cluster counts on either side).

    Notes
    -----
    The search is heuristic, so the number of clusters is only nearly monotone in ``a``;
    bisection still ends, at an ``a`` giving ``n_clusters`` or with the error above.
    Each evaluation is one :func:`salso` call: O(log(1/rtol)) searches in all.

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> res = salsox.tune(example_draws().draws, "binder", 3, seed=1)    # Binder's a for 3 clusters
    >>> res.estimate.n_clusters, res.loss.b
    (3, 1.0)
    """
    if not isinstance(loss, str) and not isinstance(loss, type):
        loss = getattr(loss, "name", loss)
    if not isinstance(loss, str) or loss.lower() not in ("binder", "vi"):
        raise ValueError(f"loss must be 'binder' or 'VI', got {loss!r}")
    family = Binder if loss.lower() == "binder" else VI
    if n_clusters is None:
        raise TypeError("n_clusters is required: the number of clusters wanted")
    b = check_cost("b", b)
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float)) or not (0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1), got {rtol!r}")
    max_evaluations = check_int("max_evaluations", max_evaluations, minimum=2)
    truth = Draws(draws)  # xarray / ArviZ inputs too, with their item names
    n = truth.n_items
    target = check_int("n_clusters", n_clusters, minimum=1)
    if target > n:
        raise ValueError(f"n_clusters={target} is unreachable: there are only {n} items")
    if max_clusters is None:
        cap = max(target, truth.max_clusters)
    else:
        cap = min(check_int("max_clusters", max_clusters, minimum=1), n)
        if target > cap:
            raise ValueError(f"n_clusters={target} is unreachable with max_clusters={cap}; raise max_clusters")
    seed = check_seed(seed)

    history: List[Dict[str, float]] = []
    cache: Dict[float, Estimate] = {}

    def evaluate(a: float) -> Estimate:
        if a not in cache:
            if len(history) >= max_evaluations:
                raise ValueError(
                    f"n_clusters={target} not reached within max_evaluations={max_evaluations} searches; "
                    f"last tried: {_tried(history)}"
                )
            est = salso(
                truth, family(a=a, b=b), max_clusters=cap, n_runs=n_runs, seed=seed, n_jobs=n_jobs, **salso_options
            )
            cache[a] = est
            history.append({"a": a, "n_clusters": est.n_clusters, "expected_loss": est.expected_loss})
        return cache[a]

    def done(a: float) -> TuneResult:
        return TuneResult(a=a, b=b, loss=family(a=a, b=b), estimate=cache[a], history=history, seed=seed)

    a = b
    k = evaluate(a).n_clusters
    if k == target:
        return done(a)
    # Bracket: lo gives more clusters than wanted, hi fewer (clusters fall as a grows).
    lo: Tuple[float, int]
    hi: Tuple[float, int]
    if k > target:
        lo = (a, k)
        while True:
            a *= 2.0
            if a > b * _SPAN:
                raise ValueError(
                    f"n_clusters={target} is unreachable: even a={lo[0]:.6g} (b={b:g}) gives {lo[1]} clusters"
                )
            k = evaluate(a).n_clusters
            if k == target:
                return done(a)
            if k < target:
                hi = (a, k)
                break
            lo = (a, k)
    else:
        hi = (a, k)
        while True:
            a /= 2.0
            if a < b / _SPAN:
                raise ValueError(
                    f"n_clusters={target} is unreachable: even a={hi[0]:.6g} (b={b:g}) gives only {hi[1]} "
                    f"clusters (max_clusters={cap})"
                )
            k = evaluate(a).n_clusters
            if k == target:
                return done(a)
            if k > target:
                lo = (a, k)
                break
            hi = (a, k)
    # Bisect on log a.
    while hi[0] / lo[0] >= 1.0 + rtol:
        a = math.sqrt(lo[0] * hi[0])
        k = evaluate(a).n_clusters
        if k == target:
            return done(a)
        if k > target:
            lo = (a, k)
        else:
            hi = (a, k)
    raise ValueError(
        f"n_clusters={target} is unreachable with loss {family.name!r} (b={b:g}): the estimate jumps from "
        f"{lo[1]} clusters at a={lo[0]:.8g} to {hi[1]} clusters at a={hi[0]:.8g}; "
        f"choose n_clusters={lo[1]} or {hi[1]}, or change b"
    )


def _tried(history: List[Dict[str, float]]) -> str:
    return ", ".join(f"a={h['a']:.4g}: {int(h['n_clusters'])}" for h in history[-4:])
