"""The loss hierarchy's roots: every loss binds itself to the engine through ``_route``."""

from __future__ import annotations

import abc
from typing import Any, Dict, Optional

from .. import _core
from ..engine import CountsRoute, PSMRoute, Route
from ..io import PSM

__all__ = ["Loss", "CountLoss", "PSMLoss"]


# An ABC without abstract methods on purpose: the families below each declare their own
# (CountLoss._count_loss, ContingencyLoss.loss in salsox.plugins; PSM losses only name an
# engine kind), and there is no method every loss must implement. ABCMeta is kept so those
# abstract methods are enforced in subclasses and Loss.register stays available.
class Loss(abc.ABC):  # noqa: B024
    """Base class of all losses. ``name`` is the string that selects the loss.

    Examples
    --------
    >>> loss = salsox.losses.get_loss("binder", a=2)
    >>> loss, loss.name, loss.params
    (Binder(a=2.0, b=1.0), 'binder', {'a': 2.0, 'b': 1.0})
    >>> isinstance(loss, salsox.losses.Loss)
    True
    """

    name: str = ""

    @property
    def params(self) -> Dict[str, float]:
        """The loss's parameters (for reports)."""
        return {}

    def with_params(self, **values: float) -> "Loss":
        """The same loss with the parameters named in ``values`` changed (see :attr:`params`).

        Used by :func:`salsox.tune` and ``salsox estimate --param NAME=VALUE``. The default
        rebuilds the loss as ``type(self)(**{**self.params, **values})``; a loss whose
        constructor takes other arguments overrides this method.

        Raises
        ------
        ValueError
            A name in ``values`` is not one of the loss's parameters, or the constructor
            refuses a value.
        TypeError
            The loss cannot be rebuilt from its parameters.
        """
        current = self.params
        unknown = sorted(set(values) - set(current))
        if unknown:
            raise ValueError(
                f"loss {self.name!r} has no parameter {', '.join(repr(k) for k in unknown)} "
                f"(its parameters: {', '.join(current) or 'none'})"
            )
        if not values:
            return self
        try:
            new = type(self)(**{**current, **values})
        except TypeError as err:
            raise TypeError(
                f"loss {self.name!r} cannot be rebuilt with new parameters: {type(self).__name__}"
                f"({', '.join(f'{k}=...' for k in current)}) failed ({err}); override Loss.with_params"
            ) from err
        _check_rebuilt(self, new, values)
        return new

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    def describe(self) -> str:
        """What the loss is and how the engine computes it, one ``key: value`` per line.

        For a :class:`~salsox.plugins.CountSumLoss`, also which scorer the engine uses
        (``sparse``: only an item's nonzero cells, through the formula's separable form;
        ``dense``: every draw x candidate cluster) and whether the formula is compiled to
        machine code (llvmlite), as a search here would get them.

        Examples
        --------
        >>> print(salsox.VI().describe())
        loss: VI(a=1.0, b=1.0)
        class: salsox.losses.builtin.VI
        """
        return "\n".join(f"{key}: {value}" for key, value in self._description().items())

    def _description(self) -> Dict[str, str]:
        cls = type(self)
        return {"loss": repr(self), "class": f"{cls.__module__}.{cls.__qualname__}"}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Loss) and type(self) is type(other) and self.params == other.params

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.params.items()))))

    @property
    def _scale(self) -> float:
        """The loss's values are the engine's times this (see Binder/VI)."""
        return 1.0

    #: Whether a PSM alone determines the loss (PSM-based losses and Binder).
    _accepts_psm = False

    def _route(self, truth: Any, engine: Optional[str] = None) -> Route:
        """How this loss is computed and searched on ``truth`` (Draws or PSM): the engine
        route that ``salso``, ``dlso``, ``partition_loss``, the summaries and Dask all call.
        ``engine`` is salso's choice of engine, where the loss has several."""
        _needs_draws(self, truth)
        if engine is not None:
            raise ValueError(f"engine applies to built-in count-based losses, not to {self.name!r}")
        raise TypeError(f"loss {self!r} is neither a count-based, PSM-based nor a salsox.plugins.ContingencyLoss")


def _check_rebuilt(old: Loss, new: Any, values: Dict[str, float]) -> None:
    """``new`` must be a loss of the same name that took ``values`` as its parameters."""
    got = new.params if isinstance(new, Loss) else {}
    if not isinstance(new, Loss) or new.name != old.name or any(
        k not in got or float(got[k]) != float(v) for k, v in values.items()
    ):
        raise TypeError(
            f"loss {old.name!r}: rebuilding it with {values} gave {new!r}, which does not have these "
            "parameters; override Loss.with_params"
        )


def _needs_draws(loss: Loss, truth: Any) -> None:
    if isinstance(truth, PSM):
        raise ValueError(f"loss {loss.name!r} needs draws, not a PSM")


def _check_engine(engine: Optional[str], binder: bool) -> None:
    if engine is not None:
        if engine not in ("counts", "coclustering"):
            raise ValueError(f"engine must be 'counts' or 'coclustering', got {engine!r}")
        if engine == "coclustering" and not binder:
            raise ValueError("engine='coclustering' is available for the binder loss only")


class CountLoss(Loss):
    """A loss computed from the contingency table between a draw and the estimate.

    Examples
    --------
    >>> isinstance(salsox.VI(), salsox.losses.CountLoss), isinstance(salsox.VILowerBound(), salsox.losses.CountLoss)
    (True, False)
    """

    @abc.abstractmethod
    def _count_loss(self, n: int) -> "_core.CountLoss":
        """The engine's tabulated form of this loss for n items."""

    def _route(self, truth: Any, engine: Optional[str] = None) -> Route:
        _needs_draws(self, truth)
        _check_engine(engine, binder=False)
        return CountsRoute(truth, self._count_loss, self._scale)


class PSMLoss(Loss):
    """A loss computed from the posterior similarity matrix (PSM) alone.

    Examples
    --------
    >>> isinstance(salsox.VILowerBound(), salsox.losses.PSMLoss)
    True
    >>> draws = [[0, 0, 1], [0, 1, 1]]
    >>> round(salsox.partition_loss([0, 0, 1], draws, "VI.lb"), 4)   # the PSM is computed from the draws
    0.61
    """

    _kind: str = ""
    _accepts_psm = True

    def _route(self, truth: Any, engine: Optional[str] = None) -> Route:
        # engine= names count engines: a PSM loss has one engine and ignores it.
        return PSMRoute(truth, self._kind)
