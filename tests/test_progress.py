"""Progress reports of a running search (salso(progress=...)) and the text bar that shows them."""

from __future__ import annotations

import io
import math
import os
import time

import numpy as np
import pytest

import salsox
from conftest import load_draws
from salsox.plugins import ContingencyLoss
from salsox.progress import ProgressBar, SearchProgress


@pytest.fixture(scope="module")
def galaxy():
    return salsox.Draws(load_draws("galaxy")[::5])


class _TableVI(ContingencyLoss):
    """VI from whole contingency tables in numpy: exercises the engine's generic path."""

    name = "test-table-vi"

    def loss(self, tables):
        def xlogx(x):
            x = np.asarray(x, dtype=float)
            return np.where(x > 0, x * np.log2(np.where(x > 0, x, 1)), 0.0)

        m = tables.sum(axis=(1, 2)).astype(float)
        D = xlogx(tables.sum(axis=2)).sum(axis=1)
        E = xlogx(tables.sum(axis=1)).sum(axis=1)
        J = xlogx(tables).sum(axis=(1, 2))
        return np.where(m > 0, (D + E - 2 * J) / np.where(m > 0, m, 1), 0.0)


def _check_reports(seen, est, n_runs):
    assert seen, "no progress report"
    assert all(isinstance(p, SearchProgress) for p in seen)
    done = [p.runs_done for p in seen]
    assert done == sorted(done), "runs done must never go back"
    assert all(p.runs_total == n_runs for p in seen)
    seconds = [p.seconds for p in seen]
    assert seconds == sorted(seconds)
    last = seen[-1]
    assert last.runs_done == est.info["runs_done"]
    # The last report's best is the winning run's loss (per-run losses are in unit costs).
    assert last.best_loss == pytest.approx(est.expected_loss, rel=1e-9, abs=1e-12)
    bests = [p.best_loss for p in seen]
    assert all(b2 <= b1 for b1, b2 in zip(bests, bests[1:])), "best loss must never rise"


@pytest.mark.parametrize(
    "loss, engine",
    [("VI", None), ("NID", None), ("omARI", None), ("binder", "counts"), ("binder", "coclustering"), ("VI.lb", None)],
)
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_reports_and_estimate_unchanged(galaxy, loss, engine, n_jobs):
    seen = []
    kw = dict(seed=5, n_runs=6, n_jobs=n_jobs, engine=engine)
    est = salsox.salso(galaxy, loss, progress=seen.append, **kw)
    _check_reports(seen, est, 6)
    plain = salsox.salso(galaxy, loss, **kw)
    np.testing.assert_array_equal(est.labels, plain.labels)
    assert est.expected_loss == plain.expected_loss


@pytest.mark.parametrize("loss", [salsox.VI(a=0.5, b=1.0), salsox.Binder(a=2.0, b=1.0), salsox.VI(a=3.0, b=2.0)])
def test_best_loss_is_reported_in_the_loss_own_scale(galaxy, loss):
    # The engine works with unit costs; reports must be in the loss's scale, like expected_loss.
    seen = []
    est = salsox.salso(galaxy, loss, seed=3, n_runs=4, n_jobs=1, engine="counts" if loss.name == "binder" else None,
                       progress=seen.append)
    _check_reports(seen, est, 4)


def test_python_loss_path_reports_progress():
    draws = load_draws("iris")[::20]
    seen = []
    est = salsox.salso(draws, _TableVI(), seed=1, n_runs=3, n_jobs=1, progress=seen.append)
    _check_reports(seen, est, 3)


def test_long_search_reports_while_running():
    # Reports come between runs too, not only at the end.
    draws = load_draws("ex1")
    seen = []
    salsox.salso(draws, "VI", seed=2, n_runs=4, n_jobs=1, progress=seen.append)
    assert any(p.runs_done < 4 for p in seen)
    assert seen[0].best_loss == math.inf or seen[0].runs_done > 0


def test_budget_ends_with_the_runs_actually_done(galaxy):
    seen = []
    est = salsox.salso(galaxy, "VI", seed=1, n_runs=10**6, seconds=0.3, n_jobs=1, progress=seen.append)
    assert est.info["budget_exhausted"]
    assert seen[-1].runs_done == est.info["runs_done"] < 10**6
    assert seen[-1].runs_total == 10**6


class _Stop(Exception):
    pass


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_an_exception_in_the_callback_stops_the_search(galaxy, n_jobs):
    def callback(p):
        raise _Stop(f"stopped at {p.runs_done}")

    start = time.perf_counter()
    with pytest.raises(_Stop, match="stopped at"):
        salsox.salso(galaxy, "VI", seed=1, n_runs=10**5, n_jobs=n_jobs, progress=callback)
    assert time.perf_counter() - start < 30  # promptly, not after 100,000 runs


def test_progress_true_draws_a_bar_on_stderr(galaxy, capsys):
    salsox.salso(galaxy, "VI", seed=1, n_runs=3, n_jobs=1, progress=True)
    err = capsys.readouterr().err
    assert "3/3 runs" in err and "best loss" in err and err.endswith("\n")


def test_progress_false_and_none_report_nothing(galaxy, capsys):
    salsox.salso(galaxy, "VI", seed=1, n_runs=2, n_jobs=1, progress=False)
    salsox.salso(galaxy, "VI", seed=1, n_runs=2, n_jobs=1, progress=None)
    assert capsys.readouterr().err == ""


def test_bar_rendering():
    out = io.StringIO()
    bar = ProgressBar(out, label="x", width=10)
    assert bar.render(SearchProgress(0, 16, math.inf, 0.0)) == "x [----------] 0/16 runs, best loss -, 0.0 s"
    assert bar.render(SearchProgress(8, 16, 0.5, 2.25)).startswith("x [#####-----] 8/16 runs, best loss 0.5, 2.")
    assert bar.render(SearchProgress(16, 16, 0.5, 3.0)).startswith("x [##########] 16/16")
    bar(SearchProgress(1, 2, 1.0, 0.1))
    bar(SearchProgress(2, 2, 0.9, 0.2))
    bar.close()
    text = out.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and "2/2 runs" in text
    bar.close()  # a second close adds nothing
    assert out.getvalue() == text


def test_bar_delay_hides_quick_searches():
    out = io.StringIO()
    bar = ProgressBar(out, delay=1.0)
    bar(SearchProgress(1, 2, 1.0, 0.2))
    bar.close()
    assert out.getvalue() == ""
    bar(SearchProgress(2, 2, 1.0, 1.5))
    assert "2/2" in out.getvalue()


@pytest.mark.parametrize("kw, match", [(dict(width=0), "width"), (dict(width=2.5), "width"), (dict(delay=-1), "delay"),
                                       (dict(delay=float("nan")), "delay")])
def test_bar_arguments_are_checked(kw, match):
    with pytest.raises(ValueError, match=match):
        ProgressBar(**kw)


def test_estimate_summary_uses_its_own_draws(galaxy):
    est = salsox.salso(galaxy, "VI", seed=1, n_runs=2, n_jobs=1)
    a, b = est.summary(), est.summary(galaxy)
    np.testing.assert_array_equal(a.item_similarity, b.item_similarity)
    best = salsox.dlso(galaxy, "VI")
    assert best.summary().n_clusters == best.n_clusters
    bare = salsox.Estimate(labels=est.labels, expected_loss=est.expected_loss, n_clusters=est.n_clusters,
                           loss=est.loss, info={})
    with pytest.raises(ValueError, match="draws"):
        bare.summary()
    np.testing.assert_array_equal(bare.summary(galaxy).item_similarity, a.item_similarity)


def test_bar_fits_the_width_it_is_given():
    bar = ProgressBar(label="salsox VI")
    p = SearchProgress(8, 16, 0.123456, 2.5)
    assert bar.render(p, columns=200) == bar.render(p)  # room enough: the full bar
    for columns in (60, 50, 30, 10, 1):
        assert len(bar.render(p, columns=columns)) <= columns
    assert "8/16 runs" in bar.render(p, columns=50)  # the bar shrinks before the text is cut


def _narrow_terminal(columns):
    """A pseudo-terminal ``columns`` wide: (stream writing to it, fd reading what it shows)."""
    import fcntl
    import struct
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    return os.fdopen(slave, "w"), master


def _redraws(master):
    os.set_blocking(master, False)
    data = b""
    try:
        while True:
            data += os.read(master, 1 << 16)
    except (BlockingIOError, OSError):
        pass
    text = data.decode().replace("\x1b[K", "").replace("\n", "")
    return [segment for segment in text.split("\r") if segment]


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="pseudo-terminals are POSIX")
def test_no_redraw_wraps_on_a_50_column_terminal():
    # Wider than the terminal, each redraw would wrap and leave a new line behind.
    stream, master = _narrow_terminal(50)
    with stream:
        bar = ProgressBar(stream, label="salsox binder_a4_3")
        for done in range(17):
            bar(SearchProgress(done, 16, 0.296912345, 12.5))
        bar.close()
        from salsox import cli

        with cli._Spinner(stream, "tuning a for 12 clusters, a long label", enabled=True, delay=0.0, interval=0.01):
            time.sleep(0.05)
    lines = _redraws(master)
    os.close(master)
    assert len(lines) >= 17 and max(len(line) for line in lines) < 50, lines
