"""The `summary` subcommand: per-cluster summary of an estimate, with plots."""

from __future__ import annotations

import argparse
import csv
import dataclasses
from pathlib import Path
from typing import Any, List, Optional

import numpy as np

from .common import (
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
from ..io.readers import read_matrix_named


@dataclasses.dataclass(frozen=True)
class DataTable:
    """The --data file as the plots read a table: its values, column names (the header's, else
    x0, x1, ...) and row names (a first column of names, else None: rows in item order)."""

    values: np.ndarray
    columns: List[str]
    index: Optional[List[str]]

    def to_numpy(self) -> np.ndarray:
        return self.values


def read_data(path: str) -> DataTable:
    """The features of the items for --kind pairs, with the names the plots match and show."""
    values, names = read_matrix_named(path, "data")
    if values.ndim == 1:
        values = values[:, None]
    columns = list(names) if names is not None else [f"x{j}" for j in range(values.shape[1])]
    return DataTable(values, columns, _row_names(path, values.shape[0], values.shape[1]))


def _row_names(path: str, m: int, p: int) -> Optional[List[str]]:
    """The first field of each data line when the reader dropped it as a column of row names
    (each of the last ``m`` lines holds ``p + 1`` fields); None otherwise."""
    if path == "-" or Path(path).suffix.lower() in (".npy", ".npz"):
        return None
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if len(lines) < m:
        return None
    delimiter = "," if "," in lines[0] else ("\t" if "\t" in lines[0] else None)
    if delimiter is None:
        fields = [line.split() for line in lines[-m:]]
    else:
        fields = [[f.strip() for f in row] for row in csv.reader(lines[-m:], delimiter=delimiter)]
    if any(len(row) != p + 1 for row in fields):
        return None
    return [row[0].strip().strip("'") for row in fields]


def run(args: argparse.Namespace) -> int:
    from ..summaries import summarize

    if args.plot is not None:
        _require_matplotlib()
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
    p.add_argument(
        "--data",
        help="features of the items (n x p), for --kind pairs; a header names the axes, and a first column of "
        "row names is matched to the draws' item names (rows in item order when either has none)",
    )
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
