"""The `chips` subcommand: the CHIPS sub-partition (or path) of the draws, and its completion."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import sys
from typing import Any, Dict, Iterable, Iterator, Optional

import numpy as np

from .arguments import ArgumentError
from .common import (
    _check_plot_format,
    CLIError,
    _add_draws,
    _add_jobs,
    _add_loss,
    _add_one_based,
    _add_result_plot,
    _csv_field,
    _plot_result,
    _require_matplotlib,
    read_data,
    _estimate_dict,
    _item_names_or_numbers,
    _jsonable,
    _load_draws,
    _max_clusters,
    _positive_int,
    _resolve_loss,
    _write,
)


def run(args: argparse.Namespace) -> int:
    """CHIPS sub-partition (or path) of the draws; single mode completes it with SALSO."""
    from ..uncertainty.chips import Unallocated, check_chips_options, chips

    if args.plot is not None:
        if args.path or not args.threshold:
            raise ArgumentError("--plot draws one sub-partition: give --threshold above 0, without --path")
        _require_matplotlib()
        _check_plot_format(args.plot)
    if args.data is not None and args.plot is None:
        raise ArgumentError("--data is for --plot: give --plot FILE too")
    # Every option checked before the draws are read (chips checks them again).
    check_chips_options(
        args.threshold, n_runs=args.runs, path=True if args.path else None, n_jobs=args.jobs, seed=args.seed,
        complete=False if args.no_complete else None, loss=_resolve_loss(args), max_clusters=args.max_clusters,
    )
    draws = _load_draws(args)
    data = read_data(args.data) if args.data else None
    names = None if draws.item_names is None else [str(v) for v in draws.item_names]
    shift = 1 if args.one_based else 0

    def shifted(labels: Any) -> Any:  # -1 (unallocated) stays -1
        labels = np.asarray(labels)
        return np.where(labels >= 0, labels + shift, labels)

    res = chips(
        draws, args.threshold, n_runs=args.runs, path=True if args.path else None, n_jobs=args.jobs,
        seed=args.seed, complete=False if args.no_complete else None, loss=_resolve_loss(args),
        max_clusters=args.max_clusters,
    )
    if res.mode == "path":
        sizes, probs = np.atleast_1d(res.n_items), np.atleast_1d(res.probability)
        if args.json:
            # Row by row: the path's n + 1 rows of n labels are rebuilt one at a time, never held.
            head = json.dumps(_jsonable({"mode": "path", "auc": res.auc, "item_names": names}))
            rows = (
                json.dumps({"n_items": int(k), "probability": float(p), "labels": shifted(lab).tolist()})
                for k, p, lab in zip(sizes, probs, res.labels)
            )
            tail = json.dumps(_jsonable(res.info["seed"]))
            _write_pieces(itertools.chain([head[:-1] + ', "path": ['], _joined(rows), [f'], "seed": {tail}}}\n']),
                          args.out)
        else:
            lines = ["n_items,probability"] + [f"{int(k)},{float(p):.10g}" for k, p in zip(sizes, probs)]
            _write("\n".join(lines), args.out)
        return 0
    if args.plot is not None:
        from .. import plots

        _plot_result(lambda: plots.plot_chips(res, data), args.plot, args.dpi)
    u = res.unallocated
    assert isinstance(u, Unallocated)  # single mode
    completed = res.completed
    if args.json:
        payload: Dict[str, Any] = {
            "mode": "single",
            "labels": shifted(res.labels),
            "item_names": names,
            "n_items": res.n_items,
            "probability": res.probability,
            "threshold": res.threshold_used,
            "unallocated": {"items": np.asarray(u.items) + shift, "counts": u.counts, "q": u.q},
            "cluster_probability": res.cluster_probability,
            "completed": None if completed is None else _estimate_dict(completed, args.one_based),
            "seed": res.info["seed"],
        }
        _write(json.dumps(_jsonable(payload)), args.out)
        return 0
    sys.stderr.write(
        f"salsox: {res.n_items} of {len(res.labels)} items allocated, probability {res.probability:.6g}\n"
    )
    # A CSV, one line per item named as in the draws (numbered without names): its CHIPS label
    # (-1 unallocated) and, when completed, the full partition's label.
    cols = [shifted(res.labels)] if completed is None else [shifted(res.labels), shifted(completed.labels)]
    items = [_csv_field(v) for v in _item_names_or_numbers(draws, len(res.labels), args.one_based)]
    header = "item,chips" + ("" if completed is None else ",completed")
    rows = (",".join([items[i], *(str(int(c[i])) for c in cols)]) for i in range(len(res.labels)))
    _write("\n".join([header, *rows]), args.out)
    return 0


def _joined(pieces: Iterator[str]) -> Iterator[str]:
    """The pieces with ", " between them."""
    for k, piece in enumerate(pieces):
        yield piece if k == 0 else ", " + piece


def _write_pieces(pieces: Iterable[str], out: Optional[str]) -> None:
    """Text written piece by piece to ``out`` (stdout when None), never joined in memory."""
    try:
        with (contextlib.nullcontext(sys.stdout) if out is None else open(out, "w", encoding="utf-8")) as fh:
            for piece in pieces:
                fh.write(piece)
    except OSError as err:
        raise CLIError(f"cannot write {out}: {err.strerror or err}") from None


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "chips",
        help="high-probability sub-partition (CHIPS) and its completion",
        description=(
            "CHIPS (Page, Barrientos, Dahl & Dunson 2025): the largest sub-partition with probability >= "
            "--threshold, completed by SALSO under --loss; prints one line per item: its CHIPS label (-1 "
            "unallocated) and its label in the completed partition. --threshold 0 (default) prints the "
            "path: n_items,probability per row."
        ),
    )
    _add_draws(p)
    p.add_argument("--threshold", type=float, default=0.0, help="lowest probability, in [0, 1] (default 0: path)")
    p.add_argument("--path", action="store_true", help="print the path even with --threshold > 0")
    p.add_argument("--no-complete", action="store_true", help="do not complete the sub-partition by SALSO")
    _add_loss(p)
    p.add_argument("--max-clusters", type=_max_clusters, default=None, help="cap for the completion")
    p.add_argument("--runs", type=_positive_int("--runs"), default=64, help="CHIPS runs (default 64)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: a fresh one, reported in --json)")
    _add_jobs(p)
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--out", "-o", help="output file (default stdout)")
    _add_one_based(p, "cluster labels (-1 stays unallocated) and item numbers")
    _add_result_plot(p, "the sub-partition (at --data's features, else an MDS map of the draws)")
    p.set_defaults(handler=run)
