"""Engine routes (layer 3): each kind of loss bound to the C++ core the same way.

A route offers ``memory_bytes``/``check_memory``, ``search(options)``, ``losses(estimates,
n_jobs)``, and what Dask ships (``payload``/``with_payload``). Loss classes pick theirs in
``Loss._route(truth, engine)``; nothing above this layer branches on the kind of loss.
"""

from .base import (
    DEFAULT_MEMORY_LIMIT,
    PSM_MEMORY_LIMIT,
    Route,
    check_limit,
    check_square_memory,
    finite_losses,
    psm_matrix,
)
from .callback import MAX_BATCH_CELLS, CallbackRoute, table_function
from .counts import CoclusteringRoute, CountsRoute
from .countsum import CountSumRoute
from .psm import PSMRoute

__all__ = [
    "PSM_MEMORY_LIMIT",
    "MAX_BATCH_CELLS",
    "Route",
    "CountsRoute",
    "CoclusteringRoute",
    "CountSumRoute",
    "PSMRoute",
    "CallbackRoute",
    "check_square_memory",
    "finite_losses",
    "psm_matrix",
    "check_limit",
    "DEFAULT_MEMORY_LIMIT",
    "table_function",
]
