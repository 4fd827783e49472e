"""Rewrites of a compiled count-sum formula for the engine: its additive form (the tabulated
engine) and square roots taken per factor (see :mod:`salsox.losses.countsum`)."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from .countsum_formula import Node

__all__ = ["additive_form", "factor_square_roots", "exact_nonnegative"]

_LEAVES = ("const", "n", "cell", "estimate", "draw")


def _dependencies(nodes: List[Node]) -> Tuple[List[bool], List[bool], List[bool]]:
    """Per node, whether it depends on an estimate sum, on a draw sum and on a cell sum."""
    count = len(nodes)
    est, draw, cell = [False] * count, [False] * count, [False] * count
    for v, (op, a, b, c, _) in enumerate(nodes):
        if op in _LEAVES:
            est[v], draw[v], cell[v] = op == "estimate", op == "draw", op == "cell"
            continue
        for u in (a, b, c):
            if u >= 0:
                est[v] |= est[u]
                draw[v] |= draw[u]
                cell[v] |= cell[u]
    return est, draw, cell


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
    nodes: List[Node], result: int, exact: Mapping[Tuple[str, int], bool]
) -> Tuple[List[Node], int]:
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
    (unused ones dropped, the order kept) and the result node.
    """
    est, draw, cell = _dependencies(nodes)
    nonneg = [False] * len(nodes)
    for v, (op, a, b, c, value) in enumerate(nodes):
        if op == "const":
            nonneg[v] = value >= 0.0
        elif op == "n":
            nonneg[v] = True
        elif op in _LEAVES:
            nonneg[v] = exact.get((op, a), False)
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
    # Drop the nodes nothing uses any more (the engine would evaluate them), keeping the order.
    used = [False] * len(out)
    stack = [result2]
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
    return kept, renumber[result2]
