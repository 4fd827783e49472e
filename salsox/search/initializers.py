"""Initialisers: starting partitions for the runs, from plugins or functions.

``salso(draws, initializer="psm-hclust")`` calls a registered :class:`Initializer`, one given
directly, or a bare function ``f(draws, max_clusters, rng) -> labels``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np

from .._validation import relabel_rows
from ..io import Draws
from ..registry import PluginError, declare_initializers, registry

__all__ = ["Initializer", "InitializerLike", "get_initializer", "initial_partitions"]


@dataclasses.dataclass(frozen=True)
class Initializer:
    """A named initialiser: ``function(draws, max_clusters, rng) -> labels``.

    ``draws`` is the H x n int32 matrix of draws relabelled 0..k-1 (read-only), ``rng`` a
    ``numpy.random.Generator`` seeded from the search's seed and the run index, so results do
    not depend on ``n_jobs``. The function returns n integer labels with at most
    ``max_clusters`` distinct values (any values; they are relabelled; integral floats such as
    ``2.0``, as many k-means implementations return, count as integers). Set
    ``deterministic=True`` when the result ignores ``rng``: it is then computed once per search
    rather than once per run.

    ``setup``, optional, is a once-per-search step for the work all runs share (say, the
    posterior similarity matrix): ``setup(draws, max_clusters) -> state`` is called once per
    search, before the first run that uses the initialiser (not at all when none does), and
    the function then receives its result as a fourth argument,
    ``function(draws, max_clusters, rng, state)``. ``state`` is shared by the runs: treat it
    as read-only. Each search (each :func:`salsox.salso` call, each step of
    :func:`salsox.tune`) calls ``setup`` again, since the draws or the cap may differ.
    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1]]
    >>> first = salsox.plugins.Initializer("first-draw", lambda d, k, rng: d[0], deterministic=True)
    >>> est = salsox.salso(draws, initializer=first, seed=1)
    >>> est.info["initializer"], est.info["initialization"]
    ('first-draw', 'initializer')
    """

    name: str
    function: Callable[..., Any]
    description: str = ""
    deterministic: bool = False
    setup: Optional[Callable[[np.ndarray, int], Any]] = None

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise TypeError(
                f"initializer {self.name!r}: function must be callable, got {type(self.function).__name__}"
            )
        if self.setup is not None and not callable(self.setup):
            raise TypeError(
                f"initializer {self.name!r}: setup must be callable or None, got {type(self.setup).__name__}"
            )


# Plugins provide Initializer objects.
declare_initializers(Initializer)


InitializerLike = Union[str, Initializer, Callable[[np.ndarray, int, np.random.Generator], Any]]


def get_initializer(initializer: InitializerLike) -> Initializer:
    """Resolve a registered initialiser name, an :class:`Initializer` or a bare function.

    Examples
    --------
    >>> init = salsox.plugins.get_initializer(lambda draws, max_clusters, rng: draws[0])
    >>> init.name, init.deterministic
    ('<lambda>', False)
    """
    if isinstance(initializer, Initializer):
        return initializer
    if isinstance(initializer, str):
        info = registry().find_initializer(initializer)
        if info is None:
            known = ", ".join(sorted(registry().initializer_names())) or "none registered"
            raise ValueError(f"unknown initializer {initializer!r}; choose one of: {known}")
        return info.factory()
    if callable(initializer):
        return Initializer(getattr(initializer, "__name__", "<function>"), initializer)
    raise TypeError(
        f"initializer must be a registered name, a salsox.plugins.Initializer or a function, "
        f"got {type(initializer).__name__}"
    )


def _initializer_label(init: Initializer) -> str:
    try:
        info = registry().find_initializer(init.name) if init.name else None
    except PluginError:  # its name is in conflict: label it by name alone
        info = None
    if info is not None and info.factory() is init and info.source != "runtime":
        return f"initializer plugin {init.name!r} (from {info.source}, plugin {info.plugin!r})"
    return f"initializer plugin {init.name!r}"


def _setup(init: Initializer, draws: np.ndarray, max_clusters: int) -> Any:
    """The initialiser's once-per-search state (None without a setup step)."""
    if init.setup is None:
        return None
    try:
        return init.setup(draws, max_clusters)
    except Exception as err:
        raise PluginError(f"{_initializer_label(init)}: setup raised {type(err).__name__}: {err}") from err


def _call_initializer(
    init: Initializer, draws: np.ndarray, max_clusters: int, rng: np.random.Generator, state: Any = None
) -> np.ndarray:
    """One starting partition, validated and relabelled 0..q-1."""
    n = draws.shape[1]
    try:
        raw = init.function(draws, max_clusters, rng) if init.setup is None else init.function(
            draws, max_clusters, rng, state
        )
        labels = np.asarray(raw)
    except Exception as err:
        raise PluginError(f"{_initializer_label(init)} raised {type(err).__name__}: {err}") from err
    if labels.shape != (n,):
        raise PluginError(f"{_initializer_label(init)} returned shape {labels.shape}, expected ({n},)")
    if labels.dtype.kind == "f":
        # Many k-means implementations return float labels (0.0, 1.0, ...): integral ones are labels.
        bad = ~np.isfinite(labels) | (labels != np.round(labels))
        if np.any(bad):
            value = labels[np.flatnonzero(bad)[0]]
            raise PluginError(
                f"{_initializer_label(init)} returned the label {float(value)!r}; float labels must be integral"
            )
        if labels.size and np.max(np.abs(labels)) >= 2.0**53:
            raise PluginError(f"{_initializer_label(init)} returned float labels beyond 2**53 (not exact)")
        labels = labels.astype(np.int64)
    elif labels.dtype.kind not in "iu":
        raise PluginError(f"{_initializer_label(init)} returned dtype {labels.dtype}; labels must be integers")
    canonical = relabel_rows(labels.astype(np.int64, copy=False)[None, :])[0]
    q = int(canonical.max()) + 1
    if q > max_clusters:
        raise PluginError(
            f"{_initializer_label(init)} returned {q} clusters, more than max_clusters={max_clusters}"
        )
    return canonical


def initial_partitions(
    initializer: InitializerLike,
    prob: float,
    truth: Any,
    max_clusters: int,
    n_runs: int,
    seed: int,
) -> Tuple[np.ndarray, np.ndarray, str]:
    """Starting partitions for the runs that use ``initializer``.

    Run r uses it with probability ``prob`` (decided by the stream ``(seed, r, 1)``) and calls it
    with ``Generator(PCG64(SeedSequence([seed, r])))``, so results do not depend on ``n_jobs``.
    The initialiser's ``setup``, if any, runs once here, before the first such call.

    Returns
    -------
    initial : int32 (n_runs, n), used : uint8 (n_runs,), name : str

    Examples
    --------
    >>> draws = salsox.Draws([[0, 0, 1, 1], [0, 0, 1, 2]])
    >>> first = salsox.plugins.Initializer("first-draw", lambda d, k, rng: d[0], deterministic=True)
    >>> starts, used, name = salsox.plugins.initial_partitions(first, 1.0, draws, 3, 2, seed=7)
    >>> starts.tolist(), used.tolist(), name
    ([[0, 0, 1, 1], [0, 0, 1, 1]], [1, 1], 'first-draw')
    """
    init = get_initializer(initializer)
    if not isinstance(truth, Draws):
        raise ValueError("an initializer needs draws, not a PSM")
    draws = np.ascontiguousarray(truth.labels_matrix(), dtype=np.int32)
    draws.setflags(write=False)
    n = truth.n_items
    if prob >= 1.0:
        used = np.ones(n_runs, dtype=bool)
    else:
        # A stream of its own, so that the initialiser's stream does not depend on prob.
        u = [np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, r, 1]))).random() for r in range(n_runs)]
        used = np.array(u) < prob
    initial = np.zeros((n_runs, n), dtype=np.int32)
    first: Optional[np.ndarray] = None
    # The shared work once per search, and only when some run uses the initialiser.
    state = _setup(init, draws, max_clusters) if used.any() else None
    for r in np.flatnonzero(used):
        if init.deterministic and first is not None:
            initial[r] = first
            continue
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, int(r)])))
        initial[r] = first = _call_initializer(init, draws, max_clusters, rng, state)
    return initial, used.astype(np.uint8), init.name
