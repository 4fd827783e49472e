"""salsox: Bayesian partition estimation by the SALSO search, with a C++/OpenMP core.

Given H posterior draws of a clustering of n items, find the partition minimising the Monte
Carlo expected loss (Dahl, Johnson & Mueller, JCGS 2022)::

    import salsox
    est = salsox.salso(draws, loss="VI")       # draws: H x n integer labels
    est.labels, est.expected_loss, est.n_clusters
"""

from ._version import __version__

# The compiled engine first: without it every other import fails, and from a source checkout
# (no extension built beside the sources) Python would report a confusing circular import.
try:
    from . import _core  # noqa: F401
except ImportError as _err:  # pragma: no cover - exercised in a subprocess by the tests
    import importlib.util as _util
    import os as _os

    if _util.find_spec(f"{__name__}._core") is None:

        raise ImportError(
            f"salsox's compiled extension (salsox._core) is missing from {_os.path.dirname(__file__)}: "
            "this is probably salsox's source tree, which holds no compiled extension. Build and install "
            "it (pip install . , or pip install -e . for development), then import it from outside the "
            "source checkout."
        ) from None
    raise ImportError(f"salsox's compiled extension (salsox._core) failed to load: {_err}") from _err
from ._warnings import SalsoxWarning
from . import losses, plugins, progress
from .io import PSM, Draws, PositionalMatchWarning, from_arviz, from_xarray, read_draws
from .enumeration import bell, enumerate_partitions, lbell, minimize_by_enumeration
from .metrics import ARI, RI, canonicalize_labels, partition_loss, psm
from .hookspecs import hookimpl
from .losses import ID, NID, NVI, OMARI, VI, Binder, OMARIApprox, VILowerBound
from .search import Estimate, dlso, salso
from .progress import ProgressBar, SearchProgress
from .summaries import Summary, summarize
from .uncertainty.credible_ball import CredibleBall, credible_ball
from .uncertainty.chips import ChipsResult, chips
from .uncertainty.wasabi import WasabiResult, evi_contributions, vi_contributions, wasabi
from .uncertainty.wasabi import elbow as wasabi_elbow
from .search.tuning import TuneResult, tune
from ._config import show_config
from .diagnostics import Diagnosis, diagnose
from . import plots  # matplotlib itself is imported only when a plot is drawn

__all__ = [
    "__version__",
    "ARI",
    "Binder",
    "Draws",
    "Estimate",
    "ID",
    "NID",
    "NVI",
    "OMARI",
    "OMARIApprox",
    "PSM",
    "RI",
    "SalsoxWarning",
    "PositionalMatchWarning",
    "VI",
    "VILowerBound",
    "bell",
    "canonicalize_labels",
    "dlso",
    "enumerate_partitions",
    "lbell",
    "hookimpl",
    "losses",
    "plugins",
    "minimize_by_enumeration",
    "partition_loss",
    "psm",
    "salso",
    "Summary",
    "summarize",
    "CredibleBall",
    "credible_ball",
    "ChipsResult",
    "chips",
    "WasabiResult",
    "wasabi",
    "wasabi_elbow",
    "vi_contributions",
    "evi_contributions",
    "TuneResult",
    "tune",
    "Diagnosis",
    "diagnose",
    "from_arviz",
    "from_xarray",
    "read_draws",
    "plots",
    "ProgressBar",
    "SearchProgress",
    "progress",
    "show_config",
]
