"""Count-sum losses: a loss written as a formula in a few per-draw sums, at native speed.

Most partition losses in the literature (Jaccard, Fowlkes-Mallows, Wallace, omARI, NVI, NID,
NMI and its normalisations...) are a formula in a few sums over the contingency table between
the estimate and a draw::

    S = sum over the table's cells (or the estimate's clusters, or the draw's clusters) of g(count)

:class:`CountSumLoss` takes the sums (each a ``where`` and a vectorised ``g(counts, n)``,
tabulated once per search for counts 0..n) and the formula, a Python expression in the sum
names, ``n`` and the loss's parameters. The formula is parsed with :mod:`ast` (never
``eval``), checked against a whitelist, and compiled into nodes that the C++ engine evaluates
natively, for every draw and candidate cluster, without the GIL. The per-draw loss is the
formula; the expected loss is its mean over draws.

Formulas may use numbers, ``+ - * / **``, unary ``-``, comparisons (chained too),
``and``/``or``/``not`` (on nonzero values; they give 1 or 0), ``a if cond else b``, and the
functions ``sqrt log log2 exp abs min max`` and ``where(cond, a, b)`` (both branches are
evaluated, as in numpy: guard divisions with ``where``).

In the formula, ``n`` is the number of items in the table: all n items once the search has
allocated them (and always when a loss value is reported), fewer while a run's sequential
initialisation places the items one by one. ``g`` gets the total number of items.

An additive formula (constant multiples of the sums added up, without ``n``: the form of
:class:`~salsox.plugins.DecomposableLoss`) is one tabulated function per draw cluster,
estimate cluster and cell: the search then runs on the engine's tabulated losses, as fast as
the built-in Binder and VI. Either way the formula is compiled once per search, and every
per-draw loss of a reported value is evaluated and checked.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from .. import _core
from ..engine import CountSumRoute, Route
from ..engine.countsum import NEGATIVE_TOLERANCE as _NEGATIVE_TOLERANCE
from ..engine.countsum import CompiledCountSum
from ..engine.countsum_jit import attach_kernel, why_not_compiled
from ..registry import PluginError, loss_label
from .base import CountLoss, _check_engine, _needs_draws
from .countsum_forms import additive_form, exact_nonnegative, factor_square_roots
from .countsum_formula import FUNCTIONS, compile_formula, parse_formula

__all__ = ["CountSumLoss", "compile_formula", "FUNCTIONS"]

WHERES = ("cell", "estimate", "draw")

SumFunction = Union[str, Callable[[np.ndarray, int], Any]]

# Largest loss an additive formula may reach: the tabulated engine sums its terms over all the
# draws, and sums of it over ~1e18 draws stay finite.
MAX_LOSS_BOUND = 1e290


class CountSumLoss(CountLoss):
    """A loss given as a formula in per-draw sums of tabulated functions of counts.

    Parameters
    ----------
    name : str
        The name that selects the loss.
    sums : dict
        ``{NAME: (where, g)}``: ``where`` is ``"cell"`` (a sum over the cells of the
        estimate-by-draw contingency table), ``"estimate"`` (over the estimate's clusters) or
        ``"draw"`` (over the draw's clusters); ``g(counts, n)`` a vectorised function of an
        integer count array and the number of items, 0 at count 0, tabulated once per search
        for counts 0..n (a string names a method of the loss).
    formula : str
        An expression in the sum names, ``n`` and the parameters (see :mod:`salsox.losses.countsum`).
    params : dict, optional
        Named scalar parameters usable in the formula (and by ``g`` methods as
        ``self.params[name]``); ``**values`` override them by name.

    Notes
    -----
    The loss must be >= 0, and 0 when the estimate equals the draw: the formula is checked at
    equality on a few partitions when tabulated, and after a search (and in
    :func:`salsox.partition_loss`) every per-draw loss of the result is checked; a negative
    one raises :class:`salsox.plugins.PluginError` showing the offending table. An additive
    formula (see :mod:`salsox.losses.countsum`) is searched by the engine's tabulated losses;
    its terms must then be small enough that n times the sum of the largest absolute values
    of its terms stays below 1e290, and its per-draw losses are checked to a tolerance of
    1e-9 times that bound (its rounding grows with the terms).

    Subclasses may set ``name``, ``sums``, ``formula`` and ``default_params`` as class
    attributes and be registered (or provided through entry points) as classes.

    Examples
    --------
    One minus the Jaccard index of the pairs clustered together:

    >>> pairs = lambda c, n: c * (c - 1) / 2
    >>> jaccard = CountSumLoss(
    ...     name="jaccard",
    ...     sums={"J": ("cell", pairs), "D": ("estimate", pairs), "E": ("draw", pairs)},
    ...     formula="where(D + E - J == 0, 0, 1 - J / (D + E - J))",
    ... )
    >>> round(salsox.partition_loss([0, 0, 1, 1], [0, 0, 0, 1], jaccard), 4)   # 1 pair of 4 shared
    0.75
    >>> salsox.salso([[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1]], jaccard, seed=1).labels
    array([0, 0, 1, 2])
    """

    name: str = ""
    sums: Mapping[str, Tuple[str, SumFunction]] = {}
    formula: str = ""
    default_params: Mapping[str, float] = {}

    def __init__(
        self,
        name: Optional[str] = None,
        sums: Optional[Mapping[str, Tuple[str, SumFunction]]] = None,
        formula: Optional[str] = None,
        params: Optional[Mapping[str, float]] = None,
        **values: float,
    ) -> None:
        if name is not None:
            self.name = name
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("a CountSumLoss needs a non-empty string name")
        label = self.name
        if sums is not None:
            self.sums = sums
        if formula is not None:
            self.formula = formula
        merged: Dict[str, float] = dict(self.default_params if params is None else params)
        unknown = set(values) - set(merged)
        if unknown:
            raise ValueError(
                f"loss {label!r}: unknown parameter(s) {', '.join(sorted(unknown))} "
                f"(parameters: {', '.join(merged) or 'none'})"
            )
        merged.update(values)
        self._params: Dict[str, float] = {}
        for key, value in merged.items():
            if not isinstance(key, str) or not key.isidentifier():
                raise ValueError(f"loss {label!r}: parameter name {key!r} is not an identifier")
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise TypeError(f"loss {label!r}: parameter {key!r} must be a number, got {type(value).__name__}")
            if not math.isfinite(float(value)):
                raise ValueError(f"loss {label!r}: parameter {key!r} must be finite, got {value!r}")
            self._params[key] = float(value)
        for key in self._params:
            if key == "n" or key in FUNCTIONS:
                raise ValueError(f"loss {label!r}: parameter name {key!r} is reserved")
        self._compile_definition()

    def _compile_definition(self) -> None:
        """Validates the sums and compiles the formula (once per loss object: each search then
        tabulates the sums for its n)."""
        label, params = self.name, self._formula_params()
        if not isinstance(self.sums, Mapping) or not self.sums:
            raise ValueError(f"loss {label!r}: sums must be a non-empty dict {{NAME: (where, g)}}")
        self._sum_specs: List[Tuple[str, str, SumFunction]] = []
        positions: Dict[str, Tuple[str, int]] = {}
        counts = {w: 0 for w in WHERES}
        for key, spec in self.sums.items():
            if not isinstance(key, str) or not key.isidentifier():
                raise ValueError(f"loss {label!r}: sum name {key!r} is not an identifier")
            if key == "n" or key in FUNCTIONS or key in params:
                raise ValueError(f"loss {label!r}: sum name {key!r} is reserved (n, a function or a parameter)")
            if not isinstance(spec, tuple) or len(spec) != 2:
                raise ValueError(f"loss {label!r}: sum {key!r} must be a (where, g) pair, got {spec!r}")
            where, g = spec
            if where not in WHERES:
                raise ValueError(f"loss {label!r}: sum {key!r} has where={where!r}; choose one of {', '.join(WHERES)}")
            if isinstance(g, str):
                if not callable(getattr(self, g, None)):
                    raise ValueError(f"loss {label!r}: sum {key!r} names {g!r}, which is not a method of the loss")
            elif not callable(g):
                raise TypeError(f"loss {label!r}: g of sum {key!r} must be callable, got {type(g).__name__}")
            positions[key] = (where, counts[where])
            counts[where] += 1
            self._sum_specs.append((key, where, g))
        compiler, self._result = parse_formula(label, self.formula, positions, params)
        self._nodes = list(compiler.nodes)
        self._additive = additive_form(self._nodes, self._result)

    def _formula_params(self) -> Mapping[str, float]:
        """The parameters the formula's names refer to."""
        return self._params

    def _sum_label(self, key: str) -> str:
        """How errors name sum ``key``'s function."""
        return f"g of sum {key!r}"

    @property
    def params(self) -> Dict[str, float]:
        return dict(self._params)

    def with_params(self, **values: float) -> "CountSumLoss":
        """The same sums and formula with the parameters in ``values`` changed (recompiled)."""
        unknown = sorted(set(values) - set(self._params))
        if unknown:
            raise ValueError(
                f"loss {self.name!r} has no parameter {', '.join(repr(k) for k in unknown)} "
                f"(its parameters: {', '.join(self._params) or 'none'})"
            )
        new = copy.copy(self)  # keeps a subclass's own attributes
        merged = {**self._params, **values}
        CountSumLoss.__init__(new, name=self.name, sums=self.sums, formula=self.formula, params=merged)
        return new

    def __repr__(self) -> str:
        if type(self) is not CountSumLoss and self.formula == type(self).formula and self.name == type(self).name:
            return super().__repr__()  # a subclass with its own definition: its parameters say it all
        extra = "".join(f", {k}={v!r}" for k, v in self._params.items())
        return f"{type(self).__name__}(name={self.name!r}, formula={self.formula!r}{extra})"

    def _identity(self) -> Tuple[Any, ...]:
        sums = tuple((k, w, g if isinstance(g, str) else id(g)) for k, w, g in self._sum_specs)
        return (type(self), self.name, self.formula, sums, tuple(sorted(self._params.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CountSumLoss) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def _description(self) -> Dict[str, str]:
        out = super()._description()
        out["formula"] = self.formula
        out.update(self._scoring())
        return out

    def _scoring(self) -> Dict[str, str]:
        """The scorer the engine picks here and whether the formula is compiled (what a search
        gets: the engine form for a few items; neither choice depends on n)."""
        built = self._compile(8)
        if built.tabulated is not None:  # an additive formula: the search runs its tables
            return {
                "scorer": "tabulated (the formula is additive: run as a DecomposableLoss's count tables)",
                "compiled": "no (tabulated: nothing to compile)",
            }
        compiled = built.formula
        if compiled.dense_kernel:
            return {"scorer": "dense (every draw x candidate cluster, in compiled code)",
                    "compiled": "yes (machine code, llvmlite)"}
        return {"scorer": "dense (every draw x candidate cluster)", "compiled": f"no ({why_not_compiled(compiled)})"}

    def _tables(self, n: int, who: str) -> Dict[str, List[np.ndarray]]:
        """Each sum's g tabulated for counts 0..n, by kind; the one validation of g."""
        counts = np.arange(n + 1, dtype=np.int64)
        tables: Dict[str, List[np.ndarray]] = {w: [] for w in WHERES}
        for key, where, g in self._sum_specs:
            fn = getattr(self, g) if isinstance(g, str) else g
            what = self._sum_label(key)
            try:
                values = np.asarray(fn(counts, n), dtype=np.float64)
            except Exception as err:
                raise PluginError(f"{who}: {what} raised {type(err).__name__}: {err}") from err
            if values.shape != counts.shape:
                raise PluginError(f"{who}: {what} returned shape {values.shape}, expected {counts.shape}")
            if not np.all(np.isfinite(values)):
                raise PluginError(f"{who}: {what} returned NaN or infinite values")
            if values[0] != 0.0:
                raise PluginError(f"{who}: {what} must be 0 at count 0, got {values[0]!r}")
            tables[where].append(values)
        return tables

    def _route(self, truth: Any, engine: Optional[str] = None) -> Route:
        _needs_draws(self, truth)
        _check_engine(engine, binder=False)
        return CountSumRoute(truth, self._compile)

    def _compile(self, n: int) -> CompiledCountSum:
        """The loss compiled for n items, checked: the formula, and for an additive one its
        tabulated form (what the search runs on) and the tolerance of its per-draw check."""
        if "_nodes" not in self.__dict__:
            self._compile_definition()  # a subclass that did not call CountSumLoss.__init__
        who = loss_label(self.name, type(self).__name__)
        tables = self._tables(n, who)
        tolerance = _NEGATIVE_TOLERANCE
        additive = self._additive
        if additive is not None:
            # n times the largest term of each kind bounds every sum the tabulated engine forms.
            index = {(w, j): t for w in WHERES for j, t in enumerate(tables[w])}
            bound = float(n) * sum(abs(c) * float(np.max(np.abs(index[key]))) for key, c in additive.items())
            if not bound <= MAX_LOSS_BOUND:
                raise PluginError(
                    f"{who}: terms this large (losses up to {bound:.3g} for n = {n}) overflow; n times the sum "
                    f"of the largest absolute values of the terms must be at most {MAX_LOSS_BOUND:.0e}"
                )
            tolerance = _NEGATIVE_TOLERANCE * max(1.0, bound)
        exact = {(w, j): exact_nonnegative(t, n) for w in WHERES for j, t in enumerate(tables[w])}
        nodes, result = factor_square_roots(self._nodes, self._result, exact)
        lists = {w: [t.tolist() for t in tables[w]] for w in WHERES}
        formula = _core.CountSumLoss(who, n, lists["cell"], lists["estimate"], lists["draw"], nodes, result)
        _check_equality(formula, n, who, tables, tolerance)
        if additive is None:
            attach_kernel(formula)  # native code for the dense scores, where llvmlite is installed
            return CompiledCountSum(formula, None, tolerance)
        return CompiledCountSum(formula, _tabulated(additive, tables, n), tolerance)

    def _count_loss(self, n: int) -> Any:
        """The compiled formula (``_core.CountSumLoss``) for n items, checked at equality."""
        return self._compile(n).formula


def _tabulated(additive: Mapping[Tuple[str, int], float], tables: Dict[str, List[np.ndarray]], n: int) -> Any:
    """An additive formula as the engine's tabulated loss: per kind, the coefficients'
    combination of its sums' tables (a lone sum with coefficient 1 keeps its table's bits, a
    DecomposableLoss's terms among them)."""
    combined = {}
    for where in WHERES:
        total: Optional[np.ndarray] = None
        for (kind, j), c in additive.items():
            if kind == where:
                term = tables[where][j] if c == 1.0 else c * tables[where][j]
                total = term if total is None else total + term
        combined[where] = (np.zeros(n + 1) if total is None else total).tolist()
    return _core.CountLoss.tabulated(combined["draw"], combined["estimate"], combined["cell"])


def _sizes_to_check(n: int) -> List[np.ndarray]:
    """Cluster sizes of a few partitions of n items on which a loss must be 0 against itself."""
    out = [np.array([n]), np.ones(n, dtype=np.int64)]
    for k in sorted({2, 3, max(2, math.isqrt(n))}):
        if k < n:
            out.append(np.bincount(np.arange(n) % k))
            out.append(np.array([n - k + 1] + [1] * (k - 1)))
    return out


def _check_equality(compiled: Any, n: int, who: str, tables: Dict[str, List[np.ndarray]], tolerance: float) -> None:
    """The loss of an estimate equal to the draw must be 0; and >= 0 between the extremes
    (to within ``tolerance``)."""
    g = tables

    def value(est: np.ndarray, draw: np.ndarray, cells: np.ndarray) -> float:
        return float(compiled.evaluate(
            float(n),
            [float(t[cells].sum()) for t in g["cell"]],
            [float(t[est].sum()) for t in g["estimate"]],
            [float(t[draw].sum()) for t in g["draw"]],
        ))

    for sizes in _sizes_to_check(n):
        v = value(sizes, sizes, sizes)
        if not math.isfinite(v) or abs(v) > tolerance:
            shown = sizes.tolist() if len(sizes) <= 20 else f"{len(sizes)} clusters"
            raise PluginError(
                f"{who}: the loss of an estimate equal to the draw is {v!r}, not 0 (a partition against itself, "
                f"cluster sizes {shown}); a loss must be 0 when the estimate equals the draw"
            )
    one, singles = np.array([n]), np.ones(n, dtype=np.int64)
    for what, est, draw in (("estimate one cluster, draw all singletons", one, singles),
                            ("estimate all singletons, draw one cluster", singles, one)):
        v = value(est, draw, singles)
        if not math.isfinite(v) or v < -tolerance:
            kind = "negative" if math.isfinite(v) else "non-finite"
            raise PluginError(f"{who}: {kind} loss {v!r} ({what}); a loss must be >= 0")
