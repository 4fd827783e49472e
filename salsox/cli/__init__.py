"""The ``salsox`` command line: ``salsox estimate draws.csv``, ``salsox summary ...``; see
``salsox --help`` and docs/cli.md.

One module per subcommand (``estimate``, ``loss``, ``psm``, ``summary``, ``ball``, ``tune``,
``plugins``, ``demo``), each with ``add_parser(sub)`` and ``run(args)``; what they share is in
:mod:`salsox.cli.common`. This module builds the parser and runs :func:`main`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from typing import Any, Iterator, List, Optional, Sequence

from .._version import __version__
from .._warnings import SalsoxWarning
from . import ball, chips, demo, estimate, loss, plugins_cmd, psm, summary, tune
from . import wasabi as wasabi_cmd
from . import diagnose as diagnose_cmd
from .common import _PATH_ARGS, _TRUTHY, CLIError, _error_message, _Parser
from .common import _save_figure, _Spinner  # noqa: F401 - used as salsox.cli.<name> by tests
from .common import read_labels, read_matrix
from .arguments import ArgumentError, _subparser, usage_message

__all__ = ["main", "build_parser", "read_matrix", "read_labels", "CLIError"]

# In the order `salsox --help` lists them.
_COMMANDS = (estimate, loss, psm, summary, ball, tune, chips, wasabi_cmd, diagnose_cmd, plugins_cmd, demo)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = _Parser(prog="salsox", description="Bayesian partition estimation by the SALSO search.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--verbose", action="store_true",
                        help="with --version: also the build and the threads salsox would use (salsox.show_config())")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in _COMMANDS:
        command.add_parser(sub)
    return parser


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
                raise ArgumentError(
                    f"--{option} {out} is the {name} file {path}: writing it would overwrite the input; "
                    "choose another output file"
                )


def _usage_error(err: BaseException, parser: argparse.ArgumentParser, args: argparse.Namespace) -> Optional[str]:
    """The message of ``err`` when it is a bad argument (exit status 2), in the options' words;
    None for any other error. :class:`ArgumentError` is one; a reader's error (a file) is not;
    a ValueError or TypeError of the library is one when it names an option's keyword."""
    if isinstance(err, ArgumentError):
        return str(err)
    if isinstance(err, CLIError) or not isinstance(err, (ValueError, TypeError)):
        return None
    return usage_message(err, _subparser(parser, args.command), args)


def _debug_enabled() -> bool:
    """Whether SALSOX_DEBUG asks for tracebacks: 1, true, yes or on (any case)."""
    return os.environ.get("SALSOX_DEBUG", "").strip().lower() in _TRUTHY


@contextlib.contextmanager
def _one_line_warnings() -> Iterator[List[str]]:
    """Collects SalsoxWarnings (R's warnings) as one-line messages, printed by ``main`` once the
    command succeeds (after an error, its one line is all that is printed)."""
    original = warnings.showwarning
    pending: List[str] = []

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        if issubclass(category, SalsoxWarning):
            pending.append(f"salsox: warning: {message}")
        else:
            original(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield pending
    finally:
        warnings.showwarning = original


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status (0 success, 1 error, 2 a bad argument, named
    as the option, 130 Ctrl-C)."""
    # A plugin's failure is the user's (or the plugin's) to fix, not our bug.
    from ..registry import PluginError, plugin_origin

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, or a usage error (already printed)
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    if args.version:
        print(f"salsox {__version__}")
        if args.verbose:
            from .._config import show_config

            show_config()
        return 0
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return 2
    if _debug_enabled():
        _check_outputs(args)
        return int(args.handler(args))
    paths = _file_args(args)
    try:
        _check_outputs(args)
        with _one_line_warnings() as pending:
            status = int(args.handler(args))
        for message in pending:
            sys.stderr.write(message + "\n")
        return status
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
    except PluginError as err:  # names the plugin itself
        sys.stderr.write(f"salsox: error: {_error_message(err, paths)}\n")
        return 1
    except (CLIError, ValueError, TypeError, KeyError, OSError, MemoryError, ImportError) as err:
        origin = plugin_origin(err)
        if origin is not None:  # raised in a plugin's code: say whose, as for any plugin failure
            sys.stderr.write(f"salsox: error: {origin} raised {type(err).__name__}: {_error_message(err, paths)}\n")
            return 1
        usage = _usage_error(err, parser, args)
        if usage is not None:  # a bad argument: status 2, in the option's words, as argparse's
            prog = f"{parser.prog} {args.command}"
            sys.stderr.write(f"{prog}: error: {_error_message(ValueError(usage), paths)} (see {prog} --help)\n")
            return 2
        if isinstance(err, MemoryError):  # "lower max_clusters or n_jobs": the options' words, status 1
            said = usage_message(err, _subparser(parser, args.command), args)
            err = MemoryError(said) if said is not None else err
        sys.stderr.write(f"salsox: error: {_error_message(err, paths)}\n")
        return 1
    except Exception as err:  # a bug: in a plugin (named) or in salsox; one line, with a way to see more
        origin = plugin_origin(err)
        if origin is not None:
            sys.stderr.write(
                f"salsox: error: {origin} raised {type(err).__name__}: {_error_message(err, paths)} "
                "(set SALSOX_DEBUG=1 for a traceback)\n"
            )
            return 1
        sys.stderr.write(
            f"salsox: internal error: {type(err).__name__}: {_error_message(err, paths)} "
            "(set SALSOX_DEBUG=1 for a traceback)\n"
        )
        return 1
