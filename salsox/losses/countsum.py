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
"""

from __future__ import annotations

import ast
import copy
import math
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from .. import _core
from ..engine import CountSumRoute, Route
from ..engine.countsum import NEGATIVE_TOLERANCE as _NEGATIVE_TOLERANCE
from ..registry import PluginError, loss_label
from .base import CountLoss, _check_engine, _needs_draws

__all__ = ["CountSumLoss", "compile_formula", "FUNCTIONS"]

WHERES = ("cell", "estimate", "draw")

# name: (fewest, most) arguments (None: any number).
FUNCTIONS: Dict[str, Tuple[int, Optional[int]]] = {
    "sqrt": (1, 1),
    "log": (1, 1),
    "log2": (1, 1),
    "exp": (1, 1),
    "abs": (1, 1),
    "min": (2, None),
    "max": (2, None),
    "where": (3, 3),
}

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow"}
_COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}

# A node as the engine takes it: (operation, operand a, operand b, operand c, constant).
Node = Tuple[str, int, int, int, float]

SumFunction = Union[str, Callable[[np.ndarray, int], Any]]



class _Compiler:
    """Compiles a parsed formula into engine nodes, sharing identical subexpressions."""

    def __init__(self, loss: str, formula: str, sums: Mapping[str, Tuple[str, int]], params: Mapping[str, float]):
        self.loss = loss
        self.formula = formula
        self.sums = sums
        self.params = params
        self.nodes: List[Node] = []
        self.index: Dict[Tuple[Any, ...], int] = {}

    def error(self, node: Optional[ast.AST], message: str) -> ValueError:
        lines = self.formula.splitlines() or [""]
        line = getattr(node, "lineno", 1) if node is not None else 1
        col = getattr(node, "col_offset", 0) if node is not None else 0
        text = lines[line - 1] if 0 < line <= len(lines) else self.formula
        where = f"line {line}, column {col + 1}" if len(lines) > 1 else f"column {col + 1}"
        return ValueError(
            f"loss {self.loss!r}: {message} at {where} of the formula\n    {text}\n    {' ' * col}^"
        )

    def add(self, op: str, a: int = -1, b: int = -1, c: int = -1, value: float = 0.0) -> int:
        key = (op, a, b, c, float(value).hex())
        found = self.index.get(key)
        if found is not None:
            return found
        self.nodes.append((op, a, b, c, float(value)))
        self.index[key] = len(self.nodes) - 1
        return len(self.nodes) - 1

    def const(self, value: float) -> int:
        return self.add("const", value=value)

    def visit(self, node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return self.visit(node.body)
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.error(node, f"unsupported constant {value!r} (numbers only)")
            try:
                number = float(value)
            except OverflowError:
                raise self.error(node, f"number {value!r} is too large") from None
            return self.const(number)
        if isinstance(node, ast.Name):
            name = node.id
            if name == "n":
                return self.add("n")
            if name in self.sums:
                where, j = self.sums[name]
                return self.add(where, j)
            if name in self.params:
                return self.const(self.params[name])
            if name in FUNCTIONS:
                raise self.error(node, f"function {name!r} must be called")
            known = ", ".join(["n", *self.sums, *self.params])
            raise self.error(node, f"unknown name {name!r} (known: {known})")
        if isinstance(node, ast.BinOp):
            op = _BINARY.get(type(node.op))
            if op is None:
                raise self.error(node, f"unsupported operator {type(node.op).__name__}")
            left = self.visit(node.left)
            exponent = node.right
            squared = (
                isinstance(exponent, ast.Constant) and type(exponent.value) in (int, float) and exponent.value == 2
            )
            if op == "pow" and squared:
                return self.add("mul", left, left)  # x ** 2 as x * x: exact, and no pow call
            return self.add(op, left, self.visit(node.right))
        if isinstance(node, ast.UnaryOp):
            operand = self.visit(node.operand)
            if isinstance(node.op, ast.USub):
                return self.add("neg", operand)
            if isinstance(node.op, ast.UAdd):
                return operand
            if isinstance(node.op, ast.Not):
                return self.add("not", operand)
            raise self.error(node, f"unsupported operator {type(node.op).__name__}")
        if isinstance(node, ast.Compare):
            left = self.visit(node.left)
            result = -1
            for op_node, right_node in zip(node.ops, node.comparators):
                op = _COMPARE.get(type(op_node))
                if op is None:
                    raise self.error(node, f"unsupported comparison {type(op_node).__name__}")
                operand = self.visit(right_node)
                term = self.add(op, left, operand)
                result = term if result < 0 else self.add("and", result, term)
                left = operand
            return result
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            values = [self.visit(v) for v in node.values]
            result = values[0]
            for v in values[1:]:
                result = self.add(op, result, v)
            return result
        if isinstance(node, ast.IfExp):
            cond = self.visit(node.test)
            return self.add("where", cond, self.visit(node.body), self.visit(node.orelse))
        if isinstance(node, ast.Call):
            func = node.func
            if not isinstance(func, ast.Name):
                raise self.error(node, "only the functions " + ", ".join(FUNCTIONS) + " may be called")
            spec = FUNCTIONS.get(func.id)
            if spec is None:
                raise self.error(node, f"unsupported function {func.id!r} (supported: {', '.join(FUNCTIONS)})")
            if node.keywords:
                raise self.error(node, f"{func.id}() takes no keyword arguments")
            if any(isinstance(a, ast.Starred) for a in node.args):
                raise self.error(node, f"{func.id}() takes no *arguments")
            low, high = spec
            count = len(node.args)
            if count < low or (high is not None and count > high):
                wanted = str(low) if low == high else f"at least {low}"
                raise self.error(node, f"{func.id}() takes {wanted} arguments, got {count}")
            args = [self.visit(a) for a in node.args]
            if func.id in ("min", "max"):
                result = args[0]
                for a in args[1:]:
                    result = self.add(func.id, result, a)
                return result
            if func.id == "where":
                return self.add("where", *args)
            return self.add(func.id, args[0])
        raise self.error(node, f"unsupported syntax ({type(node).__name__})")


def compile_formula(
    loss: str, formula: str, sums: Mapping[str, Tuple[str, int]], params: Mapping[str, float]
) -> Tuple[List[Node], int]:
    """Nodes (in topological order) and the result node of ``formula``.

    ``sums`` maps each sum name to its kind and index within that kind; ``params`` maps
    parameter names to values (compiled as constants). Raises ValueError naming ``loss`` and
    the place in the formula.
    """
    if not isinstance(formula, str) or not formula.strip():
        raise ValueError(f"loss {loss!r}: formula must be a non-empty string")
    compiler = _Compiler(loss, formula, sums, params)
    try:
        tree = ast.parse(formula.strip("\n"), mode="eval")
    except SyntaxError as err:
        col = max(0, (err.offset or 1) - 1)
        line = err.lineno or 1
        fake = ast.Constant(0)
        fake.lineno, fake.col_offset = line, col
        raise compiler.error(fake, f"syntax error ({err.msg})") from None
    compiler.formula = formula.strip("\n")
    result = compiler.visit(tree)
    return compiler.nodes, result


_LEAVES = ("const", "n", "cell", "estimate", "draw", "cellzero")
_Affine = Optional[Tuple[int, Dict[int, int]]]


def separate(compiler: "_Compiler", result: int) -> List[Tuple[int, int]]:
    """The formula in the cells an item does not meet, as sum(coefficient x atom), or [].

    Most cells of an item's row are zero: there every cell sum is the draw's sum without the
    item plus g(1) - g(0) (a "cellzero" leaf), the same for every estimate cluster. When the
    formula is then affine in its estimate-only subexpressions (the atoms), with coefficients
    depending on the draw only, the engine sums each coefficient over the draws once per item
    and evaluates the full formula only in the few nonzero cells: the built-in NVI's
    shortcut, for any such formula. Adds the nodes it needs to ``compiler``; returns
    (coefficient node, atom node or -1 for 1) pairs, or [] when the formula is not of this
    form (or does not depend on the cells).
    """
    nodes = list(compiler.nodes)
    count = len(nodes)
    on_est, on_cell, on_draw = [False] * count, [False] * count, [False] * count
    for v, (op, a, b, c, _) in enumerate(nodes):
        if op in _LEAVES:
            on_est[v], on_cell[v], on_draw[v] = op == "estimate", op == "cell", op == "draw"
            continue
        for u in (a, b, c):
            if u >= 0:
                on_est[v] |= on_est[u]
                on_cell[v] |= on_cell[u]
                on_draw[v] |= on_draw[u]
    if not on_cell[result]:
        return []
    zero_node = compiler.const(0.0)
    one_node = compiler.const(1.0)
    # The zero-cell version of each node that does not depend on the estimate.
    zero: Dict[int, int] = {}
    for v, (op, a, b, c, value) in enumerate(nodes):
        if on_est[v]:
            continue
        if op == "cell":
            zero[v] = compiler.add("cellzero", a)
        elif op in _LEAVES or not on_cell[v]:
            zero[v] = v
        else:
            za, zb, zc = (zero[u] if u >= 0 else -1 for u in (a, b, c))
            zero[v] = compiler.add(op, za, zb, zc, value)

    def arith(op: str, a: int, b: int) -> int:
        # The separable form adds the constants 0 and 1 of its own (an atom's part outside the
        # estimate is 0, its coefficient 1): x + 0, 0 + x, x - 0, x * 1, 1 * x and x / 1 are
        # folded to x (the same value; only x + 0 would have turned a -0 into +0), so that
        # the engine runs no pass for them.
        if (op == "add" and zero_node in (a, b)) or (op == "sub" and b == zero_node):
            return b if a == zero_node and op == "add" else a
        if (op == "mul" and one_node in (a, b)) or (op == "div" and b == one_node):
            return b if a == one_node and op == "mul" else a
        return compiler.add(op, a, b)

    def combine(x: Dict[int, int], y: Dict[int, int], op: str, only_y: Callable[[int], int]) -> Dict[int, int]:
        out = {s: arith(op, x[s], y[s]) if s in y else x[s] for s in x}
        out.update({s: only_y(y[s]) for s in y if s not in x})
        return out

    rep: Dict[int, _Affine] = {}
    for v, (op, a, b, c, _) in enumerate(nodes):
        if not on_est[v]:
            rep[v] = (zero[v], {})
            continue
        if not on_cell[v] and not on_draw[v]:
            rep[v] = (zero_node, {v: one_node})  # an atom: depends on the estimate only
            continue
        ra, rb, rc = (rep.get(u) if u >= 0 else None for u in (a, b, c))
        out: _Affine = None
        if op == "neg" and ra is not None:
            out = (compiler.add("neg", ra[0]), {s: compiler.add("neg", k) for s, k in ra[1].items()})
        elif op in ("add", "sub") and ra is not None and rb is not None:
            flip = (lambda k: k) if op == "add" else (lambda k: compiler.add("neg", k))
            out = (arith(op, ra[0], rb[0]), combine(ra[1], rb[1], op, flip))
        elif op == "mul" and ra is not None and rb is not None and not (ra[1] and rb[1]):
            scale, other = (ra[0], rb) if not ra[1] else (rb[0], ra)
            out = (arith("mul", ra[0], rb[0]), {s: arith("mul", k, scale) for s, k in other[1].items()})
        elif op == "div" and ra is not None and rb is not None and not rb[1]:
            out = (arith("div", ra[0], rb[0]), {s: arith("div", k, rb[0]) for s, k in ra[1].items()})
        elif op == "where" and ra is not None and rb is not None and rc is not None and not ra[1]:
            keys = list(rb[1]) + [s for s in rc[1] if s not in rb[1]]
            out = (
                compiler.add("where", ra[0], rb[0], rc[0]),
                {s: compiler.add("where", ra[0], rb[1].get(s, zero_node), rc[1].get(s, zero_node)) for s in keys},
            )
        rep[v] = out
    final = rep[result]
    if final is None:
        return []
    return [(final[0], -1)] + [(k, s) for s, k in final[1].items()]


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
    one raises :class:`salsox.plugins.PluginError` showing the offending table.

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
        if not isinstance(self.sums, Mapping) or not self.sums:
            raise ValueError(f"loss {label!r}: sums must be a non-empty dict {{NAME: (where, g)}}")
        self._sum_specs: List[Tuple[str, str, SumFunction]] = []
        positions: Dict[str, Tuple[str, int]] = {}
        counts = {w: 0 for w in WHERES}
        for key, spec in self.sums.items():
            if not isinstance(key, str) or not key.isidentifier():
                raise ValueError(f"loss {label!r}: sum name {key!r} is not an identifier")
            if key == "n" or key in FUNCTIONS or key in self._params:
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
        for key in self._params:
            if key == "n" or key in FUNCTIONS:
                raise ValueError(f"loss {label!r}: parameter name {key!r} is reserved")
        self._nodes, self._result = compile_formula(label, self.formula, positions, self._params)
        # The separable form, when there is one, for the engine's sparse scores.
        compiler = _Compiler(label, self.formula, positions, self._params)
        compiler.nodes = list(self._nodes)
        compiler.index = {(op, a, b, c, float(value).hex()): k for k, (op, a, b, c, value) in enumerate(self._nodes)}
        self._terms = separate(compiler, self._result)
        self._all_nodes = compiler.nodes if self._terms else self._nodes

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

    def _tables(self, n: int, who: str) -> Dict[str, List[List[float]]]:
        counts = np.arange(n + 1, dtype=np.int64)
        tables: Dict[str, List[List[float]]] = {w: [] for w in WHERES}
        for key, where, g in self._sum_specs:
            fn = getattr(self, g) if isinstance(g, str) else g
            try:
                values = np.asarray(fn(counts, n), dtype=np.float64)
            except Exception as err:
                raise PluginError(f"{who}: g of sum {key!r} raised {type(err).__name__}: {err}") from err
            if values.shape != counts.shape:
                raise PluginError(f"{who}: g of sum {key!r} returned shape {values.shape}, expected {counts.shape}")
            if not np.all(np.isfinite(values)):
                raise PluginError(f"{who}: g of sum {key!r} returned NaN or infinite values")
            if values[0] != 0.0:
                raise PluginError(f"{who}: g of sum {key!r} must be 0 at count 0, got {values[0]!r}")
            tables[where].append(values.tolist())
        return tables

    def _route(self, truth: Any, engine: Optional[str] = None) -> Route:
        _needs_draws(self, truth)
        _check_engine(engine, binder=False)
        return CountSumRoute(truth, self._count_loss)

    def _count_loss(self, n: int) -> Any:
        """The compiled engine form (``_core.CountSumLoss``) for n items, checked at equality."""
        who = loss_label(self.name, type(self).__name__)
        tables = self._tables(n, who)
        compiled = _core.CountSumLoss(
            who, n, tables["cell"], tables["estimate"], tables["draw"], self._all_nodes, self._result, self._terms
        )
        _check_equality(compiled, n, who, tables)
        return compiled


def _sizes_to_check(n: int) -> List[np.ndarray]:
    """Cluster sizes of a few partitions of n items on which a loss must be 0 against itself."""
    out = [np.array([n]), np.ones(n, dtype=np.int64)]
    for k in sorted({2, 3, max(2, math.isqrt(n))}):
        if k < n:
            out.append(np.bincount(np.arange(n) % k))
            out.append(np.array([n - k + 1] + [1] * (k - 1)))
    return out


def _check_equality(compiled: Any, n: int, who: str, tables: Dict[str, List[List[float]]]) -> None:
    """The loss of an estimate equal to the draw must be 0; and >= 0 between the extremes."""
    g = {w: [np.asarray(t) for t in ts] for w, ts in tables.items()}

    def value(est: np.ndarray, draw: np.ndarray, cells: np.ndarray) -> float:
        return float(compiled.evaluate(
            float(n),
            [float(t[cells].sum()) for t in g["cell"]],
            [float(t[est].sum()) for t in g["estimate"]],
            [float(t[draw].sum()) for t in g["draw"]],
        ))

    for sizes in _sizes_to_check(n):
        v = value(sizes, sizes, sizes)
        if not math.isfinite(v) or abs(v) > _NEGATIVE_TOLERANCE:
            shown = sizes.tolist() if len(sizes) <= 20 else f"{len(sizes)} clusters"
            raise PluginError(
                f"{who}: the loss of an estimate equal to the draw is {v!r}, not 0 (cluster sizes {shown}); "
                "a loss must be 0 when the estimate equals the draw"
            )
    one, singles = np.array([n]), np.ones(n, dtype=np.int64)
    for what, est, draw in (("estimate one cluster, draw all singletons", one, singles),
                            ("estimate all singletons, draw one cluster", singles, one)):
        v = value(est, draw, singles)
        if not math.isfinite(v) or v < -_NEGATIVE_TOLERANCE:
            raise PluginError(f"{who}: negative or non-finite loss {v!r} ({what}); a loss must be >= 0")
