"""Choosing a loss's parameter: find the value that gives a wanted number of clusters.

For fixed ``b``, Dahl, Johnson & Mueller (2022, section 4) note that the Binder or VI cost
``a -> 0`` gives every item its own cluster and ``a -> infinity`` puts all items in one
cluster, and that the number of clusters of the estimate falls as ``a`` grows. :func:`tune`
brackets the wanted number of clusters by doubling or halving ``a`` from ``a = b``, then
bisects on ``log a``. Any other scalar parameter of any loss (a plugin's too) is tuned the
same way, from its current value or within given bounds; its direction (whether clusters
fall or rise as it grows) is found from the searches.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .._validation import check_cost, check_int, check_max_clusters, check_seed
from ..io import Draws
from ..losses import VI, Binder, Loss, get_loss
from .estimate import Estimate
from .salso_search import check_options, salso

__all__ = ["TuneResult", "tune", "default_param"]

# a is searched within [b / _SPAN, b * _SPAN]: far beyond where the estimate stops changing.
_SPAN = 2.0**40


@dataclasses.dataclass(frozen=True, eq=False)
class TuneResult:
    """Result of :func:`tune`.

    Attributes
    ----------
    a, b : float or None
        The loss's costs ``a`` and ``b`` after tuning (None for a loss without them); for
        Binder and VI, ``a`` is the value found and ``b`` the one given.
    loss : Loss
        The loss with the value found, e.g. ``Binder(a, b)``.
    estimate : Estimate
        The estimate under that loss, with the wanted number of clusters.
    history : list of dict
        Every evaluation, in order: the parameter's value (keyed by its name, e.g. ``"a"``),
        ``n_clusters``, ``expected_loss``.
    seed : int
        The seed every search used (each value is searched with the same seed).
    param : str
        The name of the tuned parameter.
    value : float
        Its value found (``loss.params[param]``).

    :attr:`r_a` gives, for Binder and VI, ``a`` on R salso's scale.

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> res = salsox.tune(example_draws().draws, "VI", 6, seed=1)
    >>> res.estimate.n_clusters, res.a < 1         # a < b: more clusters than VI's default
    (6, True)
    >>> len(res.history) > 0
    True
    >>> res.r_a == 2 * res.a / (res.a + res.b)       # R's VI(a=res.r_a): the same estimate
    True
    """

    a: Optional[float]
    b: Optional[float]
    loss: Any
    estimate: Estimate
    history: List[Dict[str, float]]
    seed: int
    param: str = "a"
    value: float = math.nan

    @property
    def item_names(self) -> Optional[np.ndarray]:
        """The items' names (the estimate's), or None when the draws had none."""
        return self.estimate.item_names

    def to_series(self, name: str = "cluster") -> Any:
        """The estimate's labels by item name, as :meth:`Estimate.to_series`."""
        return self.estimate.to_series(name)

    def to_dataframe(self) -> Any:
        """The estimate's table, as :meth:`Estimate.to_dataframe`."""
        return self.estimate.to_dataframe()

    @property
    def r_a(self) -> Optional[float]:
        """For Binder and VI, ``a`` on R salso's scale, where the costs sum to 2: R's
        ``binder(a=r_a)`` / ``VI(a=r_a)``, salsox's ``Binder.from_r(r_a)``, is ``2 a / (a + b)``:
        the same estimate, R's loss values ``2 / (a + b)`` times salsox's. None for other losses."""
        return r_scale_a(self.loss)

    def __repr__(self) -> str:
        r_a = self.r_a
        r_side = "" if r_a is None else f", R's a={r_a:.6g}"
        return (
            f"TuneResult(loss={self.loss!r}, {self.param}={self.value:.6g}{r_side}, "
            f"n_clusters={self.estimate.n_clusters}, expected_loss={self.estimate.expected_loss:.6g}, "
            f"evaluations={len(self.history)})"
        )


def r_scale_a(loss: Any) -> Optional[float]:
    """For a Binder or VI loss, its ``a`` on R salso's scale, where the two costs sum to 2:
    ``2 a / (a + b)`` (R's ``binder(a=...)``; :meth:`Binder.from_r` of it is the same loss up
    to a constant factor). None for any other loss.

    Examples
    --------
    >>> r_scale_a(salsox.Binder(a=2, b=1)), r_scale_a(salsox.VI.from_r(0.5)), r_scale_a(salsox.OMARI())
    (1.3333333333333333, 0.5, None)
    """
    if type(loss) not in (Binder, VI):
        return None
    return 2.0 * loss.a / (loss.a + loss.b)


def default_param(loss: Loss) -> str:
    """The parameter :func:`tune` (and ``salsox tune``) tunes when none is named: the cost
    ``a`` of a loss that has one (Binder, VI, and plugin losses with costs such as
    ``vi-plugin``), else the loss's only parameter. A ValueError for a loss with several
    parameters but no ``a``, or with none.

    Examples
    --------
    >>> default_param(salsox.Binder())
    'a'
    >>> try:
    ...     default_param(salsox.OMARI())
    ... except ValueError as err:
    ...     print(err)
    loss 'omARI' has no parameters to tune (its params are empty)
    """
    params = loss.params
    if "a" in params:
        return "a"
    if len(params) == 1:
        return next(iter(params))
    raise ValueError(
        f"loss {loss.name!r} has "
        + (f"the parameters {', '.join(params)} and none called a: name the one to tune with param=" if params
           else "no parameters to tune (its params are empty)")
    )


def tune(
    draws: Any,
    loss: Any = "binder",
    n_clusters: Optional[int] = None,
    *,
    param: Optional[str] = None,
    bounds: Optional[Tuple[float, float]] = None,
    b: Optional[float] = None,
    max_clusters: Optional[int] = None,
    rtol: float = 1e-4,
    max_evaluations: int = 60,
    n_runs: int = 16,
    seed: Optional[int] = None,
    n_jobs: Optional[int] = None,
    **salso_options: Any,
) -> TuneResult:
    """Find the value of a loss's parameter whose SALSO estimate has ``n_clusters`` clusters.

    By default, the cost ``a`` of Binder or VI with ``b`` fixed; with ``param``, any scalar
    parameter of any loss (built-in, count-sum, tabulated or general plugin losses alike).

    Parameters
    ----------
    draws : array-like (H, n), Draws, xarray DataArray or (InferenceData, name)
        Posterior draws of the partition.
    loss : str, Loss or Loss class, default "binder"
        The loss whose parameter is tuned: a name (``"binder"``, ``"VI"``, a plugin's), or an
        instance whose other parameters stay as they are (e.g. ``CountSumLoss(..., params=
        {"lam": 0.1, "c": 2})`` with ``param="lam"``).
    n_clusters : int
        Wanted number of clusters, 1 <= n_clusters <= n.
    param : str, optional
        The parameter to tune, one of ``loss.params`` (changed with
        :meth:`~salsox.losses.Loss.with_params`). Default (:func:`default_param`, shared with
        ``salsox tune``): the cost ``"a"`` of a loss that has one (Binder, VI, a plugin's
        loss with costs), else the loss's only parameter.
    bounds : (float, float), optional
        Search ``param`` within ``[low, high]``: both ends are searched first and must
        straddle ``n_clusters``; then bisection, on the log scale when ``low > 0``. Default:
        from the parameter's current value (for Binder and VI, ``a = b``), which must be
        > 0, doubling or halving it (within a factor 2^40) until the wanted number is
        bracketed, then bisecting on its log.
    b : float, optional
        The fixed cost ``b`` of a loss named with costs (default 1); for an instance, its own.
    max_clusters : int, optional
        Cap passed to :func:`salso` (default: the larger of ``n_clusters`` and the most clusters
        in any draw, so that the wanted number can always be formed).
    rtol : float, default 1e-4
        Bisection stops when the bracket ``[lo, hi]`` satisfies ``hi / lo < 1 + rtol`` (on the
        log scale) or ``hi - lo <= rtol * max(|lo|, |hi|)``.
    max_evaluations : int, default 60
        Cap on the number of searches.
    n_runs, seed, n_jobs, **salso_options
        Passed to :func:`salso`. The same seed is used for every value (a fresh one when
        None), so the number of clusters is a deterministic function of the value.

    Returns
    -------
    TuneResult

    Raises
    ------
    ValueError
        When ``n_clusters`` cannot be reached: it exceeds the number of items or
        ``max_clusters``, the bounds do not straddle it, or the number of clusters jumps over
        it as the value varies (the message gives the two values and cluster counts on
        either side). Also for an unknown or non-scalar ``param``.

    Notes
    -----
    The search is heuristic, so the number of clusters is only nearly monotone in the value;
    bisection still ends, at a value giving ``n_clusters`` or with the error above. For
    Binder and VI the direction is known (clusters fall as ``a`` grows, rise as ``b`` grows);
    for other parameters it is taken from the first searches that change the number of
    clusters, trying both directions until then. Each evaluation is one :func:`salso` call:
    O(log(1/rtol)) searches in all.

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> res = salsox.tune(example_draws().draws, "binder", 3, seed=1)    # Binder's a for 3 clusters
    >>> res.estimate.n_clusters, res.loss.b
    (3, 1.0)
    >>> round(res.a, 4), round(res.r_a, 4)             # the paper's a (b = 1), and R's binder(a=...)
    (19.0273, 1.9001)
    """
    # Every argument but the draws is checked before they are read.
    base, name, start, direction, span, target, max_evaluations, seed = check_tune_options(
        loss, n_clusters, param=param, bounds=bounds, b=b, max_clusters=max_clusters, rtol=rtol,
        max_evaluations=max_evaluations, n_runs=n_runs, seed=seed, n_jobs=n_jobs, **salso_options,
    )
    truth = Draws(draws)  # xarray / ArviZ inputs too, with their item names
    n = truth.n_items
    if target > n:
        raise ValueError(f"n_clusters={target} is unreachable: there are only {n} items")
    if max_clusters is None:
        cap = max(target, truth.max_clusters)
    else:
        cap = min(check_max_clusters(max_clusters), n)
        if target > cap:
            raise ValueError(f"n_clusters={target} is unreachable with max_clusters={cap}; raise max_clusters")

    history: List[Dict[str, float]] = []
    cache: Dict[float, Tuple[Loss, Estimate]] = {}

    def evaluate(x: float) -> int:
        if x not in cache:
            if len(history) >= max_evaluations:
                raise ValueError(
                    f"n_clusters={target} not reached within max_evaluations={max_evaluations} searches; "
                    f"last tried: {_tried(history, name)}"
                )
            candidate = base.with_params(**{name: x})
            est = salso(truth, candidate, max_clusters=cap, n_runs=n_runs, seed=seed, n_jobs=n_jobs, **salso_options)
            cache[x] = (candidate, est)
            history.append({name: x, "n_clusters": est.n_clusters, "expected_loss": est.expected_loss})
        return cache[x][1].n_clusters

    def done(x: float) -> TuneResult:
        found, est = cache[x]
        params = found.params
        return TuneResult(
            a=params.get("a"), b=params.get("b"), loss=found, estimate=est, history=history, seed=seed,
            param=name, value=x,
        )

    search = _Search(evaluate, target, base.name, name, _others(base, name), cap)
    if span is not None:
        x = search.within(span, rtol)
    else:
        x = search.from_start(start, direction, rtol)
    return done(x)


def check_tune_options(
    loss: Any = "binder", n_clusters: Any = None, *, param: Any = None, bounds: Any = None, b: Any = None,
    max_clusters: Any = None, rtol: Any = 1e-4, max_evaluations: Any = 60, n_runs: Any = 16, seed: Any = None,
    n_jobs: Any = None, **salso_options: Any,
) -> Tuple[Loss, str, float, int, Optional[Tuple[float, float]], int, int, int]:
    """:func:`tune`'s arguments other than the draws, checked before they are read: the loss
    and its parameter (name, start, direction), the bounds, the target, max_evaluations, the seed."""
    base = _resolve(loss, b)
    name, start, direction = _parameter(base, param)
    if n_clusters is None:
        raise TypeError("n_clusters is required: the number of clusters wanted")
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float)) or not (0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1), got {rtol!r}")
    max_evaluations = check_int("max_evaluations", max_evaluations, minimum=2)
    span = _bounds(bounds, name) if bounds is not None else None
    if span is None and not start > 0:
        raise ValueError(
            f"parameter {name!r} of loss {base.name!r} is {start:g}; without bounds it is tuned by doubling "
            "and halving a positive value: give bounds=(low, high)"
        )
    target = check_int("n_clusters", n_clusters, minimum=1)
    if max_clusters is not None:
        check_max_clusters(max_clusters)
    seed = check_seed(seed)
    _check_salso_options(salso_options, n_runs=n_runs, n_jobs=n_jobs)
    return base, name, start, direction, span, target, max_evaluations, seed


def _check_salso_options(salso_options: Dict[str, Any], *, n_runs: Any, n_jobs: Any) -> None:
    """The options passed on to every :func:`salso` search, checked before the draws are read."""
    known = set(inspect.signature(salso).parameters) - {"draws", "loss"}
    unknown = sorted(set(salso_options) - known)
    if unknown:
        raise TypeError(
            f"tune() got an unexpected keyword argument {unknown[0]!r}: neither tune's nor a salso argument"
        )
    checked = set(inspect.signature(check_options).parameters)
    check_options(n_runs=n_runs, n_jobs=n_jobs, **{k: v for k, v in salso_options.items() if k in checked})


def _resolve(loss: Any, b: Optional[float]) -> Loss:
    """The loss to tune, with the fixed cost ``b`` applied."""
    if b is not None:
        b = check_cost("b", b)
    if isinstance(loss, str) or (isinstance(loss, type) and issubclass(loss, Loss)):
        name = loss if isinstance(loss, str) else loss.name
        if isinstance(name, str) and name.lower() in ("binder", "vi"):
            return get_loss(name, b=1.0 if b is None else b)
        resolved = get_loss(loss)
    elif isinstance(loss, Loss):
        resolved = loss
    else:
        raise TypeError(f"loss must be a loss name, a salsox.losses.Loss or a Loss class, got {type(loss).__name__}")
    if b is not None:
        if "b" not in resolved.params:
            raise ValueError(f"b: loss {resolved.name!r} has no parameter b (its parameters: "
                             f"{', '.join(resolved.params) or 'none'})")
        resolved = resolved.with_params(b=b)
    return resolved


def _parameter(loss: Loss, param: Optional[str]) -> Tuple[str, float, int]:
    """The tuned parameter's name, its starting value, and the known direction: +1 when the
    number of clusters falls as it grows, -1 when it rises, 0 when unknown."""
    params = loss.params
    costs = type(loss) in (Binder, VI)
    if param is None:
        param = default_param(loss)
    if not isinstance(param, str) or param not in params:
        raise ValueError(f"param: loss {loss.name!r} has no parameter {param!r} (its parameters: "
                         f"{', '.join(params) or 'none'})")
    value = params[param]
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"param: {param!r} of loss {loss.name!r} is {value!r}, not a finite number")
    if costs:
        # a: the cost of separating items together in the truth (fewer clusters as it grows);
        # b: of joining items apart (more clusters). Binder and VI start from a = b.
        start = float(params["b"] if param == "a" else params["a"])
        return param, start, (1 if param == "a" else -1)
    return param, float(value), 0


def _bounds(bounds: Any, name: str) -> Tuple[float, float]:
    try:
        low, high = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be two numbers (low, high) for {name!r}, got {bounds!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"bounds must be finite with low < high, got {bounds!r}")
    return low, high


def _others(loss: Loss, name: str) -> List[str]:
    """The loss's other parameters, as name=value."""
    return [f"{k}={v:g}" for k, v in loss.params.items() if k != name]


@dataclasses.dataclass
class _Search:
    """Bracketing and bisection of the number of clusters in one parameter."""

    evaluate: Callable[[float], int]
    target: int
    loss: str
    name: str
    others: List[str]
    cap: int

    def _fixed(self) -> str:
        return f" ({', '.join(self.others)})" if self.others else ""

    def from_start(self, start: float, direction: int, rtol: float) -> float:
        """Double or halve from ``start`` (in the known direction, else both until the
        number of clusters moves) until the target is bracketed; then bisect."""
        k0 = self.evaluate(start)
        if k0 == self.target:
            return start
        fewer = k0 > self.target  # the estimate needs fewer clusters
        if direction:
            sides = [1 if fewer == (direction > 0) else -1]
        else:
            sides = [1, -1]
        last = {1: (start, k0), -1: (start, k0)}
        step = 0
        while sides:
            step += 1
            for side in list(sides):
                x = start * 2.0 ** (side * step)
                if step > _STEPS:
                    sides.remove(side)
                    continue
                k = self.evaluate(x)
                if k == self.target:
                    return x
                prev = last[side]
                last[side] = (x, k)
                if (k > self.target) != fewer:  # crossed: bracketed between prev and x
                    lo, hi = sorted((prev, (x, k)))
                    return self.bisect(lo, hi, rtol, log=True)
                if not direction and k != prev[1]:  # the first move tells the direction
                    toward = (k < prev[1]) == fewer
                    sides = [side] if toward else [s for s in sides if s != side]
                    break
        tried = [last[s] for s in (1, -1) if last[s][0] != start] or [(start, k0)]
        what = " and ".join(f"{self.name}={x:.6g}" + (f"{self._fixed()}" if i == 0 else "") + f" gives "
                            f"{'' if fewer else 'only '}{k} clusters" for i, (x, k) in enumerate(tried))
        tail = "" if fewer else f" (max_clusters={self.cap})"
        return self._fail(f"n_clusters={self.target} is unreachable: even {what}{tail}")

    def within(self, span: Tuple[float, float], rtol: float) -> float:
        """Bisect within ``span``, whose ends must straddle the target."""
        low, high = span
        k_low = self.evaluate(low)
        if k_low == self.target:
            return low
        k_high = self.evaluate(high)
        if k_high == self.target:
            return high
        if (k_low > self.target) == (k_high > self.target):
            return self._fail(
                f"n_clusters={self.target} is unreachable within the bounds{self._fixed()}: {self.name}={low:.6g} "
                f"gives {k_low} clusters and {self.name}={high:.6g} gives {k_high}; widen the bounds"
            )
        return self.bisect((low, k_low), (high, k_high), rtol, log=low > 0)

    def bisect(self, lo: Tuple[float, int], hi: Tuple[float, int], rtol: float, log: bool) -> float:
        """Bisect between values lo < hi whose cluster counts straddle the target."""
        while True:
            width = hi[0] / lo[0] - 1.0 if log else (hi[0] - lo[0]) / max(abs(lo[0]), abs(hi[0]))
            if width < rtol:
                break
            x = math.sqrt(lo[0] * hi[0]) if log else 0.5 * (lo[0] + hi[0])
            k = self.evaluate(x)
            if k == self.target:
                return x
            if (k > self.target) == (lo[1] > self.target):
                lo = (x, k)
            else:
                hi = (x, k)
        change = f", or change {' or '.join(o.split('=')[0] for o in self.others)}" if self.others else ""
        return self._fail(
            f"n_clusters={self.target} is unreachable with loss {self.loss!r}{self._fixed()}: the estimate jumps from "
            f"{lo[1]} clusters at {self.name}={lo[0]:.8g} to {hi[1]} clusters at {self.name}={hi[0]:.8g}; "
            f"choose n_clusters={lo[1]} or {hi[1]}{change}"
        )

    @staticmethod
    def _fail(message: str) -> float:
        raise ValueError(message)


# Doubling or halving steps from the start: within a factor 2^40, far beyond where the
# estimate stops changing.
_STEPS = 40


def _tried(history: List[Dict[str, float]], name: str) -> str:
    return ", ".join(f"{name}={h[name]:.4g}: {int(h['n_clusters'])}" for h in history[-4:])
