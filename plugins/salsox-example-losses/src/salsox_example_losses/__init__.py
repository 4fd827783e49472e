"""Example salsox loss plugins (installed under the ``salsox`` entry-point group).

* ``"vi-plugin"``: generalised variation of information as a :class:`DecomposableLoss`.
* ``"binder-plugin"``: generalised Binder loss as a :class:`DecomposableLoss`.
* ``"omari-numpy"``: one minus the adjusted Rand index in numpy, a :class:`ContingencyLoss`
  run through the generic (callback) path.

They re-declare losses salsox has built in, so that their results can be checked against the
built-in ones; use them as templates for new losses.
"""

from .losses import BinderPlugin, OMARINumpy, VIPlugin

__all__ = ["BinderPlugin", "OMARINumpy", "VIPlugin"]
__version__ = "0.1.0"
