"""Plugins: third-party losses and initialisers, found through pluggy entry points.

See :mod:`salsox.hookspecs` for the hooks and ``docs/plugins.md`` for a worked example.
Three kinds of Python loss are supported:

* :class:`DecomposableLoss` -- the loss is a sum of a function of each draw cluster's size,
  of each estimate cluster's size and of each contingency-table cell (the form of Binder and
  VI). The engine tabulates the three functions once for counts 0..n and then searches at
  native speed.
* :class:`CountSumLoss` -- a formula in a few per-draw sums of functions of counts (Jaccard,
  Fowlkes-Mallows, NMI...): the functions are tabulated, the formula compiled (never eval'd)
  and evaluated natively by the engine.
* :class:`ContingencyLoss` -- any function of the contingency table between the estimate and a
  draw. The C++ search calls it, batched over draws and candidate moves, through a slower
  generic path.

Initialisers (:class:`Initializer`) give runs their starting partitions:
``salso(draws, initializer="psm-hclust")``.

Installed packages declare plugins under the ``salsox`` entry-point group; they are loaded on
first use. :func:`register` adds one at runtime (a notebook, a test) and :func:`list_plugins`
shows what is registered.

This module is the facade for plugin authors: it re-exports from :mod:`salsox.registry`,
:mod:`salsox.losses` and :mod:`salsox.search`, and has no logic of its own.
"""

from ..engine import MAX_BATCH_CELLS
from ..losses import ContingencyLoss, CountSumLoss, DecomposableLoss
from ..registry import (
    PluginError,
    PluginInfo,
    PluginWarning,
    list_plugins,
    register,
    registry,
    unregister,
)
from ..search.initializers import Initializer, get_initializer, initial_partitions

__all__ = [
    "DecomposableLoss",
    "ContingencyLoss",
    "CountSumLoss",
    "Initializer",
    "PluginInfo",
    "PluginError",
    "PluginWarning",
    "MAX_BATCH_CELLS",
    "register",
    "unregister",
    "registry",
    "list_plugins",
    "get_initializer",
    "initial_partitions",
]
