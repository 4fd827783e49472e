"""The salsox command line: subprocess runs with exit codes, bad files, and in-process checks."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

import numpy as np
import pytest

import salsox
from conftest import SHARED_DIR, load_draws
from salsox import cli

GALAXY = str(SHARED_DIR / "data" / "galaxy_draws.npz")
IRIS = str(SHARED_DIR / "data" / "iris_draws.npz")


def run(*args: str, cwd: Optional[Path] = None, stdin: Optional[str] = None) -> subprocess.CompletedProcess:
    """``python -m salsox ARGS`` in a fresh process (no terminal: no spinner)."""
    env = dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0")  # an editable install must not print
    env.pop("SALSOX_DEBUG", None)
    # Not from the repository root: `python -m` would import the uncompiled source tree there
    # instead of the installed package.
    return subprocess.run(
        [sys.executable, "-m", "salsox", *args],
        capture_output=True, text=True, cwd=cwd or tempfile.gettempdir(), env=env, input=stdin, timeout=120,
    )


def main(capsys, *args: str) -> subprocess.CompletedProcess:
    """``salsox ARGS`` in this process (quicker), with the same result shape as :func:`run`."""
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, captured.out, captured.err)


def assert_one_line_error(proc: subprocess.CompletedProcess, code: int, *needles: str) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    iris = load_draws("iris")
    np.save(d / "iris.npy", iris)
    np.savetxt(d / "iris.csv", iris, fmt="%d", delimiter=",")
    np.savetxt(d / "iris.txt", iris, fmt="%d")
    with open(d / "iris_header.csv", "w") as fh:  # as R's write.csv: header and row names
        fh.write(",".join(['""'] + [f'"V{j + 1}"' for j in range(150)]) + "\n")
        for i, row in enumerate(iris):
            fh.write(f'"{i + 1}",' + ",".join(map(str, row)) + "\n")
    (d / "empty.csv").write_text("")
    (d / "blank.txt").write_text("\n\n# only a comment\n")
    (d / "nonnumeric.csv").write_text("1,2,3\n1,two,3\n")
    (d / "ragged.csv").write_text("1,2,3\n1,2,3\n1,2\n")
    (d / "binary.csv").write_bytes(bytes(range(256)))
    (d / "fake.npy").write_text("not numpy")
    (d / "fraction.csv").write_text("1,2,3\n1,2.5,3\n")
    np.savez(d / "two.npz", a=iris, b=iris)
    return d


# ---- bad input: one clear line, exit status 1, never a traceback ---------------------------


@pytest.mark.parametrize(
    "name,needles",
    [
        ("missing.csv", ["draws file not found", "missing.csv"]),
        ("empty.csv", ["draws file is empty", "empty.csv"]),
        ("blank.txt", ["draws file is empty"]),
        ("nonnumeric.csv", ["nonnumeric.csv: line 2, field 2: 'two' is not a number"]),
        ("ragged.csv", ["ragged.csv: line 3 has 2 fields, expected 3", "ragged"]),
        ("binary.csv", ["not a text file"]),
        ("fake.npy", ["not a .npy file"]),
        ("fraction.csv", ["non-integral"]),
        ("two.npz", ["holds arrays ['a', 'b']; choose one with --key"]),
    ],
)
def test_bad_draws_files(files, name, needles):
    proc = run("estimate", str(files / name), "--runs", "1")
    assert_one_line_error(proc, 1, "salsox: error:", *needles)


def test_bad_files_for_other_commands(files, capsys):
    assert_one_line_error(main(capsys, "psm", str(files / "ragged.csv")), 1, "ragged")
    assert_one_line_error(main(capsys, "loss", str(files / "missing.txt"), IRIS), 1, "labels file not found")
    assert_one_line_error(main(capsys, "summary", str(files / "empty.csv")), 1, "is empty")
    assert_one_line_error(main(capsys, "ball", str(files / "nonnumeric.csv")), 1, "'two' is not a number")
    assert_one_line_error(main(capsys, "estimate", str(files)), 1, "is a directory")
    assert_one_line_error(main(capsys, "estimate", str(files / "two.npz"), "--key", "c"), 1, "has no array 'c'")
    # Labels of the wrong length name both sizes.
    (files / "short.txt").write_text("0\n1\n1\n")
    assert_one_line_error(main(capsys, "loss", str(files / "short.txt"), IRIS), 1, "3 items but the draws have 150")


def test_usage_errors_exit_2(capsys):
    assert_one_line_error(run("estimate"), 2, "required: DRAWS")
    assert_one_line_error(run("estimate", IRIS, "--runs", "0"), 2, "--runs must be >= 1")
    assert_one_line_error(main(capsys, "frobnicate"), 2, "invalid choice")
    assert_one_line_error(main(capsys, "ball", IRIS, "--level", "2"), 2, "--level must be in (0, 1]")
    assert_one_line_error(main(capsys, "estimate", IRIS, "--loss", "nope", "--runs", "1"), 2,
                          "--loss nope: unknown loss 'nope'")
    assert_one_line_error(main(capsys, "estimate", IRIS, "--loss", "omARI", "--a", "2"), 2, "--a/--b", "has no costs")
    assert main(capsys).returncode == 2  # no command: help on stderr


# ---- estimate -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["iris.npy", "iris.csv", "iris.txt", "iris_header.csv"])
def test_estimate_formats_agree_with_the_api(files, name):
    proc = run("estimate", str(files / name), "--runs", "2", "--seed", "4", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no terminal: no progress output
    labels = np.array(proc.stdout.split(), dtype=int)
    expected = salsox.salso(load_draws("iris"), "VI", n_runs=2, seed=4, n_jobs=1)
    np.testing.assert_array_equal(labels, expected.labels)


def test_estimate_with_names_prints_item_label_csv(files, capsys, tmp_path):
    named = main(capsys, "estimate", str(files / "iris_header.csv"), "--runs", "2", "--seed", "4", "--jobs", "1",
                 "--with-names", "--one-based")
    assert named.returncode == 0, named.stderr
    lines = named.stdout.splitlines()
    expected = salsox.salso(load_draws("iris"), "VI", n_runs=2, seed=4, n_jobs=1)
    assert lines[0] == "item,label" and len(lines) == 151
    assert lines[1:] == [f"V{i + 1},{v + 1}" for i, v in enumerate(expected.labels)]
    # Without names in the file the items are numbered (0-based unless --one-based).
    plain = main(capsys, "estimate", str(files / "iris.npy"), "--runs", "2", "--seed", "4", "--jobs", "1",
                 "--with-names")
    assert plain.stdout.splitlines()[1:] == [f"{i},{v}" for i, v in enumerate(expected.labels)]
    bad = main(capsys, "estimate", str(files / "iris.npy"), "--runs", "1", "--with-names",
               "-o", str(tmp_path / "labels.npy"))
    assert_one_line_error(bad, 2, "--with-names", ".npy")


def test_csv_fields_with_commas_or_quotes_are_quoted():
    from salsox.cli.common import _csv_field

    assert _csv_field("plain") == "plain"
    assert _csv_field('a,"b"') == '"a,""b"""'


def test_estimate_options_json_and_out(tmp_path):
    proc = run(
        "estimate", GALAXY, "--loss", "binder", "--a", "1.5", "--b", "0.5", "--max-clusters", "4",
        "--runs", "2", "--seed", "9", "--jobs", "1", "--seconds", "30", "--json",
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    expected = salsox.salso(
        load_draws("galaxy"), salsox.Binder(a=1.5, b=0.5), max_clusters=4, n_runs=2, seed=9, n_jobs=1
    )
    assert result["labels"] == expected.labels.tolist()
    assert result["expected_loss"] == pytest.approx(expected.expected_loss, rel=1e-12)
    assert result["loss"] == "binder" and result["loss_params"] == {"a": 1.5, "b": 0.5}
    assert result["n_clusters"] <= 4 and result["info"]["seed"] == 9 and result["info"]["runs_done"] == 2



def test_estimate_out_files(tmp_path, capsys):
    out = tmp_path / "labels.txt"
    proc = main(capsys, "estimate", GALAXY, "--runs", "1", "--seed", "1", "--one-based", "--out", str(out))
    assert proc.returncode == 0 and proc.stdout == ""
    labels = np.loadtxt(out, dtype=int)
    assert labels.min() == 1 and labels.shape == (82,)
    main(capsys, "estimate", GALAXY, "--runs", "1", "--seed", "1", "-o", str(tmp_path / "labels.npy"))
    np.testing.assert_array_equal(np.load(tmp_path / "labels.npy"), labels - 1)
    bad = main(capsys, "estimate", GALAXY, "--runs", "1", "-o", str(tmp_path / "no" / "such" / "dir.txt"))
    assert_one_line_error(bad, 1, "cannot write")


def test_estimate_reads_stdin():
    proc = run("estimate", "-", "--runs", "1", "--seed", "0", stdin="1,1,2,2\n1,1,2,2\n1,2,2,2\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "0", "1", "1"]


# ---- loss, psm, summary, ball, tune, plugins, demo ----------------------------------------


def test_loss_and_psm(files, tmp_path, capsys):
    iris = load_draws("iris")
    est = salsox.salso(iris, "VI", n_runs=1, seed=2)
    np.savetxt(tmp_path / "est.txt", est.labels, fmt="%d")
    proc = run("loss", str(tmp_path / "est.txt"), IRIS, "--loss", "VI")
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) == pytest.approx(est.expected_loss, rel=1e-9)
    # Several partitions, one per row: one loss per line.
    np.savetxt(tmp_path / "rows.csv", iris[:3], fmt="%d", delimiter=",")
    proc = main(capsys, "loss", str(tmp_path / "rows.csv"), IRIS, "--loss", "binder", "--a", "1.2")
    values = np.array(proc.stdout.split(), dtype=float)
    np.testing.assert_allclose(values, salsox.partition_loss(iris[:3], iris, salsox.Binder(a=1.2)), rtol=1e-9)

    proc = main(capsys, "psm", str(files / "iris.npy"), "--out", str(tmp_path / "psm.npy"))
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_allclose(np.load(tmp_path / "psm.npy"), salsox.psm(iris))
    proc = run("psm", GALAXY, "--digits", "4")
    matrix = np.loadtxt(io.StringIO(proc.stdout), delimiter=",")
    np.testing.assert_allclose(matrix, salsox.psm(load_draws("galaxy")), atol=5e-4)


def test_summary_with_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")  # the optional dependency only
    png = tmp_path / "heatmap.png"
    proc = run("summary", GALAXY, "--runs", "2", "--seed", "3", "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    assert "clusters of 82 items" in proc.stdout and "exemplar" in proc.stdout
    import matplotlib.image as mpimg

    image = mpimg.imread(str(png))
    assert image.shape[0] > 100 and np.any(image[..., :3] < 0.9, axis=-1).mean() > 0.1
    mds = tmp_path / "m.png"
    proc = main(capsys, "summary", GALAXY, "--runs", "1", "--seed", "3", "--plot", str(mds), "--kind", "mds", "--json")
    payload = json.loads(proc.stdout)
    assert payload["n_items"] == 82 and mds.stat().st_size > 1000
    assert_one_line_error(
        main(capsys, "summary", GALAXY, "--plot", str(tmp_path / "x.png"), "--kind", "pairs"), 2, "needs --data"
    )


def test_summary_of_given_labels_in_process(tmp_path, capsys):
    galaxy = load_draws("galaxy")
    labels = salsox.salso(galaxy, "VI", n_runs=1, seed=1).labels
    np.savetxt(tmp_path / "l.txt", labels[None, :], fmt="%d")  # one row works too
    assert cli.main(["summary", GALAXY, "--labels", str(tmp_path / "l.txt"), "--loss", "binder", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    expected = salsox.summarize(labels, galaxy, "binder")
    assert payload["clusters"]["exemplar"] == expected.exemplars.tolist()
    assert payload["loss"] == "binder"


def test_summary_exemplar_and_order_options(tmp_path, capsys):
    # --exemplar and --order reach summarize(): the report equals the Python call's, and differs
    # from the defaults' on these labels (so the options are not ignored).
    galaxy = load_draws("galaxy")
    labels = salsox.salso(galaxy, "VI", n_runs=1, seed=1).labels
    np.savetxt(tmp_path / "l.txt", labels, fmt="%d")
    given = ["summary", GALAXY, "--labels", str(tmp_path / "l.txt")]
    default = salsox.summarize(labels, galaxy, "VI")
    for exemplar, order in (("score", "hclust"), ("similarity", "score")):
        expected = salsox.summarize(labels, galaxy, "VI", exemplar=exemplar, order=order)
        assert cli.main([*given, "--exemplar", exemplar, "--order", order, "--json"]) == 0
        payload = json.loads(capsys.readouterr().out)
        assert payload["clusters"]["exemplar"] == expected.exemplars.tolist()
        assert payload["order"] == expected.order.tolist()
        assert payload["order"] != default.order.tolist()
        assert (payload["clusters"]["exemplar"] != default.exemplars.tolist()) == (exemplar == "score")
        assert cli.main([*given, "--exemplar", exemplar, "--order", order, "--one-based"]) == 0
        assert capsys.readouterr().out == expected.to_text(one_based=True) + "\n"
    assert_one_line_error(main(capsys, *given, "--exemplar", "best"), 2, "--exemplar", "invalid choice")
    assert_one_line_error(main(capsys, *given, "--order", "fit"), 2, "--order", "invalid choice")


def _spy_dendrogram(monkeypatch) -> list:
    """Record the arguments of each salsox.plots.plot_dendrogram call (still drawing)."""
    import salsox.plots

    calls: list = []
    real = salsox.plots.plot_dendrogram

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(salsox.plots, "plot_dendrogram", spy)
    return calls


def test_summary_loss_dendrogram(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    calls = _spy_dendrogram(monkeypatch)
    galaxy = load_draws("galaxy")
    labels = salsox.salso(galaxy, "VI", n_runs=1, seed=1).labels
    np.savetxt(tmp_path / "l.txt", labels, fmt="%d")
    png = tmp_path / "loss.png"
    argv = ["summary", GALAXY, "--labels", str(tmp_path / "l.txt"), "--plot", str(png)]
    assert cli.main([*argv, "--kind", "loss-dendrogram"]) == 0
    assert png.stat().st_size > 5000 and "clusters of 82 items" in capsys.readouterr().out
    (args, kwargs), = calls
    assert kwargs == {"kind": "loss"}
    assert isinstance(args[1], salsox.Draws) and args[1].n_draws == galaxy.shape[0]  # VI needs the draws
    assert args[0].loss.name == "VI"
    # The similarity dendrogram stays the plain --kind dendrogram.
    assert cli.main([*argv, "--kind", "dendrogram"]) == 0
    capsys.readouterr()
    assert calls[1][1].get("kind", "similarity") == "similarity"


def test_ball_and_tune_in_process(tmp_path, capsys):
    galaxy = load_draws("galaxy")
    labels = salsox.salso(galaxy, "VI", n_runs=1, seed=1).labels
    np.savetxt(tmp_path / "l.txt", labels, fmt="%d")
    assert cli.main(["ball", GALAXY, "--labels", str(tmp_path / "l.txt"), "--level", "0.9", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    ball = salsox.credible_ball(labels, galaxy, "VI", 0.9)
    assert payload["radius"] == pytest.approx(ball.radius) and payload["n_in_ball"] == 9000
    assert cli.main(["credible-ball", GALAXY, "--labels", str(tmp_path / "l.txt"), "--distance", "binder"]) == 0
    assert "credible ball (binder distance)" in capsys.readouterr().out
    assert cli.main(["tune", IRIS, "--clusters", "3", "--runs", "1", "--seed", "2", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["n_clusters"] == 3 and payload["a"] > 0 and payload["history"]
    assert cli.main(["tune", IRIS, "-k", "3", "--runs", "1", "--seed", "2", "--loss", "VI"]) == 0
    captured = capsys.readouterr()
    assert len(set(captured.out.split())) == 3 and "gives 3 clusters" in captured.err
    assert cli.main(["tune", IRIS, "-k", "151"]) == 2
    assert "--clusters 151 is unreachable: there are only 150 items" in capsys.readouterr().err


def test_plugins_demo_version(capsys):
    proc = run("plugins")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("name") or proc.stdout.startswith("no plugins installed")
    listed = json.loads(main(capsys, "plugins", "--json").stdout)
    assert isinstance(listed, list) and all({"name", "kind", "source"} <= set(e) for e in listed)
    proc = run("demo", "--runs", "2")
    assert proc.returncode == 0, proc.stderr
    assert "SALSO estimate (VI loss" in proc.stdout and "credible ball" in proc.stdout
    proc = main(capsys, "--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"salsox {salsox.__version__}"
    for argv in (("--version", "--verbose"), ("--verbose", "--version")):
        proc = main(capsys, *argv)
        lines = proc.stdout.splitlines()
        assert proc.returncode == 0 and lines[0] == f"salsox {salsox.__version__}"
        assert any(line.startswith("default_n_jobs: ") for line in lines[1:])
        assert any(line.startswith("cgroup_quota: ") for line in lines[1:])


def test_demo_plot_in_process(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    png = tmp_path / "pairs.png"
    assert cli.main(["demo", "--runs", "1", "--plot", str(png), "--kind", "pairs"]) == 0
    assert png.stat().st_size > 5000
    assert "adjusted Rand index" in capsys.readouterr().out
    calls = _spy_dendrogram(monkeypatch)
    png = tmp_path / "loss.png"
    assert cli.main(["demo", "--runs", "1", "--plot", str(png), "--kind", "loss-dendrogram"]) == 0
    capsys.readouterr()
    (args, kwargs), = calls
    assert kwargs == {"kind": "loss"} and args[1] is not None and png.stat().st_size > 5000


def test_console_script():
    # The installed entry point (pyproject [project.scripts]) runs the same main().
    script = shutil.which("salsox", path=os.path.dirname(sys.executable)) or shutil.which("salsox")
    if script is None:
        pytest.fail("the salsox console script is not installed next to this Python", pytrace=False)
    env = dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0")
    proc = subprocess.run([script, "estimate", "/nonexistent.npy"], capture_output=True, text=True, env=env, timeout=60)
    assert_one_line_error(proc, 1, "draws file not found")


def test_internal_errors_are_one_line(monkeypatch, capsys):
    def boom(*args, **kwargs):
        raise ZeroDivisionError("deep inside")

    monkeypatch.setattr(salsox.search, "salso", boom)
    monkeypatch.delenv("SALSOX_DEBUG", raising=False)
    assert cli.main(["estimate", IRIS]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: ZeroDivisionError: deep inside" in err and "SALSOX_DEBUG" in err

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(salsox.search, "salso", interrupt)
    assert cli.main(["estimate", IRIS]) == 130
    assert "interrupted" in capsys.readouterr().err


class _FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_spinner_on_a_terminal_only():
    import time

    stream = _FakeTerminal()
    with cli._Spinner(stream, "searching", enabled=True, delay=0.0, interval=0.01) as spin:
        time.sleep(0.1)
    spin.finish("salsox: 2/2 runs done, best expected loss 1.5")
    text = stream.getvalue()
    assert "searching:" in text and "s elapsed" in text and text.endswith("best expected loss 1.5\n")
    quiet = _FakeTerminal()
    with cli._Spinner(quiet, "searching", enabled=True, delay=5.0) as spin:
        pass  # a quick search: nothing is printed
    spin.finish("done")
    assert quiet.getvalue() == ""
