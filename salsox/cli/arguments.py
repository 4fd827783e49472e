"""Bad arguments on the command line: exit status 2, named as the user typed them.

argparse refuses what it can see alone (an unknown option, a value of the wrong type) with
exit status 2. What only the library can judge (``--clusters`` above the number of items,
``--threshold 2``, ``--loss nope``) comes back as a ValueError or TypeError whose message names
the Python keyword (``n_clusters=31 is unreachable``). :func:`usage_message` is the one place
that turns such a message into the option's words (``--clusters 31 is unreachable``): main()
then exits with status 2, as for argparse's own refusals. A message that names no option of
the subcommand (a malformed file, a search that fails) stays an error of status 1.

The CLI's own checks of combinations (``--key`` with ``--var``, ``--prob-initializer``
without ``--initializer``) raise :class:`ArgumentError`, which exits 2 too.
"""

from __future__ import annotations

import argparse
import re
from typing import Dict, List, Optional, Tuple

from ..io.readers import InputError

__all__ = ["ArgumentError", "keyword_options", "usage_message"]


class ArgumentError(InputError):
    """A bad command-line argument found after parsing: one line naming the option, exit
    status 2 (a :class:`~salsox.cli.CLIError` too, so code that catches those still does).

    Examples
    --------
    >>> from salsox.cli import main
    >>> main(["estimate", "draws.npz", "--key", "a", "--var", "b"])   # one line on stderr names both
    2
    >>> isinstance(ArgumentError("--key and --var"), ValueError)
    True
    """


# The library's keyword -> the dest of the option that passes it, where the two names differ
# (everywhere else they are the same: max_clusters is --max-clusters, seed is --seed).
_KEYWORD_DEST: Dict[str, str] = {
    "n_jobs": "jobs",
    "n_runs": "runs",
    "n_clusters": "clusters",
    "n_particles": "particles",
    "n_starts": "starts",
    "n_references": "references",
    "rhat_threshold": "rhat",
    "ess_threshold": "ess",
    "param": "tune",
}

# Options naming files: what goes wrong with them is the file's content (status 1), said by
# the readers in the file's name.
_FILE_DESTS = frozenset({"labels", "data", "out", "plot"})

# Whole phrases of the library's messages that an option says differently on the shell.
_PHRASES: Tuple[Tuple[str, str, str], ...] = (
    # (dest the subcommand must have, the library's phrase, the shell's)
    ("no_complete", "pass complete=False", "pass --no-complete"),
)

# A keyword used as the library's messages use it: "seed must ...", "max_clusters=3 is ...",
# "param: loss ..."; a keyword with an underscore anywhere ("lower max_clusters or n_jobs"):
# no English word has one.
_AFTER_ANY = r"(?=\s+must\b|=|:\s)"
_AFTER_UNDERSCORED = r"(?!\w)"
_BEFORE = r"(?<![\w.\-'\"])"

# Messages that name a value the user gave, not a keyword: the option is the one given it.
_NAMED_VALUE = re.compile(r"^(?:unknown (?:loss|distance) |loss )'([^']*)'")
_UNKNOWN_INITIALIZER = re.compile(r"^unknown initializer '([^']*)'")
_NO_COSTS = re.compile(r"^loss '[^']*' has no costs a and b")


def keyword_options(parser: argparse.ArgumentParser) -> Dict[str, str]:
    """The library's keywords that a subcommand's options pass, each with the option's name
    (its long form): ``{"max_clusters": "--max-clusters", "n_jobs": "--jobs", ...}``.

    Examples
    --------
    >>> from salsox.cli import build_parser
    >>> tune = _subparser(build_parser(), "tune")
    >>> options = keyword_options(tune)
    >>> options["n_clusters"], options["max_clusters"], options["param"], options["n_jobs"]
    ('--clusters', '--max-clusters', '--tune', '--jobs')
    """
    by_dest: Dict[str, str] = {}
    for action in parser._actions:
        if not action.option_strings or isinstance(action, argparse._HelpAction) or action.dest in _FILE_DESTS:
            continue
        longs = [o for o in action.option_strings if o.startswith("--")]
        by_dest[action.dest] = (longs or action.option_strings)[0]
    out = {dest: option for dest, option in by_dest.items()}
    for keyword, dest in _KEYWORD_DEST.items():
        if dest in by_dest:
            out[keyword] = by_dest[dest]
    return out


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of one subcommand (an alias such as ``credible-ball`` too)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[command]
    raise KeyError(command)


def _value_option(text: str, args: argparse.Namespace, dests: List[str]) -> Optional[Tuple[str, str]]:
    """(dest, value) of the first of ``dests`` whose value the user gave is ``text``."""
    for dest in dests:
        value = getattr(args, dest, None)
        if isinstance(value, str) and value.lower() == text.lower():
            return dest, value
    return None


def usage_message(err: BaseException, parser: argparse.ArgumentParser, args: argparse.Namespace) -> Optional[str]:
    """The library's ValueError or TypeError ``err`` in the words of the subcommand
    ``parser``'s options, when it is about one of them; None when it names none (an error of
    the input, not of the command line). ``args`` are the parsed arguments (a message that
    names a loss names the option that gave it).

    Examples
    --------
    >>> from salsox.cli import build_parser
    >>> parser = build_parser()
    >>> tune = _subparser(parser, "tune")
    >>> args = parser.parse_args(["tune", "draws.csv", "-k", "5", "--max-clusters", "3"])
    >>> usage_message(ValueError("n_clusters=5 is unreachable with max_clusters=3; raise max_clusters"), tune, args)
    '--clusters 5 is unreachable with --max-clusters 3; raise --max-clusters'
    >>> usage_message(ValueError("seed must be in [0, 2**64), got -1"), tune, args)
    '--seed must be in [0, 2**64), got -1'
    >>> print(usage_message(ValueError("draws.csv: line 3, field 5: 'NA' is not a number"), tune, args))
    None
    """
    text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    options = keyword_options(parser)
    dests = {action.dest for action in parser._actions}
    named = False
    found = _NAMED_VALUE.match(text)
    given = _value_option(found.group(1), args, ["loss", "distance"]) if found else None
    if _NO_COSTS.match(text) and ("a" in options or "b" in options):
        shown = "/".join(options[k] for k in ("a", "b") if k in options)
        text, named = f"{shown}: {text}", True
    elif given is not None:
        text, named = f"{options[given[0]]} {given[1]}: {text}", True
    else:
        found = _UNKNOWN_INITIALIZER.match(text)
        given = _value_option(found.group(1), args, ["initializer"]) if found else None
        if given is not None:
            text, named = f"{options['initializer']} {given[1]}: {text}", True
    for dest, phrase, shell in _PHRASES:
        if dest in dests and phrase in text:
            text, named = text.replace(phrase, shell), True
    for keyword in sorted(options, key=len, reverse=True):
        after = _AFTER_UNDERSCORED if "_" in keyword else _AFTER_ANY
        pattern = re.compile(_BEFORE + re.escape(keyword) + after)
        if not pattern.search(text):
            continue
        named = True
        option = options[keyword]
        text = re.sub(_BEFORE + re.escape(keyword) + r"=(?=\S)", option + " ", text)  # max_clusters=3: --max-clusters 3
        text = re.sub(_BEFORE + re.escape(keyword) + "=", option, text)  # "with param=": "with --tune"
        text = pattern.sub(option, text)
    return text if named else None
