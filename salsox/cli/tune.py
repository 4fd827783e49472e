"""The `tune` subcommand: bisect on the cost a until the estimate has K clusters."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .common import (
    _apply_params,
    _param_pair,
    _Spinner,
    _add_draws,
    _add_jobs,
    _add_with_names,
    _check_with_names,
    _estimate_dict,
    _item_names_or_numbers,
    _jsonable,
    _load_draws,
    _max_clusters,
    _positive_int,
    _progress_enabled,
    _write,
    _write_labels,
)


def run(args: argparse.Namespace) -> int:
    from ..search.tuning import check_tune_options, default_param, tune

    from ..losses import get_loss

    _check_with_names(args)
    loss = _apply_params(get_loss(args.loss), args.param)  # a plugin's loss, its other parameters set
    # Every option checked before the draws are read (tune checks them again).
    check_tune_options(
        loss, args.clusters, param=args.tune, bounds=args.bounds, b=args.b, max_clusters=args.max_clusters,
        n_runs=args.runs, seed=args.seed, n_jobs=args.jobs,
    )
    draws = _load_draws(args)
    # --tune names the parameter; without it, salsox.tune's own default (default_param).
    param = args.tune
    what = param if param is not None else default_param(loss)
    with _Spinner(sys.stderr, f"tuning {what} for {args.clusters} clusters", enabled=_progress_enabled(args)) as spin:
        result = tune(
            draws, loss, args.clusters, param=param, bounds=args.bounds, b=args.b,
            max_clusters=args.max_clusters, n_runs=args.runs, seed=args.seed, n_jobs=args.jobs,
        )
    r_side = _r_side(result)
    spin.finish(f"salsox: {result.param} = {result.value:.8g}{r_side} after {len(result.history)} searches")
    if args.json:
        payload = _estimate_dict(result.estimate, args.one_based)
        payload.update(_jsonable({"a": result.a, "b": result.b, "r_a": result.r_a, "history": result.history,
                                  "seed": result.seed}))
        payload.update(_jsonable({"param": result.param, "value": result.value}))
        _write(json.dumps(payload), args.out)
        return 0
    sys.stderr.write(
        f"salsox: {result.loss!r} gives {result.estimate.n_clusters} clusters "
        f"(expected loss {result.estimate.expected_loss:.10g}){r_side}\n"
    )
    est = result.estimate
    names = _item_names_or_numbers(est, len(est.labels), args.one_based) if args.with_names else None
    _write_labels(est.labels, args.out, args.one_based, names)
    return 0


def _r_side(result: Any) -> str:
    """For Binder and VI, the loss found on R salso's scale (costs summing to 2), e.g.
    ``" (R salso: binder(a=1.9001364))"``; "" for other losses."""
    if result.r_a is None:
        return ""
    return f" (R salso: {result.loss.name}(a={result.r_a:.8g}))"


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "tune",
        help="find the cost a (or a loss's parameter) giving K clusters",
        description=(
            "Bisect on the cost a (b fixed) of binder or VI, or on --tune NAME, any parameter of any loss "
            "(a plugin's too), until the estimate has --clusters clusters; print its labels."
        ),
    )
    _add_draws(p)
    p.add_argument(
        "--clusters", "-k", type=_positive_int("--clusters"), required=True, help="wanted number of clusters"
    )
    p.add_argument(
        "--loss", default="binder",
        help="loss whose parameter is tuned (default binder): binder, VI or any loss with a parameter (a plugin's)",
    )
    p.add_argument(
        "--tune", metavar="NAME", default=None,
        help="the parameter to tune (default, as salsox.tune's: the cost a of a loss that has one, else the "
        "loss's only parameter)",
    )
    p.add_argument(
        "--param", type=_param_pair, action="append", metavar="NAME=VALUE",
        help="set another parameter of the loss (repeatable), e.g. --param c=2; it stays fixed",
    )
    p.add_argument(
        "--bounds", type=float, nargs=2, metavar=("LOW", "HIGH"), default=None,
        help="search the parameter within [LOW, HIGH] (default: from its value, doubling or halving)",
    )
    p.add_argument("--b", type=float, default=None, help="fixed cost b of binder / VI (default 1)")
    p.add_argument(
        "--max-clusters",
        type=_max_clusters,
        default=None,
        help="cap on the number of clusters (default: most clusters in any draw)",
    )
    p.add_argument("--runs", type=_positive_int("--runs"), default=16, help="runs per search (default 16)")
    p.add_argument("--seed", type=int, default=None, help="random seed (same seed, same result)")
    p.add_argument("-q", "--quiet", action="store_true", help="no spinner on stderr")
    _add_jobs(p)
    p.add_argument("--out", "-o", help="write labels (or JSON) to this file (.npy for a numpy array)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (estimate, a, b, r_a: R's a, history)")
    p.add_argument("--one-based", action="store_true", help="labels start at 1, as in R (default 0)")
    _add_with_names(p)
    p.set_defaults(handler=run)
