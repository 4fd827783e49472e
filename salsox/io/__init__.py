"""Inputs: posterior draws (:class:`Draws`), similarity matrices (:class:`PSM`), draws from
xarray / ArviZ, and the file readers of the command line.

Layer 1: imports only the compiled core and :mod:`salsox._validation`.
"""

from .item_index import (
    InItemOrder,
    NamedLabels,
    PositionalMatchWarning,
    align,
    aligned,
    check_item_names,
    labels_and_names,
    labels_series,
    matched,
    pandas_index,
)
from .draws import Draws, as_draws
from .foreign import convert_foreign, convert_foreign_named, from_arviz, from_xarray, item_names_of
from .psm import PSM, refuse_similarity
from .files import read_draws

__all__ = [
    "NamedLabels",
    "InItemOrder",
    "PositionalMatchWarning",
    "align",
    "aligned",
    "check_item_names",
    "labels_and_names",
    "matched",
    "labels_series",
    "pandas_index",
    "Draws",
    "as_draws",
    "PSM",
    "refuse_similarity",
    "convert_foreign",
    "convert_foreign_named",
    "from_arviz",
    "from_xarray",
    "item_names_of",
    "read_draws",
]
