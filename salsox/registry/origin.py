"""Which plugin an error comes from: walks a traceback for frames of registered plugins' code.

Split from :mod:`salsox.registry.host` (one concept per file). The registry is read through
the ``host`` module, not copied names, so a test that swaps ``host._REGISTRY`` is seen here too.
"""

from __future__ import annotations

import traceback
import types
from typing import Any, Dict, Optional, Set, Tuple

from . import host

__all__ = ["plugin_origin"]


def _top_module(obj: Any) -> str:
    """The top-level package an object (module, class, function or instance) comes from."""
    if isinstance(obj, types.ModuleType):
        name = obj.__name__
    elif isinstance(obj, type) or callable(obj) and hasattr(obj, "__module__"):
        name = getattr(obj, "__module__", None) or ""
    else:
        name = type(obj).__module__
    return str(name).split(".")[0]


def _plugin_modules() -> Dict[str, Tuple[str, str]]:
    """Top-level package -> (registration name, source) of every registered plugin."""
    out: Dict[str, Tuple[str, str]] = {}
    with host._REGISTRY._lock:
        for name, plugin in host._REGISTRY._pm.list_name_plugin():
            if plugin is None:  # blocked
                continue
            source = host._REGISTRY._sources.get(id(plugin), "runtime")
            objects = [plugin.obj] if isinstance(plugin, host._SinglePlugin) else [plugin]
            if isinstance(plugin, host._SinglePlugin):
                objects += [getattr(plugin.obj, "function", None), getattr(plugin.obj, "setup", None)]
            for obj in objects:
                if obj is None:
                    continue
                top = _top_module(obj)
                if top and top not in ("salsox", "builtins", "numpy"):
                    out.setdefault(top, (name, source))
    return out


def _describe_origin(plugin: str, source: str, what: str = "") -> str:
    where = f"plugin {plugin!r}" if source == "runtime" else f"plugin {plugin!r} (from {source})"
    return f"{what} of {where}" if what else where


def _frame_origin(frame: types.FrameType, modules: Dict[str, Tuple[str, str]]) -> Optional[str]:
    """The plugin a frame's code belongs to (None for code outside every plugin's package),
    named by the loss whose method runs or the initialiser whose function runs if known."""
    top = str(frame.f_globals.get("__name__", "")).split(".")[0]
    if top not in modules:  # salsox's own code (or a library's) reporting on a plugin's object
        return None
    entries = [e for e in (host._REGISTRY._cache or []) if e.ok]
    owner = frame.f_locals.get("self")
    name = getattr(type(owner), "name", None) if owner is not None else None
    if host._KINDS.loss and isinstance(owner, host._KINDS.loss) and isinstance(name, str) and name:
        for e in entries:
            if e.kind == "loss" and e.name.lower() == name.lower():
                return _describe_origin(e.plugin, e.source, f"loss {e.name!r}")
    for e in entries:
        if e.kind != "initializer":
            continue
        init = e.factory()
        codes = [getattr(getattr(init, attr, None), "__code__", None) for attr in ("function", "setup")]
        if frame.f_code in codes:
            return _describe_origin(e.plugin, e.source, f"initializer {e.name!r}")
    return _describe_origin(*modules[top])


def plugin_origin(err: BaseException) -> Optional[str]:
    """Which plugin's code raised ``err`` (or an exception it chains), e.g. ``"loss 'jaccard'
    of plugin 'example_losses' (from salsox-example-losses 0.1.0)"``; None when no plugin code
    is in the traceback. Lets the command line blame a plugin rather than report an internal
    error."""
    try:
        modules = _plugin_modules()
        seen: Set[int] = set()
        current: Optional[BaseException] = err
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            found: Optional[str] = None
            for frame, _ in traceback.walk_tb(current.__traceback__):
                found = _frame_origin(frame, modules) or found  # the innermost plugin frame
            if found is not None:
                return found
            current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    except Exception:  # never let the diagnosis hide the error itself
        return None
    return None
