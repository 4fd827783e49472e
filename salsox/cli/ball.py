"""The `ball` subcommand: credible ball around an estimate."""

from __future__ import annotations

import argparse
from typing import Any

from .arguments import ArgumentError
from .common import (
    _check_plot_format,
    _check_search_options,
    _resolve_loss,
    _add_draws,
    _apply_params,
    _param_pair,
    _add_jobs,
    _add_loss,
    _add_one_based,
    _add_result_plot,
    _add_search,
    _plot_result,
    _require_matplotlib,
    read_data,
    _estimate_or_labels,
    _load_draws,
    _probability,
    _write_report,
)


def run(args: argparse.Namespace) -> int:
    from ..losses import get_loss
    from ..uncertainty.credible_ball import check_options, credible_ball

    if args.labels is not None and args.param:
        raise ArgumentError(
            "--param sets the search's --loss, which --labels skips; set the distance's parameters with "
            "--distance-param NAME=VALUE"
        )
    distance = _apply_params(get_loss(args.distance), args.distance_param, "--distance-param")
    if args.plot is not None:
        _require_matplotlib()
        _check_plot_format(args.plot)
    if args.data is not None and args.plot is None:
        raise ArgumentError("--data is for --plot: give --plot FILE too")
    # Every option checked before the draws are read.
    check_options(distance, args.level, n_jobs=args.jobs)
    _resolve_loss(args)
    if args.labels is None:
        _check_search_options(args)
    draws = _load_draws(args)
    data = read_data(args.data) if args.data else None
    labels, _ = _estimate_or_labels(args, draws)
    ball = credible_ball(labels, draws, distance, args.level, n_jobs=args.jobs)
    if args.plot is not None:
        from .. import plots

        _plot_result(lambda: plots.plot_credible_ball(ball, data, draws=draws), args.plot, args.dpi)
    _write_report(ball, args)
    return 0


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "ball",
        aliases=["credible-ball"],
        help="credible ball around an estimate",
        description="Credible ball (Wade & Ghahramani 2018) around --labels or a fresh estimate.",
    )
    _add_draws(p)
    p.add_argument("--labels", help="labels file of the centre (default: run the search first)")
    p.add_argument(
        "--distance",
        default="VI",
        help="distance between partitions: VI (default), binder, omARI, NVI, ID, NID or a plugin's symmetric loss",
    )
    p.add_argument(
        "--distance-param",
        type=_param_pair,
        action="append",
        metavar="NAME=VALUE",
        help="set a parameter of the --distance loss (repeatable), e.g. --distance-param lam=0.1 "
        "(--param sets the search's --loss)",
    )
    p.add_argument("--level", type=_probability, default=0.95, help="posterior probability (default 0.95)")
    _add_loss(p)
    _add_search(p)
    _add_jobs(p)
    p.add_argument("--json", action="store_true", help="print the ball as JSON (with the bounds' labels)")
    p.add_argument("--out", "-o", help="write the report to this file")
    _add_one_based(p, "cluster labels and draw numbers")
    _add_result_plot(p, "the ball's partitions side by side (at --data's features, else an MDS map of the draws)")
    p.set_defaults(handler=run)
