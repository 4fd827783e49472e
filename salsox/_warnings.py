"""The warning class of salsox (layer 0: imports nothing of salsox)."""

from __future__ import annotations

__all__ = ["SalsoxWarning"]


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
