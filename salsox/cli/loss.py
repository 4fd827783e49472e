"""The `loss` subcommand: expected loss of given labels."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .common import _add_draws, _add_jobs, _add_loss, _load_draws, _resolve_loss, _write, read_named_labels


def run(args: argparse.Namespace) -> int:
    from ..metrics import partition_loss

    loss = _resolve_loss(args)  # before the draws are read
    draws = _load_draws(args)
    labels = read_named_labels(args.labels, several=True, draws=draws)
    values = partition_loss(labels, draws, loss, n_jobs=args.jobs)
    values = np.atleast_1d(np.asarray(values, dtype=np.float64))
    _write("\n".join(f"{v:.10g}" for v in values.tolist()), None)
    return 0


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "loss",
        help="expected loss of given labels",
        description="Monte Carlo expected loss of a partition (or of each row of a matrix of partitions).",
    )
    p.add_argument(
        "labels", metavar="LABELS", help="labels file: one partition (a row or a column), or one per row"
    )
    _add_draws(p)
    _add_loss(p)
    _add_jobs(p)
    p.set_defaults(handler=run)
