"""Readers and inputs at their edges (issue 40): quoted names, trailing delimiters, R's
write.csv2, latin-1, pipes, the last line of every reader, data frames whose columns are not
all labels, masks and uint64 labels, more than 65,536 clusters, a PSM where draws are needed,
R's loss spellings, formulas too deep to compile and losses that overflow."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import salsox
from salsox import cli
from salsox.io import readers
from salsox.io.readers import InputError, read_labels, read_matrix, read_matrix_named
from salsox.plugins import CountSumLoss

ROOT = Path(__file__).resolve().parents[1]
DRAWS = np.array([[1, 1, 2, 2], [1, 1, 2, 3], [1, 1, 1, 2]])


def write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> str:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return str(path)


def salsox_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    # Run outside the checkout: from its root, `-m salsox` would import the source tree, which
    # holds no compiled extension, instead of the installed package.
    return subprocess.run(
        [sys.executable, "-m", "salsox", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        timeout=120,
    )


# --- quoted names, trailing delimiters, write.csv2, latin-1 ---------------------------------


def test_quoted_names_with_commas_and_doubled_quotes(tmp_path: Path) -> None:
    names = ['a,b', 'say "hi"', "plain", "it's"]
    frame = pd.DataFrame(DRAWS, columns=names)
    path = str(tmp_path / "d.csv")
    frame.to_csv(path, index=False)  # pandas quotes a name with a comma or a quote
    d = salsox.read_draws(path)
    assert d.item_names.tolist() == names
    np.testing.assert_array_equal(salsox.psm(d), salsox.psm(DRAWS))


def test_with_names_output_reads_back_as_labels(tmp_path: Path, capsys) -> None:
    names = ['a,b', 'say "hi"', "c", "d"]
    path = str(tmp_path / "d.csv")
    pd.DataFrame(DRAWS, columns=names).to_csv(path, index=False)
    out = str(tmp_path / "labels.csv")
    assert cli.main(["estimate", path, "--seed", "1", "--with-names", "--out", out, "-q"]) == 0
    capsys.readouterr()
    est = salsox.salso(salsox.read_draws(path), seed=1)
    np.testing.assert_array_equal(read_labels(out), est.labels)
    # and the ball reads it as its centre
    assert cli.main(["ball", path, "--labels", out, "--json"]) == 0
    assert '"level"' in capsys.readouterr().out


def test_trailing_commas_on_every_line_and_on_the_header(tmp_path: Path) -> None:
    every = salsox.read_draws(write(tmp_path, "a.csv", "a,b,c,d,\n1,1,2,2,\n1,1,2,3,\n1,1,1,2,\n"))
    header = salsox.read_draws(write(tmp_path, "b.csv", "a,b,c,d,\n1,1,2,2\n1,1,2,3\n1,1,1,2\n"))
    plain = salsox.read_draws(write(tmp_path, "c.csv", "1,1,2,2,\n1,1,2,3,\n1,1,1,2,\n"))
    tabs = salsox.read_draws(write(tmp_path, "d.tsv", "a\tb\tc\td\t\n1\t1\t2\t2\t\n1\t1\t2\t3\t\n1\t1\t1\t2\t\n"))
    assert tabs.item_names.tolist() == list("abcd")
    for d in (every, header, plain, tabs):
        np.testing.assert_array_equal(salsox.psm(d), salsox.psm(DRAWS))
    assert every.item_names.tolist() == header.item_names.tolist() == list("abcd")
    # a trailing comma on some data lines only is still an error (an empty field)
    with pytest.raises(InputError, match="line 2 has 5 fields"):
        salsox.read_draws(write(tmp_path, "e.csv", "1,1,2,2\n1,1,2,3,\n1,1,1,2\n"))


def test_write_csv2_gets_a_hint(tmp_path: Path) -> None:
    path = write(tmp_path, "d.csv", '"";"a";"b"\n"1";1;2\n"2";1;1\n')
    with pytest.raises(InputError, match="write.csv2"):
        salsox.read_draws(path)


def test_latin1_file_is_read_with_a_note(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "d.csv", "café,naïve,b,c\n1,1,2,2\n1,1,2,3\n", encoding="latin-1")
    d = salsox.read_draws(path)
    assert d.item_names.tolist() == ["café", "naïve", "b", "c"]
    assert "latin-1" in capsys.readouterr().err
    binary = tmp_path / "d.txt"
    binary.write_bytes(b"1,2\x00\xff\n")
    with pytest.raises(InputError, match="not a text file"):
        salsox.read_draws(str(binary))


# --- pipes and standard input ---------------------------------------------------------------


def test_dev_stdin_is_read_not_reported_empty() -> None:
    proc = salsox_cli("estimate", "/dev/stdin", "--seed", "1", "-q", stdin="1,1,2,2\n1,1,2,3\n1,1,1,2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(v) for v in salsox.salso(DRAWS, seed=1).labels]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_named_pipe_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "draws.csv"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w") as fh:
            fh.write("a,b,c,d\n1,1,2,2\n1,1,2,3\n1,1,1,2")

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        d = salsox.read_draws(str(fifo))
    finally:
        writer.join(timeout=10)
    assert d.item_names.tolist() == list("abcd") and d.n_draws == 3


@pytest.mark.parametrize("command", ["estimate", "psm"])
def test_out_with_an_upper_case_npy_suffix_is_that_file(tmp_path: Path, capsys, command: str) -> None:
    draws = write(tmp_path, "d.csv", "1,1,2,2\n1,1,2,3\n1,1,1,2\n")
    out = tmp_path / "x.NPY"
    extra = ["--seed", "1", "-q"] if command == "estimate" else []
    assert cli.main([command, draws, "--out", str(out), *extra]) == 0
    capsys.readouterr()
    assert out.exists() and not (tmp_path / "x.NPY.npy").exists()
    assert np.load(out).shape[0] == 4


# --- the last line, with no newline, in every reader ----------------------------------------

# (reader, file name, text with a newline at the end); each reader must read the last row
# whether the file ends with a newline or not.
LAST_LINE = {
    "read_matrix csv": (lambda p: read_matrix(p), "d.csv", "1,1,2,2\n1,1,2,3\n1,1,1,2\n"),
    "read_matrix tsv": (lambda p: read_matrix(p), "d.tsv", "1\t1\t2\t2\n1\t1\t2\t3\n1\t1\t1\t2\n"),
    "read_matrix txt": (lambda p: read_matrix(p), "d.txt", "1 1 2 2\n1 1 2 3\n1 1 1 2\n"),
    "read_matrix header": (lambda p: read_matrix(p), "d.csv", "a,b,c,d\n1,1,2,2\n1,1,2,3\n1,1,1,2\n"),
    "read_matrix R": (lambda p: read_matrix(p), "d.csv", '"","a","b","c","d"\n"1",1,1,2,2\n"2",1,1,2,3\n"3",1,1,1,2\n'),
    "read_matrix data": (lambda p: read_matrix(p, "data"), "x.csv", "0.5,1\n1.5,2\n2.5,3.25\n"),
    "read_matrix CRLF": (lambda p: read_matrix(p), "d.csv", "1,1,2,2\r\n1,1,2,3\r\n1,1,1,2\r\n"),
    "read_labels column": (lambda p: read_labels(p), "l.txt", "0\n0\n1\n2\n"),
    "read_labels row": (lambda p: read_labels(p), "l.csv", "0,0,1,2\n"),
    "read_labels several": (lambda p: read_labels(p, several=True), "l.csv", "0,0,1,1\n0,1,1,2\n"),
    "read_labels with names": (lambda p: read_labels(p), "l.csv", "item,label\na,0\nb,0\nc,1\nd,2\n"),
    "read_draws": (lambda p: salsox.read_draws(p).labels_matrix(), "d.csv", "1,1,2,2\n1,1,2,3\n1,1,1,2\n"),
    "read_matrix_named": (lambda p: read_matrix_named(p)[0], "d.csv", "a,b\n1,2\n3,4\n"),
}


@pytest.mark.parametrize("case", sorted(LAST_LINE))
def test_every_reader_reads_the_last_line_without_a_newline(tmp_path: Path, case: str) -> None:
    reader, name, text = LAST_LINE[case]
    assert text.endswith("\n")
    full = np.asarray(reader(write(tmp_path / "", "with_" + name, text)))
    cut = np.asarray(reader(write(tmp_path, "without_" + name, text.rstrip("\r\n"))))
    np.testing.assert_array_equal(cut, full)
    rows = [line for line in text.splitlines() if line]
    header = 1 if rows[0][0].isalpha() or rows[0][0] == '"' else 0
    expected = len(rows) - header
    if "column" in case or "with names" in case:
        assert full.shape == (expected,)
    elif "row" in case:
        assert full.shape == (4,)
    else:
        assert full.shape[0] == expected


def test_stdin_reads_the_last_line_without_a_newline() -> None:
    proc = salsox_cli("psm", "-", stdin="0,0,1\n0,1,1")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_allclose(np.loadtxt(proc.stdout.splitlines(), delimiter=","), salsox.psm([[0, 0, 1], [0, 1, 1]]))


# --- data frames ----------------------------------------------------------------------------


@pytest.mark.parametrize("column", ["iter", "chain", ".chain", "lp__", "accept_stat__"])
def test_a_samplers_bookkeeping_column_is_named_not_taken_as_an_item(column: str) -> None:
    frame = pd.DataFrame(DRAWS, columns=list("abcd"))
    frame.insert(0, column, np.arange(3) + 1)
    for call in (lambda: salsox.salso(frame, seed=1), lambda: salsox.Draws(frame), lambda: salsox.psm(frame)):
        with pytest.raises(ValueError, match=f"column {column!r}"):
            call()


def test_a_csv_with_a_samplers_columns_names_them(tmp_path: Path) -> None:
    path = write(tmp_path, "stan.csv", "iter,lp__,z.1,z.2,z.3\n1,-3.5,1,1,2\n2,-3.1,1,2,2\n")
    with pytest.raises(InputError, match="column 'iter' .*is a sampler's bookkeeping column"):
        salsox.read_draws(path)
    path = write(tmp_path, "stan2.csv", "z.1,z.2,z.3,lp__\n1,1,2,-3\n1,2,2,-4\n")
    with pytest.raises(InputError, match="column 'lp__'"):
        salsox.read_draws(path)


def test_string_and_float_columns_are_named() -> None:
    frame = pd.DataFrame(DRAWS, columns=list("abcd"))
    with pytest.raises(ValueError, match=r"column 'who' .*str"):
        salsox.salso(frame.assign(who=["x", "y", "z"]), seed=1)
    with pytest.raises(ValueError, match="column 'x'.*non-integral"):
        salsox.salso(frame.assign(x=[0.5, 1.0, 2.0]), seed=1)
    # integral floats are labels (as pandas writes integer columns with a missing value filled)
    assert salsox.Draws(frame.astype(float)).n_items == 4


def test_multiindex_columns_name_the_items() -> None:
    columns = pd.MultiIndex.from_tuples([("z", i) for i in range(4)])
    frame = pd.DataFrame(DRAWS, columns=columns)
    est = salsox.salso(frame, seed=1)
    assert est.item_names.shape == (4,) and est.item_names.tolist() == list(columns)
    np.testing.assert_array_equal(est.labels, salsox.salso(DRAWS, seed=1).labels)
    assert "('z', 0)" in est.summary().to_text()


# --- masks and uint64 -------------------------------------------------------------------------


def test_fixed_refuses_a_boolean_mask() -> None:
    with pytest.raises(ValueError, match="fixed is a boolean mask"):
        salsox.salso(DRAWS, seed=1, fixed=np.array([True, True, False, False]))
    with pytest.raises(ValueError, match="initial is a boolean mask"):
        salsox.chips(DRAWS, initial=[True, False, False, False], seed=1)


def test_uint64_labels_beyond_int64_are_refused_where_negative_labels_mean_something() -> None:
    huge = np.array([2**64 - 1, 0, 0, 1], dtype=np.uint64)  # 2**64 - 1 viewed as int64 is -1: "free"
    with pytest.raises(ValueError, match="fixed contains uint64 labels beyond the int64 range.*-1 means free"):
        salsox.salso(DRAWS, seed=1, fixed=huge)
    with pytest.raises(ValueError, match="initial contains uint64 labels beyond"):
        salsox.salso(DRAWS, seed=1, initial=huge)
    with pytest.raises(ValueError, match="initial contains uint64 labels beyond.*unallocated"):
        salsox.chips(DRAWS, initial=huge, seed=1)
    # as draws only label identity matters: any uint64 labels are read exactly
    big = np.array([[2**64 - 1, 5, 5, 7]], dtype=np.uint64)
    np.testing.assert_array_equal(salsox.psm(big), salsox.psm([[0, 1, 1, 2]]))


# --- more than 65,536 clusters ----------------------------------------------------------------


def _pairs(a: np.ndarray, b: np.ndarray) -> tuple:
    """(pairs together in a, in b, in both, all pairs), by counting, with numpy only."""
    comb = lambda c: float(np.sum(c * (c - 1) / 2))
    _, ca = np.unique(a, return_counts=True)
    _, cb = np.unique(b, return_counts=True)
    _, cab = np.unique(np.stack([a, b]), axis=1, return_counts=True)
    n = len(a)
    return comb(ca), comb(cb), comb(cab), n * (n - 1) / 2


def test_more_than_65536_clusters_where_no_table_is_needed() -> None:
    rng = np.random.default_rng(3)
    n = 150_000
    a = np.arange(n) // 2  # 75,000 clusters
    b = rng.integers(0, 90_000, size=n)  # about 70,000 clusters
    assert len(np.unique(a)) > 65_536 and len(np.unique(b)) > 65_536
    sa, sb, sab, total = _pairs(a, b)
    ri = (total + 2 * sab - sa - sb) / total
    expected = sa * sb / total
    ari = (sab - expected) / (0.5 * (sa + sb) - expected)
    assert salsox.RI(a, b) == pytest.approx(ri, rel=1e-12)
    assert salsox.ARI(a, b) == pytest.approx(ari, rel=1e-9, abs=1e-12)
    binder = 2 * (sa + sb - 2 * sab) / n**2  # Binder(a=1, b=1): discordant pairs over n^2 / 2
    assert float(salsox.partition_loss(a, b, "binder")) == pytest.approx(binder, rel=1e-12)
    # VI in bits, from the entropies
    h = lambda counts: float(-np.sum(counts / n * np.log2(counts / n)))
    ha = h(np.unique(a, return_counts=True)[1])
    hb = h(np.unique(b, return_counts=True)[1])
    hab = h(np.unique(np.stack([a, b]), axis=1, return_counts=True)[1])
    assert float(salsox.partition_loss(a, b, "VI")) == pytest.approx(2 * hab - ha - hb, rel=1e-12)


def test_more_than_65536_clusters_elsewhere_is_an_error_naming_the_argument() -> None:
    many = np.arange(65_537)[None, :]
    with pytest.raises(ValueError, match="draws: .*65536"):
        salsox.salso(many, seed=1, max_clusters=2)


# --- a PSM where draws are needed; R's loss spellings ------------------------------------------


def test_ball_chips_and_wasabi_recognise_a_psm() -> None:
    draws = np.random.default_rng(0).integers(0, 3, size=(30, 6))
    matrix = salsox.psm(draws)
    centre = salsox.salso(draws, seed=1)
    calls = {
        "credible_ball": lambda x: salsox.credible_ball(centre, x),
        "chips": lambda x: salsox.chips(x, seed=1),
        "wasabi": lambda x: salsox.wasabi(x, 2, seed=1),
    }
    for who, call in calls.items():
        for given, says in ((matrix, "similarity matrix"), (salsox.PSM(matrix), "salsox.PSM")):
            with pytest.raises(ValueError, match=f"draws is .*{says}.*{who} needs the H x n draws"):
                call(given)


@pytest.mark.parametrize("text, hint", [("binder(a=1.5)", "Binder.from_r(1.5)"), ("VI(a = 0.5)", "VI.from_r(0.5)")])
def test_r_loss_spelling_points_to_from_r(text: str, hint: str) -> None:
    with pytest.raises(ValueError, match=r"unknown loss") as err:
        salsox.salso(DRAWS, text, seed=1)
    assert hint in str(err.value)


# --- formulas too deep, losses that overflow --------------------------------------------------


def test_a_formula_too_deep_to_compile_is_a_value_error_naming_the_loss() -> None:
    square = lambda c, n: c * c
    for formula in (" + ".join(["A"] * 5000) + " - 5000 * A", "-" * 5000 + "A"):
        with pytest.raises(ValueError, match="loss 'deep': the formula is nested too deeply"):
            CountSumLoss("deep", {"A": ("cell", square)}, formula)


def test_a_loss_overflowing_to_inf_is_an_error() -> None:
    draws = np.random.default_rng(0).integers(0, 5, size=(50, 40))
    huge = salsox.VI(a=1.7e308, b=1.7e308)
    for call in (
        lambda: salsox.salso(draws, huge, seed=1),
        lambda: salsox.dlso(draws, huge),
        lambda: salsox.partition_loss(np.arange(40) % 3, draws, huge),
    ):
        with pytest.raises(ValueError, match=r"loss VI\(.*overflow"):
            call()
    # the same costs scaled down: a finite loss and the estimate of VI(1, 1)
    assert salsox.salso(draws, salsox.VI(a=1.7, b=1.7), seed=1).labels.tolist() == (
        salsox.salso(draws, "VI", seed=1).labels.tolist()
    )


def test_more_than_65536_clusters_in_draws_names_the_truth_argument() -> None:
    many = np.arange(65_537)
    with pytest.raises(ValueError, match="^truth: draw 0 has 65537 clusters"):
        salsox.partition_loss(many % 3, np.stack([many, many]))


def test_two_partition_route_agrees_with_the_engine_below_the_limit() -> None:
    """The numpy route used beyond 65,536 clusters computes what the engine computes."""
    from salsox.metrics.two_partitions import two_partition_loss

    rng = np.random.default_rng(5)
    for _ in range(20):
        n = int(rng.integers(1, 40))
        x = salsox.canonicalize_labels(rng.integers(0, rng.integers(1, 6), size=n))
        y = salsox.canonicalize_labels(rng.integers(0, rng.integers(1, 6), size=n))
        for loss in (salsox.Binder(a=2, b=0.5), salsox.VI(a=0.5, b=1), "omARI", "NVI", "ID", "NID"):
            loss = salsox.losses.get_loss(loss)
            assert two_partition_loss(y, x, loss) == pytest.approx(
                float(salsox.partition_loss(y, x, loss)), rel=1e-10, abs=1e-12
            ), (loss, x, y)


def test_a_similarity_matrix_file_is_named_as_such(tmp_path: Path, capsys) -> None:
    matrix = salsox.psm(np.random.default_rng(0).integers(0, 3, size=(30, 5)))
    path = tmp_path / "psm.csv"
    np.savetxt(path, matrix, delimiter=",")
    for command in ("estimate", "ball", "chips", "wasabi"):
        extra = ["-L", "2"] if command == "wasabi" else []
        assert cli.main([command, str(path), *extra]) == 1
        err = capsys.readouterr().err
        assert "holds a similarity matrix" in err and "not draws" in err, (command, err)


# --- issue 49: readers never drop or invent a draw ----------------------------------------------

@pytest.fixture(params=["python", "pandas", "pandas in threads"])
def parser(request, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each case read by the Python parser and by pandas' C parser (used from 1 MiB; here for
    every size), in one thread and in segments of a line or two read side by side, which must
    all give the same answer."""
    if request.param.startswith("pandas"):
        pytest.importorskip("pandas")
        monkeypatch.setattr(readers, "_FAST_BYTES", 0)
        if request.param.endswith("threads"):
            monkeypatch.setattr(readers, "_SEGMENT_BYTES", 1)
            monkeypatch.setattr(readers, "default_threads", lambda: 3)
    else:
        monkeypatch.setattr(readers, "_FAST_BYTES", 1 << 62)
    return request.param


def read_quietly(path: str, **kwargs) -> tuple:
    """(Draws, the SalsoxWarnings raised while reading)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = salsox.read_draws(path, **kwargs)
    return d, [w for w in caught if issubclass(w.category, salsox.SalsoxWarning)]


@pytest.mark.parametrize(
    "text",
    [
        "0,1,2,3\n0,0,1,1\n0,0,0,1\n",  # a chain started from singletons (pandas' header too)
        "0,1\n0,0\n1,0\n",  # two items split
        "1,2,3,4\n1,1,2,2\n1,1,1,2\n",  # any distinct integers
        "0 1 2 3\n0 0 1 1\n0 0 0 1\n",
    ],
)
def test_a_first_row_that_could_be_a_header_is_a_draw_with_a_warning(
    tmp_path: Path, capsys, parser: str, text: str
) -> None:
    name = "d.txt" if " " in text else "d.csv"
    path = write(tmp_path, name, text)
    rows = [[int(v) for v in line.replace(",", " ").split()] for line in text.splitlines()]
    d, caught = read_quietly(path)
    assert d.n_draws == 3 and d.item_names is None
    np.testing.assert_array_equal(salsox.psm(d), salsox.psm(rows))
    assert len(caught) == 1 and "line 1" in str(caught[0].message) and "header=True" in str(caught[0].message)
    assert capsys.readouterr().err == ""  # a warning through the warnings API, no note on stderr
    told, caught = read_quietly(path, header=True)
    assert told.n_draws == 2 and not caught
    np.testing.assert_array_equal(salsox.psm(told), salsox.psm(rows[1:]))
    plain, caught = read_quietly(path, header=False)
    assert plain.n_draws == 3 and not caught


def test_a_large_csv_whose_first_row_is_0_to_n_minus_1_keeps_every_draw(tmp_path: Path) -> None:
    """Large enough for pandas' C parser (1 MiB), as issue 49's check asks."""
    rng = np.random.default_rng(0)
    draws = rng.integers(0, 30, size=(4000, 150))
    draws[0] = np.arange(150)
    path = tmp_path / "big.csv"
    np.savetxt(path, draws, fmt="%d", delimiter=",")
    assert path.stat().st_size > readers._FAST_BYTES
    d, caught = read_quietly(str(path))
    assert d.n_draws == 4000 and len(caught) == 1
    np.testing.assert_array_equal(d.labels_matrix(), salsox.Draws(draws).labels_matrix())


def test_the_command_line_reads_the_first_row_as_a_draw_and_warns(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "d.csv", "0,1,2,3\n0,0,1,1\n0,0,0,1\n")
    assert cli.main(["psm", path, "--jobs", "1"]) == 0
    out, err = capsys.readouterr()
    expected = salsox.psm([[0, 1, 2, 3], [0, 0, 1, 1], [0, 0, 0, 1]])  # three draws, the first kept
    np.testing.assert_allclose(np.loadtxt(out.splitlines(), delimiter=","), expected, atol=1e-6)
    assert err.startswith("salsox: warning: ") and "--header yes" in err


@pytest.mark.parametrize(
    "field",
    # '_' separators; Arabic-Indic, fullwidth, Devanagari and mathematical digits
    ["1_0", "1_000", "\u0661", "\uff11", "\u0967\u0966", "\U0001d7d9"],
)
@pytest.mark.parametrize("line", [1, 2])
def test_labels_are_ascii_decimal_integers_only(tmp_path: Path, parser: str, field: str, line: int) -> None:
    rows = ["1,1,2,2", "1,1,2,3", "1,1,1,2"]
    rows[line - 1] = f"1,{field},2,2"
    path = write(tmp_path, "d.csv", "\n".join(rows) + "\n")
    with pytest.raises(InputError, match=f"line {line}, field 2: .* is not a number") as err:
        salsox.read_draws(path)
    assert "d.csv" in str(err.value) and "ASCII digits 0-9" in str(err.value)


def test_integral_values_in_ascii_decimal_notation_are_labels(tmp_path: Path, parser: str) -> None:
    # np.savetxt's default format, pandas' float columns, signs
    path = write(tmp_path, "d.csv", "1.0,1.000000000000000000e+00,2,+2\n-1,-1,2.,3e0\n1,1,1,2\n")
    d = salsox.read_draws(path)
    np.testing.assert_array_equal(salsox.psm(d), salsox.psm([[1, 1, 2, 2], [-1, -1, 2, 3], [1, 1, 1, 2]]))


@pytest.mark.parametrize(
    "comment, names",
    [
        ("# a,b,c,d", ["a", "b", "c", "d"]),
        ("#a,b,c,d", ["a", "b", "c", "d"]),
        ('# "a","b","c","d"', ["a", "b", "c", "d"]),
        ("# a,NA,c,4", ["a", "NA", "c", "4"]),
    ],
)
def test_a_header_written_as_a_comment_keeps_its_names(tmp_path: Path, parser: str, comment: str, names: list) -> None:
    path = write(tmp_path, "d.csv", comment + "\n1,1,2,2\n1,1,2,3\n1,1,1,2\n")
    d = salsox.read_draws(path)
    assert d.n_draws == 3 and d.item_names.tolist() == names


def test_np_savetxt_header_keeps_its_names(tmp_path: Path, parser: str) -> None:
    for delimiter, name in ((" ", "d.txt"), (",", "d.csv"), ("\t", "d.tsv")):
        path = tmp_path / name
        np.savetxt(path, DRAWS, fmt="%d", delimiter=delimiter, header=delimiter.join(["ant", "bee", "cat", "dog"]))
        d = salsox.read_draws(str(path))
        assert d.item_names.tolist() == ["ant", "bee", "cat", "dog"] and d.n_draws == 3, name


@pytest.mark.parametrize(
    "text",
    [
        "# written by hand\n1,1,2,2\n1,1,2,3\n1,1,1,2\n",  # two fields for four items
        "# a,b,c,d\n\n1,1,2,2\n1,1,2,3\n1,1,1,2\n",  # not just above the draws
        "# a,a,b,c\n1,1,2,2\n1,1,2,3\n1,1,1,2\n",  # a name twice: a comment, not a header
        "# 1,2,3,4\n1,1,2,2\n1,1,2,3\n1,1,1,2\n",  # numbers
    ],
)
def test_other_comments_are_skipped(tmp_path: Path, parser: str, text: str) -> None:
    d = salsox.read_draws(write(tmp_path, "d.csv", text))
    assert d.n_draws == 3 and d.item_names is None


@pytest.mark.parametrize(
    "header, names",
    [
        ("a,NA,c,d", ["a", "NA", "c", "d"]),
        ("NA,b,c,d", ["NA", "b", "c", "d"]),  # sodium among the items
        ("a,.,c,d", ["a", ".", "c", "d"]),
        ("a,2,c,d", ["a", "2", "c", "d"]),
        ('"a","NA","c","d"', ["a", "NA", "c", "d"]),
        ('"","a","NA","c","d"', ["a", "NA", "c", "d"]),  # with R's row names
    ],
)
def test_a_header_with_na_dot_or_a_number_among_names_is_a_header(
    tmp_path: Path, parser: str, header: str, names: list
) -> None:
    body = "1,1,2,2\n1,1,2,3\n1,1,1,2\n"
    if header.startswith('""'):
        body = "".join(f'"{r + 1}",{line}\n' for r, line in enumerate(body.splitlines()))
    d = salsox.read_draws(write(tmp_path, "d.csv", header + "\n" + body))
    assert d.n_draws == 3 and d.item_names.tolist() == names
    np.testing.assert_array_equal(salsox.psm(d), salsox.psm(DRAWS))


def test_a_line_of_numbers_with_a_stray_word_is_an_error_not_a_header(tmp_path: Path, parser: str) -> None:
    """More numbers than names: a draw with a typo, never silently taken for a header."""
    path = write(tmp_path, "d.csv", "x,1,2,3\n1,1,2,3\n1,1,1,2\n")
    with pytest.raises(InputError, match=r"line 1, field 1: 'x' is not a number.*header=True"):
        salsox.read_draws(path)
    told = salsox.read_draws(path, header=True)
    assert told.n_draws == 2 and told.item_names.tolist() == ["x", "1", "2", "3"]


@pytest.mark.parametrize(
    "column",
    [
        "log_lik", "log_lik[3]", "log_lik.3", "log_lik[1,2]", "loglik[2]", "log_likelihood", "lp", "logp",
        "diverging", "energy", "tree_depth", "step_size", "acceptance_rate", "n_steps",  # PyMC, ArviZ
        "accept_prob", "potential_energy", "num_steps", "mean_accept_prob",  # NumPyro
        "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__",  # Stan
    ],
)
def test_bookkeeping_columns_of_stan_pymc_and_numpyro_are_refused_by_name(
    tmp_path: Path, parser: str, column: str
) -> None:
    path = write(tmp_path, "d.csv", f'z.1,z.2,"{column}",z.3\n1,1,-3.5,2\n1,2,-3.1,2\n1,1,-2.9,1\n')
    with pytest.raises(InputError, match=f"column {re.escape(repr(column))} .*bookkeeping"):
        salsox.read_draws(path)
    frame = pd.DataFrame({"z.1": [1, 1], "z.2": [1, 2], column: [-3, -4], "z.3": [2, 2]})
    with pytest.raises(ValueError, match=f"column {re.escape(repr(column))} of the DataFrame"):
        salsox.Draws(frame)


@pytest.mark.parametrize("name", ["z[3]", "y.1", "sample.3", "log_likes", "energy_a", "i"])
def test_item_names_like_bookkeeping_columns_are_items(tmp_path: Path, name: str) -> None:
    d = salsox.read_draws(write(tmp_path, "d.csv", f"a,{name},c,d\n1,1,2,2\n1,1,2,3\n1,1,1,2\n"))
    assert d.item_names.tolist() == ["a", name, "c", "d"]


@pytest.mark.parametrize(
    "text, shown",
    [
        ("a,a,b,c\n1,1,2,2\n1,1,2,3\n1,1,1,2\n", "'a' (fields 1, 2)"),
        ('"","a","b","a","b"\n"1",1,1,2,2\n"2",1,1,2,3\n"3",1,1,1,2\n', "'a' (fields 2, 4), 'b' (fields 3, 5)"),
        ("a b c c\n1 1 2 2\n1 1 2 3\n1 1 1 2\n", "'c' (fields 3, 4)"),
    ],
)
def test_duplicate_item_names_are_refused_naming_them(tmp_path: Path, parser: str, text: str, shown: str) -> None:
    name = "d.txt" if " " in text.splitlines()[0] else "d.csv"
    with pytest.raises(InputError, match="names the same item more than once") as err:
        salsox.read_draws(write(tmp_path, name, text))
    assert name in str(err.value) and "line 1" in str(err.value) and shown in str(err.value)


def test_header_argument(tmp_path: Path) -> None:
    path = write(tmp_path, "d.csv", "a,b,c,d\n1,1,2,2\n1,1,2,3\n")
    for auto in (None, "auto"):
        assert salsox.read_draws(path, header=auto).item_names.tolist() == list("abcd")
    assert salsox.read_draws(path, header=True).n_draws == salsox.read_draws(path, header="yes").n_draws == 2
    with pytest.raises(InputError, match="line 1, field 1: 'a' is not a number"):
        salsox.read_draws(path, header=False)
    for bad in ("maybe", 1, "true"):
        with pytest.raises(ValueError, match="header must be True, False or None"):
            salsox.read_draws(path, header=bad)


# Layouts both parsers must read alike (matrix and names); "fast" says pandas reads them itself
# (else they fall back to the Python parser, which answers).
AGREE = {
    "plain": ("a,b,c,d\n1,1,2,2\n1,1,2,3\n1,1,1,2\n", True),
    "R write.csv": ('"","a","b","c","d"\n"1",1,1,2,2\n"2",1,1,2,3\n"3",1,1,1,2\n', True),
    "R write.table": ('"a" "b" "c" "d"\n"1" 1 1 2 2\n"2" 1 1 2 3\n"3" 1 1 1 2\n', True),
    "pandas index": (",0,1,2,3\n0,1,1,2,2\n1,1,1,2,3\n2,1,1,1,2\n", True),
    "tsv": ("a\tb\tc\td\n1\t1\t2\t2\n1\t1\t2\t3\n1\t1\t1\t2\n", True),
    "whitespace": ("  1 1  2 2\n1\t1 2 3 \n1 1 1 2\n", True),
    "CRLF and blank lines": ("a,b,c,d\r\n1,1,2,2\r\n\r\n1,1,2,3\r\n   \r\n1,1,1,2\r\n", True),
    "spaces around fields": ("a, b, c, d\n1, 1, 2, 2\n 1,1 ,2,3\n1,1,1,2\n", True),
    "byte-order mark": ("\ufeffa,b,c,d\n1,1,2,2\n1,1,2,3\n1,1,1,2\n", True),
    "comment header": ("# made by np.savetxt\n# a,b,c,d\n1,1,2,2\n1,1,2,3\n1,1,1,2\n", True),
    "negative and large": ("-5,1,2,2\n1,-5,2,3\n1,1,1,1152921504606846976\n", True),
    "integral floats": ("1.0,1,2,2\n1,1,2.,3\n1,1,1,2e0\n", True),
    "non-ASCII names": ("caf\u00e9,b,c,d\n1,1,2,2\n1,1,2,3\n1,1,1,2\n", True),
    "beyond 2**53 among floats": ("1.0,1,2,2\n1,1,2,3\n1,1,1,9007199254740993\n", False),
    "trailing delimiters": ("1,1,2,2,\n1,1,2,3,\n1,1,1,2,\n", False),
    "comment lines among draws": ("1,1,2,2\n# between\n1,1,2,3\n1,1,1,2\n", False),
    "quoted labels": ('1,"1",2,2\n1,1,2,3\n1,1,1,2\n', False),
    "single quotes": ("'1',1,2,2\n1,1,2,3\n1,1,1,2\n", False),
    "form feed": ("1,1,2,2\n1,1,2,3\x0c\n1,1,1,2\n", False),
    "comment in the row names": ('"","a","b","c","d"\n"1",1,1,2,2\n#x,1,1,2,3\n"3",1,1,1,2\n', False),
    "R write.csv, a longer line": ('"","a","b","c","d"\n"1",1,1,2,2\n"2",1,1,2,3,4\n"3",1,1,1,2\n', False),
    "R write.csv, a shorter line": ('"","a","b","c","d"\n"1",1,1,2,2\n"2",1,1,2\n"3",1,1,1,2\n', False),
    "R write.csv, both": ('"","a","b","c","d"\n"1",1,1,2,2,2\n"2",1,1,2\n"3",1,1,1,2\n', False),
    "ragged": ("1,1,2,2\n1,1,2,3,3\n1,1,1,2\n", False),
    "line separator in the row names": ('"","a","b","c","d"\n"1",1,1,2,2\n"2\x1e",1,1,2,3\n"3",1,1,1,2\n', False),
}


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("case", sorted(AGREE))
def test_pandas_reads_what_the_python_parser_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, threads: int
) -> None:
    pytest.importorskip("pandas")
    if threads > 1:  # segments of a line or two, read side by side
        monkeypatch.setattr(readers, "_SEGMENT_BYTES", 1)
        monkeypatch.setattr(readers, "default_threads", lambda: threads)
    text, fast = AGREE[case]
    name = "d.txt" if case.startswith(("whitespace", "R write.table")) else ("d.tsv" if case == "tsv" else "d.csv")
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    delimiter = {"d.txt": None, "d.tsv": "\t", "d.csv": ","}[name]
    monkeypatch.setattr(readers, "_FAST_BYTES", 0)
    raw = path.read_bytes()
    quick = readers._read_text_fast(raw, str(path), "draws", delimiter, "auto")
    assert (quick is not None) == fast, case
    try:
        slow = readers._parse_text(raw.decode("utf-8"), str(path), "draws", delimiter, "auto")
    except InputError as err:
        slow_error = str(err)
        with pytest.raises(InputError) as fast_err:
            salsox.read_draws(str(path))
        assert str(fast_err.value) == slow_error
        return
    if quick is not None:
        assert quick[0].tolist() == slow[0].tolist() and quick[1] == slow[1] and quick[2] == slow[2], case
    matrix, names = read_matrix_named(str(path))
    assert matrix.tolist() == slow[0].tolist() and names == slow[1]


def test_ctrl_c_stops_the_threads_reading_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C while threads read the segments of a file: KeyboardInterrupt at once, and each
    thread told to stop at its next chunk (none goes on reading a large file)."""
    import _thread

    monkeypatch.setattr(readers, "_SEGMENT_BYTES", 1)
    monkeypatch.setattr(readers, "default_threads", lambda: 2)
    stopped = []

    def slow_read(data, stop: threading.Event):
        deadline = time.monotonic() + 10
        while not stop.is_set() and time.monotonic() < deadline:  # a chunk at a time
            time.sleep(0.01)
        stopped.append(stop.is_set())
        return None

    timer = threading.Timer(0.3, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            readers._in_segments(b"1,2\n" * 100, 0, slow_read)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 2.0
    deadline = time.monotonic() + 5
    while len(stopped) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stopped == [True, True]


# --- issue 49's late checks: messages that say what is wrong and what to do ---------------------


@pytest.mark.parametrize("huge", [2**70, -(2**70), 2**64 + 5])
def test_integer_labels_beyond_64_bits_are_named_as_such(huge: int) -> None:
    for given in ([[huge, 1, 1], [1, 1, 2]], np.array([[huge, 1, 1], [1, 1, 2]], dtype=object)):
        with pytest.raises(ValueError, match=r"draws contains integer labels beyond the 64-bit range") as err:
            salsox.Draws(given)
        assert str(huge) in str(err.value) and "ragged" not in str(err.value)
    # the relabelling the message suggests is accepted, with the same partition
    given = np.array([[huge, 1, 1], [1, 1, 2]], dtype=object)
    relabelled = np.unique(given, return_inverse=True)[1].reshape(given.shape)
    np.testing.assert_array_equal(salsox.psm(relabelled), salsox.psm([[0, 1, 1], [1, 1, 2]]))
    with pytest.raises(ValueError, match="ragged or non-numeric"):
        salsox.Draws(np.array([[huge, "a", 1]], dtype=object))


def test_more_than_65536_clusters_in_draws_says_what_takes_them() -> None:
    many = np.arange(65_537)
    with pytest.raises(ValueError, match="65536 clusters per draw are supported") as err:
        salsox.Draws(many[None, :])
    assert "partition_loss(estimate, truth, loss)" in str(err.value) and "1-D" in str(err.value)
    # and what it says works
    assert float(salsox.partition_loss(many % 3, many, "VI")) > 0


def test_a_features_file_warns_only_for_pandas_column_numbers(tmp_path: Path) -> None:
    """--data holds any numbers: a first row of distinct integers (coordinates, say) is data
    without a warning; pandas' 0,1,...,w-1 is data with one."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_matrix(write(tmp_path, "x.csv", "3,7\n0.5,1\n2,3\n"), "data").shape == (3, 2)
    with pytest.warns(salsox.SalsoxWarning, match="a row of data"):
        assert read_matrix(write(tmp_path, "y.csv", "0,1\n0.5,1\n2,3\n"), "data").shape == (3, 2)


def test_without_pandas_the_python_parser_reads_a_large_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    draws = np.random.default_rng(1).integers(0, 9, size=(2700, 200))
    path = tmp_path / "big.csv"
    np.savetxt(path, draws, fmt="%d", delimiter=",", header=",".join(f"i{j}" for j in range(200)), comments="")
    assert path.stat().st_size > readers._FAST_BYTES
    with_pandas = read_matrix_named(str(path))
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas: ImportError
    assert readers._read_text_fast(path.read_bytes(), str(path), "draws", ",", "auto") is None
    without = read_matrix_named(str(path))
    assert without[0].tolist() == with_pandas[0].tolist() == draws.tolist() and without[1] == with_pandas[1]
