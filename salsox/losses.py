"""Partition loss functions (Dahl, Johnson & Mueller 2022, sections 2-3).

Every loss compares a draw (the truth, rho) with an estimate (rho-hat). Count-based losses are
computed by the C++ engine from contingency tables; PSM-based ones from the posterior
similarity matrix. Strings name them too: ``"binder"``, ``"VI"``, ``"omARI"``, ``"NVI"``,
``"ID"``, ``"NID"``, ``"VI.lb"``, ``"omARI.approx"`` (case-insensitive).
"""

from __future__ import annotations

import abc
from typing import Any, Dict, Optional, Tuple, Type, Union

from . import _core
from ._validation import check_cost

__all__ = [
    "Loss",
    "CountLoss",
    "PSMLoss",
    "Binder",
    "VI",
    "OMARI",
    "NVI",
    "ID",
    "NID",
    "VILowerBound",
    "OMARIApprox",
    "get_loss",
    "BUILTIN_LOSSES",
]


# An ABC without abstract methods on purpose: the families below each declare their own
# (CountLoss._count_loss, ContingencyLoss.loss in salsox.plugins; PSM losses only name an
# engine kind), and there is no method every loss must implement. ABCMeta is kept so those
# abstract methods are enforced in subclasses and Loss.register stays available.
class Loss(abc.ABC):  # noqa: B024
    """Base class of all losses. ``name`` is the string that selects the loss."""

    name: str = ""

    @property
    def params(self) -> Dict[str, float]:
        """The loss's parameters (for reports)."""
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Loss) and type(self) is type(other) and self.params == other.params

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.params.items()))))


class CountLoss(Loss):
    """A loss computed from the contingency table between a draw and the estimate."""

    @abc.abstractmethod
    def _count_loss(self, n: int) -> "_core.CountLoss":
        """The engine's tabulated form of this loss for n items."""


class PSMLoss(Loss):
    """A loss computed from the posterior similarity matrix (PSM) alone."""

    _kind: str = ""


class _Costs(CountLoss):
    _kind: str  # the engine's name of the loss, set by each concrete subclass

    def __init__(self, a: float = 1.0, b: float = 1.0) -> None:
        self.a = check_cost("a", a)
        self.b = check_cost("b", b)

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
    ``a > b`` gives fewer clusters. R's ``binder(a=x)`` is ``Binder(a=x, b=2-x)``.
    """

    name = "binder"
    _kind = "binder"


class VI(_Costs):
    r"""Generalised variation of information (paper eq. gvi_def), in bits.

    .. math:: a \sum_S \tfrac{|S|}{n}\log_2\tfrac{|S|}{n} + b \sum_T \tfrac{|T|}{n}\log_2\tfrac{|T|}{n}
              - (a+b)\sum_{S,T}\tfrac{|S\cap T|}{n}\log_2\tfrac{|S\cap T|}{n}

    ``a = b = 1`` is Meila's VI. ``a < b`` gives more clusters. R's ``VI(a=x)`` is
    ``VI(a=x, b=2-x)``.
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
    """

    name = "omARI"
    _kind = "omARI"


class NVI(_Fixed):
    """Normalised variation of information, 1 - I / H(joint) (Vinh et al. 2010).

    0 when both partitions have a single cluster.
    """

    name = "NVI"
    _kind = "NVI"


class ID(_Fixed):
    """Information distance, max(H(truth), H(estimate)) - I (Vinh et al. 2010), in bits."""

    name = "ID"
    _kind = "ID"


class NID(_Fixed):
    """Normalised information distance, 1 - I / max(H(truth), H(estimate)) (Vinh et al. 2010).

    0 when both partitions have a single cluster.
    """

    name = "NID"
    _kind = "NID"


class VILowerBound(PSMLoss):
    r"""Wade & Ghahramani's lower bound of the expected VI, from the PSM (as R mcclust.ext).

    .. math:: \frac1n\sum_i \Big[\log_2 |T(i)| + \log_2 \sum_j \pi_{ij}
              - 2\log_2 \sum_{j \in T(i)} \pi_{ij}\Big]
    """

    name = "VI.lb"
    _kind = "VI.lb"


class OMARIApprox(PSMLoss):
    """One minus Fritsch & Ickstadt's PEAR approximation of the expected ARI (paper eq. pear_2)."""

    name = "omARI.approx"
    _kind = "omARI.approx"


_BUILTIN_CLASSES: Tuple[Type[Loss], ...] = (Binder, VI, OMARI, NVI, ID, NID, VILowerBound, OMARIApprox)
BUILTIN_LOSSES: Dict[str, Type[Loss]] = {cls.name.lower(): cls for cls in _BUILTIN_CLASSES}

LossLike = Union[str, Loss]


def get_loss(loss: Any, *, a: Optional[float] = None, b: Optional[float] = None) -> Loss:
    """Resolve ``loss`` (a name or a :class:`Loss`) to a :class:`Loss` instance.

    ``a`` and ``b`` apply to names of losses with costs (``"binder"``, ``"VI"``).
    """
    if isinstance(loss, Loss):
        if a is not None or b is not None:
            raise ValueError("a and b can only be given with a loss name, not a Loss instance")
        return loss
    if isinstance(loss, type) and issubclass(loss, Loss):
        return get_loss(loss.name, a=a, b=b) if loss.name.lower() in BUILTIN_LOSSES else loss()
    if not isinstance(loss, str):
        raise TypeError(f"loss must be a loss name or a salsox.losses.Loss, got {type(loss).__name__}")
    cls = BUILTIN_LOSSES.get(loss.lower())
    if cls is None:
        from .plugins import registry

        plugin = registry().find_loss(loss)
        if plugin is not None:
            if a is not None or b is not None:
                return plugin.factory(**{k: v for k, v in (("a", a), ("b", b)) if v is not None})
            return plugin.factory()
        known = ", ".join(sorted({c.name for c in BUILTIN_LOSSES.values()} | set(registry().loss_names())))
        raise ValueError(f"unknown loss {loss!r}; choose one of: {known}")
    if issubclass(cls, _Costs):
        return cls(a=1.0 if a is None else a, b=1.0 if b is None else b)
    if a is not None or b is not None:
        raise ValueError(f"loss {cls.name!r} has no costs a and b")
    return cls()
