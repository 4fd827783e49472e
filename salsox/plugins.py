"""Plugins: third-party losses and initialisers, found through pluggy entry points.

See :mod:`salsox.hookspecs` for the hooks and ``docs/plugins.md`` for a worked example.
Two kinds of Python loss are supported:

* :class:`DecomposableLoss` -- the loss is a sum of a function of each draw cluster's size,
  of each estimate cluster's size and of each contingency-table cell (the form of Binder and
  VI). The engine tabulates the three functions once for counts 0..n and then searches at
  native speed.
* :class:`ContingencyLoss` -- any function of the contingency table between the estimate and a
  draw. The C++ search calls it, batched over draws and candidate moves, through a slower
  generic path.

Initialisers (:class:`Initializer`) give runs their starting partitions:
``salso(draws, initializer="psm-hclust")``.

Installed packages declare plugins under the ``salsox`` entry-point group; they are loaded on
first use. :func:`register` adds one at runtime (a notebook, a test) and :func:`list_plugins`
shows what is registered.
"""

from __future__ import annotations

import abc
import dataclasses
import threading
import warnings
from collections import Counter
from importlib import metadata
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Union, cast

import numpy as np
import pluggy

from . import _core, hookspecs
from ._validation import relabel_rows
from .losses import BUILTIN_LOSSES, CountLoss, Loss

__all__ = [
    "DecomposableLoss",
    "ContingencyLoss",
    "Initializer",
    "PluginInfo",
    "PluginError",
    "PluginWarning",
    "register",
    "unregister",
    "registry",
    "list_plugins",
    "get_initializer",
]

# Largest batch of tables the generic path hands a loss at once (int64 cells, 32 MiB).
MAX_BATCH_CELLS = 1 << 22

# Losses this far below zero are rounding noise (clamped to 0); further below is an error.
_NEGATIVE_TOLERANCE = 1e-9

# Largest loss a decomposable plugin may reach: sums of it over ~1e18 draws stay finite.
_MAX_LOSS_BOUND = 1e290


class PluginError(RuntimeError):
    """A plugin misbehaved (raised, or returned values of the wrong shape, NaN or negative)."""


class PluginWarning(UserWarning):
    """A plugin failed (import, hook, a bad object) or a name it provides clashes: that entry
    is listed by :func:`list_plugins` with its error and skipped; everything else works.
    Issued once per problem."""


class DecomposableLoss(CountLoss):
    """Base class of losses that decompose over counts, evaluated at native speed.

    The loss between a draw with clusters S and an estimate with clusters T of n items is::

        sum_S draw_term(|S|) + sum_T estimate_term(|T|) + sum_{S,T} cell_term(|S n T|)

    Subclasses set ``name`` and implement the three methods as vectorised numpy functions of
    an integer array of counts and of n; each must be 0 at count 0 (empty clusters and cells
    contribute nothing). The loss must be >= 0, and 0 when the partitions are equal.

    The terms are evaluated once per search for counts 0..n and checked: finite, 0 at 0, a
    partition at zero loss from itself and non-negative losses between the one-cluster and
    all-singletons partitions. Failures raise :class:`PluginError`.
    """

    @abc.abstractmethod
    def draw_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        """Contribution of a draw cluster of each size in ``counts``."""

    @abc.abstractmethod
    def estimate_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        """Contribution of an estimate cluster of each size in ``counts``."""

    @abc.abstractmethod
    def cell_term(self, counts: np.ndarray, n: int) -> np.ndarray:
        """Contribution of a contingency-table cell of each count in ``counts``."""

    def _count_loss(self, n: int) -> "_core.CountLoss":
        who = _loss_label(self)
        counts = np.arange(n + 1, dtype=np.int64)
        tables = []
        for method in ("draw_term", "estimate_term", "cell_term"):
            try:
                values = np.asarray(getattr(self, method)(counts, n), dtype=np.float64)
            except Exception as err:
                raise PluginError(f"{who}: {method} raised {type(err).__name__}: {err}") from err
            if values.shape != counts.shape:
                raise PluginError(f"{who}: {method} returned shape {values.shape}, expected {counts.shape}")
            if not np.all(np.isfinite(values)):
                raise PluginError(f"{who}: {method} returned NaN or infinite values")
            if values[0] != 0.0:
                raise PluginError(f"{who}: {method}(0) must be 0, got {values[0]!r}")
            tables.append(values)
        # Any loss is a sum of at most n terms of each kind: bounded by n * (the three largest
        # terms). Far below the float range, no sum the engine forms (over draws too) overflows
        # to inf or NaN.
        bound = float(n) * sum(float(np.max(np.abs(t))) for t in tables)
        if not bound <= _MAX_LOSS_BOUND:
            raise PluginError(
                f"{who}: terms this large (losses up to {bound:.3g} for n = {n}) overflow; "
                f"n * (max |draw_term| + max |estimate_term| + max |cell_term|) must be at most {_MAX_LOSS_BOUND:.0e}"
            )
        _check_decomposition(who, n, *tables)
        return _core.CountLoss.tabulated(*(t.tolist() for t in tables))


def _check_decomposition(who: str, n: int, g_draw: np.ndarray, g_est: np.ndarray, g_cell: np.ndarray) -> None:
    """Cheap sanity checks of a decomposable loss on the two extreme partitions."""
    scale = max(1.0, float(np.max(np.abs(np.concatenate([g_draw, g_est, g_cell])))) * n)
    tol = 1e-9 * scale
    same_one = g_draw[n] + g_est[n] + g_cell[n]
    same_singletons = n * (g_draw[1] + g_est[1] + g_cell[1])
    for what, value in (("one cluster", same_one), ("all singletons", same_singletons)):
        if abs(value) > tol:
            raise PluginError(f"{who}: the loss of {what} against itself is {float(value)!r}, not 0")
    one_vs_singletons = g_draw[n] + n * g_est[1] + n * g_cell[1]
    singletons_vs_one = n * g_draw[1] + g_est[n] + n * g_cell[1]
    for what, value in (
        ("estimate all singletons, draw one cluster", one_vs_singletons),
        ("estimate one cluster, draw all singletons", singletons_vs_one),
    ):
        if value < -tol:
            raise PluginError(f"{who}: negative loss {float(value)!r} ({what})")


class ContingencyLoss(Loss):
    """Base class of general losses: any function of the contingency table.

    Subclasses set ``name`` and implement :meth:`loss`. With ``vectorized = True`` (the
    default) it receives a batch of tables, int64 of shape (B, R, C) with draw clusters as rows
    and estimate clusters as columns, and returns B losses; the engine batches all draws and
    all candidate moves of one item into as few calls as memory allows (at most
    ``MAX_BATCH_CELLS`` cells each). With ``vectorized = False`` it receives one (R, C) table
    and returns a float, and the engine loops in Python: correct, but very slow.

    Tables may contain zero rows and columns (padding, empty clusters), which must not change
    the value, and during the search they may cover only some of the items (partial
    allocations), so compute n as ``tables.sum()`` per table, not from the data. The batch is
    read-only and reused after the call: copy it to keep it. Losses must be finite and >= 0
    (values above -1e-9 are taken as rounding and clamped to 0).
    """

    vectorized: bool = True

    @abc.abstractmethod
    def loss(self, tables: np.ndarray) -> Any:
        """Losses of ``tables`` (int64, (B, R, C) -> (B,), or (R, C) -> float if not vectorized)."""


@dataclasses.dataclass(frozen=True)
class Initializer:
    """A named initialiser: ``function(draws, max_clusters, rng) -> labels``.

    ``draws`` is the H x n int32 matrix of draws relabelled 0..k-1 (read-only), ``rng`` a
    ``numpy.random.Generator`` seeded from the search's seed and the run index, so results do
    not depend on ``n_jobs``. The function returns n integer labels with at most
    ``max_clusters`` distinct values (any values; they are relabelled). Set
    ``deterministic=True`` when the result ignores ``rng``: it is then computed once per search
    rather than once per run.
    """

    name: str
    function: Callable[[np.ndarray, int, np.random.Generator], Any]
    description: str = ""
    deterministic: bool = False


@dataclasses.dataclass(frozen=True)
class PluginInfo:
    """One registered loss or initialiser, or a plugin that failed.

    Attributes
    ----------
    name : str
        The name that selects it (``salso(..., loss=name)``, ``initializer=name``); for a
        whole plugin that failed (``kind == "plugin"``), the plugin's registration name.
    kind : str
        ``"loss"``, ``"initializer"``, or ``"plugin"`` for a plugin whose module failed to
        import or whose hook raised (what it provides is then unknown).
    source : str
        Distribution and version that provides it, or ``"runtime"``.
    factory : callable
        Zero-argument factory returning the loss or :class:`Initializer` (for a broken
        entry, it raises :class:`PluginError` with ``error``).
    plugin : str
        Name under which the providing plugin is registered (for :func:`unregister`).
    status : str
        ``"ok"``; ``"broken"`` (the plugin failed: ``error`` says how); or ``"conflict"``
        (the name is built in, or provided by more than one plugin: not selectable by it).
    error : str
        Why the entry is broken or in conflict (empty when ``status == "ok"``).
    """

    name: str
    kind: str
    source: str
    factory: Callable[..., Any]
    plugin: str = ""
    status: str = "ok"
    error: str = ""

    @property
    def ok(self) -> bool:
        """Whether the entry is usable by its name."""
        return self.status == "ok"


def _broken(name: str, kind: str, source: str, plugin: str, error: str) -> PluginInfo:
    """The listing entry of something a plugin failed to provide."""

    def unusable(*args: Any, **kwargs: Any) -> Any:
        raise PluginError(error)

    return PluginInfo(name, kind, source, unusable, plugin, "broken", error)


def _error_text(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


class _SinglePlugin:
    """Wraps one loss or initialiser given directly to :func:`register`."""

    def __init__(self, obj: Any, kind: str) -> None:
        self.obj = obj
        self.kind = kind

    @hookspecs.hookimpl
    def salsox_losses(self) -> List[Any]:
        return [self.obj] if self.kind == "loss" else []

    @hookspecs.hookimpl
    def salsox_initializers(self) -> List[Any]:
        return [self.obj] if self.kind == "initializer" else []


def _single_kind(obj: Any) -> Optional[str]:
    if isinstance(obj, Initializer):
        return "initializer"
    if isinstance(obj, Loss) or (isinstance(obj, type) and issubclass(obj, Loss)):
        return "loss"
    return None


class _Registry:
    """Plugins of one process. A plugin that fails (import, hook, a bad object, a name
    clash) is listed with its error and warned about once; it never breaks the others."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._pm = pluggy.PluginManager("salsox")
        self._pm.add_hookspecs(hookspecs)
        self._loaded = False
        self._loading = False
        self._tried: Set[str] = set()  # entry points loaded or failed (not retried)
        self._failed: List[PluginInfo] = []  # entry points that failed to load
        self._sources: Dict[int, str] = {}
        self._wrappers: Dict[int, _SinglePlugin] = {}
        self._cache: Optional[List[PluginInfo]] = None
        self._warned: Set[str] = set()

    def _ensure_loaded(self) -> None:
        with self._lock:
            # _loading: a plugin module that looks plugins up while it is being imported.
            if self._loaded or self._loading:
                return
            self._loading = True
            try:
                self._load_entry_points()
                # Only once every entry point was tried: a load interrupted by Ctrl-C (which
                # propagates) resumes at the next lookup, keeping what was already loaded.
                self._loaded = True
            finally:
                self._loading = False
                self._cache = None

    def _load_entry_points(self) -> None:
        points: List[Any] = []
        for ep in _entry_points("salsox"):
            if not any(ep.name == p.name and ep.value == p.value for p in points):
                points.append(ep)  # the same entry point twice on sys.path is one plugin
        taken = Counter(ep.name for ep in points)
        for ep in points:
            # Entry points of one name from different packages are all loaded, under
            # distinct names, rather than the first hiding the others.
            name = ep.name if taken[ep.name] == 1 else f"{ep.name} ({ep.value})"
            if name in self._tried or self._pm.is_blocked(name):
                continue
            dist = getattr(ep, "dist", None)
            source = f"{dist.metadata['Name']} {dist.version}" if dist else ep.value
            try:
                if self._pm.get_plugin(name) is not None:
                    raise ValueError(f"the name {name!r} is already registered at runtime")
                plugin = ep.load()
                self._pm.register(plugin, name=name)
            except KeyboardInterrupt:
                raise
            except BaseException as err:  # SystemExit too: one broken plugin must not end salsox
                error = f"plugin {name!r}: entry point {ep.value!r} failed to load: {_error_text(err)}"
                self._failed.append(_broken(name, "plugin", source, name, error))
            else:
                self._sources[id(plugin)] = source
            self._tried.add(name)

    def register(self, plugin: Any, name: Optional[str] = None) -> str:
        self._ensure_loaded()
        with self._lock:
            kind = _single_kind(plugin)
            target: Any = plugin
            if kind is not None:
                target = _SinglePlugin(plugin, kind)
                if name is None:
                    name = f"{kind}:{getattr(plugin, 'name', '') or id(plugin)}"
            registered = self._pm.register(target, name=name)
            if registered is None:
                raise ValueError(f"plugin {name or plugin!r} is blocked")
            self._sources.setdefault(id(target), "runtime")
            if kind is not None:
                self._wrappers[id(plugin)] = target
            self._cache = None
            try:
                entries = self._collect()  # validates names now, not at first use
                problems = [e for e in entries if e.plugin == registered and not e.ok]
                if problems:
                    raise PluginError(_refusal(registered, problems[0], entries))
            except BaseException:
                self._pm.unregister(target)
                self._wrappers.pop(id(plugin), None)
                self._cache = None
                raise
            self._cache = entries
            self._warn_new(entries)
            return registered

    def unregister(self, plugin: Any = None, name: Optional[str] = None) -> None:
        self._ensure_loaded()
        with self._lock:
            if plugin is not None:
                plugin = self._wrappers.pop(id(plugin), plugin)
                if not self._pm.is_registered(plugin):
                    raise ValueError(f"plugin {plugin!r} is not registered")
            elif name is None or self._pm.get_plugin(name) is None:
                raise ValueError(f"no plugin registered under the name {name!r}")
            removed = self._pm.unregister(plugin=plugin, name=name)
            for key, wrapper in list(self._wrappers.items()):
                if wrapper is removed:
                    del self._wrappers[key]
            self._cache = None

    def entries(self) -> List[PluginInfo]:
        """Every entry, usable or not (see :attr:`PluginInfo.status`)."""
        self._ensure_loaded()
        with self._lock:
            if self._cache is None:
                self._cache = self._collect()
                self._warn_new(self._cache)
            return list(self._cache)

    def _warn_new(self, entries: List[PluginInfo]) -> None:
        """One :class:`PluginWarning` per problem, the first time it is seen."""
        for info in entries:
            if info.ok or info.error in self._warned:
                continue
            self._warned.add(info.error)  # a conflict is one problem, listed under each plugin
            warnings.warn(f"salsox: {info.error}", PluginWarning, stacklevel=4)

    def _collect(self) -> List[PluginInfo]:
        out: List[PluginInfo] = []
        for kind, hook in (("loss", self._pm.hook.salsox_losses), ("initializer", self._pm.hook.salsox_initializers)):
            for impl in hook.get_hookimpls():
                source = self._sources.get(id(impl.plugin), "runtime")
                try:
                    provided = list(cast(Sequence[Any], impl.function() or ()))
                except KeyboardInterrupt:
                    raise
                except BaseException as err:
                    error = f"plugin {impl.plugin_name!r} failed in {hook.name}: {_error_text(err)}"
                    out.append(_broken(impl.plugin_name, "plugin", source, impl.plugin_name, error))
                    continue
                for obj in provided:
                    try:
                        out.append(_describe(obj, kind, source, impl.plugin_name))
                    except KeyboardInterrupt:
                        raise
                    except BaseException as err:
                        error = str(err) if isinstance(err, PluginError) else (
                            f"plugin {impl.plugin_name!r}: {kind} {obj!r} failed: {_error_text(err)}"
                        )
                        label = getattr(obj, "name", None)
                        label = label if isinstance(label, str) and label else repr(obj)
                        out.append(_broken(label, kind, source, impl.plugin_name, error))
        return _mark_conflicts(out) + self._failed

    def _find(self, kind: str, name: str) -> Optional[PluginInfo]:
        """The usable entry called ``name``; a :class:`PluginError` if it is broken or in
        conflict; None if no plugin provides it."""
        found = [i for i in self.entries() if i.kind == kind and i.name.lower() == name.lower()]
        usable = [i for i in found if i.ok]
        if usable:
            return usable[0]
        if found:
            raise PluginError("; ".join(dict.fromkeys(i.error for i in found)))
        return None

    def find_loss(self, name: str) -> Optional[PluginInfo]:
        return self._find("loss", name)

    def find_initializer(self, name: str) -> Optional[PluginInfo]:
        return self._find("initializer", name)

    def loss_names(self) -> List[str]:
        return [i.name for i in self.entries() if i.kind == "loss" and i.ok]

    def initializer_names(self) -> List[str]:
        return [i.name for i in self.entries() if i.kind == "initializer" and i.ok]


def _quoted(names: Sequence[str]) -> str:
    items = [repr(n) for n in names]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _mark_conflicts(entries: List[PluginInfo]) -> List[PluginInfo]:
    """Usable entries whose name is built in, or provided more than once, become conflicts:
    the built-in wins; between plugins neither does, so no install order decides silently."""
    groups: Dict[Tuple[str, str], List[int]] = {}
    for index, info in enumerate(entries):
        if info.ok and info.kind in ("loss", "initializer"):
            groups.setdefault((info.kind, info.name.lower()), []).append(index)
    out = list(entries)
    for (kind, lower), indices in groups.items():
        name = out[indices[0]].name
        if kind == "loss" and lower in BUILTIN_LOSSES:
            for index in indices:
                info = out[index]
                error = (
                    f"plugin {info.plugin!r}: loss name {info.name!r} is built in; "
                    f"{info.name!r} selects the built-in loss {BUILTIN_LOSSES[lower].name!r}"
                )
                out[index] = dataclasses.replace(info, status="conflict", error=error)
        elif len(indices) > 1:
            owners = list(dict.fromkeys(out[index].plugin for index in indices))
            where = f"plugins {_quoted(owners)}" if len(owners) > 1 else f"plugin {owners[0]!r} more than once"
            error = f"{kind} name {name!r} is provided by {where}; it is not used until only one provides it"
            for index in indices:
                out[index] = dataclasses.replace(out[index], status="conflict", error=error)
    return out


def _refusal(registered: str, problem: PluginInfo, entries: List[PluginInfo]) -> str:
    """Why :func:`register` refuses a plugin (its first problem)."""
    if problem.status == "conflict":
        lower = problem.name.lower()
        others = sorted(
            {e.plugin for e in entries if e.kind == problem.kind and e.name.lower() == lower and e.plugin != registered}
        )
        if others:
            who = "plugin" if len(others) == 1 else "plugins"
            return (
                f"plugin {registered!r}: {problem.kind} name {problem.name!r} is already provided by "
                f"{who} {_quoted(others)}"
            )
    return problem.error


def _entry_points(group: str) -> List[Any]:
    try:
        return list(metadata.entry_points(group=group))
    except TypeError:  # Python 3.9
        return list(metadata.entry_points().get(group, []))


def _describe(obj: Any, kind: str, source: str, plugin_name: str) -> PluginInfo:
    if kind == "initializer":
        if not isinstance(obj, Initializer):
            raise PluginError(f"plugin {plugin_name!r}: initialisers must be salsox.plugins.Initializer objects")
        if not obj.name or not isinstance(obj.name, str) or not callable(obj.function):
            raise PluginError(f"plugin {plugin_name!r}: initialiser {obj!r} needs a name and a callable function")
        return PluginInfo(obj.name, kind, source, lambda obj=obj: obj, plugin_name)
    if isinstance(obj, type) and issubclass(obj, Loss):
        name = getattr(obj, "name", "")
        factory: Callable[..., Any] = obj
    elif isinstance(obj, Loss):
        name, factory = obj.name, (lambda obj=obj: obj)
    elif callable(obj):
        try:
            probe = obj()
        except Exception as err:
            raise PluginError(f"plugin {plugin_name!r}: loss factory {obj!r} raised {err!r}") from err
        if not isinstance(probe, Loss):
            raise PluginError(f"plugin {plugin_name!r}: loss factory {obj!r} did not return a salsox Loss")
        name, factory = probe.name, obj
    else:
        raise PluginError(f"plugin {plugin_name!r}: {obj!r} is not a loss class, instance or factory")
    if not name or not isinstance(name, str):
        raise PluginError(f"plugin {plugin_name!r}: loss {obj!r} has no name")
    return PluginInfo(name, kind, source, factory, plugin_name)


_REGISTRY = _Registry()


def registry() -> _Registry:
    """The process-wide plugin registry (entry points are loaded on first use)."""
    return _REGISTRY


def register(plugin: Any, name: Optional[str] = None) -> str:
    """Register a plugin at runtime, without packaging (a notebook, a test).

    Parameters
    ----------
    plugin : module, class or object with ``@salsox.hookimpl`` hooks; or directly a loss
        (a :class:`DecomposableLoss` / :class:`ContingencyLoss` subclass or instance) or an
        :class:`Initializer`.
    name : str, optional
        Registration name (default: pluggy's for hook objects, ``"loss:<name>"`` or
        ``"initializer:<name>"`` for a loss or initialiser given directly).

    Returns
    -------
    str
        The registration name.

    Raises
    ------
    PluginError
        When a provided name is built in or already provided by another plugin, when a hook
        raises or provides something that is not a loss or initialiser (nothing is registered
        then: unlike installed plugins, which are listed as broken, a runtime one is refused).
    ValueError
        When the plugin or name is already registered.
    """
    return _REGISTRY.register(plugin, name=name)


def unregister(plugin: Any = None, name: Optional[str] = None) -> None:
    """Remove a plugin registered with :func:`register`, by object or by registration name."""
    _REGISTRY.unregister(plugin, name=name)


def list_plugins() -> List[PluginInfo]:
    """Every loss and initialiser that plugins provide: name, kind and source package.

    Plugins that failed are listed too, with ``status`` ``"broken"`` or ``"conflict"`` and
    the reason in ``error`` (see :class:`PluginInfo`); only entries with status ``"ok"`` can
    be selected by name.
    """
    return _REGISTRY.entries()


# ---------------------------------------------------------------------------------------------
# Generic path: Python losses of contingency tables, called by the C++ search.
# ---------------------------------------------------------------------------------------------


def _loss_label(loss: Loss) -> str:
    """How errors name a loss: its name and the plugin providing it."""
    try:
        info = _REGISTRY.find_loss(loss.name) if loss.name else None
    except PluginError:
        info = None
    if info is not None and info.source != "runtime":
        return f"loss plugin {loss.name!r} (from {info.source}, plugin {info.plugin!r})"
    if info is not None:
        return f"loss plugin {loss.name!r} (plugin {info.plugin!r})"
    return f"loss plugin {loss.name!r} ({type(loss).__name__})"


def _table_function(loss: ContingencyLoss) -> Callable[[np.ndarray], np.ndarray]:
    """``loss.loss`` wrapped for the engine: validated float64 output, errors naming the plugin."""
    who = _loss_label(loss)
    vectorized = bool(getattr(loss, "vectorized", True))
    evaluate = loss.loss

    def tables_loss(tables: np.ndarray) -> np.ndarray:
        count = tables.shape[0]
        try:
            raw = np.asarray(evaluate(tables) if vectorized else [evaluate(t) for t in tables])
            # Complex values would lose their imaginary part (with only a ComplexWarning).
            values = raw if raw.dtype.kind == "c" else np.array(raw, dtype=np.float64)
        except Exception as err:
            raise PluginError(f"{who}: loss() raised {type(err).__name__}: {err}") from err
        if values.dtype.kind == "c":
            raise PluginError(f"{who}: loss() returned complex values ({values.dtype}); losses must be real")
        if values.shape != (count,):
            raise PluginError(f"{who}: loss() returned shape {values.shape} for {count} tables, expected ({count},)")
        if not np.all(np.isfinite(values)):
            raise PluginError(f"{who}: loss() returned NaN or infinite values")
        if count and values.min() < 0.0:
            low = float(values.min())
            if low < -_NEGATIVE_TOLERANCE:
                raise PluginError(f"{who}: loss() returned a negative loss ({low!r}); losses must be >= 0")
            np.maximum(values, 0.0, out=values)
        return values

    return tables_loss


def _require_contingency(loss: Loss) -> ContingencyLoss:
    if not isinstance(loss, ContingencyLoss):
        raise TypeError(
            f"loss {loss!r} is neither a count-based, PSM-based nor a salsox.plugins.ContingencyLoss"
        )
    return loss


def evaluate_python_loss(loss: Loss, est: np.ndarray, truth: Any) -> np.ndarray:
    """Expected loss of each canonical row of ``est`` against the draws ``truth``, for a
    :class:`ContingencyLoss` (the generic path)."""
    from .draws import Draws

    loss = _require_contingency(loss)
    if not isinstance(truth, Draws):
        raise ValueError(f"loss {loss.name!r} needs draws, not a PSM")
    est = np.ascontiguousarray(est, dtype=np.int32)
    values = np.asarray(_core.callback_losses(truth._core, _table_function(loss), est, MAX_BATCH_CELLS))
    if not np.all(np.isfinite(values)):  # finite losses whose sum over the draws overflowed
        bad = float(values[~np.isfinite(values)][0])
        raise PluginError(
            f"{_loss_label(loss)}: the expected loss is {bad!r}: its losses are too large to sum over the draws"
        )
    return values


def salso_python_loss(truth: Any, loss: Loss, options: Dict[str, Any]) -> Dict[str, Any]:
    """The SALSO search for a :class:`ContingencyLoss`: the C++ search calling ``loss.loss``."""
    from .draws import Draws

    loss = _require_contingency(loss)
    if not isinstance(truth, Draws):
        raise ValueError(f"loss {loss.name!r} needs draws, not a PSM")
    return _core.salso_callback(truth._core, _table_function(loss), max_cells=MAX_BATCH_CELLS, **options)


def python_loss_bytes(truth: Any, max_clusters: int) -> int:
    """Memory per thread of the generic path: count tables and one batch of tables."""
    rows = int(np.sum(truth.clusters_per_draw, dtype=np.int64))
    return 4 * rows * max_clusters + 8 * MAX_BATCH_CELLS + 16 * truth.n_items


# ---------------------------------------------------------------------------------------------
# Initialisers.
# ---------------------------------------------------------------------------------------------

InitializerLike = Union[str, Initializer, Callable[[np.ndarray, int, np.random.Generator], Any]]


def get_initializer(initializer: InitializerLike) -> Initializer:
    """Resolve a registered initialiser name, an :class:`Initializer` or a bare function."""
    if isinstance(initializer, Initializer):
        return initializer
    if isinstance(initializer, str):
        info = _REGISTRY.find_initializer(initializer)
        if info is None:
            known = ", ".join(sorted(_REGISTRY.initializer_names())) or "none registered"
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
        info = _REGISTRY.find_initializer(init.name) if init.name else None
    except PluginError:  # its name is in conflict: label it by name alone
        info = None
    if info is not None and info.factory() is init and info.source != "runtime":
        return f"initializer plugin {init.name!r} (from {info.source}, plugin {info.plugin!r})"
    return f"initializer plugin {init.name!r}"


def _call_initializer(init: Initializer, draws: np.ndarray, max_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """One starting partition, validated and relabelled 0..q-1."""
    n = draws.shape[1]
    try:
        raw = init.function(draws, max_clusters, rng)
        labels = np.asarray(raw)
    except Exception as err:
        raise PluginError(f"{_initializer_label(init)} raised {type(err).__name__}: {err}") from err
    if labels.shape != (n,):
        raise PluginError(f"{_initializer_label(init)} returned shape {labels.shape}, expected ({n},)")
    if labels.dtype.kind not in "iu":
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

    Returns
    -------
    initial : int32 (n_runs, n), used : uint8 (n_runs,), name : str
    """
    from .draws import Draws

    init = get_initializer(initializer)
    if not isinstance(truth, Draws):
        raise ValueError("an initializer needs draws, not a PSM")
    draws = np.asarray(_core.draws_matrix(truth._core))
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
    for r in np.flatnonzero(used):
        if init.deterministic and first is not None:
            initial[r] = first
            continue
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, int(r)])))
        initial[r] = first = _call_initializer(init, draws, max_clusters, rng)
    return initial, used.astype(np.uint8), init.name


from .countsum import CountSumLoss as CountSumLoss  # noqa: E402  (re-export; countsum imports this module lazily)
