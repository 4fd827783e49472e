"""The warning class of salsox (layer 0: imports nothing of salsox)."""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["SalsoxWarning", "warn_at_caller"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


class SalsoxWarning(UserWarning):
    """A result that is valid but may not be what was asked for, as R salso warns: fewer runs
    than requested because the ``seconds`` budget ran out, or an estimate with as many
    clusters as the default cap allows (raise ``max_clusters``).

    Filter them as usual, e.g. ``warnings.simplefilter("error", salsox.SalsoxWarning)``.

    Examples
    --------
    >>> import warnings
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 1], [0, 1, 1, 1]]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     est = salsox.salso(draws, "VI", seed=1)
    >>> est.n_clusters, caught[0].category.__name__
    (2, 'SalsoxWarning')
    >>> str(caught[0].message).startswith("the estimate has 2 clusters, the default cap")
    True
    """


def warn_at_caller(message: str, category: type = SalsoxWarning) -> None:
    """Warn at the first frame outside salsox: the user's own call, however deep inside salsox
    the warning arises (``salso`` called by ``chips``, ``tune``, a ``threshold`` method...)."""
    frame = sys._getframe(1)
    level = 2  # stacklevel 2 is warn_at_caller's caller
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
