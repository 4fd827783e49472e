"""The built-in partition losses (Dahl, Johnson & Mueller 2022, sections 2-3).

Every loss compares a draw (the truth, rho) with an estimate (rho-hat). Count-based losses are
computed by the C++ engine from contingency tables; PSM-based ones from the posterior
similarity matrix. Strings name them too: ``"binder"``, ``"VI"``, ``"omARI"``, ``"NVI"``,
``"ID"``, ``"NID"``, ``"VI.lb"``, ``"omARI.approx"`` (case-insensitive).
"""

from __future__ import annotations

import numbers
from typing import Any, Dict, Optional, Tuple, Type, TypeVar

import numpy as np

from .. import _core
from .._validation import check_cost
from ..engine import CoclusteringRoute, CountsRoute, PSMRoute, Route
from ..io import PSM
from .base import CountLoss, Loss, PSMLoss, _check_engine

__all__ = ["Binder", "VI", "OMARI", "NVI", "ID", "NID", "VILowerBound", "OMARIApprox", "BUILTIN_LOSSES"]


_C = TypeVar("_C", bound="_Costs")


class _Costs(CountLoss):
    _kind: str  # the engine's name of the loss, set by each concrete subclass

    def __init__(self, a: float = 1.0, b: float = 1.0) -> None:
        self.a = check_cost("a", a)
        self.b = check_cost("b", b)

    @classmethod
    def from_r(cls: Type[_C], a: float = 1.0) -> _C:
        """The loss R salso writes ``binder(a=a)`` / ``VI(a=a)``: costs ``(a, 2 - a)``.

        R fixes the two costs to sum to 2, so the paper's costs ``(a', b')`` are R's
        ``a = 2 a' / (a' + b')``, and R's expected losses are the paper's times
        ``2 / (a' + b')``: ``Binder(a=2, b=1)`` is R's ``binder(a=4/3)`` with values 3/2 as
        large (same estimate). ``a`` must lie in (0, 2): at 0 or 2 one cost vanishes and a
        trivial partition always wins. R's ``a=NULL`` and ``a=list(nClusters=k)`` are
        :func:`salsox.tune`.

        Examples
        --------
        >>> from salsox import Binder, VI
        >>> VI.from_r(1.5)
        VI(a=1.5, b=0.5)
        >>> Binder.from_r(4 / 3)
        Binder(a=1.3333333333333333, b=0.6666666666666667)
        """
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, numbers.Real):
            raise TypeError(f"a must be a real number in (0, 2) (R's a), got {type(a).__name__}")
        a = float(a)
        if not 0.0 < a < 2.0:
            raise ValueError(
                f"a must be in (0, 2) (R's a; the costs are a and 2 - a), got {a!r}: at 0 or 2 one "
                "cost is zero and a trivial partition always wins"
            )
        return cls(a=a, b=2.0 - a)

    @property
    def params(self) -> Dict[str, float]:
        return {"a": self.a, "b": self.b}

    @property
    def _scale(self) -> float:
        """The engine works with costs divided by max(a, b) (so that extreme costs neither
        overflow nor lose precision) and values are multiplied back by this."""
        return max(self.a, self.b)

    @property
    def _unit_costs(self) -> "tuple[float, float]":
        s = self._scale
        return self.a / s, self.b / s

    def _count_loss(self, n: int) -> "_core.CountLoss":
        a, b = self._unit_costs
        return _core.CountLoss.builtin(self._kind, a, b, n)


class Binder(_Costs):
    r"""Generalised Binder loss, n-invariant form (paper eq. generalizedBinderNinvariant).

    .. math:: a \sum_S (|S|/n)^2 + b \sum_T (|T|/n)^2 - (a+b) \sum_{S,T} (|S \cap T|/n)^2

    ``a`` is the cost of separating two items that are together in the truth, ``b`` of
    joining two items that are apart. It equals :math:`2/n^2` times the pairwise Binder loss.
    ``a > b`` gives fewer clusters. R's ``binder(a=x)`` is ``Binder(a=x, b=2-x)``, i.e.
    ``Binder.from_r(x)``: ``Binder(a=1.5)`` is *not* R's ``binder(a=1.5)``.

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> draws = example_draws().draws
    >>> salsox.salso(draws, salsox.Binder(), seed=1).n_clusters
    5
    >>> salsox.salso(draws, salsox.Binder(a=3, b=1), seed=1).n_clusters   # separating costs more
    4
    >>> salsox.salso(draws, salsox.Binder(a=1, b=3), seed=1).n_clusters   # joining costs more
    8
    >>> salsox.partition_loss([0, 0, 1], [0, 1, 1], salsox.Binder())   # 2/9 x 2 pairs
    0.4444444444444444
    """

    name = "binder"
    _kind = "binder"
    _accepts_psm = True

    def _route(self, truth: Any, engine: Optional[str] = None) -> Route:
        a, b = self._unit_costs
        if isinstance(truth, PSM):
            return PSMRoute(truth, "binder", a, b, self._scale)
        _check_engine(engine, binder=True)
        if engine is None:
            n, h = truth.n_items, truth.n_draws
            # A move costs O(n) with co-clustering counts and O(H k) with count tables: compare n
            # with H times the mean k (at least 1, so n <= H settles it without reading the k's).
            cheaper = n <= 8192 and (n <= h or n <= h * float(np.mean(truth.clusters_per_draw)))
            engine = "coclustering" if cheaper else "counts"
        if engine == "coclustering":
            return CoclusteringRoute(truth, self._count_loss, self._scale, unit_costs=(a, b))
        return CountsRoute(truth, self._count_loss, self._scale)


class VI(_Costs):
    r"""Generalised variation of information (paper eq. gvi_def), in bits.

    .. math:: a \sum_S \tfrac{|S|}{n}\log_2\tfrac{|S|}{n} + b \sum_T \tfrac{|T|}{n}\log_2\tfrac{|T|}{n}
              - (a+b)\sum_{S,T}\tfrac{|S\cap T|}{n}\log_2\tfrac{|S\cap T|}{n}

    ``a = b = 1`` is Meila's VI. ``a < b`` gives more clusters. R's ``VI(a=x)`` is
    ``VI(a=x, b=2-x)``, i.e. ``VI.from_r(x)``.

    Examples
    --------
    >>> round(salsox.partition_loss([0, 0, 1, 1], [0, 0, 0, 0], salsox.VI()), 6)   # 1 bit
    1.0
    >>> from salsox.datasets import example_draws
    >>> draws = example_draws().draws
    >>> salsox.salso(draws, salsox.VI(), seed=1).n_clusters
    4
    >>> salsox.salso(draws, salsox.VI(a=0.5), seed=1).n_clusters   # a < b: more clusters
    8
    """

    name = "VI"
    _kind = "VI"


class _Fixed(CountLoss):
    _kind: str  # the engine's name of the loss, set by each concrete subclass

    def _count_loss(self, n: int) -> "_core.CountLoss":
        return _core.CountLoss.builtin(self._kind, 1.0, 1.0, n)


class OMARI(_Fixed):
    """One minus the adjusted Rand index (Hubert & Arabie 1985).

    Two identical partitions score 0, including the trivial cases (one cluster, or all
    singletons) where the ARI's formula is 0/0.

    Examples
    --------
    >>> salsox.partition_loss([0, 0, 1, 1], [5, 5, 7, 7], salsox.OMARI())
    0.0
    >>> round(salsox.partition_loss([0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 2], "omARI"), 4)   # 1 - ARI
    0.5556
    """

    name = "omARI"
    _kind = "omARI"


class NVI(_Fixed):
    """Normalised variation of information, 1 - I / H(joint) (Vinh et al. 2010).

    0 when both partitions have a single cluster.

    Examples
    --------
    >>> salsox.partition_loss([0, 0, 1, 1], [0, 0, 1, 1], salsox.NVI())
    0.0
    >>> salsox.partition_loss([0, 0, 0, 0], [0, 1, 2, 3], salsox.NVI())   # nothing in common
    1.0
    """

    name = "NVI"
    _kind = "NVI"


class ID(_Fixed):
    """Information distance, max(H(truth), H(estimate)) - I (Vinh et al. 2010), in bits.

    Examples
    --------
    >>> salsox.partition_loss([0, 0, 1, 1], [0, 0, 0, 0], salsox.ID())   # bits
    1.0
    """

    name = "ID"
    _kind = "ID"


class NID(_Fixed):
    """Normalised information distance, 1 - I / max(H(truth), H(estimate)) (Vinh et al. 2010).

    0 when both partitions have a single cluster.

    Examples
    --------
    >>> salsox.partition_loss([0, 0, 1, 1], [0, 0, 0, 0], salsox.NID())
    1.0
    >>> salsox.partition_loss([0, 0, 1, 1], [0, 0, 1, 1], "NID")
    0.0
    """

    name = "NID"
    _kind = "NID"


class VILowerBound(PSMLoss):
    r"""Wade & Ghahramani's lower bound of the expected VI, from the PSM (as R mcclust.ext).

    .. math:: \frac1n\sum_i \Big[\log_2 |T(i)| + \log_2 \sum_j \pi_{ij}
              - 2\log_2 \sum_{j \in T(i)} \pi_{ij}\Big]

    Examples
    --------
    >>> p = salsox.PSM([[1.0, 0.9, 0.1], [0.9, 1.0, 0.2], [0.1, 0.2, 1.0]])
    >>> salsox.salso(p, salsox.VILowerBound(), seed=1).labels     # a PSM is enough
    array([0, 0, 1])
    """

    name = "VI.lb"
    _kind = "VI.lb"


class OMARIApprox(PSMLoss):
    """One minus Fritsch & Ickstadt's PEAR approximation of the expected ARI (paper eq. pear_2).

    Examples
    --------
    >>> p = salsox.PSM([[1.0, 0.9, 0.1], [0.9, 1.0, 0.2], [0.1, 0.2, 1.0]])
    >>> salsox.salso(p, "omARI.approx", seed=1).labels
    array([0, 0, 1])
    """

    name = "omARI.approx"
    _kind = "omARI.approx"


_BUILTIN_CLASSES: Tuple[Type[Loss], ...] = (Binder, VI, OMARI, NVI, ID, NID, VILowerBound, OMARIApprox)
BUILTIN_LOSSES: Dict[str, Type[Loss]] = {cls.name.lower(): cls for cls in _BUILTIN_CLASSES}
