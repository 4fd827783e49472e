"""What the subcommands share: the parser class, errors, common options, reading the draws,
writing results, progress on stderr and plots to files."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO, Tuple

import numpy as np

from ..progress import fit_line
from ..io.readers import HEADER_CHOICES as _HEADER_CHOICES
from ..io.readers import InputError, escape_controls, read_labels, read_matrix, read_matrix_named, shown
from .arguments import ArgumentError

__all__ = ["CLIError", "read_labels", "read_matrix", "read_named_labels"]

# A user-facing error: printed as one line, exit status 1. The readers' errors are the same
# class, so a bad input file and a bad option read alike.
CLIError = InputError

_escape_controls = escape_controls
_shown = shown

# Highest --dpi: print quality is 300-600; a default-size figure at 1200 dpi is 7680 x 5760
# pixels, and much more would exhaust memory in the renderer.
_MAX_DPI = 1200

# Values of SALSOX_DEBUG that turn tracebacks on (anything else, "0" included, leaves them off).
_TRUTHY = frozenset({"1", "true", "yes", "on"})

# Arguments naming files: echoed in messages with control characters escaped.
_PATH_ARGS = ("draws", "labels", "data", "out", "plot")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit status 2) instead of a usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        shown = _escape_controls(message, keep_whitespace=True)
        sys.stderr.write(f"{self.prog}: error: {shown} (see {self.prog} --help)\n")
        raise SystemExit(2)


def _load_draws(args: argparse.Namespace) -> Any:
    """The draws file as a validated :class:`salsox.Draws`, with its item names (errors name
    the file): :func:`salsox.read_draws`."""
    from ..io import read_draws

    key, var = getattr(args, "key", None), getattr(args, "var", None)
    if key is not None and var is not None:
        raise ArgumentError("give --key (an array of a .npz file) or --var (a netCDF variable), not both")
    return read_draws(args.draws, key if var is None else var, header=getattr(args, "header", "auto"))


def read_named_labels(path: str, *, several: bool = False, draws: Any = None) -> Any:
    """A labels file: an ``item,label`` CSV (``estimate --with-names`` output, in any row order)
    as :class:`salsox.io.NamedLabels`, matched to the draws' items by its item column; any other
    layout as :func:`read_labels` reads it (positions). The item column is text; it is read as
    integers when ``draws`` name their items by integers and every item parses as one."""
    import csv

    from ..io import NamedLabels

    if path != "-" and Path(path).suffix.lower() not in (".npy", ".npz"):
        try:
            text = Path(path).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            text = ""
        lines = [line for line in text.splitlines() if line.strip()]
        head = [f.strip().strip("'").lower() for f in next(csv.reader(lines[:1]))] if lines else []
        if head in (["item", "label"], ["", "item", "label"]):
            rows = list(csv.reader(lines[1:]))
            if len(head) == 3:  # R's write.csv: a first column of row numbers
                rows = [row[1:] for row in rows]
            bad = next((i for i, row in enumerate(rows) if len(row) != 2), None)
            if bad is not None:
                raise CLIError(f"labels file {path}, line {bad + 2}: an item,label file has two fields a line")
            items = [row[0].strip() for row in rows]
            try:
                labels = [int(row[1]) for row in rows]
            except ValueError:
                raise CLIError(f"labels file {path}: the label column must hold integers") from None
            names = getattr(draws, "item_names", None)
            if names is not None and all(isinstance(v, int) for v in names):
                try:
                    items = [int(v) for v in items]  # type: ignore[misc]
                except ValueError:
                    pass  # text that names no integer: refused by name when matched
            try:
                return NamedLabels(labels, items)
            except ValueError as err:
                raise CLIError(f"labels file {path}: {err}") from None
    return read_labels(path, several=several)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        v = float(x)
        return v if math.isfinite(v) else None
    if x is None or isinstance(x, str):
        return x
    return repr(x)


def _write(text: str, out: Optional[str]) -> None:
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    try:
        Path(out).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    except OSError as err:
        raise CLIError(f"cannot write {out}: {err.strerror or err}") from None


def _write_labels(
    labels: np.ndarray, out: Optional[str], one_based: bool, names: Optional[Sequence[Any]] = None
) -> None:
    """One label per line; with ``names`` (--with-names) a CSV instead, ``item,label`` then one
    ``name,label`` row per item (the draws file's item names, or the item numbers)."""
    values = np.asarray(labels, dtype=np.int64) + (1 if one_based else 0)
    if names is not None:
        rows = [f"{_csv_field(str(name))},{v}" for name, v in zip(names, values.tolist())]
        _write("\n".join(["item,label", *rows]), out)
        return
    if out is not None and out.lower().endswith(".npy"):
        try:
            with open(out, "wb") as fh:  # np.save(name) would add .npy to x.NPY
                np.save(fh, values)
        except OSError as err:
            raise CLIError(f"cannot write {out}: {err.strerror or err}") from None
        return
    _write("\n".join(str(v) for v in values.tolist()), out)


def _csv_field(text: str) -> str:
    """``text`` as one CSV field: quoted (quotes doubled) when it holds a comma, quote or newline."""
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _item_names_or_numbers(est: Any, n: int, one_based: bool) -> List[str]:
    """The estimate's item names, or the item numbers when the draws file named none."""
    names = _item_names(est)
    return names if names is not None else [str(i + (1 if one_based else 0)) for i in range(n)]


def _check_with_names(args: argparse.Namespace) -> None:
    """Before any search: --with-names writes text, which a .npy --out cannot hold."""
    out = getattr(args, "out", None)
    if getattr(args, "with_names", False) and out is not None and out.lower().endswith(".npy"):
        raise ArgumentError("--with-names writes text: give --out a text file name, not .npy")


def _add_with_names(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--with-names", action="store_true",
        help="print a CSV, item,label, with the items named as in the draws file (or numbered)",
    )


def _save_figure(fig: Any, path: str, dpi: int) -> None:
    try:
        fig.savefig(path, dpi=dpi)
    except (OSError, ValueError) as err:
        raise CLIError(f"cannot save the plot to {path}: {err}") from None
    except MemoryError:  # the renderer's buffer (matplotlib reports "std::bad_alloc")
        width, height = (int(v * dpi) for v in fig.get_size_inches())
        raise CLIError(
            f"cannot save the plot to {path}: not enough memory for a {width} x {height} pixel image "
            f"at --dpi {dpi}; use a smaller --dpi"
        ) from None


class _Spinner:
    """An indeterminate spinner with elapsed time, on a terminal only.

    Used for `tune`, whose bisection runs many searches of unknown number: this shows that it
    is alive rather than how far it is. It appears only after ``delay`` seconds, so quick
    searches print nothing. (Searches themselves show a ProgressBar.)
    """

    def __init__(self, stream: TextIO, label: str, *, enabled: bool, delay: float = 0.5, interval: float = 0.1) -> None:
        self.stream = stream
        self.label = label
        self.enabled = enabled
        self.delay = delay
        self.interval = interval
        self.shown = False
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._start = 0.0

    def __enter__(self) -> "_Spinner":
        self._start = time.perf_counter()
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="salsox-spinner", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        frames = "|/-\\"
        i = 0
        if self._stop.wait(self.delay):
            return
        while not self._stop.is_set():
            elapsed = time.perf_counter() - self._start
            line = fit_line(f"{frames[i % 4]} {self.label}: {elapsed:6.1f} s elapsed", self.stream)
            self.stream.write("\r" + line)
            self.stream.flush()
            self.shown = True
            i += 1
            self._stop.wait(self.interval)

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def finish(self, message: str) -> None:
        """Print the final line (only when the spinner was shown)."""
        if self.shown:
            self.stream.write(message + "\n")
            self.stream.flush()


def _progress_bar(args: argparse.Namespace, label: str) -> Optional[Any]:
    """A search progress bar on stderr (runs done / total, best loss so far), on a terminal
    and without --quiet only; it appears after half a second, so quick searches print nothing."""
    if not _progress_enabled(args):
        return None
    from ..progress import ProgressBar

    return ProgressBar(sys.stderr, label=label, delay=0.5)


def _progress_enabled(args: argparse.Namespace) -> bool:
    if getattr(args, "quiet", False):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _resolve_loss(args: argparse.Namespace) -> Any:
    """The loss of --loss, with --a/--b and every --param NAME=VALUE applied."""
    from ..losses import get_loss

    r_a = getattr(args, "r_a", None)
    if r_a is None:
        loss = get_loss(args.loss, a=args.a, b=args.b)
    else:
        if args.a is not None or args.b is not None:
            raise ArgumentError("give --r-a (R's a) or --a/--b (the costs), not both")
        from_r = getattr(type(get_loss(args.loss)), "from_r", None)
        if from_r is None:
            raise ArgumentError(f"--r-a applies to the binder and VI losses, not to {args.loss!r}")
        loss = from_r(r_a)
    return _apply_params(loss, getattr(args, "param", None))


def _apply_params(loss: Any, pairs: Optional[Sequence[Tuple[str, float]]], flag: str = "--param") -> Any:
    """``loss`` with every ``flag NAME=VALUE`` of ``pairs`` applied (``Loss.with_params``)."""
    values: Dict[str, float] = {}
    for name, value in pairs or ():
        if name in values:
            raise ArgumentError(f"{flag} {name} is given twice")
        values[name] = value
    if not values:
        return loss
    shown = " ".join(f"{flag} {k}={v:g}" for k, v in values.items())
    try:
        return loss.with_params(**values)
    except ValueError as err:  # an unknown name, or a value the loss refuses: the user's to fix
        text = _error_message(err)
        named = repr(loss.name) in text
        raise ArgumentError(
            f"{shown}: {text}" if named else f"{shown}: loss {loss.name!r} refused it: {text}"
        ) from None


def _param_pair(text: str) -> Tuple[str, float]:
    """``NAME=VALUE`` of --param: an identifier and a finite number."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE (e.g. lam=0.1), got {text!r}")
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the value of {name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"the value of {name} must be finite, got {value!r}")
    return name, number


def _check_plot_format(path: str) -> None:
    """An ArgumentError (exit status 2) unless matplotlib can write the format that ``path``'s
    extension names."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in formats:
        raise ArgumentError(
            f"--plot {path}: the extension must name an image format ({', '.join(sorted(formats))})"
        )


def _check_search_options(args: argparse.Namespace) -> None:
    """The search's options (--max-clusters, --runs, --seconds, --initializer, ...) checked as
    :func:`_search` passes them, before the draws are read."""
    from ..search.salso_search import check_options

    if getattr(args, "prob_initializer", None) is not None and getattr(args, "initializer", None) is None:
        raise ArgumentError("--prob-initializer needs --initializer NAME")
    check_options(
        max_clusters=args.max_clusters, n_runs=args.runs, n_jobs=args.jobs, seed=args.seed, seconds=args.seconds,
        max_zealous=10 if args.max_zealous is None else args.max_zealous,
        initializer=getattr(args, "initializer", None), prob_initializer=getattr(args, "prob_initializer", None),
    )


def _search(args: argparse.Namespace, draws: Any) -> Any:
    from .. import search

    loss = _resolve_loss(args)
    options: Dict[str, Any] = dict(
        max_clusters=args.max_clusters,
        n_runs=args.runs,
        n_jobs=args.jobs,
        seed=args.seed,
        seconds=args.seconds,
    )
    if args.max_zealous is not None:
        options["max_zealous"] = args.max_zealous
    if getattr(args, "initializer", None) is not None:
        options["initializer"] = args.initializer
    if getattr(args, "prob_initializer", None) is not None:
        if getattr(args, "initializer", None) is None:
            raise ArgumentError("--prob-initializer needs --initializer NAME")
        options["prob_initializer"] = args.prob_initializer
    bar = _progress_bar(args, f"salsox {loss.name}")
    # Looked up at call time, so that salsox.search.salso can be replaced (tests do).
    return search.salso(draws, loss, progress=bar, **options)


def _item_names(est: Any) -> Optional[List[str]]:
    names = getattr(est, "item_names", None)
    return None if names is None else [str(v) for v in names]


def _estimate_dict(est: Any, one_based: bool) -> Dict[str, Any]:
    return _jsonable(
        {
            "labels": (np.asarray(est.labels) + (1 if one_based else 0)).tolist(),
            "item_names": _item_names(est),
            "n_clusters": est.n_clusters,
            "sizes": est.sizes.tolist(),
            "expected_loss": est.expected_loss,
            "loss": est.loss.name,
            "loss_params": est.loss.params,
            "info": est.info,
        }
    )


def _estimate_or_labels(args: argparse.Namespace, draws: Any) -> Any:
    """Labels from --labels, or a fresh estimate; returns (labels, loss)."""
    if args.labels is not None:
        return read_named_labels(args.labels, draws=draws), _resolve_loss(args)
    est = _search(args, draws)
    return est.labels, est.loss


def _plot_summary(
    summary: Any, path: str, kind: str, dpi: int, data: Any = None, draws: Any = None
) -> None:
    """Save the --kind plot of ``summary`` to ``path``; ``draws`` feed the expected-loss
    dendrogram (a Summary holds only the PSM, too little for losses such as VI)."""
    import matplotlib

    matplotlib.use("Agg")  # files only: never open a window from the command line
    import matplotlib.pyplot as plt

    from .. import plots

    if kind == "pairs":
        if data is None:
            raise ArgumentError("--kind pairs needs --data FILE (the n x p features of the items)")
        fig = plots.plot_pairs(summary, data)
    elif kind == "loss-dendrogram":
        fig = plots.plot_dendrogram(summary, draws, kind="loss").figure
    else:
        functions: Dict[str, Callable[..., Any]] = {
            "heatmap": plots.plot_heatmap,
            "mds": plots.plot_mds,
            "dendrogram": plots.plot_dendrogram,
        }
        draw = functions[kind]
        fig = draw(summary).figure
    try:
        _save_figure(fig, path, dpi)
    finally:
        plt.close(fig)


def _write_report(report: Any, args: argparse.Namespace) -> None:
    """A Summary or CredibleBall: its to_dict() as JSON with --json, else its to_text()
    (numbered from 1 with --one-based)."""
    one_based = getattr(args, "one_based", False)
    if args.json:
        text = json.dumps(_jsonable(report.to_dict(one_based=one_based)))
    else:
        text = report.to_text(one_based=one_based)
    _write(text, args.out)


def _add_one_based(p: argparse.ArgumentParser, what: str = "labels and item numbers") -> None:
    p.add_argument("--one-based", action="store_true", help=f"{what} start at 1, as in R (default 0)")


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CLIError("--plot needs matplotlib: pip install 'salsox[plot]'") from None


def _positive_int(name: str, maximum: Optional[int] = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{name} must be >= 1, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{name} must be in [1, {maximum}], got {value}")
        return value

    return parse


def _max_clusters(text: str) -> int:
    """``--max-clusters``: an integer >= 1; 0 (R's ``maxNClusters = 0``, no cap) is told to
    leave the option out."""
    try:
        zero = int(text) == 0
    except ValueError:
        zero = False  # not an integer: _positive_int says so
    if zero:
        raise argparse.ArgumentTypeError(
            "--max-clusters 0 is how R's salso asks for the default cap (maxNClusters = 0); here leave "
            "--max-clusters out"
        )
    return _positive_int("--max-clusters")(text)


def _jobs(text: str) -> int:
    """``--jobs``: a positive number of threads, or -1 for the CPUs the process may use."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs must be an integer, got {text!r}") from None
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(
            f"--jobs must be a positive number of threads, or -1 for the CPUs the process may use, got {value}"
        )
    return value


def _r_a(text: str) -> float:
    """``--r-a``: R salso's a, in (0, 2) (the costs are a and 2 - a)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--r-a must be a number, got {text!r}") from None
    if not 0.0 < value < 2.0:
        raise argparse.ArgumentTypeError(
            f"--r-a must be in (0, 2) (R's a; the costs are a and 2 - a), got {text}: at 0 or 2 one cost is zero "
            "and a trivial partition always wins"
        )
    return value


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--level must be a number, got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"--level must be in (0, 1], got {value}")
    return value


def _probability_of(name: str, closed: bool = False) -> Callable[[str], float]:
    """A probability in (0, 1], or in [0, 1] when ``closed``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not (0 <= value <= 1 if closed else 0 < value <= 1):
            raise argparse.ArgumentTypeError(f"{name} must be in {'[0, 1]' if closed else '(0, 1]'}, got {value}")
        return value

    return parse


def _add_draws(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "draws",
        metavar="DRAWS",
        help="draws file: .csv, .tsv or .txt (H rows x n items; a header names the items), .npy, .npz, "
        "or netCDF .nc (xarray, ArviZ InferenceData); - for stdin",
    )
    p.add_argument("--key", help="array name inside a .npz file (default: 'draws', or its only array)")
    p.add_argument(
        "--var", help="variable holding the labels in a netCDF / InferenceData file (default: its only one)"
    )
    p.add_argument(
        "--header",
        choices=_HEADER_CHOICES,
        default="auto",
        help="whether a text draws file starts with a header line (default auto: a line that cannot be a "
        "draw, mostly names; a line of distinct integers such as pandas' 0,1,...,n-1 is read as a draw "
        "with a warning: --header yes for a header)",
    )


def _add_loss(p: argparse.ArgumentParser, default: str = "VI") -> None:
    p.add_argument(
        "--loss",
        default=default,
        help=f"loss name (default {default}): binder, VI, omARI, NVI, ID, NID, VI.lb, omARI.approx or a plugin's",
    )
    p.add_argument("--a", type=float, default=None, help="cost a of binder / VI (default 1)")
    p.add_argument("--b", type=float, default=None, help="cost b of binder / VI (default 1)")
    p.add_argument(
        "--param",
        type=_param_pair,
        action="append",
        metavar="NAME=VALUE",
        help="set a parameter of the loss (repeatable), e.g. --param lam=0.1 for a plugin loss's lam",
    )
    p.add_argument(
        "--r-a",
        type=_r_a,
        default=None,
        metavar="A",
        help="R salso's a for binder / VI (R's binder(a=A)): costs a=A, b=2-A, A in (0, 2)",
    )


def _add_search(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-clusters",
        type=_max_clusters,
        default=None,
        help="cap on the number of clusters (default: most clusters in any draw)",
    )
    p.add_argument("--runs", type=_positive_int("--runs"), default=16, help="independent runs (default 16)")
    p.add_argument(
        "--max-zealous", type=int, default=None, help="clusters tried per round of zealous updates (default 10)"
    )
    p.add_argument("--seconds", type=float, default=None, help="time budget: no run starts after it")
    p.add_argument("--seed", type=int, default=None, help="random seed (same seed, same estimate)")
    p.add_argument(
        "--initializer", metavar="NAME", default=None, help="start runs from a plugin initialiser (see salsox plugins)"
    )
    p.add_argument(
        "--prob-initializer",
        type=_probability_of("--prob-initializer", closed=True),
        default=None,
        metavar="P",
        help="probability that a run starts from --initializer (default 1)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or spinner on stderr")


def _add_jobs(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--jobs", "-j", type=_jobs, default=None, help="threads, or -1 (default): the CPUs the process may use"
    )


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


def _add_result_plot(p: argparse.ArgumentParser, what: str) -> None:
    """--plot FILE, --data FILE and --dpi of a subcommand whose result has one plot."""
    p.add_argument("--plot", metavar="FILE", help=f"save {what} (format from the extension)")
    _add_data(p, "--plot")
    p.add_argument(
        "--dpi", type=_positive_int("--dpi", _MAX_DPI), default=100, help=f"resolution of --plot, 1 to {_MAX_DPI}"
    )


def _plot_result(draw: Callable[[], Any], path: str, dpi: int) -> None:
    """Save the figure ``draw()`` returns (an Axes or a Figure) to ``path``, off screen."""
    import matplotlib

    matplotlib.use("Agg")  # files only: never open a window from the command line
    import matplotlib.pyplot as plt

    drawn = draw()
    fig = getattr(drawn, "figure", drawn)
    try:
        _save_figure(fig, path, dpi)
    finally:
        plt.close(fig)


def _add_data(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--data",
        metavar="FILE",
        help=f"features of the items (n x p) that {what} draws them at; a header names the axes, and a first "
        "column of row names is matched to the draws' item names (by position, with a warning, when only one "
        "side names them)",
    )


def _add_plot(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plot", metavar="FILE", help="save a plot (e.g. heatmap.png; format from the extension)")
    p.add_argument(
        "--kind",
        choices=("heatmap", "mds", "dendrogram", "loss-dendrogram", "pairs"),
        default="heatmap",
        help="what --plot draws (default heatmap); dendrogram: average linkage on 1 - PSM, "
        "loss-dendrogram: R salso's, merges at the expected loss",
    )
    p.add_argument(
        "--dpi",
        type=_positive_int("--dpi", _MAX_DPI),
        default=100,
        help=f"resolution of --plot, 1 to {_MAX_DPI} (default 100)",
    )


def _error_message(err: BaseException, paths: Sequence[str] = ()) -> str:
    """One line: the file names in ``paths`` and any other control characters escaped."""
    if isinstance(err, KeyError) and err.args:
        text = str(err.args[0])
    else:
        text = str(err) or type(err).__name__
    for path in sorted(paths, key=len, reverse=True):
        if path and _shown(path) != path:
            text = text.replace(path, _shown(path))  # a newline in a name is shown, not folded
    return " ".join(_escape_controls(text, keep_whitespace=True).split())  # one line
