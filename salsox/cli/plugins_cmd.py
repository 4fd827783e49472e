"""The `plugins` subcommand: list the losses (with their tier) and the initialisers that
installed plugins provide, then the built-in losses."""

from __future__ import annotations

import argparse
import json
from typing import Any, Dict, List

from .common import _write


def _initializer_tier(init: Any) -> str:
    """When an initialiser runs: per run, or once per search; with a setup step or not."""
    when = "per search" if getattr(init, "deterministic", False) else "per run"
    return f"setup+{when}" if getattr(init, "setup", None) is not None else when


def _tier(entry: Any) -> str:
    """The tier of a listed loss (its class, or the instance its factory returns), or how an
    initialiser is called; "" for a broken entry."""
    from ..losses import loss_tier

    if not entry.ok or entry.kind not in ("loss", "initializer"):
        return ""
    try:
        obj = entry.factory if isinstance(entry.factory, type) else entry.factory()
    except Exception as err:  # a factory that fails now: say so, list the others
        return f"error ({type(err).__name__})"
    return loss_tier(obj) if entry.kind == "loss" else _initializer_tier(obj)


def _rows() -> List[Dict[str, str]]:
    import warnings

    from .._version import __version__
    from ..losses import BUILTIN_LOSSES, loss_tier
    from ..plugins import PluginWarning, list_plugins

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)  # the listing shows each problem itself
        entries = list_plugins()
    rows = [
        {
            "name": e.name, "kind": e.kind, "tier": _tier(e), "source": e.source, "plugin": e.plugin,
            "status": e.status, "error": e.error,
        }
        for e in entries
    ]
    for cls in dict.fromkeys(BUILTIN_LOSSES.values()):
        rows.append(
            {
                "name": cls.name, "kind": "loss", "tier": loss_tier(cls), "source": f"salsox {__version__} (built in)",
                "plugin": "", "status": "ok", "error": "",
            }
        )
    return rows


def _scoring(entry: Dict[str, str]) -> Dict[str, str]:
    """A usable count-sum loss's scorer and whether it is compiled (``--verbose``)."""
    from ..plugins import list_plugins

    if entry["tier"] != "count-sum" or entry["status"] != "ok":
        return {}
    info = next(e for e in list_plugins() if e.kind == "loss" and e.name == entry["name"] and e.ok)
    try:
        loss = info.factory()
        return dict(loss._scoring())
    except Exception as err:  # the listing shows the others
        return {"scorer": f"error ({type(err).__name__}: {err})", "compiled": ""}


def run(args: argparse.Namespace) -> int:
    rows = _rows()
    if getattr(args, "verbose", False):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a failed compile: shown as "no (...)"
            for r in rows:
                r.update(_scoring(r))
    if args.json:
        _write(json.dumps(rows), None)
        return 0
    width = max(len(r["name"]) for r in rows)
    tier = max(len("tier"), *(len(r["tier"]) for r in rows))
    lines = [f"{'name':<{width}}  {'kind':<11}  {'tier':<{tier}}  {'status':<8}  source"]
    for r in rows:
        lines.append(f"{r['name']:<{width}}  {r['kind']:<11}  {r['tier']:<{tier}}  {r['status']:<8}  {r['source']}")
        if r["error"]:  # broken or in conflict: why, so the user can fix or uninstall it
            lines.append(f"    error: {' '.join(r['error'].split())}")
        if r.get("scorer"):
            lines.append(f"    scorer: {r['scorer']}")
            lines.append(f"    compiled: {r['compiled']}")
    if not any(r["plugin"] for r in rows):
        lines.append("no plugins installed (see docs/plugins.md)")
    if any(r["tier"] == "count-sum" for r in rows):
        lines.append(f"count-sum formulas: {_formulas_run_by()}")
    _write("\n".join(lines), None)
    return 0


def _formulas_run_by() -> str:
    """How count-sum formulas run here: compiled (llvmlite) or by the engine's node loops."""
    from ..engine import countsum_jit

    if countsum_jit.kernel_available():
        return "compiled to machine code (llvmlite)"
    return 'the engine\'s node loops (pip install "salsox[jit]" compiles them: faster, the same results)'


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "plugins",
        help="list plugin and built-in losses (with their tier) and initialisers",
        description=(
            "Losses and initialisers provided by installed plugins, then the built-in losses. The tier "
            "says how a loss is computed: built-in (C++), tabulated (DecomposableLoss), count-sum "
            "(CountSumLoss: a formula run natively, compiled to machine code with salsox[jit]), general "
            "(ContingencyLoss: Python, slowest); for an initialiser, whether it runs per run or once per "
            "search, after a setup step or not. The last line says whether count-sum formulas are compiled."
        ),
    )
    p.add_argument("--json", action="store_true", help="print the listing as a JSON list")
    p.add_argument(
        "--verbose", "-v", action="store_true",
        help="for each count-sum loss, the scorer the engine uses (tabulated or dense) and whether its "
        "formula is compiled (llvmlite)",
    )
    p.set_defaults(handler=run)
