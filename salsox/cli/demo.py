"""The `demo` subcommand: the whole pipeline on the bundled example draws."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .common import (
    _add_jobs,
    _add_one_based,
    _add_plot,
    _plot_summary,
    _positive_int,
    _progress_bar,
    _require_matplotlib,
    _write,
)


def run(args: argparse.Namespace) -> int:
    from .. import search
    from ..uncertainty.credible_ball import credible_ball
    from ..datasets import example_draws

    if args.plot is not None:
        _require_matplotlib()
    example = example_draws()
    draws = example.draws
    bar = _progress_bar(args, "salsox demo")
    est = search.salso(draws, "VI", n_runs=args.runs, seed=args.seed, n_jobs=args.jobs, progress=bar)
    summary = est.summary(draws, n_jobs=args.jobs)
    ball = credible_ball(est, draws, "VI", 0.95, n_jobs=args.jobs)
    agreement = _agreement(est.labels, example.true_labels)
    if args.plot is not None:
        _plot_summary(summary, args.plot, args.kind, args.dpi, np.asarray(example.data), draws)
    lines = [
        "Example: " + example.description,
        "",
        f"SALSO estimate (VI loss, {args.runs} runs, seed {args.seed}): {est.n_clusters} clusters, "
        f"expected loss {est.expected_loss:.6g}; adjusted Rand index with the true labels {agreement:.3f}",
        "",
        summary.to_text(one_based=args.one_based),
        "",
        ball.to_text(one_based=args.one_based),
    ]
    _write("\n".join(lines), None)
    return 0


def _agreement(labels: np.ndarray, truth: np.ndarray) -> float:
    from ..metrics import ARI

    return float(ARI(labels, truth))


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "demo",
        help="run on the bundled example draws",
        description="Estimate, summary and credible ball for the bundled example draws.",
    )
    p.add_argument("--runs", type=_positive_int("--runs"), default=16, help="SALSO runs (default 16)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    _add_jobs(p)
    _add_plot(p)
    _add_one_based(p, "cluster, item and draw numbers")
    p.set_defaults(handler=run)
