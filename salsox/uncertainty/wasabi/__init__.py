"""WASABI (Balocchi & Wade, arXiv:2506.16295): a clustering posterior summarised by a few
weighted partitions chosen to minimise the Wasserstein distance (VI ground metric) to the
draws.

Modules: :mod:`.api` (:func:`wasabi`, :func:`elbow`), :mod:`.fit` (one start's iterations),
:mod:`.init` (starting particles), :mod:`.draws` (distinct draws, the engine's VI matrix),
:mod:`.result` (:class:`WasabiResult`, :func:`meet`, :class:`Elbow`), :mod:`.contributions`
(per-item VI contributions).
"""

from .api import elbow, wasabi
from .contributions import evi_contributions, vi_contributions
from .result import Elbow, Meet, WasabiResult, meet

__all__ = [
    "wasabi",
    "elbow",
    "WasabiResult",
    "Elbow",
    "Meet",
    "meet",
    "vi_contributions",
    "evi_contributions",
]
