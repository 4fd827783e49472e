"""The item index on the command line: files with quoted names, a column of row numbers, and
``item,label`` files in any row order give the same answers, or a named refusal."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from salsox import cli
from salsox.datasets import example_draws

N_ITEMS, N_DRAWS = 12, 60
# Quoted names: a comma, a space and a quote inside names, as R's write.csv quotes them.
NAMES = [f"s{j:02d}" for j in range(N_ITEMS - 3)] + ["with, comma", "with space", 'with "quote"']


def _write_csv(path, header, rows, row_numbers=False):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC if row_numbers else csv.QUOTE_MINIMAL)
        writer.writerow(([""] if row_numbers else []) + list(header))
        for i, row in enumerate(rows):
            writer.writerow(([str(i + 1)] if row_numbers else []) + list(row))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("names")
    draws = np.asarray(example_draws().draws)[:N_DRAWS, :N_ITEMS]
    _write_csv(tmp / "draws.csv", NAMES, draws.tolist())
    _write_csv(tmp / "draws_r.csv", NAMES, draws.tolist(), row_numbers=True)  # R's write.csv
    return tmp, draws


def _run(capsys, *args):
    code = cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _estimate_file(capsys, files):
    tmp, _ = files
    code, out, err = _run(capsys, "estimate", tmp / "draws.csv", "--with-names", "--seed", "1", "--runs", "4")
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["item", "label"] and [r[0] for r in rows[1:]] == NAMES
    return rows


def _label_files(tmp, rows):
    """The same item,label table in order, shuffled, reversed, and in R's layout."""
    body = rows[1:]
    rng = np.random.default_rng(3)
    out = {}
    for name, order in (("ordered", np.arange(len(body))), ("shuffled", rng.permutation(len(body))),
                        ("reversed", np.arange(len(body))[::-1])):
        path = tmp / f"labels_{name}.csv"
        _write_csv(path, ["item", "label"], [body[i] for i in order])
        out[name] = path
    r_path = tmp / "labels_r.csv"
    _write_csv(r_path, ["item", "label"], [[b[0], int(b[1])] for b in body[::-1]], row_numbers=True)
    out["r_layout"] = r_path
    return out


@pytest.mark.parametrize("command", [["loss"], ["summary", "--labels"], ["ball", "--labels"]])
def test_item_label_files_in_any_row_order_give_the_same_answer(files, capsys, command):
    tmp, _ = files
    labels = _label_files(tmp, _estimate_file(capsys, files))
    answers = {}
    for draws in ("draws.csv", "draws_r.csv"):
        for name, path in labels.items():
            if command == ["loss"]:
                args = ["loss", path, tmp / draws]
            else:
                args = [command[0], tmp / draws, command[1], path]
            code, out, err = _run(capsys, *args)
            assert code == 0, (draws, name, err)
            answers[(draws, name)] = out
    assert len(set(answers.values())) == 1, answers


def test_item_label_file_with_other_items_is_refused(files, capsys):
    tmp, _ = files
    rows = _estimate_file(capsys, files)
    path = tmp / "labels_wrong.csv"
    _write_csv(path, ["item", "label"], [["stranger" if r[0] == "s03" else r[0], r[1]] for r in rows[1:]])
    code, _, err = _run(capsys, "loss", path, tmp / "draws.csv")
    assert code != 0 and "does not name the same items" in err and "'s03'" in err and "'stranger'" in err
    twice = tmp / "labels_twice.csv"
    _write_csv(twice, ["item", "label"], [["s00" if r[0] == "s01" else r[0], r[1]] for r in rows[1:]])
    code, _, err = _run(capsys, "summary", tmp / "draws.csv", "--labels", twice)
    assert code != 0 and "twice" in err


def test_outputs_with_a_row_per_item_carry_the_names(files, capsys):
    tmp, draws = files
    code, out, err = _run(capsys, "chips", tmp / "draws.csv", "--threshold", "0.5", "--seed", "2", "--runs", "4")
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["item", "chips", "completed"] and [r[0] for r in rows[1:]] == NAMES
    code, out, err = _run(capsys, "psm", tmp / "draws_r.csv")
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["item", *NAMES] and [r[0] for r in rows[1:]] == NAMES
    values = np.array([r[1:] for r in rows[1:]], dtype=float)
    together = (draws[:, :, None] == draws[:, None, :]).mean(axis=0)  # the PSM by numpy
    np.testing.assert_allclose(values, together, atol=5e-6)


def test_data_for_plots_is_matched_by_its_row_names(files, capsys):
    pytest.importorskip("matplotlib")
    tmp, _ = files
    features = np.random.default_rng(0).normal(size=(N_ITEMS, 2))
    rows = [[n, *f] for n, f in zip(NAMES, features.tolist())]
    order = np.random.default_rng(1).permutation(N_ITEMS)
    _write_csv(tmp / "data.csv", ["", "x", "y"], [rows[i] for i in order])  # a first column of row names
    _write_csv(tmp / "wrong.csv", ["", "x", "y"], [["other" if r[0] == "with space" else r[0], *r[1:]] for r in rows])
    cases = [
        ["ball", tmp / "draws.csv", "--runs", "2", "--seed", "1"],
        ["chips", tmp / "draws.csv", "--threshold", "0.5", "--runs", "2", "--seed", "1"],
        ["wasabi", tmp / "draws.csv", "-L", "2", "--starts", "1", "--seed", "1"],
    ]
    for args in cases:
        code, _, err = _run(capsys, *args, "--data", tmp / "data.csv", "--plot", tmp / f"{args[0]}.png")
        assert code == 0, (args[0], err)
        assert (tmp / f"{args[0]}.png").stat().st_size > 0
        code, _, err = _run(capsys, *args, "--data", tmp / "wrong.csv", "--plot", tmp / f"{args[0]}_wrong.png")
        assert code != 0 and "does not name the same items" in err, (args[0], err)


# Subcommands and their item-indexed file arguments (beside the draws), each exercised above.
CLI_ITEM_INDEXED = {
    ("loss", "labels"), ("summary", "labels"), ("summary", "data"), ("ball", "labels"), ("ball", "data"),
    ("chips", "data"), ("wasabi", "data"),
}
_ITEM_FILE_DESTS = {"labels", "data", "fixed", "initial", "init_file", "candidates"}


def test_every_subcommand_with_an_item_indexed_file_is_covered():
    import argparse

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = set()
    for command, subparser in sub.choices.items():
        for action in subparser._actions:
            if action.dest in _ITEM_FILE_DESTS:
                found.add((command, action.dest))
    aliases = {("credible-ball", d) for c, d in CLI_ITEM_INDEXED if c == "ball"}
    uncovered = sorted(found - CLI_ITEM_INDEXED - aliases)
    assert not uncovered, f"subcommands taking item-indexed files without an item-index test: {uncovered}"


def test_diagnose_per_chain_files_with_columns_in_other_orders(files, capsys):
    tmp, draws = files
    rng = np.random.default_rng(7)
    paths, moved = [], []
    for k in range(3):
        chain = draws[20 * k : 20 * (k + 1)]
        order = np.arange(N_ITEMS) if k == 0 else rng.permutation(N_ITEMS)
        for name, cols in (("same", np.arange(N_ITEMS)), ("moved", order)):
            path = tmp / f"chain{k}_{name}.csv"
            _write_csv(path, [NAMES[j] for j in cols], chain[:, cols].tolist())
            (paths if name == "same" else moved).append(path)
    outputs = []
    for chain_files in (paths, moved):
        code, out, err = _run(capsys, "diagnose", *chain_files, "--seed", "1", "--references", "2", "--json")
        assert code in (0, 3), err
        outputs.append(out)
    assert outputs[0] == outputs[1]
