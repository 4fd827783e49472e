"""The package's layout rules: no import cycles between salsox's modules, and imports flow down
the layers (docs/architecture.md). File length is not a rule: a file holds one concept, whatever
its length.

Imports are read with ``ast`` from the source, not by importing it, so deferred imports inside
functions count too (``if TYPE_CHECKING:`` blocks are skipped: they never run).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple


ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "salsox"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _modules() -> Dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "build" not in p.parts}


def _known(modules: Dict[str, Path]) -> Set[str]:
    """Module names, the compiled core (known from its stub) included."""
    return set(modules) | {_module_name(p) for p in PACKAGE.rglob("*.pyi")}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.AST]:
    """Every import statement, at any depth, outside ``if TYPE_CHECKING:`` blocks."""
    stack: List[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _ancestors(name: str) -> List[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _resolve(module: str, is_package: bool, node: ast.AST, known: Set[str]) -> Set[str]:
    """The salsox modules an import statement in ``module`` names."""
    targets: Set[str] = set()
    if isinstance(node, ast.Import):
        targets = {alias.name for alias in node.names}
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        for alias in node.names:  # `from pkg import sub` imports the submodule pkg.sub
            sub = f"{prefix}.{alias.name}"
            targets.add(sub if sub in known else prefix)
    out: Set[str] = set()
    for target in targets:
        while target and target not in known:  # `import salsox.x.y` of a name, not a module
            target = target.rpartition(".")[0]
        if target:
            out.add(target)
    return out


def import_graph() -> Dict[str, Set[str]]:
    """Module -> the salsox modules importing it executes.

    Importing ``a.b.c`` first executes the packages ``a`` and ``a.b``: an edge goes to each of
    them too, except to the importer's own packages, which are already executing when it runs
    (a package's ``__init__`` importing its submodules is not a cycle). An import that names
    one of its own packages (``from salsox import x``, x not a module) is an edge all the same.
    """
    modules = _modules()
    known = _known(modules)
    graph: Dict[str, Set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        own = set(_ancestors(name))
        edges: Set[str] = set()
        for node in _imports(tree):
            for target in _resolve(name, _is_package(path), node, known):
                if target != name:
                    edges.add(target)
                edges.update(dep for dep in _ancestors(target) if dep in known and dep not in own | {name})
        graph[name] = edges
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {node: WHITE for node in graph}
    for root in sorted(graph):
        if colour[root] != WHITE:
            continue
        path: List[str] = [root]
        iters = [iter(sorted(graph[root]))]
        colour[root] = GREY
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = BLACK
                iters.pop()
                continue
            if colour.get(nxt, BLACK) == GREY:
                return path[path.index(nxt):] + [nxt]
            if colour.get(nxt) == WHITE:
                colour[nxt] = GREY
                path.append(nxt)
                iters.append(iter(sorted(graph[nxt])))
    return None


def test_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_graph_sees_deferred_and_parent_imports():
    # The graph of the real package: a deferred import (inside a function) is an edge, and
    # importing a submodule is an edge to its package's __init__ as well.
    graph = import_graph()
    assert "salsox.summaries" in graph["salsox.search.estimate"]  # deferred, in Estimate.summary
    assert "salsox.io" in graph["salsox.engine.base"]  # from ..io import Draws
    assert "salsox.engine.counts" not in graph["salsox.io.draws"]
    # `from .. import _core` imports the core, not the top-level package.
    assert "salsox._core" in graph["salsox.io.draws"] and "salsox" not in graph["salsox.io.draws"]


def test_no_import_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# docs/architecture.md's layers, bottom to top, by top-level module or subpackage of salsox.
LAYERS = {
    "_core": 0, "_version": 0, "_validation": 0, "_warnings": 0, "hookspecs": 0, "datasets": 0, "progress": 0,
    "_cpus": 0, "_config": 0,
    "io": 1,
    "registry": 2,
    "engine": 3,
    "losses": 4,
    "metrics": 5, "enumeration": 5,
    "summaries": 6,
    "search": 7,
    "uncertainty": 8,
    "diagnostics": 8,
    "plots": 9,
    "plugins": 10,
    "cli": 11,
    "__main__": 12,
}


def _layer(module: str) -> int:
    return LAYERS[module.split(".")[1]] if "." in module else max(LAYERS.values()) + 1


def test_every_module_has_a_layer():
    missing = sorted({m.split(".")[1] for m in _known(_modules()) if m != "salsox" and m.split(".")[1] not in LAYERS})
    assert not missing, f"add {missing} to LAYERS here and to docs/architecture.md"


def test_imports_go_down_the_layers():
    upward = [
        f"{module} (layer {_layer(module)}) imports {dep} (layer {_layer(dep)})"
        for module, deps in sorted(import_graph().items())
        if module != "salsox"  # the top-level package re-exports everything
        for dep in sorted(deps)
        if _layer(dep) > _layer(module)
    ]
    assert not upward, "imports up the layers:\n" + "\n".join(upward)



def _layer_table() -> Dict[str, Tuple[int, str]]:
    """docs/architecture.md's layer table: each module or subpackage named in a row's "where"
    cell -> (the row's layer, the row's "what" cell)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    table: Dict[str, Tuple[int, str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 3 or not cells[0].isdigit():
            continue
        for name in re.findall(r"`([^`]+)`", cells[1]):
            name = name.rstrip("/")
            name = name[: -len(".py")] if name.endswith(".py") else name
            assert name not in table, f"docs/architecture.md lists {name} twice in the layer table"
            table[name] = (int(cells[0]), cells[2])
    return table


def test_layer_table_of_the_docs_is_layers():
    """The layer table of docs/architecture.md lists every entry of LAYERS with its layer, and
    nothing else, so that the page cannot drift from the rule this file enforces."""
    table = _layer_table()
    documented = {name: layer for name, (layer, _) in table.items()}
    assert documented == LAYERS, (
        "docs/architecture.md's layer table differs from LAYERS: "
        f"missing {sorted(set(LAYERS) - set(documented))}, "
        f"not in LAYERS {sorted(set(documented) - set(LAYERS))}, "
        f"other layer {sorted(n for n in set(LAYERS) & set(documented) if LAYERS[n] != documented[n])}"
    )


def test_layer_table_names_every_module():
    """Every module of a subpackage is named (`path.py`, relative to the subpackage) in its
    row of docs/architecture.md's layer table."""
    table = _layer_table()
    missing = []
    for name in sorted(LAYERS):
        package = PACKAGE / name
        if not (package / "__init__.py").is_file():
            continue
        what = table[name][1]
        for path in sorted(package.rglob("*.py")):
            rel = path.relative_to(package).as_posix()
            if path.name != "__init__.py" and f"`{rel}`" not in what:
                missing.append(f"{name}/{rel}")
    assert not missing, f"describe {missing} in their rows of docs/architecture.md's layer table"
