"""Uncertainty about the partition (layer 8): the credible ball (:mod:`.credible_ball`),
CHIPS sub-partitions (:mod:`.chips`) and WASABI's weighted particles (:mod:`.wasabi`, a
package). They may call the search.

The functions are exported by :mod:`salsox` (``salsox.credible_ball``, ``salsox.chips``); the
modules keep those names, so this package does not re-export the functions over them.
"""
