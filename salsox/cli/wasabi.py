"""The `wasabi` subcommand: a few weighted partitions summarising the draws (WASABI)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .arguments import ArgumentError
from .common import (
    _check_plot_format,
    _add_data,
    read_data,
    _add_draws,
    _add_jobs,
    _jsonable,
    _load_draws,
    _positive_int,
    _require_matplotlib,
    _save_figure,
    _write,
    _MAX_DPI,
)


def run(args: argparse.Namespace) -> int:
    """WASABI particles of the draws: a table and one line of labels per particle, or JSON."""
    from ..uncertainty.wasabi import elbow, wasabi
    from ..uncertainty.wasabi.api import check_wasabi_options

    if args.plot is not None:
        _require_matplotlib()
        _check_plot_format(args.plot)
        if args.kind == "elbow" and not args.elbow:
            raise ArgumentError("--kind elbow needs --elbow (W for L = 1..-L)")
    if args.data is not None and (args.plot is None or args.kind not in ("mds", "heatmap")):
        raise ArgumentError("--data is for --plot with --kind mds or heatmap (the particle panels)")
    options: dict[str, Any] = dict(
        init=args.init, n_starts=args.starts, max_iter=args.max_iter, eps=args.eps, mini_batch=args.mini_batch,
        n_runs=args.runs, n_jobs=args.jobs, seed=args.seed,
    )
    check_wasabi_options(args.particles, **options)  # before the draws are read
    draws = _load_draws(args)
    data = read_data(args.data) if args.data else None
    if args.elbow:
        curve = elbow(draws, args.particles, **options)
        res = curve.results[-1]
    else:
        curve = None
        res = wasabi(draws, args.particles, **options)
    if args.json:
        payload = res.to_dict()
        if curve is not None:
            payload["elbow"] = curve.to_dict()
        _write(json.dumps(_jsonable(payload)), args.out)
    else:
        lines = [res.to_text()]
        if curve is not None:
            lines.append("elbow: " + ", ".join(f"L={L}: W={w:.6g}" for L, w in zip(curve.n_particles, curve.distance)))
        lines += [",".join(str(int(v)) for v in p) for p in res.particles]
        _write("\n".join(lines), args.out)
    if args.plot is not None:
        _plot(res, curve, args, data)
    return 0


def _plot(res: Any, curve: Any, args: argparse.Namespace, data: Any = None) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: never open a window from the command line
    import matplotlib.pyplot as plt

    from .. import plots

    if curve is not None and args.kind == "elbow":
        fig = plots.plot_wasabi_elbow(curve).figure
    elif args.kind == "contributions":
        fig = plots.plot_wasabi_contributions(res).figure
    else:
        fig = plots.plot_wasabi(res, data, kind=args.kind)
    try:
        _save_figure(fig, args.plot, args.dpi)
    finally:
        plt.close(fig)


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--eps must be a number, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"--eps must be finite and >= 0, got {text}")
    return value


def add_parser(sub: Any) -> None:
    """Add the subcommand to ``sub`` (the parser's subparsers)."""
    p = sub.add_parser(
        "wasabi",
        help="summarise the draws by a few weighted partitions (WASABI)",
        description=(
            "WASABI (Balocchi & Wade 2025): L partitions ('particles') with weights minimising the "
            "Wasserstein distance (VI ground metric) to the draws. Prints a table (weight, expected VI, "
            "clusters of each particle, heaviest first), then one line of labels per particle; --json "
            "gives the full result (particles, weights, W, each draw's particle)."
        ),
    )
    _add_draws(p)
    p.add_argument("-L", "--particles", type=_positive_int("-L"), required=True, help="number of particles")
    p.add_argument("--init", choices=("++", "topvi"), default="++", help="starting particles (default ++)")
    p.add_argument("--starts", type=_positive_int("--starts"), default=10, help="starts, best kept (default 10)")
    p.add_argument(
        "--max-iter", type=int, default=30, help="iterations per start (default 30; 0: the starting particles)"
    )
    p.add_argument("--eps", type=_non_negative_float, default=0.01, help="stop at a change of W <= eps log2(n)")
    p.add_argument("--mini-batch", type=_positive_int("--mini-batch"), default=None, help="draws per mini-batch")
    p.add_argument("--runs", type=_positive_int("--runs"), default=1, help="SALSO runs per particle update")
    p.add_argument("--elbow", action="store_true", help="also fit L = 1..-L and report W for each")
    p.add_argument("--seed", type=int, default=None, help="random seed (same seed, same result)")
    _add_jobs(p)
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--out", "-o", help="output file (default stdout)")
    p.add_argument("--plot", metavar="FILE", help="save a plot (format from the extension)")
    _add_data(p, "--plot's particle panels")
    p.add_argument(
        "--kind",
        choices=("mds", "heatmap", "contributions", "elbow"),
        default="mds",
        help="what --plot draws: particle panels (mds, heatmap), per-item contributions, or the elbow curve",
    )
    p.add_argument(
        "--dpi", type=_positive_int("--dpi", _MAX_DPI), default=100, help=f"resolution of --plot, 1 to {_MAX_DPI}"
    )
    p.set_defaults(handler=run)
