"""Example salsox loss plugins (installed under the ``salsox`` entry-point group).

* ``"vi-plugin"``: generalised variation of information as a :class:`DecomposableLoss`.
* ``"binder-plugin"``: generalised Binder loss as a :class:`DecomposableLoss`.
* ``"omari-numpy"``: one minus the adjusted Rand index in numpy, a :class:`ContingencyLoss`
  run through the generic (callback) path.
* ``"jaccard"``, ``"fowlkes-mallows"``, ``"nmi-sqrt"``: pair-counting and information indices
  as :class:`CountSumLoss` formulas, evaluated by the engine at native speed.

The first three re-declare losses salsox has built in, so that their results can be checked against the
built-in ones; use them as templates for new losses.
"""

from .losses import BinderPlugin, FowlkesMallows, Jaccard, NMISqrt, OMARINumpy, VIPlugin

__all__ = ["BinderPlugin", "FowlkesMallows", "Jaccard", "NMISqrt", "OMARINumpy", "VIPlugin"]
__version__ = "0.1.0"
