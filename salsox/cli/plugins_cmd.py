"""The `plugins` subcommand: list what installed plugins provide."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import _write


def run(args: argparse.Namespace) -> int:
    import warnings

    from ..plugins import PluginWarning, list_plugins

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)  # the listing shows each problem itself
        entries = list_plugins()
    if args.json:
        fields = ("name", "kind", "source", "plugin", "status", "error")
        _write(json.dumps([{f: getattr(e, f) for f in fields} for e in entries]), None)
        return 0
    if not entries:
        _write("no plugins installed (see docs/plugins.md)", None)
        return 0
    width = max(len(e.name) for e in entries)
    lines = [f"{'name':<{width}}  {'kind':<11}  {'status':<8}  source"]
    for e in entries:
        lines.append(f"{e.name:<{width}}  {e.kind:<11}  {e.status:<8}  {e.source}")
        if e.error:  # broken or in conflict: why, so the user can fix or uninstall it
            lines.append(f"    error: {' '.join(e.error.split())}")
    _write("\n".join(lines), None)
    return 0


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "plugins", help="list installed plugins", description="Losses and initialisers provided by installed plugins."
    )
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(handler=run)
