"""The `diagnose` subcommand: convergence diagnostics of partition-valued MCMC chains."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any, List

from ..io.files import NETCDF_SUFFIXES, read_netcdf_variable
from .arguments import ArgumentError
from .common import (
    _add_jobs,
    _check_plot_format,
    _add_loss,
    _jsonable,
    _positive_int,
    _require_matplotlib,
    _resolve_loss,
    _save_figure,
    _write,
    _MAX_DPI,
)


def _load_chains(args: argparse.Namespace) -> Any:
    """What diagnose() takes: a DataArray with chains (one netCDF file), a list of Draws (one
    file per chain), or one draws matrix with its chain ids (--chains)."""
    import numpy as np

    from ..io import read_draws

    files: List[str] = args.draws
    netcdf = [f for f in files if Path(f).suffix.lower() in NETCDF_SUFFIXES]
    if len(files) == 1 and netcdf:
        if args.chains is not None:
            raise ArgumentError("--chains is for a draws matrix; a netCDF file has its own 'chain' dimension")
        return read_netcdf_variable(files[0], args.var), None
    if files.count("-") > 1:
        raise ArgumentError("stdin (-) can be read once")
    key = args.var
    if len(files) > 1:
        if args.chains is not None:
            raise ArgumentError("--chains splits one draws file; with one file per chain leave it out")
        return [read_draws(f, key, header=args.header) for f in files], None
    draws = read_draws(files[0], key, header=args.header)
    if args.chains is None:
        raise ArgumentError(
            f"{files[0]} holds one draws matrix: say how many chains it stacks with --chains C "
            "(consecutive blocks of equal length), or give one file per chain"
        )
    h = draws.n_draws
    if h % args.chains:
        raise ArgumentError(f"--chains {args.chains} does not divide the {h} draws into chains of equal length")
    return draws.labels_matrix(), np.repeat(np.arange(args.chains), h // args.chains)


def run(args: argparse.Namespace) -> int:
    """Diagnose the chains: the verdict and the tables, or JSON."""
    from ..diagnostics import diagnose
    from ..diagnostics.api import check_options

    if args.plot is not None:
        _require_matplotlib()
        _check_plot_format(args.plot)  # before any work: a typo must not cost the whole run
        if args.out is not None and os.path.abspath(args.out) == os.path.abspath(args.plot):
            raise ArgumentError("--out and --plot name the same file")
    for path in (args.out, args.plot):
        if path is None or not os.path.exists(path):
            continue
        for f in args.draws:
            if f != "-" and os.path.exists(f) and os.path.samefile(path, f):
                raise ArgumentError(f"{path} is the draws file {f}: writing it would overwrite the input")
    loss = _resolve_loss(args)
    # Every option checked before the draws are read (diagnose checks them again).
    check_options(
        loss=loss, distance=args.distance, n_references=args.references, n_runs=args.runs, rhat_threshold=args.rhat,
        ess_threshold=args.ess, alpha=args.alpha, n_permutations=args.n_permutations, gap_draws=args.gap_draws,
        ts=args.ts, seed=args.seed, n_jobs=args.jobs,
    )
    draws, chains = _load_chains(args)
    diag = diagnose(
        draws, chains=chains, loss=loss, distance=args.distance, n_references=args.references, n_runs=args.runs,
        rhat_threshold=args.rhat, ess_threshold=args.ess, alpha=args.alpha, n_permutations=args.n_permutations,
        gap_draws=args.gap_draws, ts=args.ts, seed=args.seed, n_jobs=args.jobs,
    )
    if args.json:
        _write(json.dumps(_jsonable(diag.to_dict())), args.out)
    else:
        _write(diag.to_text(), args.out)
    if args.plot is not None:
        _plot(diag, args)
    return 0 if diag.converged or not args.fail else 3


def _plot(diag: Any, args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: never open a window from the command line
    import matplotlib.pyplot as plt

    from .. import plots

    if args.kind == "rank":
        fig = plots.plot_diagnosis_ranks(diag)
    elif args.kind == "estimates":
        fig = plots.plot_chain_estimates(diag)
    elif args.kind == "gap":
        fig = plots.plot_chain_gap(diag)
    else:
        fig = plots.plot_diagnosis_traces(diag)
    try:
        _save_figure(fig, args.plot, args.dpi)
    finally:
        plt.close(fig)


def _distance(text: str) -> str:
    """--distance: a name diagnose takes (checked here, so that a typo costs no reading)."""
    from ..diagnostics.mapping import resolve_distance

    try:
        resolve_distance(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _threshold(name: str, minimum: float) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not value > minimum or value == float("inf"):
            raise argparse.ArgumentTypeError(f"{name} must be finite and > {minimum:g}, got {text}")
        return value

    return parse


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "diagnose",
        help="convergence diagnostics of several MCMC chains of partitions (R-hat, ESS, MCSE)",
        description=(
            "Has the sampler converged? Maps each draw to real traces (its VI to reference draws, its "
            "number of clusters), computes ArviZ's rank-normalised split R-hat and bulk/tail ESS, each "
            "chain's SALSO estimate and the distances between chains, and prints a verdict. DRAWS: one "
            "netCDF / InferenceData file with a 'chain' dimension, one file per chain, or one draws file "
            "with --chains C. Needs arviz (pip install 'salsox[diagnostics]')."
        ),
    )
    p.add_argument("draws", metavar="DRAWS", nargs="+", help="draws file(s): .nc, or one .csv/.npy/.npz per chain")
    p.add_argument("--var", help="variable (netCDF) or array (.npz) holding the labels")
    p.add_argument("--header", choices=("auto", "yes", "no"), default="auto", help="text files: a header line?")
    p.add_argument(
        "--chains", type=_positive_int("--chains"), default=None, metavar="C",
        help="one draws file stacking C chains of equal length, one after the other",
    )
    _add_loss(p)
    p.add_argument(
        "--distance", type=_distance, default="VI",
        help="distance of the mapping and of the comparisons: VI (default), NVI, ID, NID, binder, or any loss "
        "between two partitions by name (a plugin's included)",
    )
    p.add_argument(
        "--ts", action="store_true",
        help="also map the draws by a travelling salesman's nearest-neighbour tour (genMCMCDiag's ts)",
    )
    p.add_argument(
        "--references", type=_positive_int("--references"), default=5, metavar="R",
        help="reference draws per chain (default 5)",
    )
    p.add_argument("--runs", type=_positive_int("--runs"), default=16, help="SALSO runs per chain (default 16)")
    p.add_argument("--rhat", type=_threshold("--rhat", 1.0), default=1.01, help="R-hat threshold (default 1.01)")
    p.add_argument(
        "--ess", type=_threshold("--ess", 0.0), default=100.0, help="ESS per chain threshold (default 100)"
    )
    p.add_argument(
        "--alpha", type=_threshold("--alpha", 0.0), default=0.01,
        help="false-alarm rate of the calibrated R-hat limit and of the gap test (default 0.01)",
    )
    p.add_argument(
        # dest n_permutations: diagnose's keyword, so that its messages name --permutations
        "--permutations", dest="n_permutations", type=_positive_int("--permutations"), default=999, metavar="P",
        help="random relabellings of blocks of draws behind them (default 999)",
    )
    p.add_argument(
        "--gap-draws", type=_positive_int("--gap-draws"), default=250, metavar="S",
        help="draws per chain of the gap between chains: all pairs of S evenly spaced draws (default 250)",
    )
    p.add_argument("--seed", type=int, default=None, help="random seed (same seed, same result)")
    _add_jobs(p)
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--fail", action="store_true", help="exit with status 3 when the chains are not converged")
    p.add_argument("--out", "-o", help="output file (default stdout)")
    p.add_argument("--plot", metavar="FILE", help="save a plot (format from the extension)")
    p.add_argument(
        "--kind", choices=("traces", "rank", "estimates", "gap"), default="traces",
        help="what --plot draws: trace plots, rank plots, the chains' estimates side by side, or the gap "
        "between chains with its null",
    )
    p.add_argument(
        "--dpi", type=_positive_int("--dpi", _MAX_DPI), default=100, help=f"resolution of --plot, 1 to {_MAX_DPI}"
    )
    p.set_defaults(handler=run)
