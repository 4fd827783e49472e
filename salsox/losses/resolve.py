"""Names to losses: built-ins first, then the plugin registry."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Union

from ..registry import PluginError, registry
from .base import Loss
from .builtin import BUILTIN_LOSSES, _Costs
from .countsum import CountSumLoss
from .plugin_bases import ContingencyLoss, DecomposableLoss

__all__ = ["get_loss", "LossLike", "loss_tier", "TIERS"]

#: How each kind of loss is computed, fastest first (see :func:`loss_tier`).
TIERS = ("built-in", "tabulated", "count-sum", "general")

LossLike = Union[str, Loss]


def get_loss(loss: Any, *, a: Optional[float] = None, b: Optional[float] = None, **params: float) -> Loss:
    """Resolve ``loss`` (a name or a :class:`Loss`) to a :class:`Loss` instance.

    ``a`` and ``b`` apply to names of losses with costs (``"binder"``, ``"VI"``, a plugin's);
    any other keyword sets a parameter of a plugin's loss by name, as
    :meth:`~salsox.losses.Loss.with_params` does (an unknown name is a ValueError listing the
    loss's parameters). A plugin's loss whose construction fails raises a
    :class:`~salsox.plugins.PluginError` naming the plugin.

    Examples
    --------
    >>> salsox.losses.get_loss("vi")
    VI(a=1.0, b=1.0)
    >>> salsox.losses.get_loss("binder", a=3, b=1)
    Binder(a=3.0, b=1.0)
    """
    if isinstance(loss, Loss):
        if a is not None or b is not None or params:
            raise ValueError("a, b and parameters can only be given with a loss name, not a Loss instance")
        return loss
    if isinstance(loss, type) and issubclass(loss, Loss):
        if loss.name.lower() in BUILTIN_LOSSES:
            return get_loss(loss.name, a=a, b=b, **params)
        return _with_params(loss(), a, b, params)
    if not isinstance(loss, str):
        raise TypeError(f"loss must be a loss name or a salsox.losses.Loss, got {type(loss).__name__}")
    cls = BUILTIN_LOSSES.get(loss.lower())
    if cls is None:
        plugin = registry().find_loss(loss)
        if plugin is not None:
            try:
                made = plugin.factory()
            except PluginError:
                raise
            except Exception as err:  # the plugin's constructor: its error, said to be the plugin's
                where = "" if plugin.source == "runtime" else f" (from {plugin.source})"
                raise PluginError(
                    f"loss {plugin.name!r} of plugin {plugin.plugin!r} raised {type(err).__name__}: {err} "
                    f"(in its constructor){where}"
                ) from err
            return _with_params(made, a, b, params)
        known = ", ".join(sorted({c.name for c in BUILTIN_LOSSES.values()} | set(registry().loss_names())))
        raise ValueError(f"unknown loss {loss!r}; choose one of: {known}{_r_call_hint(loss)}")
    if params:
        raise ValueError(
            f"loss {cls.name!r} has no parameter {', '.join(repr(k) for k in sorted(params))} "
            f"(its parameters: {'a, b' if issubclass(cls, _Costs) else 'none'})"
        )
    if issubclass(cls, _Costs):
        return cls(a=1.0 if a is None else a, b=1.0 if b is None else b)
    if a is not None or b is not None:
        raise ValueError(f"loss {cls.name!r} has no costs a and b")
    return cls()


def _with_params(loss: Loss, a: Optional[float], b: Optional[float], params: Dict[str, float]) -> Loss:
    """A plugin's ``loss`` with ``a``, ``b`` and ``params`` set (Loss.with_params)."""
    values = {**{k: v for k, v in (("a", a), ("b", b)) if v is not None}, **params}
    return loss.with_params(**values) if values else loss


def _r_call_hint(text: str) -> str:
    """For R's spelling of a loss with its argument, ``"binder(a=1.5)"``: the salsox call."""
    match = re.fullmatch(r"\s*(binder|vi)\s*\((.*)\)\s*", text, flags=re.IGNORECASE)
    if match is None:
        return ""
    cls = "Binder" if match.group(1).lower() == "binder" else "VI"
    inner = match.group(2).strip()
    argument = inner.split("=", 1)[1].strip() if inner.lower().startswith("a") and "=" in inner else inner
    return (
        f". A loss name takes no arguments: R's {text.strip()} is salsox.{cls}.from_r({argument or 'a'}) "
        f"(R's a in (0, 2); costs a and 2 - a), or salsox.{cls}(a=..., b=...) for the costs "
        "(--r-a on the command line)"
    )


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
