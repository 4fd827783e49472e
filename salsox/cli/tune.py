"""The `tune` subcommand: bisect on the cost a until the estimate has K clusters."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .common import (
    _Spinner,
    _add_draws,
    _add_jobs,
    _add_with_names,
    _check_with_names,
    _estimate_dict,
    _item_names_or_numbers,
    _jsonable,
    _load_draws,
    _positive_int,
    _progress_enabled,
    _write,
    _write_labels,
)


def run(args: argparse.Namespace) -> int:
    from ..search.tuning import tune

    _check_with_names(args)
    draws = _load_draws(args)
    with _Spinner(sys.stderr, f"tuning a for {args.clusters} clusters", enabled=_progress_enabled(args)) as spin:
        result = tune(
            draws, args.loss, args.clusters, b=args.b, max_clusters=args.max_clusters, n_runs=args.runs,
            seed=args.seed, n_jobs=args.jobs,
        )
    spin.finish(f"salsox: a = {result.a:.8g} after {len(result.history)} searches")
    if args.json:
        payload = _estimate_dict(result.estimate, args.one_based)
        payload.update(_jsonable({"a": result.a, "b": result.b, "history": result.history, "seed": result.seed}))
        _write(json.dumps(payload), args.out)
        return 0
    sys.stderr.write(
        f"salsox: {result.loss!r} gives {result.estimate.n_clusters} clusters "
        f"(expected loss {result.estimate.expected_loss:.10g})\n"
    )
    est = result.estimate
    names = _item_names_or_numbers(est, len(est.labels), args.one_based) if args.with_names else None
    _write_labels(est.labels, args.out, args.one_based, names)
    return 0


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "tune",
        help="find the cost a giving K clusters",
        description=(
            "Bisect on the cost a (b fixed) of binder or VI until the estimate has --clusters clusters; "
            "print its labels."
        ),
    )
    _add_draws(p)
    p.add_argument(
        "--clusters", "-k", type=_positive_int("--clusters"), required=True, help="wanted number of clusters"
    )
    p.add_argument(
        "--loss", choices=("binder", "VI"), default="binder", help="loss whose a is tuned (default binder)"
    )
    p.add_argument("--b", type=float, default=1.0, help="fixed cost b (default 1)")
    p.add_argument(
        "--max-clusters",
        type=_positive_int("--max-clusters"),
        default=None,
        help="cap on the number of clusters (default: most clusters in any draw)",
    )
    p.add_argument("--runs", type=_positive_int("--runs"), default=16, help="runs per search (default 16)")
    p.add_argument("--seed", type=int, default=None, help="random seed (same seed, same result)")
    p.add_argument("-q", "--quiet", action="store_true", help="no spinner on stderr")
    _add_jobs(p)
    p.add_argument("--out", "-o", help="write labels (or JSON) to this file (.npy for a numpy array)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (estimate, a, b, history)")
    p.add_argument("--one-based", action="store_true", help="labels start at 1, as in R (default 0)")
    _add_with_names(p)
    p.set_defaults(handler=run)
