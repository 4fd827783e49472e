"""The plugin host: pluggy's manager, entry points, and the listing of what plugins provide.

Installed packages declare plugins under the ``salsox`` entry-point group; they are loaded on
first use. :func:`register` adds one at runtime (a notebook, a test) and :func:`list_plugins`
shows what is registered.

Layer 2: the host knows nothing about loss classes or the search. What a plugin may provide
(the loss base class, the initialiser class, the built-in loss names a plugin may not take) is
declared by the layers that define them, :mod:`salsox.losses` and :mod:`salsox.search`, through
:func:`declare_losses` and :func:`declare_initializers` when they are imported.
"""

from __future__ import annotations

import dataclasses
import threading
import warnings
from collections import Counter
from importlib import metadata
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, cast

import pluggy

from .. import hookspecs

__all__ = [
    "PluginInfo",
    "PluginError",
    "PluginWarning",
    "register",
    "unregister",
    "registry",
    "list_plugins",
    "declare_losses",
    "declare_initializers",
    "loss_label",
]


class PluginError(RuntimeError):
    """A plugin misbehaved (raised, or returned values of the wrong shape, NaN or negative).

    Examples
    --------
    >>> class Negative(salsox.plugins.ContingencyLoss):
    ...     name = "doc-negative"
    ...     def loss(self, tables):
    ...         return -np.ones(len(tables))                 # a loss must be >= 0
    >>> try:
    ...     salsox.partition_loss([0, 0, 1], [[0, 1, 1]], Negative())
    ... except salsox.plugins.PluginError as err:
    ...     print("PluginError:", "negative" in str(err))
    PluginError: True
    """


class _NameTaken(PluginError, ValueError):
    """:func:`register` of a plugin, or a name, already registered (a ValueError too, as
    pluggy's refusal was)."""


class PluginWarning(UserWarning):
    """A plugin failed (import, hook, a bad object) or a name it provides clashes: that entry
    is listed by :func:`list_plugins` with its error and skipped; everything else works.
    Issued once per problem.

    Examples
    --------
    >>> import warnings
    >>> issubclass(salsox.plugins.PluginWarning, UserWarning)
    True
    >>> with warnings.catch_warnings():                          # silence broken plugins' notices
    ...     warnings.simplefilter("ignore", salsox.plugins.PluginWarning)
    ...     entries = salsox.plugins.list_plugins()
    """


@dataclasses.dataclass
class _Kinds:
    """What plugins may provide, as declared by the layers above the host."""

    # Tuple[Any, ...]: the classes are declared at runtime, by layers the host does not import.
    loss: Tuple[Any, ...] = ()  # the loss base class (empty: none declared yet)
    initializer: Tuple[Any, ...] = ()
    builtin_losses: Mapping[str, str] = dataclasses.field(default_factory=dict)  # lower name -> its name


_KINDS = _Kinds()


def declare_losses(base: type, builtin_names: Sequence[str]) -> None:
    """Losses are instances or subclasses of ``base``; ``builtin_names`` may not be taken."""
    _KINDS.loss = (base,)
    _KINDS.builtin_losses = {name.lower(): name for name in builtin_names}
    _REGISTRY._cache = None


def declare_initializers(cls: type) -> None:
    """Initialisers are instances of ``cls``."""
    _KINDS.initializer = (cls,)
    _REGISTRY._cache = None


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
        import, whose hook raised (what it provides is then unknown), or that implements a
        hook salsox does not know (a misspelt ``salsox_loss``: never called).
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

    Examples
    --------
    >>> class HalfBinder(salsox.plugins.DecomposableLoss):       # Binder's loss with a = b = 1/2
    ...     name = "doc-info"
    ...     draw_term = estimate_term = lambda self, counts, n: 0.5 * (counts / n) ** 2
    ...     cell_term = lambda self, counts, n: -((counts / n) ** 2)
    >>> name = salsox.plugins.register(HalfBinder)
    >>> info = next(p for p in salsox.plugins.list_plugins() if p.name == "doc-info")
    >>> info.kind, info.status, info.plugin == name, type(info.factory()).__name__
    ('loss', 'ok', True, 'HalfBinder')
    >>> salsox.plugins.unregister(name=name)
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
    if isinstance(obj, _KINDS.initializer):
        return "initializer"
    if isinstance(obj, _KINDS.loss) or (isinstance(obj, type) and issubclass(obj, _KINDS.loss)):
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
            taken = name if name is not None and self._pm.get_plugin(name) is not None else None
            if taken is None and self._pm.is_registered(target):
                taken = self._pm.get_name(target)
            if taken is not None:  # pluggy's own message names its internals, not the fix
                raise _NameTaken(
                    f"a plugin is already registered under the name {taken!r}; unregister it first: "
                    f"salsox.plugins.unregister(name={taken!r})"
                )
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
        return _mark_conflicts(out) + self._unknown_hooks() + self._failed

    def _unknown_hooks(self) -> List[PluginInfo]:
        """One broken entry per plugin with hooks salsox does not specify (a misspelt
        ``salsox_loss`` for ``salsox_losses``): pluggy's ``check_pending`` walk, but listing every
        such hook of every plugin instead of raising at the first one. The plugin's other hooks
        still count."""
        unknown: Dict[str, List[str]] = {}
        plugins: Dict[str, Any] = {}
        for name in sorted(vars(self._pm.hook)):
            if name.startswith("_"):
                continue
            caller = getattr(self._pm.hook, name)
            if caller.has_spec():
                continue
            for impl in caller.get_hookimpls():
                if not impl.optionalhook:
                    unknown.setdefault(impl.plugin_name, []).append(name)
                    plugins[impl.plugin_name] = impl.plugin
        return [
            _broken(plugin, "plugin", self._sources.get(id(plugins[plugin]), "runtime"), plugin,
                    _unknown_hooks_error(plugin, hooks))
            for plugin, hooks in unknown.items()
        ]

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


def _known_hooks() -> List[str]:
    """The hooks salsox specifies (the ``salsox_*`` functions of :mod:`salsox.hookspecs`)."""
    return sorted(name for name in vars(hookspecs) if name.startswith("salsox_"))


def _unknown_hooks_error(plugin: str, hooks: Sequence[str]) -> str:
    """Why a plugin with hooks salsox does not know is listed as broken: each such hook, the
    known one it most likely means, and the hooks there are."""
    import difflib

    known = _known_hooks()
    parts = []
    for hook in hooks:
        close = difflib.get_close_matches(hook, known, n=1, cutoff=0.6)
        parts.append(f"{hook!r} (did you mean {close[0]!r}?)" if close else repr(hook))
    what = "an unknown hook" if len(hooks) == 1 else "unknown hooks"
    return (
        f"plugin {plugin!r} implements {what}, {', '.join(parts)}: salsox never calls it, so what it "
        f"provides is not used (salsox's hooks: {', '.join(known)})"
    )


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
        if kind == "loss" and lower in _KINDS.builtin_losses:
            for index in indices:
                info = out[index]
                error = (
                    f"plugin {info.plugin!r}: loss name {info.name!r} is built in; "
                    f"{info.name!r} selects the built-in loss {_KINDS.builtin_losses[lower]!r}"
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
        if not isinstance(obj, _KINDS.initializer):
            raise PluginError(f"plugin {plugin_name!r}: initialisers must be salsox.plugins.Initializer objects")
        if not obj.name or not isinstance(obj.name, str) or not callable(obj.function):
            raise PluginError(f"plugin {plugin_name!r}: initialiser {obj!r} needs a name and a callable function")
        return PluginInfo(obj.name, kind, source, lambda obj=obj: obj, plugin_name)
    if isinstance(obj, type) and issubclass(obj, _KINDS.loss):
        name = getattr(obj, "name", "")
        factory: Callable[..., Any] = obj
    elif isinstance(obj, _KINDS.loss):
        name, factory = obj.name, (lambda obj=obj: obj)
    elif callable(obj):
        try:
            probe = obj()
        except Exception as err:
            raise PluginError(f"plugin {plugin_name!r}: loss factory {obj!r} raised {err!r}") from err
        if not isinstance(probe, _KINDS.loss):
            raise PluginError(f"plugin {plugin_name!r}: loss factory {obj!r} did not return a salsox Loss")
        name, factory = probe.name, obj
    else:
        raise PluginError(f"plugin {plugin_name!r}: {obj!r} is not a loss class, instance or factory")
    if not name or not isinstance(name, str):
        raise PluginError(f"plugin {plugin_name!r}: loss {obj!r} has no name")
    return PluginInfo(name, kind, source, factory, plugin_name)


_REGISTRY = _Registry()


def registry() -> _Registry:
    """The process-wide plugin registry (entry points are loaded on first use).

    Examples
    --------
    >>> class HalfBinder(salsox.plugins.DecomposableLoss):       # Binder's loss with a = b = 1/2
    ...     name = "doc-registry"
    ...     draw_term = estimate_term = lambda self, counts, n: 0.5 * (counts / n) ** 2
    ...     cell_term = lambda self, counts, n: -((counts / n) ** 2)
    >>> name = salsox.plugins.register(HalfBinder)
    >>> "doc-registry" in salsox.plugins.registry().loss_names()
    True
    >>> salsox.plugins.unregister(name=name)
    """
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
        raises or provides something that is not a loss or initialiser, when the plugin
        implements a hook salsox does not know (a misspelt one; nothing is registered
        then: unlike installed plugins, which are listed as broken, a runtime one is refused);
        when the plugin or its registration name is already registered (unregister it first:
        registering the same class again, e.g. after editing it in a notebook, is refused).

    Examples
    --------
    >>> class HalfBinder(salsox.plugins.DecomposableLoss):       # Binder's loss with a = b = 1/2
    ...     name = "doc-register"
    ...     draw_term = estimate_term = lambda self, counts, n: 0.5 * (counts / n) ** 2
    ...     cell_term = lambda self, counts, n: -((counts / n) ** 2)
    >>> salsox.plugins.register(HalfBinder)
    'loss:doc-register'
    >>> salsox.salso([[0, 0, 1, 1], [0, 0, 1, 2]], "doc-register", seed=1).labels   # selected by name
    array([0, 0, 1, 2])
    >>> salsox.plugins.unregister(name="loss:doc-register")
    """
    return _REGISTRY.register(plugin, name=name)


def unregister(plugin: Any = None, name: Optional[str] = None) -> None:
    """Remove a plugin registered with :func:`register`, by object or by registration name.

    Examples
    --------
    >>> class HalfBinder(salsox.plugins.DecomposableLoss):       # Binder's loss with a = b = 1/2
    ...     name = "doc-unregister"
    ...     draw_term = estimate_term = lambda self, counts, n: 0.5 * (counts / n) ** 2
    ...     cell_term = lambda self, counts, n: -((counts / n) ** 2)
    >>> name = salsox.plugins.register(HalfBinder)
    >>> salsox.plugins.unregister(name=name)
    >>> "doc-unregister" in salsox.plugins.registry().loss_names()
    False
    """
    _REGISTRY.unregister(plugin, name=name)


def list_plugins() -> List[PluginInfo]:
    """Every loss and initialiser that plugins provide: name, kind and source package.

    Plugins that failed are listed too, with ``status`` ``"broken"`` or ``"conflict"`` and
    the reason in ``error`` (see :class:`PluginInfo`); only entries with status ``"ok"`` can
    be selected by name.

    Examples
    --------
    >>> class HalfBinder(salsox.plugins.DecomposableLoss):       # Binder's loss with a = b = 1/2
    ...     name = "doc-list"
    ...     draw_term = estimate_term = lambda self, counts, n: 0.5 * (counts / n) ** 2
    ...     cell_term = lambda self, counts, n: -((counts / n) ** 2)
    >>> name = salsox.plugins.register(HalfBinder)
    >>> [(p.name, p.kind, p.source, p.status) for p in salsox.plugins.list_plugins() if p.name == "doc-list"]
    [('doc-list', 'loss', 'runtime', 'ok')]
    >>> salsox.plugins.unregister(name=name)
    """
    return _REGISTRY.entries()



def loss_label(name: str, type_name: str) -> str:
    """How errors name a plugin loss: its name and the plugin providing it."""
    try:
        info = _REGISTRY.find_loss(name) if name else None
    except PluginError:
        info = None
    if info is not None and info.source != "runtime":
        return f"loss plugin {name!r} (from {info.source}, plugin {info.plugin!r})"
    if info is not None:
        return f"loss plugin {name!r} (plugin {info.plugin!r})"
    return f"loss plugin {name!r} ({type_name})"
