"""The ``salsox`` command line: estimate, loss, psm, summary, ball, tune, plugins, demo.

Run ``salsox --help`` or ``salsox COMMAND --help``; the reference is ``docs/cli.md``.

Errors print one line, ``salsox: error: ...``, and exit with status 1 (2 for a bad command
line, 130 on Ctrl-C); set ``SALSOX_DEBUG=1`` (or true/yes/on) to get the traceback instead.
"""

from __future__ import annotations

import argparse
import zipfile
import json
import math
import os
import sys
import threading
import time
import unicodedata
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO

import numpy as np

from ._version import __version__

__all__ = ["main", "read_matrix", "CLIError"]

# Draws file extensions read as text; anything else that is not .npy/.npz is tried as text too.
_TEXT_SUFFIXES = (".csv", ".txt", ".tsv", ".dat")

# Highest --dpi: print quality is 300-600; a default-size figure at 1200 dpi is 7680 x 5760
# pixels, and much more would exhaust memory in the renderer.
_MAX_DPI = 1200

# Values of SALSOX_DEBUG that turn tracebacks on (anything else, "0" included, leaves them off).
_TRUTHY = frozenset({"1", "true", "yes", "on"})

# Arguments naming files: echoed in messages with control characters escaped.
_PATH_ARGS = ("draws", "labels", "data", "out", "plot")


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit status 2) instead of a usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        shown = _escape_controls(message, keep_whitespace=True)
        sys.stderr.write(f"{self.prog}: error: {shown} (see {self.prog} --help)\n")
        raise SystemExit(2)


def _escape_controls(text: str, *, keep_whitespace: bool) -> str:
    """``text`` with control and format characters (ESC, BEL, bidi overrides, ...) escaped as
    Python writes them (``\\x1b``), so that a file name cannot drive the terminal."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and not (keep_whitespace and ch in " \t\n\r"):
            out.append(ascii(ch)[1:-1])
        else:
            out.append(ch)
    return "".join(out)


def _shown(path: str) -> str:
    """A file name as printed in messages: control characters escaped."""
    return _escape_controls(path, keep_whitespace=False)


# --------------------------------------------------------------------------------------------
# Reading and writing files
# --------------------------------------------------------------------------------------------


def read_matrix(path: str, what: str = "draws", key: Optional[str] = None, header: str = "auto") -> np.ndarray:
    """A numeric matrix from .npy, .npz (``key``, default "draws"), or text (.csv, .txt, ...).

    Text files: comma-, tab- or whitespace-separated numbers, one row per line; a UTF-8
    byte-order mark is ignored; blank lines and lines starting with ``#`` are skipped. With
    ``header="auto"`` the first line is a header when it names the columns (every field is a
    name: neither a number nor a missing value such as ``NA``), or when it is exactly
    ``0,1,...,w-1`` (w >= 2) above further lines, as ``pandas.DataFrame.to_csv(index=False)``
    writes (a note on stderr says so). A header starting with an empty field, as R's
    ``write.csv`` and pandas' ``to_csv()`` with its index write, also drops the first column of
    row names. ``header="yes"``/``"no"`` force the choice. Any other non-number in a line, and
    a non-integral value when ``what`` is not ``"data"``, is an error naming the line and
    field. ``-`` reads text from standard input.

    Raises
    ------
    CLIError
        One-line messages naming the file (and line and field for text).
    """
    if path == "-":
        return _parse_text(sys.stdin.read(), "<stdin>", what, ",", header)
    p = Path(path)
    if not p.exists():
        raise CLIError(f"{what} file not found: {path}")
    if p.is_dir():
        raise CLIError(f"{what} path is a directory, not a file: {path}")
    try:
        size = p.stat().st_size
    except OSError as err:
        raise CLIError(f"cannot read {what} file {path}: {err.strerror or err}") from None
    if size == 0:
        raise CLIError(f"{what} file is empty: {path}")
    suffix = p.suffix.lower()
    try:
        if suffix == ".npy":
            with open(p, "rb") as fh:
                if fh.read(6) != b"\x93NUMPY":
                    raise CLIError(f"{path} is not a .npy file (no NumPy header)")
            try:
                arr = np.load(p, allow_pickle=False)
            except ValueError as err:
                if "pickle" in str(err):
                    raise CLIError(f"{path} holds Python objects, not numbers; save a numeric array") from None
                raise CLIError(f"{path} is not a valid .npy file (truncated or corrupt: {err})") from None
            except EOFError:
                raise CLIError(f"{path} is not a valid .npy file (truncated)") from None
            return _numeric(arr, path, what)
        if suffix == ".npz":
            return _read_npz(p, path, what, key)
        try:
            text = p.read_text(encoding="utf-8-sig")  # -sig: a byte-order mark is dropped
        except UnicodeDecodeError:
            raise CLIError(
                f"{path} is not a text file; {what} must be .npy, .npz, .csv or .txt"
            ) from None
    except PermissionError:
        raise CLIError(f"permission denied reading {what} file: {path}") from None
    delimiter = "\t" if suffix == ".tsv" else ("," if suffix == ".csv" else None)
    return _parse_text(text, path, what, delimiter, header)


def _read_npz(p: Path, path: str, what: str, key: Optional[str]) -> np.ndarray:
    try:
        with np.load(p, allow_pickle=False) as npz:
            keys = list(npz.keys())
            if not keys:
                raise CLIError(f"{what} file has no arrays: {path}")
            if key is None:
                key = "draws" if "draws" in keys else (keys[0] if len(keys) == 1 else None)
                if key is None:
                    raise CLIError(f"{path} holds arrays {keys}; choose one with --key")
            if key not in keys:
                raise CLIError(f"{path} has no array {key!r}; it holds {keys}")
            arr = npz[key]
    except (ValueError, EOFError, OSError, zipfile.BadZipFile) as err:
        if isinstance(err, CLIError):
            raise
        raise CLIError(f"{path} is not a valid .npz file ({err})") from None
    return _numeric(arr, path, what)


def _numeric(arr: np.ndarray, path: str, what: str) -> np.ndarray:
    if arr.dtype.kind not in "biuf":
        raise CLIError(f"{path} holds non-numeric data (dtype {arr.dtype}); {what} must be numbers")
    if arr.size == 0:
        raise CLIError(f"{what} file holds an empty array: {path}")
    return arr


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


# Spellings of a missing value: never a column name, always an error in a data line.
_MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "nil", "missing", "."})

_HEADER_CHOICES = ("auto", "yes", "no")


def _split(line: str, delimiter: Optional[str]) -> List[str]:
    parts = line.split(delimiter) if delimiter else line.split()
    return [f.strip().strip('"').strip("'") for f in parts]


def _is_name(field: str) -> bool:
    """A column name: not a number and not a spelling of a missing value."""
    return not _is_number(field) and field.lower() not in _MISSING


def _header_kind(fields: List[str]) -> Optional[str]:
    """Whether the first line is a header: "names", "numbers" (0..w-1), or None (data).

    A leading empty field (R's ``write.csv`` and pandas' index column) is a row-name column.
    """
    rest = fields[1:] if fields and fields[0] == "" and len(fields) > 1 else fields
    if rest and all(_is_name(f) for f in rest):
        return "names"
    if len(rest) >= 2 and rest == [str(j) for j in range(len(rest))]:
        return "numbers"  # pandas' default column names, 0..w-1
    return None


def _parse_text(
    text: str, path: str, what: str, delimiter: Optional[str], header: str = "auto"
) -> np.ndarray:
    if text.startswith("\ufeff"):
        text = text[1:]  # a UTF-8 byte-order mark, as spreadsheets write: not part of the data
    rows = [
        (number, line)
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not rows:
        raise CLIError(f"{what} file is empty: {path}")
    if delimiter is None:
        first = rows[0][1]
        delimiter = "," if "," in first else ("\t" if "\t" in first else None)
    first_fields = _split(rows[0][1], delimiter)
    kind = _header_kind(first_fields)
    if header == "yes":
        has_header = True
    elif header == "no":
        has_header = False
    else:
        # A numeric 0..w-1 line is a header only above data (pandas' to_csv(index=False));
        # it could also be a draw of w singletons, hence the note and --header no.
        has_header = kind == "names" or (kind == "numbers" and len(rows) > 1)
        if has_header and kind == "numbers" and first_fields[0] != "":
            sys.stderr.write(
                f"salsox: note: {_shown(path)}: line {rows[0][0]} (0, 1, ..., {len(first_fields) - 1}) is read as "
                "a header of column numbers, as pandas writes; use --header no to read it as data\n"
            )
    drop_first_column = False
    if has_header:
        if len(rows) == 1:
            raise CLIError(f"{path}: only a header line (line {rows[0][0]}), no {what}")
        drop_first_column = first_fields[0] == "" and len(first_fields) > 1  # a row-name column
        rows = rows[1:]
    integers = what != "data"  # labels must be integers; features (--data) may be any number
    width: Optional[int] = None
    out = []
    for number, line in rows:
        fields = _split(line, delimiter)
        if drop_first_column:
            fields = fields[1:]
        if width is None:
            width = len(fields)
        elif len(fields) != width:
            raise CLIError(
                f"{path}: line {number} has {len(fields)} fields, expected {width} like the first row "
                "(ragged rows)"
            )
        out.append(_parse_row(fields, path, number, integers))
    matrix = np.vstack(out)
    if matrix.shape[1] == 0:
        raise CLIError(f"{what} file has no columns: {path}")
    return matrix


def _parse_row(fields: List[str], path: str, number: int, integers: bool) -> np.ndarray:
    """One data line as numbers; an error naming the line and field otherwise."""
    try:  # integers exactly (labels beyond 2**53 must not collapse in float64)
        return np.array([int(f) for f in fields], dtype=np.int64)
    except (ValueError, OverflowError):
        pass
    for j, f in enumerate(fields, start=1):
        if not _is_number(f):
            hint = " (a missing value)" if f.lower() in _MISSING else ""
            raise CLIError(f"{path}: line {number}, field {j}: {f!r} is not a number{hint}")
    row = np.array(fields, dtype=np.float64)
    if integers:
        bad = np.flatnonzero(~np.isfinite(row) | (row != np.round(row)))
        if bad.size:
            j = int(bad[0])
            if not np.isfinite(row[j]):
                raise CLIError(f"{path}: line {number}, field {j + 1}: {fields[j]!r} is not a finite number")
            raise CLIError(
                f"{path}: line {number}, field {j + 1}: {fields[j]!r} is a non-integral value; labels must be integers"
            )
    return row


def read_labels(path: str, key: Optional[str] = None, *, several: bool = False) -> np.ndarray:
    """One partition (a row or a column of labels), or several rows when ``several``."""
    arr = read_matrix(path, "labels", key)
    if arr.ndim == 1:
        return arr
    if arr.ndim == 2 and (arr.shape[0] == 1 or arr.shape[1] == 1):
        return arr.ravel()
    if several and arr.ndim == 2:
        return arr
    raise CLIError(f"labels file {path} must hold one partition (one row or one column), got shape {arr.shape}")


def _load_draws(args: argparse.Namespace) -> Any:
    """The draws file as a validated :class:`salsox.Draws` (errors name the file)."""
    from .draws import Draws

    draws = read_matrix(args.draws, "draws", getattr(args, "key", None), getattr(args, "header", "auto"))
    if draws.ndim != 2:
        raise CLIError(f"draws must be a 2-D matrix (draws x items), got a {draws.ndim}-D array from {args.draws}")
    try:
        return Draws(draws)
    except (ValueError, TypeError) as err:
        raise CLIError(f"{args.draws}: {_error_message(err)}") from None


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


def _write_labels(labels: np.ndarray, out: Optional[str], one_based: bool) -> None:
    values = np.asarray(labels, dtype=np.int64) + (1 if one_based else 0)
    if out is not None and out.lower().endswith(".npy"):
        try:
            np.save(out, values)
        except OSError as err:
            raise CLIError(f"cannot write {out}: {err.strerror or err}") from None
        return
    _write("\n".join(str(v) for v in values.tolist()), out)


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


# --------------------------------------------------------------------------------------------
# Progress on stderr
# --------------------------------------------------------------------------------------------


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
            self.stream.write(f"\r{frames[i % 4]} {self.label}: {elapsed:6.1f} s elapsed")
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
    from .progress import ProgressBar

    return ProgressBar(sys.stderr, label=label, delay=0.5)


def _progress_enabled(args: argparse.Namespace) -> bool:
    if getattr(args, "quiet", False):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


def _resolve_loss(args: argparse.Namespace) -> Any:
    from .losses import get_loss

    return get_loss(args.loss, a=args.a, b=args.b)


def _search(args: argparse.Namespace, draws: Any) -> Any:
    from .search import salso

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
    bar = _progress_bar(args, f"salsox {loss.name}")
    return salso(draws, loss, progress=bar, **options)


def _estimate_dict(est: Any, one_based: bool) -> Dict[str, Any]:
    return _jsonable(
        {
            "labels": (np.asarray(est.labels) + (1 if one_based else 0)).tolist(),
            "n_clusters": est.n_clusters,
            "sizes": est.sizes.tolist(),
            "expected_loss": est.expected_loss,
            "loss": est.loss.name,
            "loss_params": est.loss.params,
            "info": est.info,
        }
    )


def _cmd_estimate(args: argparse.Namespace) -> int:
    draws = _load_draws(args)
    est = _search(args, draws)
    if args.json:
        _write(json.dumps(_estimate_dict(est, args.one_based)), args.out)
    else:
        _write_labels(est.labels, args.out, args.one_based)
    return 0


def _cmd_loss(args: argparse.Namespace) -> int:
    from .evaluation import partition_loss

    labels = read_labels(args.labels, several=True)
    draws = _load_draws(args)
    values = partition_loss(labels, draws, _resolve_loss(args), n_jobs=args.jobs)
    values = np.atleast_1d(np.asarray(values, dtype=np.float64))
    _write("\n".join(f"{v:.10g}" for v in values.tolist()), None)
    return 0


def _cmd_psm(args: argparse.Namespace) -> int:
    from .evaluation import psm

    matrix = psm(_load_draws(args), n_jobs=args.jobs)
    out = args.out
    if out is not None and out.lower().endswith(".npy"):
        try:
            np.save(out, matrix)
        except OSError as err:
            raise CLIError(f"cannot write {out}: {err.strerror or err}") from None
        return 0
    lines = [",".join(f"{v:.{args.digits}g}" for v in row) for row in matrix.tolist()]
    _write("\n".join(lines), out)
    return 0


def _estimate_or_labels(args: argparse.Namespace, draws: Any) -> Any:
    """Labels from --labels, or a fresh estimate; returns (labels, loss)."""
    if args.labels is not None:
        return read_labels(args.labels), _resolve_loss(args)
    est = _search(args, draws)
    return est.labels, est.loss


def _plot_summary(summary: Any, path: str, kind: str, dpi: int, data: Optional[np.ndarray] = None) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: never open a window from the command line
    import matplotlib.pyplot as plt

    if kind == "pairs":
        if data is None:
            raise CLIError("--kind pairs needs --data FILE (the n x p features of the items)")
        fig = summary.plot("pairs", data=data)
    else:
        fig = summary.plot(kind).figure
    try:
        _save_figure(fig, path, dpi)
    finally:
        plt.close(fig)


def _cmd_summary(args: argparse.Namespace) -> int:
    from .summary import summarize

    if args.plot is not None:
        _require_matplotlib()
    draws = _load_draws(args)
    data = read_matrix(args.data, "data") if getattr(args, "data", None) else None
    labels, loss = _estimate_or_labels(args, draws)
    summary = summarize(labels, draws, loss, n_jobs=args.jobs)
    if args.plot is not None:
        _plot_summary(summary, args.plot, args.kind, args.dpi, data)
    _write_report(summary, args)
    return 0


def _write_report(report: Any, args: argparse.Namespace) -> None:
    """A Summary or CredibleBall: its to_dict() as JSON with --json, else its to_text()."""
    _write(json.dumps(_jsonable(report.to_dict())) if args.json else report.to_text(), args.out)


def _cmd_ball(args: argparse.Namespace) -> int:
    from .credible_ball import credible_ball

    draws = _load_draws(args)
    labels, _ = _estimate_or_labels(args, draws)
    ball = credible_ball(labels, draws, args.distance, args.level, n_jobs=args.jobs)
    _write_report(ball, args)
    return 0


def _cmd_tune(args: argparse.Namespace) -> int:
    from .tuning import tune

    draws = _load_draws(args)
    with _Spinner(sys.stderr, f"tuning a for {args.clusters} clusters", enabled=_progress_enabled(args)) as spin:
        result = tune(
            draws, args.loss, args.clusters, b=args.b, max_clusters=args.max_clusters, n_runs=args.runs,
            seed=args.seed, n_jobs=args.jobs,
        )
    spin.finish(f"salsox: a = {result.a:.8g} after {len(result.history)} searches")
    if args.json:
        payload = _estimate_dict(result.estimate, args.one_based)
        payload.update(_jsonable({"a": result.a, "b": result.b, "history": result.history, "seed": result.seed}))
        _write(json.dumps(payload), args.out)
        return 0
    sys.stderr.write(
        f"salsox: {result.loss!r} gives {result.estimate.n_clusters} clusters "
        f"(expected loss {result.estimate.expected_loss:.10g})\n"
    )
    _write_labels(result.estimate.labels, args.out, args.one_based)
    return 0


def _cmd_chips(args: argparse.Namespace) -> int:
    """CHIPS sub-partition (or path) of the draws; single mode completes it with SALSO."""
    from .chips import Unallocated, chips

    draws = _load_draws(args)
    res = chips(
        draws, args.threshold, n_runs=args.runs, path=True if args.path else None, n_jobs=args.jobs,
        seed=args.seed, complete=False if args.no_complete else None, loss=_resolve_loss(args),
        max_clusters=args.max_clusters,
    )
    if res.mode == "path":
        rows = [
            {"n_items": int(k), "probability": float(p), "labels": lab.tolist()}
            for k, p, lab in zip(np.atleast_1d(res.n_items), np.atleast_1d(res.probability), res.labels)
        ]
        if args.json:
            payload: Dict[str, Any] = {"mode": "path", "auc": res.auc, "path": rows, "seed": res.info["seed"]}
            _write(json.dumps(_jsonable(payload)), args.out)
        else:
            lines = ["n_items,probability"] + [f"{r['n_items']},{r['probability']:.10g}" for r in rows]
            _write("\n".join(lines), args.out)
        return 0
    u = res.unallocated
    assert isinstance(u, Unallocated)  # single mode
    completed = res.completed
    if args.json:
        payload = {
            "mode": "single",
            "labels": res.labels,
            "n_items": res.n_items,
            "probability": res.probability,
            "threshold": res.threshold_used,
            "unallocated": {"items": u.items, "counts": u.counts, "q": u.q},
            "cluster_probability": res.cluster_probability,
            "completed": None if completed is None else _estimate_dict(completed, False),
            "seed": res.info["seed"],
        }
        _write(json.dumps(_jsonable(payload)), args.out)
        return 0
    sys.stderr.write(
        f"salsox: {res.n_items} of {len(res.labels)} items allocated, probability {res.probability:.6g}\n"
    )
    # One line per item: CHIPS label (-1 unallocated) and, when completed, the full partition's label.
    cols = [res.labels] if completed is None else [res.labels, completed.labels]
    _write("\n".join(",".join(str(int(c[i])) for c in cols) for i in range(len(res.labels))), args.out)
    return 0


def _cmd_plugins(args: argparse.Namespace) -> int:
    import warnings

    from .plugins import PluginWarning, list_plugins

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)  # the listing shows each problem itself
        entries = list_plugins()
    if args.json:
        fields = ("name", "kind", "source", "plugin", "status", "error")
        _write(json.dumps([{f: getattr(e, f) for f in fields} for e in entries]), None)
        return 0
    if not entries:
        _write("no plugins installed (see docs/plugins.md)", None)
        return 0
    width = max(len(e.name) for e in entries)
    lines = [f"{'name':<{width}}  {'kind':<11}  {'status':<8}  source"]
    for e in entries:
        lines.append(f"{e.name:<{width}}  {e.kind:<11}  {e.status:<8}  {e.source}")
        if e.error:  # broken or in conflict: why, so the user can fix or uninstall it
            lines.append(f"    error: {' '.join(e.error.split())}")
    _write("\n".join(lines), None)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .credible_ball import credible_ball
    from .datasets import example_draws
    from .search import salso

    if args.plot is not None:
        _require_matplotlib()
    example = example_draws()
    draws = example.draws
    bar = _progress_bar(args, "salsox demo")
    est = salso(draws, "VI", n_runs=args.runs, seed=args.seed, n_jobs=args.jobs, progress=bar)
    summary = est.summary(draws, n_jobs=args.jobs)
    ball = credible_ball(est, draws, "VI", 0.95, n_jobs=args.jobs)
    agreement = _agreement(est.labels, example.true_labels)
    if args.plot is not None:
        _plot_summary(summary, args.plot, args.kind, args.dpi, np.asarray(example.data))
    lines = [
        "Example: " + example.description,
        "",
        f"SALSO estimate (VI loss, {args.runs} runs, seed {args.seed}): {est.n_clusters} clusters, "
        f"expected loss {est.expected_loss:.6g}; adjusted Rand index with the true labels {agreement:.3f}",
        "",
        summary.to_text(),
        "",
        ball.to_text(),
    ]
    _write("\n".join(lines), None)
    return 0


def _agreement(labels: np.ndarray, truth: np.ndarray) -> float:
    from .evaluation import ARI

    return float(ARI(labels, truth))


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CLIError("--plot needs matplotlib: pip install 'salsox[plot]'") from None


# --------------------------------------------------------------------------------------------
# Argument parsing
# --------------------------------------------------------------------------------------------


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


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"level must be a number, got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"level must be in (0, 1], got {value}")
    return value


def _add_draws(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "draws", metavar="DRAWS", help="draws file: .npy, .npz, .csv or .txt (H rows x n items); - for stdin"
    )
    p.add_argument("--key", help="array name inside a .npz file (default: 'draws', or its only array)")
    p.add_argument(
        "--header",
        choices=_HEADER_CHOICES,
        default="auto",
        help="whether a text draws file starts with a header line (default auto: a line of column "
        "names, or 0,1,...,n-1 as pandas writes)",
    )


def _add_loss(p: argparse.ArgumentParser, default: str = "VI") -> None:
    p.add_argument(
        "--loss",
        default=default,
        help=f"loss name (default {default}): binder, VI, omARI, NVI, ID, NID, VI.lb, omARI.approx or a plugin's",
    )
    p.add_argument("--a", type=float, default=None, help="cost a of binder / VI (default 1)")
    p.add_argument("--b", type=float, default=None, help="cost b of binder / VI (default 1)")


def _add_search(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-clusters",
        type=_positive_int("--max-clusters"),
        default=None,
        help="cap on the number of clusters (default: most clusters in any draw)",
    )
    p.add_argument("--runs", type=_positive_int("--runs"), default=16, help="independent runs (default 16)")
    p.add_argument(
        "--max-zealous", type=int, default=None, help="clusters tried per round of zealous updates (default 10)"
    )
    p.add_argument("--seconds", type=float, default=None, help="time budget: no run starts after it")
    p.add_argument("--seed", type=int, default=None, help="random seed (same seed, same estimate)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or spinner on stderr")


def _add_jobs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", "-j", type=int, default=None, help="threads (default: all cores)")


def _add_plot(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plot", metavar="FILE", help="save a plot (e.g. heatmap.png; format from the extension)")
    p.add_argument(
        "--kind",
        choices=("heatmap", "mds", "dendrogram", "pairs"),
        default="heatmap",
        help="what --plot draws (default heatmap)",
    )
    p.add_argument(
        "--dpi",
        type=_positive_int("--dpi", _MAX_DPI),
        default=100,
        help=f"resolution of --plot, 1 to {_MAX_DPI} (default 100)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = _Parser(prog="salsox", description="Bayesian partition estimation by the SALSO search.")
    parser.add_argument("--version", action="version", version=f"salsox {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser(
        "estimate",
        help="partition estimate minimising the expected loss",
        description="Run SALSO on the draws; print the labels, one per line (0-based unless --one-based).",
    )
    _add_draws(p)
    _add_loss(p)
    _add_search(p)
    _add_jobs(p)
    p.add_argument("--out", "-o", help="write labels (or JSON) to this file (.npy for a numpy array)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--one-based", action="store_true", help="labels start at 1")
    p.set_defaults(handler=_cmd_estimate)

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
    p.set_defaults(handler=_cmd_loss)

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
    p.set_defaults(handler=_cmd_psm)

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
    p.add_argument("--data", help="features of the items (n x p), for --kind pairs")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--out", "-o", help="write the report to this file")
    p.set_defaults(handler=_cmd_summary)

    p = sub.add_parser(
        "ball",
        aliases=["credible-ball"],
        help="credible ball around an estimate",
        description="Credible ball (Wade & Ghahramani 2018) around --labels or a fresh estimate.",
    )
    _add_draws(p)
    p.add_argument("--labels", help="labels file of the centre (default: run the search first)")
    p.add_argument(
        "--distance", choices=("VI", "binder"), default="VI", help="distance between partitions (default VI)"
    )
    p.add_argument("--level", type=_probability, default=0.95, help="posterior probability (default 0.95)")
    _add_loss(p)
    _add_search(p)
    _add_jobs(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", "-o")
    p.set_defaults(handler=_cmd_ball)

    p = sub.add_parser(
        "tune",
        help="find the cost a giving K clusters",
        description=(
            "Bisect on the cost a (b fixed) of binder or VI until the estimate has --clusters clusters; "
            "print its labels."
        ),
    )
    _add_draws(p)
    p.add_argument(
        "--clusters", "-k", type=_positive_int("--clusters"), required=True, help="wanted number of clusters"
    )
    p.add_argument(
        "--loss", choices=("binder", "VI"), default="binder", help="loss whose a is tuned (default binder)"
    )
    p.add_argument("--b", type=float, default=1.0, help="fixed cost b (default 1)")
    p.add_argument("--max-clusters", type=_positive_int("--max-clusters"), default=None)
    p.add_argument("--runs", type=_positive_int("--runs"), default=16)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("-q", "--quiet", action="store_true")
    _add_jobs(p)
    p.add_argument("--out", "-o")
    p.add_argument("--json", action="store_true")
    p.add_argument("--one-based", action="store_true")
    p.set_defaults(handler=_cmd_tune)

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
    p.add_argument("--max-clusters", type=_positive_int("--max-clusters"), default=None, help="cap for the completion")
    p.add_argument("--runs", type=_positive_int("--runs"), default=64, help="CHIPS runs (default 64)")
    p.add_argument("--seed", type=int, default=None)
    _add_jobs(p)
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--out", "-o")
    p.set_defaults(handler=_cmd_chips)

    p = sub.add_parser(
        "plugins", help="list installed plugins", description="Losses and initialisers provided by installed plugins."
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_cmd_plugins)

    p = sub.add_parser(
        "demo",
        help="run on the bundled example draws",
        description="Estimate, summary and credible ball for the bundled example draws.",
    )
    p.add_argument("--runs", type=_positive_int("--runs"), default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-q", "--quiet", action="store_true")
    _add_jobs(p)
    _add_plot(p)
    p.set_defaults(handler=_cmd_demo)
    return parser


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


def _file_args(args: argparse.Namespace) -> List[str]:
    return [v for v in (getattr(args, name, None) for name in _PATH_ARGS) if isinstance(v, str)]


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output file (--out, --plot) that is one of the input files."""
    inputs = {name: getattr(args, name, None) for name in ("draws", "labels", "data")}
    for option in ("out", "plot"):
        out = getattr(args, option, None)
        if not isinstance(out, str) or not os.path.exists(out):
            continue
        for name, path in inputs.items():
            if not isinstance(path, str) or path == "-" or not os.path.exists(path):
                continue
            try:
                same = os.path.samefile(out, path)
            except OSError:
                continue
            if same:
                raise CLIError(
                    f"--{option} {out} is the {name} file {path}: writing it would overwrite the input; "
                    "choose another output file"
                )


def _debug_enabled() -> bool:
    """Whether SALSOX_DEBUG asks for tracebacks: 1, true, yes or on (any case)."""
    return os.environ.get("SALSOX_DEBUG", "").strip().lower() in _TRUTHY


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status (0 success, 1 error, 2 usage, 130 Ctrl-C)."""
    from .plugins import PluginError  # a plugin's failure is the user's to fix, not our bug

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error (already printed)
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return 2
    if _debug_enabled():
        _check_outputs(args)
        return int(args.handler(args))
    paths = _file_args(args)
    try:
        _check_outputs(args)
        return int(args.handler(args))
    except KeyboardInterrupt:
        sys.stderr.write("\nsalsox: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `salsox estimate ... | head`): not our error.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except (CLIError, ValueError, TypeError, KeyError, OSError, MemoryError, ImportError, PluginError) as err:
        sys.stderr.write(f"salsox: error: {_error_message(err, paths)}\n")
        return 1
    except Exception as err:  # a bug: still one line, with a way to see more
        sys.stderr.write(
            f"salsox: internal error: {type(err).__name__}: {_error_message(err, paths)} "
            "(set SALSOX_DEBUG=1 for a traceback)\n"
        )
        return 1
