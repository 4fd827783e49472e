"""Plugins: third-party losses and initialisers, found through pluggy entry points.

See :mod:`salsox.hookspecs` for the hooks and ``docs/plugins.md`` for a worked example.
Two kinds of Python loss are supported:

* :class:`DecomposableLoss` -- the loss is a sum of a function of each draw cluster's size,
  of each estimate cluster's size and of each contingency-table cell (the form of Binder and
  VI). The engine tabulates the three functions once for counts 0..n and then searches at
  native speed.
* :class:`ContingencyLoss` -- any function of the contingency table between the estimate and a
  draw. The engine calls it, batched over draws and candidate moves, through a slower generic
  path.
"""

from __future__ import annotations

import abc
import dataclasses
import threading
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import pluggy

from . import _core, hookspecs
from .losses import BUILTIN_LOSSES, CountLoss, Loss

__all__ = [
    "DecomposableLoss",
    "ContingencyLoss",
    "Initializer",
    "PluginInfo",
    "PluginError",
    "register",
    "unregister",
    "registry",
    "list_plugins",
]


class PluginError(RuntimeError):
    """A plugin misbehaved (raised, or returned values of the wrong shape, NaN or negative)."""


class DecomposableLoss(CountLoss):
    """Base class of losses that decompose over counts, evaluated at native speed.

    The loss between a draw with clusters S and an estimate with clusters T of n items is::

        sum_S draw_term(|S|) + sum_T estimate_term(|T|) + sum_{S,T} cell_term(|S n T|)

    Subclasses set ``name`` and implement the three methods as vectorised numpy functions of
    an integer array of counts and of n; each must be 0 at count 0 (empty clusters and cells
    contribute nothing). The loss must be >= 0, and 0 when the partitions are equal.
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
        counts = np.arange(n + 1, dtype=np.int64)
        tables = []
        for method in ("draw_term", "estimate_term", "cell_term"):
            try:
                values = np.asarray(getattr(self, method)(counts, n), dtype=np.float64)
            except Exception as err:
                raise PluginError(f"loss plugin {self.name!r}: {method} raised {err!r}") from err
            if values.shape != counts.shape:
                raise PluginError(
                    f"loss plugin {self.name!r}: {method} returned shape {values.shape}, expected {counts.shape}"
                )
            if not np.all(np.isfinite(values)):
                raise PluginError(f"loss plugin {self.name!r}: {method} returned NaN or infinite values")
            if values[0] != 0.0:
                raise PluginError(f"loss plugin {self.name!r}: {method}(0) must be 0, got {values[0]!r}")
            tables.append(values.tolist())
        return _core.CountLoss.tabulated(*tables)


class ContingencyLoss(Loss):
    """Base class of general losses: any function of the contingency table.

    Subclasses set ``name`` and implement :meth:`loss`. It is called with a batch of tables
    and returns one value per table; the engine batches over draws and candidate moves, so
    vectorise over the first axis when you can. Empty rows and columns (zero padding) may
    appear and must not change the value.
    """

    @abc.abstractmethod
    def loss(self, tables: np.ndarray) -> np.ndarray:
        """Losses of ``tables`` (int64, shape (B, R, C): draw clusters x estimate clusters)."""


@dataclasses.dataclass(frozen=True)
class Initializer:
    """A named initialiser: ``function(draws, max_clusters, rng) -> labels``.

    ``draws`` is the H x n int32 matrix of draws relabelled 0..k-1, ``rng`` a
    ``numpy.random.Generator`` seeded from the search's seed and the run index.
    """

    name: str
    function: Callable[[np.ndarray, int, np.random.Generator], Any]
    description: str = ""


@dataclasses.dataclass(frozen=True)
class PluginInfo:
    """One registered plugin object."""

    name: str
    kind: str  # "loss" or "initializer"
    source: str  # distribution that provides it, or "runtime"
    factory: Callable[..., Any]


class _Registry:
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._pm = pluggy.PluginManager("salsox")
        self._pm.add_hookspecs(hookspecs)
        self._loaded = False
        self._sources: Dict[int, str] = {}

    def _ensure_loaded(self) -> None:
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            self._pm.load_setuptools_entrypoints("salsox")
            for plugin, dist in self._pm.list_plugin_distinfo():
                self._sources[id(plugin)] = f"{dist.project_name} {dist.version}"

    def register(self, plugin: Any, name: Optional[str] = None) -> str:
        self._ensure_loaded()
        with self._lock:
            registered = self._pm.register(plugin, name=name)
            if registered is None:
                raise ValueError(f"plugin {name or plugin!r} is already registered or blocked")
            self._sources.setdefault(id(plugin), "runtime")
            try:
                self.entries()  # validates names now, not at first use
            except Exception:
                self._pm.unregister(plugin)
                raise
            return registered

    def unregister(self, plugin: Any = None, name: Optional[str] = None) -> None:
        with self._lock:
            self._pm.unregister(plugin=plugin, name=name)

    def entries(self) -> List[PluginInfo]:
        self._ensure_loaded()
        out: List[PluginInfo] = []
        seen: set = set()
        for kind, hook in (("loss", self._pm.hook.salsox_losses), ("initializer", self._pm.hook.salsox_initializers)):
            for impl in hook.get_hookimpls():
                source = self._sources.get(id(impl.plugin), "runtime")
                try:
                    provided = impl.function() or ()
                except Exception as err:
                    raise PluginError(f"plugin {impl.plugin_name!r} failed in {hook.name}: {err!r}") from err
                for obj in provided:
                    info = _describe(obj, kind, source, impl.plugin_name)
                    key = info.name.lower()
                    if kind == "loss" and key in BUILTIN_LOSSES:
                        raise PluginError(f"plugin {impl.plugin_name!r}: loss name {info.name!r} is built in")
                    if (kind, key) in seen:
                        raise PluginError(f"plugin {impl.plugin_name!r}: {kind} name {info.name!r} is already taken")
                    seen.add((kind, key))
                    out.append(info)
        return out

    def find_loss(self, name: str) -> Optional[PluginInfo]:
        for info in self.entries():
            if info.kind == "loss" and info.name.lower() == name.lower():
                return info
        return None

    def find_initializer(self, name: str) -> Optional[PluginInfo]:
        for info in self.entries():
            if info.kind == "initializer" and info.name.lower() == name.lower():
                return info
        return None

    def loss_names(self) -> List[str]:
        return [i.name for i in self.entries() if i.kind == "loss"]

    def initializer_names(self) -> List[str]:
        return [i.name for i in self.entries() if i.kind == "initializer"]


def _describe(obj: Any, kind: str, source: str, plugin_name: str) -> PluginInfo:
    if kind == "initializer":
        if not isinstance(obj, Initializer):
            raise PluginError(f"plugin {plugin_name!r}: initialisers must be salsox.plugins.Initializer objects")
        return PluginInfo(obj.name, kind, source, lambda obj=obj: obj)
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
    return PluginInfo(name, kind, source, factory)


_REGISTRY = _Registry()


def registry() -> _Registry:
    """The process-wide plugin registry (entry points are loaded on first use)."""
    return _REGISTRY


def register(plugin: Any, name: Optional[str] = None) -> str:
    """Register a plugin object at runtime: a module, class or instance with ``@hookimpl`` hooks."""
    return _REGISTRY.register(plugin, name=name)


def unregister(plugin: Any = None, name: Optional[str] = None) -> None:
    """Remove a plugin registered with :func:`register` (by object or name)."""
    _REGISTRY.unregister(plugin, name=name)


def list_plugins() -> List[PluginInfo]:
    """Every loss and initialiser that plugins provide: name, kind and source package."""
    return _REGISTRY.entries()
