"""Convergence diagnostics for partition-valued MCMC chains: :func:`diagnose`.

Modules: :mod:`.api` (:func:`diagnose`), :mod:`.chains` (the input layouts, split into
chains), :mod:`.mapping` (partitions mapped to real traces by the engine: distances to
reference draws, per-draw losses, the travelling-salesman tour), :mod:`.calibration` (the
block-relabelling nulls of the largest R-hat and of the gap between chains), :mod:`.result`
(:class:`Diagnosis` and its verdict), :mod:`._arviz` (ArviZ's R-hat, ESS and MCSE, an optional
dependency).
"""

from .api import diagnose
from .result import Diagnosis

__all__ = ["diagnose", "Diagnosis"]
