"""Every option and argument of every ``salsox`` subcommand has a help line, and every
subcommand that prints items or cluster labels takes ``--one-based``."""

from __future__ import annotations

import argparse
from typing import Dict, Iterator, Tuple

from salsox.cli import build_parser


def _subparsers(parser: argparse.ArgumentParser) -> Dict[str, argparse.ArgumentParser]:
    out: Dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub not in out.values():  # aliases ("credible-ball") share a parser
                    out[name] = sub
    return out


def _actions() -> Iterator[Tuple[str, argparse.Action]]:
    parser = build_parser()
    for action in parser._actions:
        yield "salsox", action
    for name, sub in _subparsers(parser).items():
        for action in sub._actions:
            yield name, action


def test_every_option_has_help() -> None:
    missing = [
        f"salsox {command} {'/'.join(action.option_strings) or action.dest}"
        for command, action in _actions()
        if not isinstance(action, argparse._SubParsersAction)
        and (action.help is None or not str(action.help).strip())
    ]
    assert not missing, f"options without a help line: {missing}"
    assert len(list(_actions())) > 50  # the walk reached the subcommands


def test_subcommands_printing_items_take_one_based() -> None:
    subs = _subparsers(build_parser())
    for name in ("estimate", "summary", "ball", "chips", "tune", "demo"):
        options = {o for a in subs[name]._actions for o in a.option_strings}
        assert "--one-based" in options, name
