"""Rewrites of a compiled count-sum formula for the engine: its additive form (the tabulated
engine), the separable form of its zero cells (the sparse scores) and square roots taken per
factor (see :mod:`salsox.losses.countsum`)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np

from .countsum_formula import Compiler, Node

__all__ = ["additive_form", "separate", "factor_square_roots", "exact_nonnegative"]

_LEAVES = ("const", "n", "cell", "estimate", "draw", "cellzero")
_Affine = Optional[Tuple[int, Dict[int, int]]]


def _dependencies(nodes: List[Node]) -> Tuple[List[bool], List[bool], List[bool]]:
    """Per node, whether it depends on an estimate sum, on a draw sum (or a zero cell's, which
    is per draw) and on a cell sum."""
    count = len(nodes)
    est, draw, cell = [False] * count, [False] * count, [False] * count
    for v, (op, a, b, c, _) in enumerate(nodes):
        if op in _LEAVES:
            est[v], draw[v], cell[v] = op == "estimate", op in ("draw", "cellzero"), op == "cell"
            continue
        for u in (a, b, c):
            if u >= 0:
                est[v] |= est[u]
                draw[v] |= draw[u]
                cell[v] |= cell[u]
    return est, draw, cell


def separate(compiler: Compiler, result: int) -> List[Tuple[int, int]]:
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
    on_est, on_draw, on_cell = _dependencies(nodes)
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


# A node as a linear form: (constant term, {sum leaf (kind, index): coefficient}).
_Linear = Tuple[float, Dict[Tuple[str, int], float]]


def _scaled(x: _Linear, factor: float) -> _Linear:
    return x[0] * factor, {k: c * factor for k, c in x[1].items()}


def additive_form(nodes: List[Node], result: int) -> Optional[Dict[Tuple[str, int], float]]:
    """The formula as ``sum of coefficient x sum`` with constant coefficients, or None.

    Such a formula is a sum over the draw's clusters, the estimate's clusters and the cells of
    one tabulated function each (the coefficients' combination of the sums' g): the form of
    Binder, VI and :class:`~salsox.plugins.DecomposableLoss`, which the engine's tabulated
    losses search. Only ``+ - *``, unary minus and division by a constant qualify; a constant
    term or ``n`` (which counts the items placed so far while a run places them) does not.

    >>> from salsox.losses.countsum_formula import compile_formula
    >>> sums = {"A": ("draw", 0), "B": ("estimate", 0), "X": ("cell", 0)}
    >>> additive_form(*compile_formula("x", "(A + B - 2 * X) / 4", sums, {}))
    {('draw', 0): 0.25, ('estimate', 0): 0.25, ('cell', 0): -0.5}
    >>> additive_form(*compile_formula("x", "(A + B - 2 * X) / n", sums, {})) is None
    True
    """
    forms: List[Optional[_Linear]] = []
    for op, a, b, _, value in nodes:
        leaf = op in _LEAVES
        x = forms[a] if not leaf and a >= 0 else None
        y = forms[b] if not leaf and b >= 0 else None
        out: Optional[_Linear] = None
        if op == "const":
            out = (value, {})
        elif op in ("draw", "estimate", "cell"):
            out = (0.0, {(op, a): 1.0})
        elif x is not None and op == "neg":
            out = _scaled(x, -1.0)
        elif x is not None and y is not None:
            if op in ("add", "sub"):
                sign = 1.0 if op == "add" else -1.0
                terms = dict(x[1])
                for k, c in y[1].items():
                    terms[k] = terms.get(k, 0.0) + sign * c
                out = (x[0] + sign * y[0], terms)
            elif op == "mul" and not x[1]:
                out = _scaled(y, x[0])
            elif op == "mul" and not y[1]:
                out = _scaled(x, y[0])
            elif op == "div" and not y[1] and y[0] != 0.0:
                out = _scaled(x, 1.0 / y[0])
        forms.append(out)
    final = forms[result]
    if final is None or final[0] != 0.0 or not any(final[1].values()):
        return None
    return {k: c for k, c in final[1].items() if c != 0.0}


_EXACT = 2.0**53  # sums of integers below this are exact in float64


def exact_nonnegative(table: np.ndarray, n: int) -> bool:
    """Whether every sum of up to n entries of ``table``, added and removed in any order, is
    exact and so never negative: integer entries >= 0 whose n-fold sum stays below 2^53."""
    return bool(np.all(table >= 0) and np.all(table == np.floor(table)) and n * float(table.max(initial=0.0)) < _EXACT)


def factor_square_roots(
    nodes: List[Node], result: int, terms: List[Tuple[int, int]], exact: Mapping[Tuple[str, int], bool]
) -> Tuple[List[Node], int, List[Tuple[int, int]]]:
    """``sqrt(x * y)`` as ``sqrt(x) * sqrt(y)`` where x depends on the estimate only, y on the
    draw only (or the other way round) and neither can be negative.

    The engine evaluates a node that varies with both the draw and the candidate cluster once
    per draw and cluster, but one that varies with one of them once per draw or per cluster:
    so the square roots of Fowlkes-Mallows' ``sqrt(A * B)`` (or an NMI's ``sqrt(H1 * H2)``) are
    taken per draw and per cluster, and only their product per cell. For x, y >= 0 the two forms
    agree to within rounding (an ulp or so); a NaN gives NaN either way. ``exact[(where, j)]``
    says whether sum j of that kind is exact and non-negative (``exact_nonnegative``); other
    operands count as non-negative when the formula makes them so (``max(0, ...)``, ``sqrt``,
    ``abs``, comparisons, sums and products of non-negative values). Returns the nodes
    (unused ones dropped, the order kept), the result node and the separable form's terms.
    """
    est, draw, cell = _dependencies(nodes)
    nonneg = [False] * len(nodes)
    for v, (op, a, b, c, value) in enumerate(nodes):
        if op == "const":
            nonneg[v] = value >= 0.0
        elif op == "n":
            nonneg[v] = True
        elif op in _LEAVES:
            nonneg[v] = exact.get(("cell" if op in ("cell", "cellzero") else op, a), False)
        elif op in ("sqrt", "abs", "exp", "not", "lt", "le", "gt", "ge", "eq", "ne", "and", "or"):
            nonneg[v] = True
        elif op in ("add", "mul", "min"):
            nonneg[v] = nonneg[a] and nonneg[b]
        elif op == "max":
            # Python's max(x, y) is x unless x < y: never negative if x is not, or if y is a
            # constant >= 0 (max(0, ...) clamps).
            nonneg[v] = nonneg[a] or (nodes[b][0] == "const" and nodes[b][4] >= 0.0)
        elif op == "where":
            nonneg[v] = nonneg[b] and nonneg[c]

    def only_est(u: int) -> bool:
        return est[u] and not draw[u] and not cell[u]

    def only_draw(u: int) -> bool:
        return draw[u] and not est[u] and not cell[u]

    out: List[Node] = []
    index: Dict[Tuple[Any, ...], int] = {}

    def add(op: str, a: int = -1, b: int = -1, c: int = -1, value: float = 0.0) -> int:
        key = (op, a, b, c, float(value).hex())
        if key not in index:
            out.append((op, a, b, c, value))
            index[key] = len(out) - 1
        return index[key]

    new: List[int] = []
    for op, a, b, c, value in nodes:
        if op == "sqrt" and nodes[a][0] == "mul":
            x, y = nodes[a][1], nodes[a][2]
            split = (only_est(x) and only_draw(y)) or (only_draw(x) and only_est(y))
            if split and nonneg[x] and nonneg[y]:
                new.append(add("mul", add("sqrt", new[x]), add("sqrt", new[y])))
                continue
        if op not in _LEAVES:  # a leaf's `a` is the index of its sum, not a node
            a, b, c = (new[u] if u >= 0 else -1 for u in (a, b, c))
        new.append(add(op, a, b, c, value))
    result2 = new[result]
    terms2 = [(new[k], new[s] if s >= 0 else -1) for k, s in terms]
    # Drop the nodes nothing uses any more (the engine would evaluate them), keeping the order:
    # the formula's nodes still come first, up to its result, and the separable form's after.
    used = [False] * len(out)
    stack = [result2] + [u for pair in terms2 for u in pair if u >= 0]
    while stack:
        u = stack.pop()
        if used[u]:
            continue
        used[u] = True
        if out[u][0] not in _LEAVES:
            stack.extend(w for w in out[u][1:4] if w >= 0)
    renumber: Dict[int, int] = {}
    kept: List[Node] = []
    for u, (op, a, b, c, value) in enumerate(out):
        if used[u]:
            renumber[u] = len(kept)
            if op not in _LEAVES:
                a, b, c = (renumber[w] if w >= 0 else -1 for w in (a, b, c))
            kept.append((op, a, b, c, value))
    return kept, renumber[result2], [(renumber[k], renumber[s] if s >= 0 else -1) for k, s in terms2]
