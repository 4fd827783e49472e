"""The formula of a count-sum loss, parsed with :mod:`ast` (never ``eval``), checked against a
whitelist and compiled into the nodes the engine evaluates (see :mod:`salsox.losses.countsum`)."""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Mapping, Optional, Tuple

__all__ = ["FUNCTIONS", "Node", "Compiler", "parse_formula", "compile_formula"]

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




class Compiler:
    """Compiles a parsed formula into engine nodes, sharing identical subexpressions.

    ``nodes`` holds the nodes in topological order; :meth:`add` (and :meth:`const`) appends a
    node, or returns the index of an identical one: the rewrites of
    :mod:`salsox.losses.countsum_forms` extend a compiled formula through them.
    """

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
        """The index of node (op, a, b, c, value), added unless an identical node exists."""
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

    >>> compile_formula("x", "A - B", {"A": ("draw", 0), "B": ("estimate", 0)}, {})
    ([('draw', 0, -1, -1, 0.0), ('estimate', 0, -1, -1, 0.0), ('sub', 0, 1, -1, 0.0)], 2)
    """
    compiler, result = parse_formula(loss, formula, sums, params)
    return list(compiler.nodes), result


def parse_formula(
    loss: str, formula: str, sums: Mapping[str, Tuple[str, int]], params: Mapping[str, float]
) -> Tuple[Compiler, int]:
    """The compiler holding ``formula``'s nodes, and its result node (see :func:`compile_formula`):
    for the rewrites that add nodes of their own to the formula's."""
    if not isinstance(formula, str) or not formula.strip():
        raise ValueError(f"loss {loss!r}: formula must be a non-empty string")
    compiler = Compiler(loss, formula, sums, params)
    too_deep = ValueError(
        f"loss {loss!r}: the formula is nested too deeply to compile (Python's parser and this "
        "compiler recurse once per level: a few hundred levels at most); write long sums of terms "
        "as a sum g over counts, or group them in balanced parentheses"
    )
    try:
        tree = ast.parse(formula.strip("\n"), mode="eval")
    except (RecursionError, MemoryError):
        raise too_deep from None
    except SyntaxError as err:
        col = max(0, (err.offset or 1) - 1)
        line = err.lineno or 1
        fake = ast.Constant(0)
        fake.lineno, fake.col_offset = line, col
        raise compiler.error(fake, f"syntax error ({err.msg})") from None
    compiler.formula = formula.strip("\n")
    try:
        result = compiler.visit(tree)
    except RecursionError:
        raise too_deep from None
    return compiler, result
