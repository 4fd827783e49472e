"""The `psm` subcommand: the posterior similarity matrix as CSV or .npy."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .common import CLIError, _add_draws, _add_jobs, _csv_field, _load_draws, _positive_int, _write


def run(args: argparse.Namespace) -> int:
    from ..metrics import psm

    draws = _load_draws(args)
    matrix = psm(draws, n_jobs=args.jobs)
    out = args.out
    if out is not None and out.lower().endswith(".npy"):
        try:
            with open(out, "wb") as fh:  # np.save(name) would add .npy to x.NPY
                np.save(fh, matrix)
        except OSError as err:
            raise CLIError(f"cannot write {out}: {err.strerror or err}") from None
        return 0
    lines = [",".join(f"{v:.{args.digits}g}" for v in row) for row in matrix.tolist()]
    if draws.item_names is not None:  # a header and a first column of the items' names (R's write.csv)
        names = [_csv_field(str(v)) for v in draws.item_names]
        lines = ["item," + ",".join(names)] + [f"{name},{line}" for name, line in zip(names, lines)]
    _write("\n".join(lines), out)
    return 0


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "psm",
        help="posterior similarity matrix",
        description="Posterior similarity matrix as CSV (or .npy with --out FILE.npy).",
    )
    _add_draws(p)
    _add_jobs(p)
    p.add_argument("--out", "-o", help="output file (.npy or text; default stdout)")
    p.add_argument(
        "--digits", type=_positive_int("--digits"), default=6, help="significant digits in CSV (default 6)"
    )
    p.set_defaults(handler=run)
