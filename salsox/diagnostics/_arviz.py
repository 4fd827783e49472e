"""ArviZ's convergence statistics (an optional dependency: ``pip install 'salsox[diagnostics]'``).

salsox does not re-implement them: rank-normalised split R-hat, bulk and tail ESS (Vehtari,
Gelman, Simpson, Carpenter and Bürkner 2021) and the Monte Carlo standard error of a mean are
ArviZ's ``rhat``, ``ess`` and ``mcse``, called on (chain, draw) arrays.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

__all__ = ["arviz", "rhat", "ess_bulk", "ess_tail", "mcse_mean"]


def arviz() -> Any:
    """The ``arviz`` module, or an ImportError saying how to install it."""
    try:
        with warnings.catch_warnings():
            # ArviZ 0.2x announces its coming refactor with a FutureWarning on import.
            warnings.simplefilter("ignore", FutureWarning)
            import arviz as az
    except ImportError:
        raise ImportError(
            "salsox.diagnose needs ArviZ for R-hat, ESS and MCSE, an optional dependency: "
            "pip install 'salsox[diagnostics]' (or pip install arviz)"
        ) from None
    return az


def _constant(x: np.ndarray) -> bool:
    return bool(np.all(x == x.flat[0]))


def rhat(x: np.ndarray) -> float:
    """Rank-normalised split R-hat of a (chain, draw) trace; NaN for a constant trace (it says
    nothing, and every chain agrees), inf when every half-chain is constant but not all alike
    (ArviZ divides by a within-chain variance that rounding leaves at 1e-30 or so, not 0)."""
    if _constant(x):
        return float("nan")
    half = x.shape[1] // 2
    halves = np.concatenate([x[:, :half], x[:, x.shape[1] - half :]])
    if np.all(halves == halves[:, :1]):
        return float("inf") if np.any(halves != halves[0, 0]) else float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(arviz().rhat(x, method="rank"))


def ess_bulk(x: np.ndarray) -> float:
    """Bulk effective sample size of a (chain, draw) trace; NaN for a constant trace."""
    if _constant(x):
        return float("nan")
    return float(arviz().ess(x, method="bulk"))


def ess_tail(x: np.ndarray) -> float:
    """Tail effective sample size (the 5% and 95% quantiles) of a (chain, draw) trace; NaN for a
    constant trace."""
    if _constant(x):
        return float("nan")
    return float(arviz().ess(x, method="tail"))


def mcse_mean(x: np.ndarray) -> float:
    """Monte Carlo standard error of the mean of a (chain, draw) trace, from its
    autocorrelation (one chain is allowed); 0 for a constant trace."""
    if _constant(x):
        return 0.0
    return float(arviz().mcse(x, method="mean"))
