"""Convergence diagnostics for partition-valued MCMC chains: :func:`diagnose`.

Modules: :mod:`.api` (:func:`diagnose`), :mod:`.chains` (the input layouts, split into
chains), :mod:`.mapping` (partitions mapped to real traces by the engine: distances to
reference draws, per-draw losses), :mod:`.result` (:class:`Diagnosis`), :mod:`._arviz`
(ArviZ's R-hat, ESS and MCSE, an optional dependency).
"""

from .api import diagnose
from .result import Diagnosis

__all__ = ["diagnose", "Diagnosis"]
