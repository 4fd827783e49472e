"""The search (layer 7): :func:`salso`, :func:`dlso`, the :class:`Estimate` they return,
initialisers, the Dask runner, and :func:`tune` (a search wrapper)."""

from .dlso_search import dlso
from .estimate import Estimate
from .initializers import Initializer, get_initializer
from .salso_search import salso

__all__ = ["Estimate", "Initializer", "dlso", "get_initializer", "salso"]
