"""The `summary` subcommand: per-cluster summary of an estimate, with plots."""

from __future__ import annotations

import argparse
from typing import Any

from .common import (
    _check_plot_format,
    _check_search_options,
    _resolve_loss,
    _add_data,
    read_data,
    _add_draws,
    _add_jobs,
    _add_loss,
    _add_one_based,
    _add_plot,
    _add_search,
    _estimate_or_labels,
    _load_draws,
    _plot_summary,
    _require_matplotlib,
    _write_report,
)


def run(args: argparse.Namespace) -> int:
    from ..summaries import summarize

    if args.plot is not None:
        _require_matplotlib()
        _check_plot_format(args.plot)
    # Every option checked before the draws are read.
    _resolve_loss(args)
    if args.labels is None:
        _check_search_options(args)
    draws = _load_draws(args)
    data = read_data(args.data) if getattr(args, "data", None) else None
    labels, loss = _estimate_or_labels(args, draws)
    summary = summarize(labels, draws, loss, exemplar=args.exemplar, order=args.order, n_jobs=args.jobs)
    if args.plot is not None:
        _plot_summary(summary, args.plot, args.kind, args.dpi, data, draws)
    _write_report(summary, args)
    return 0


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "summary",
        help="per-cluster summary of an estimate, with plots",
        description="Summarise --labels (or a fresh estimate) against the draws.",
    )
    _add_draws(p)
    p.add_argument("--labels", help="labels file to summarise (default: run the search first)")
    _add_loss(p)
    _add_search(p)
    _add_jobs(p)
    _add_plot(p)
    _add_data(p, "--kind pairs")
    p.add_argument(
        "--exemplar",
        choices=("similarity", "score"),
        default="similarity",
        help="each cluster's exemplar: the member most similar to the others (default), or "
        "score: the member with the highest item score (R salso's rule)",
    )
    p.add_argument(
        "--order",
        choices=("similarity", "score", "hclust"),
        default="similarity",
        help="item order (the JSON's order, the heatmap's): similarity (default), score (R's orderingMethod = 1) "
        "or hclust (R's orderingMethod = 2: complete linkage on 1 - PSM)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--out", "-o", help="write the report to this file")
    _add_one_based(p, "cluster and item numbers (items without names)")
    p.set_defaults(handler=run)
