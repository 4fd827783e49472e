"""The `estimate` subcommand: SALSO on a draws file, labels (or JSON) out."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import (
    _add_draws,
    _add_jobs,
    _add_loss,
    _add_search,
    _add_with_names,
    _check_with_names,
    _estimate_dict,
    _item_names_or_numbers,
    _check_search_options,
    _load_draws,
    _resolve_loss,
    _search,
    _write,
    _write_labels,
)


def run(args: argparse.Namespace) -> int:
    _check_with_names(args)
    # Every option checked before the draws are read (salso checks them again).
    _resolve_loss(args)
    _check_search_options(args)
    draws = _load_draws(args)
    est = _search(args, draws)
    if args.json:
        _write(json.dumps(_estimate_dict(est, args.one_based)), args.out)
    else:
        names = _item_names_or_numbers(est, len(est.labels), args.one_based) if args.with_names else None
        _write_labels(est.labels, args.out, args.one_based, names)
    return 0


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "estimate",
        help="partition estimate minimising the expected loss",
        description=(
            "Run SALSO on the draws; print the labels, one per line (0-based unless --one-based), or with "
            "--with-names a CSV of item names and labels."
        ),
    )
    _add_draws(p)
    _add_loss(p)
    _add_search(p)
    _add_jobs(p)
    p.add_argument("--out", "-o", help="write labels (or JSON) to this file (.npy for a numpy array)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--one-based", action="store_true", help="labels start at 1")
    _add_with_names(p)
    p.set_defaults(handler=run)
