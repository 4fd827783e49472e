"""Bad arguments on the command line (issue 47): every subcommand exits with status 2 and one
line naming the option as the user typed it (``--max-clusters``), never the library's keyword
(``max_clusters``), whether argparse, the CLI or the library found the problem. Bad files stay
errors of status 1."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Dict, List

import numpy as np
import pytest

from salsox import cli
from salsox.cli import arguments
from salsox.datasets import example_draws

# Every library keyword the CLI passes on, as it could leak into a message.
_KEYWORDS = re.compile(
    r"\b(n_jobs|n_runs|n_clusters|n_particles|n_starts|n_references|rhat_threshold|ess_threshold|max_clusters|"
    r"max_zealous|max_iter|mini_batch|prob_initializer|param:|complete=False|seed=|seconds=)"
)

# (arguments after the subcommand and its files, what the one line must say)
BAD: Dict[str, List[tuple]] = {
    "estimate": [
        (["--max-clusters", "0"], "--max-clusters 0"),
        (["--seconds", "-1"], "--seconds must be finite and > 0"),
        (["--seed", "-1"], "--seed must be in [0, 2**64)"),
        (["--jobs", "0"], "--jobs must be a positive number of threads"),
        (["--max-zealous", "-3"], "--max-zealous must be >= 0"),
        (["--loss", "nope"], "--loss nope: unknown loss 'nope'"),
        (["--initializer", "nope"], "--initializer nope: unknown initializer 'nope'"),
        (["--a", "-1"], "--a must be finite and > 0"),
        (["--r-a", "3"], "--r-a must be in (0, 2)"),
        (["--loss", "omARI", "--b", "2"], "--a/--b: loss 'omARI' has no costs a and b"),
        (["--prob-initializer", "0.5"], "--prob-initializer needs --initializer"),
    ],
    "loss": [
        (["--loss", "nope"], "--loss nope"),
        (["--b", "inf"], "--b must be finite and > 0"),
        (["--param", "zeta=1"], "--param zeta=1: loss 'VI' has no parameter 'zeta'"),
        (["--r-a", "1", "--a", "2"], "give --r-a (R's a) or --a/--b"),
    ],
    "psm": [
        (["--jobs", "-5"], "--jobs must be a positive number of threads"),
        (["--digits", "0"], "--digits must be >= 1"),
    ],
    "summary": [
        (["--seconds", "0"], "--seconds must be finite and > 0"),
        (["--kind", "pairs", "--plot", "{tmp}/x.png"], "--kind pairs needs --data"),
        (["--order", "nope"], "--order"),
    ],
    "ball": [
        (["--level", "2"], "--level must be in (0, 1]"),
        (["--distance", "nope"], "--distance nope: unknown loss 'nope'"),
        (["--distance-param", "zeta=1"], "--distance-param zeta=1"),
        (["--labels", "{labels}", "--param", "a=2"], "--param sets the search's --loss"),
        (["--max-zealous", "-1"], "--max-zealous must be >= 0"),
    ],
    "tune": [
        (["-k", "31"], "--clusters 31 is unreachable: there are only 30 items"),
        (["-k", "5", "--max-clusters", "3"], "--clusters 5 is unreachable with --max-clusters 3; raise --max-clusters"),
        (["-k", "3", "--bounds", "3", "2"], "--bounds must be finite with low < high"),
        (["-k", "3", "--tune", "zeta"], "--tune: loss 'binder' has no parameter 'zeta'"),
        (["-k", "3", "--loss", "omARI"], "--loss omARI: loss 'omARI' has no parameters to tune"),
        (["-k", "3", "--b", "-1"], "--b must be finite and > 0"),
    ],
    "chips": [
        (["--threshold", "2"], "--threshold must be in [0, 1]"),
        (["--threshold", "0.5", "--max-clusters", "1"], "--max-clusters 1 leaves the completion a single answer"),
        (["--max-clusters", "0"], "--max-clusters 0"),
        (["--seed", "-1"], "--seed must be in [0, 2**64)"),
    ],
    "wasabi": [
        (["-L", "31"], "--particles 31 is more than the 30 distinct partitions"),
        (["-L", "2", "--max-iter", "-1"], "--max-iter must be >= 0"),
        (["-L", "2", "--eps", "-1"], "--eps must be finite and >= 0"),
        (["-L", "2", "--plot", "{tmp}/x.png", "--kind", "elbow"], "--kind elbow needs --elbow"),
    ],
    "diagnose": [
        ([], "--chains C"),
        (["--chains", "3"], "--chains 3 does not divide the 40 draws"),
        (["--chains", "4", "--references", "11"], "--references must be in [1, 10], got 11"),
        (["--chains", "4", "--loss", "nope"], "--loss nope"),
        (["--chains", "4", "--rhat", "0.5"], "--rhat must be finite and > 1"),
    ],
    "demo": [
        (["--jobs", "0"], "--jobs must be a positive number of threads"),
        (["--seed", "-1"], "--seed must be in [0, 2**64)"),
        (["--runs", "0"], "--runs must be >= 1"),
    ],
    "plugins": [
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Dict[str, str]:
    d = tmp_path_factory.mktemp("arguments")
    draws = example_draws().draws[:40, :30]
    np.save(d / "draws.npy", draws)
    np.savetxt(d / "labels.txt", draws[0], fmt="%d")
    return {"draws": str(d / "draws.npy"), "labels": str(d / "labels.txt"), "tmp": str(d)}


def _argv(command: str, extra: List[str], files: Dict[str, str]) -> List[str]:
    inputs = {"demo": [], "plugins": [], "loss": [files["labels"], files["draws"]]}.get(command, [files["draws"]])
    quiet = ["-q"] if command in ("estimate", "summary", "ball", "tune", "demo") else []
    return [command, *inputs, *(a.format(**files) for a in extra), *quiet]


def test_every_subcommand_is_tried() -> None:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands = {name for name, p in sub.choices.items() if p.prog.split()[-1] == name}  # aliases left out
    assert commands == set(BAD)


@pytest.mark.parametrize(
    "command, extra, needle", [(c, e, n) for c, cases in BAD.items() for e, n in cases],
    ids=[f"{c}:{' '.join(e) or 'no-options'}" for c, cases in BAD.items() for e, _ in cases],
)
def test_a_bad_argument_exits_2_naming_the_option(capsys, files, command, extra, needle) -> None:
    code = cli.main(_argv(command, extra, files))
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured.err
    assert captured.out == "" and len(lines) == 1, captured.err
    assert needle in lines[0], lines[0]
    assert lines[0].startswith(f"salsox {command}: error: ") or lines[0].startswith("salsox: error: ")
    assert not _KEYWORDS.search(lines[0]), lines[0]


def test_bad_files_stay_errors_of_status_1(capsys, files, tmp_path: Path) -> None:
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("1,2,3\n1,2\n")
    short = tmp_path / "short.txt"
    short.write_text("0\n1\n")
    for argv, needle in [
        (["estimate", str(ragged), "-q"], "ragged"),
        (["tune", str(tmp_path / "missing.csv"), "-k", "2"], "not found"),
        (["loss", str(short), files["draws"]], "items"),
        (["ball", files["draws"], "--labels", str(short), "-q"], "items"),
    ]:
        assert cli.main(argv) == 1, argv
        err = capsys.readouterr().err
        assert err.startswith("salsox: error: ") and needle in err, err


def test_keywords_map_to_the_options_of_each_subcommand() -> None:
    parser = cli.build_parser()
    tune = arguments._subparser(parser, "tune")
    wasabi = arguments._subparser(parser, "wasabi")
    diagnose = arguments._subparser(parser, "diagnose")
    assert arguments.keyword_options(tune)["param"] == "--tune"
    assert arguments.keyword_options(arguments._subparser(parser, "estimate"))["param"] == "--param"
    assert arguments.keyword_options(wasabi)["n_particles"] == "--particles"
    assert arguments.keyword_options(diagnose)["rhat_threshold"] == "--rhat"
    assert "labels" not in arguments.keyword_options(arguments._subparser(parser, "ball"))  # a file: status 1
    # Every alias names an option some subcommand has.
    dests = {a.dest for p in (arguments._subparser(parser, c) for c in BAD) for a in p._actions}
    assert set(arguments._KEYWORD_DEST.values()) <= dests


def test_only_messages_about_an_option_become_usage_errors() -> None:
    parser = cli.build_parser()
    args = parser.parse_args(["chips", "d.npy", "--threshold", "0.5", "--max-clusters", "1", "--loss", "VI"])
    chips = arguments._subparser(parser, "chips")
    said = arguments.usage_message(
        ValueError("max_clusters=1 is below the 4 clusters; raise max_clusters (or the threshold), or pass "
                   "complete=False"), chips, args,
    )
    assert said == (
        "--max-clusters 1 is below the 4 clusters; raise --max-clusters (or the threshold), or pass --no-complete"
    )
    # English words that are also options stay words unless used as the keyword.
    assert arguments.usage_message(ValueError("the expected loss of 4 chains is NaN"), chips, args) is None
    assert arguments.usage_message(ValueError("threshold must be in [0, 1], got 2.0"), chips, args) == (
        "--threshold must be in [0, 1], got 2.0"
    )
    # A keyword this subcommand has no option for is left alone, and the error stays status 1.
    assert arguments.usage_message(ValueError("n_particles=3 is more than 2"), chips, args) is None


def test_a_memory_refusal_stays_status_1_in_the_options_words(capsys, files, monkeypatch) -> None:
    import salsox.search

    def refuse(*args, **kwargs):
        raise MemoryError("the search needs 3.0 GiB, more than memory_limit=2 bytes; lower max_clusters or n_jobs, "
                          "or raise memory_limit")

    monkeypatch.setattr(salsox.search, "salso", refuse)  # the CLI looks it up at call time
    assert cli.main(["estimate", files["draws"], "-q"]) == 1
    err = capsys.readouterr().err
    assert err == ("salsox: error: the search needs 3.0 GiB, more than memory_limit=2 bytes; lower --max-clusters or "
                   "--jobs, or raise memory_limit\n")
