"""Partition loss functions (Dahl, Johnson & Mueller 2022, sections 2-3).

Every loss compares a draw (the truth, rho) with an estimate (rho-hat). Count-based losses are
computed by the C++ engine from contingency tables; PSM-based ones from the posterior
similarity matrix. Strings name them too: ``"binder"``, ``"VI"``, ``"omARI"``, ``"NVI"``,
``"ID"``, ``"NID"``, ``"VI.lb"``, ``"omARI.approx"`` (case-insensitive).

Each kind of loss binds itself to the engine through ``Loss._route(truth, engine)``, which
returns a :mod:`salsox.engine` route.
"""

from ..registry import declare_losses
from .base import CountLoss, Loss, PSMLoss
from .builtin import BUILTIN_LOSSES, ID, NID, NVI, OMARI, VI, Binder, OMARIApprox, VILowerBound
from .countsum import CountSumLoss
from .plugin_bases import ContingencyLoss, DecomposableLoss
from .resolve import TIERS, LossLike, get_loss, loss_tier

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
    "DecomposableLoss",
    "ContingencyLoss",
    "CountSumLoss",
    "get_loss",
    "loss_tier",
    "TIERS",
    "LossLike",
    "BUILTIN_LOSSES",
]

# Plugins provide Loss subclasses or instances, and may not take a built-in name.
declare_losses(Loss, [cls.name for cls in BUILTIN_LOSSES.values()])
