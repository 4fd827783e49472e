"""Names to losses: built-ins first, then the plugin registry."""

from __future__ import annotations

from typing import Any, Optional, Union

from ..registry import registry
from .base import Loss
from .builtin import BUILTIN_LOSSES, _Costs
from .countsum import CountSumLoss
from .plugin_bases import ContingencyLoss, DecomposableLoss

__all__ = ["get_loss", "LossLike", "loss_tier", "TIERS"]

#: How each kind of loss is computed, fastest first (see :func:`loss_tier`).
TIERS = ("built-in", "tabulated", "count-sum", "general")

LossLike = Union[str, Loss]


def get_loss(loss: Any, *, a: Optional[float] = None, b: Optional[float] = None) -> Loss:
    """Resolve ``loss`` (a name or a :class:`Loss`) to a :class:`Loss` instance.

    ``a`` and ``b`` apply to names of losses with costs (``"binder"``, ``"VI"``).

    Examples
    --------
    >>> salsox.losses.get_loss("vi")
    VI(a=1.0, b=1.0)
    >>> salsox.losses.get_loss("binder", a=3, b=1)
    Binder(a=3.0, b=1.0)
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


def loss_tier(loss: Any) -> str:
    """How the engine computes a loss (a :class:`Loss` instance or class).

    ``"built-in"``: one of salsox's losses (or a subclass), in C++; ``"tabulated"``: a
    :class:`~salsox.plugins.DecomposableLoss`, its terms tabulated once per search;
    ``"count-sum"``: a :class:`~salsox.plugins.CountSumLoss`, its sums tabulated and its
    formula compiled; ``"general"``: a :class:`~salsox.plugins.ContingencyLoss`, called
    from the search in batches of tables. Any other object gives ``"unknown"``.

    Examples
    --------
    >>> from salsox.losses import loss_tier
    >>> from salsox.plugins import DecomposableLoss
    >>> loss_tier(salsox.VI()), loss_tier(DecomposableLoss), loss_tier(42)
    ('built-in', 'tabulated', 'unknown')
    """
    cls = loss if isinstance(loss, type) else type(loss)
    if not issubclass(cls, Loss):
        return "unknown"
    # DecomposableLoss first: it is a CountSumLoss (an additive one).
    for base, tier in ((DecomposableLoss, "tabulated"), (CountSumLoss, "count-sum"), (ContingencyLoss, "general")):
        if issubclass(cls, base):
            return tier
    return "built-in" if any(issubclass(cls, b) for b in BUILTIN_LOSSES.values()) else "unknown"
