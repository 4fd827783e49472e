"""Ctrl-C, progress and fork: long engine calls stop promptly and leave the process usable.

Ctrl-C is simulated with ``_thread.interrupt_main()`` from a timer thread (what Python's SIGINT
handler does). The problems are big enough to run for many seconds uninterrupted; each test
asserts that KeyboardInterrupt arrives within a generous margin of the interrupt, far below the
tens of seconds the engine used to ignore it, and that a following small call works.
"""

from __future__ import annotations

import _thread
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any, Callable, Optional

import numpy as np
import pytest

import salsox
import salsox.engine.callback
from salsox import _core
from salsox.plugins import ContingencyLoss
from salsox.registry import PluginError

# Seconds allowed between the interrupt and KeyboardInterrupt: 1 s promised, plus margin for a
# loaded 2-core machine.
MARGIN = 3.0
DELAY = 0.3  # interrupt this long after the call enters the engine


def _seconds_to_stop(call: Callable[[], Any], engine: str, delay: float = DELAY) -> float:
    """Seconds from a simulated Ctrl-C, made ``delay`` after ``call`` first enters the engine
    function ``salsox._core.<engine>`` (from any thread), to KeyboardInterrupt."""
    fired = threading.Event()

    def interrupt() -> None:
        fired.set()
        _thread.interrupt_main()

    timer = threading.Timer(delay, interrupt)
    original = getattr(_core, engine)
    first = threading.Lock()  # the first entry starts the timer (threads may enter at once)

    def entered(*args: Any, **kwargs: Any) -> Any:
        if first.acquire(blocking=False):
            timer.started_at = time.monotonic()  # type: ignore[attr-defined]
            timer.start()
        return original(*args, **kwargs)

    setattr(_core, engine, entered)
    try:
        call()
    except KeyboardInterrupt:
        assert fired.is_set(), "KeyboardInterrupt before the simulated Ctrl-C"
        return time.monotonic() - _fired_at(timer, delay)
    finally:
        setattr(_core, engine, original)
        timer.cancel()
    # The call ended before or without answering the interrupt: let a pending one land here.
    try:
        if timer.is_alive():
            timer.join()
        time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    pytest.fail("the call finished without raising KeyboardInterrupt")


def _fired_at(timer: threading.Timer, delay: float) -> float:
    return timer.started_at + delay  # type: ignore[attr-defined]


def _random_draws(H: int, n: int, k: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, k, size=(H, n))


def _still_usable() -> None:
    small = np.array([[0, 0, 1, 1], [0, 0, 1, 2], [0, 1, 1, 1]])
    est = salsox.salso(small, "VI", seed=1, n_runs=2, n_jobs=2)
    assert est.labels.shape == (4,)
    assert np.isfinite(salsox.partition_loss(est.labels, small, "VI"))


@pytest.fixture(scope="module")
def big_draws() -> salsox.Draws:
    return salsox.Draws(_random_draws(2000, 2000, 6))


def _noisy_draws(H: int, n: int, k: int, flip: float, seed: int = 0) -> np.ndarray:
    """Draws around one partition into k clusters, each label replaced with probability flip:
    searches on these take seconds."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, size=n)
    draws = np.tile(truth, (H, 1))
    mask = rng.random((H, n)) < flip
    draws[mask] = rng.integers(0, k, size=int(mask.sum()))
    return draws


def test_salso_polls_when_the_calling_thread_has_no_runs_left() -> None:
    # Two runs on two threads: run 0 starts from one cluster, a local optimum here, and ends
    # after one scan (~1 s); run 1 starts at random and takes several seconds more. The calling thread usually takes
    # run 0 and, with no runs left, used to stop polling: no progress reports and no Ctrl-C
    # until the other run ended. The Ctrl-C is sent just after the first run finishes (from the
    # progress report saying so), so the test does not depend on how fast the machine is.
    draws = salsox.Draws(_noisy_draws(2000, 8000, 40, 0.8))
    seed = next(s for s in range(1000) if [_uses_initializer(s, r) for r in range(2)] == [True, False])
    reports: list = []
    sent: list = []

    def interrupt() -> None:
        sent.append(time.monotonic())
        _thread.interrupt_main()

    timer = threading.Timer(0.3, interrupt)

    def report(p: Any) -> None:
        reports.append((time.monotonic(), p.runs_done))
        if p.runs_done == 1 and p.runs_total == 2 and not timer.is_alive() and not sent:
            timer.start()

    with pytest.raises(KeyboardInterrupt):
        try:
            salsox.salso(draws, "VI", seed=seed, n_runs=2, n_jobs=2, max_clusters=150, max_zealous=0,
                         initializer=lambda d, k, rng: np.zeros(d.shape[1], dtype=np.int64),
                         prob_initializer=0.5, progress=report)
        finally:
            timer.cancel()
    assert sent, "the search ended before Ctrl-C: the second run was too short for this test"
    assert time.monotonic() - sent[0] < MARGIN
    one_left = [t for t, done in reports if done == 1]
    assert len(one_left) >= 1, "no progress report while the other thread's run was going on"
    gaps = np.diff([t for t, _ in reports])
    assert gaps.size == 0 or gaps.max() < 1.5, f"no progress report for {gaps.max():.1f} s"
    _still_usable()


def _uses_initializer(seed: int, run: int) -> bool:
    # As salsox.plugins.initial_partitions decides it for prob_initializer=0.5.
    return bool(np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, run, 1]))).random() < 0.5)


def test_dlso_stops_on_ctrl_c(big_draws: salsox.Draws) -> None:
    assert _seconds_to_stop(lambda: salsox.dlso(big_draws, "VI", n_jobs=2), "expected_losses") < MARGIN
    _still_usable()


def test_partition_loss_stops_on_ctrl_c(big_draws: salsox.Draws) -> None:
    estimates = _random_draws(2000, 2000, 6, seed=5)
    call = lambda: salsox.partition_loss(estimates, big_draws, "binder", n_jobs=2)
    assert _seconds_to_stop(call, "expected_losses") < MARGIN
    _still_usable()


def test_one_estimate_partition_loss_stops_on_ctrl_c() -> None:
    # One estimate against H x n = 1e8 labels: the evaluation is split over the draws (and the
    # threads), and stops between blocks of draws; it used to run to its end on one thread,
    # ignoring Ctrl-C. 1,000 estimate clusters make it last seconds.
    H, n = 10_000, 10_000
    rng = np.random.default_rng(11)
    draws = salsox.Draws(rng.integers(0, 40, size=(H, n), dtype=np.int16))
    estimate = np.arange(n) % 1000
    call = lambda: salsox.partition_loss(estimate, draws, "VI", n_jobs=2)
    assert _seconds_to_stop(call, "expected_losses", delay=0.1) < 0.5
    _still_usable()


@pytest.fixture(scope="module")
def wide_draws() -> salsox.Draws:
    """H x n = 1e8 labels (40 clusters a draw)."""
    return salsox.Draws(np.random.default_rng(11).integers(0, 40, size=(10_000, 10_000), dtype=np.int16))


def test_one_estimate_count_sum_loss_stops_on_ctrl_c(wide_draws: salsox.Draws) -> None:
    # A count-sum plugin loss (jaccard): one estimate's draws are evaluated a block at a time,
    # spread over the threads, and the call stops between blocks (about 1.5 s in all). It built
    # the count tables of every draw (1.6 GB here) on one thread, answering Ctrl-C only before
    # it began or once it ended (3 s).
    estimate = np.arange(wide_draws.n_items) % 1000
    call = lambda: salsox.partition_loss(estimate, wide_draws, "jaccard", n_jobs=2)
    assert _seconds_to_stop(call, "countsum_losses", delay=0.3) < 0.5
    _still_usable()


def test_one_estimate_callback_loss_stops_on_ctrl_c(wide_draws: salsox.Draws) -> None:
    # A loss in Python (omari-numpy, a ContingencyLoss): each batch's tables are counted from the
    # draws and Ctrl-C lands between batches. The count tables of every draw were built first,
    # deaf to Ctrl-C (about a second here, and 1.6 GB).
    estimate = np.arange(wide_draws.n_items) % 1000
    call = lambda: salsox.partition_loss(estimate, wide_draws, "omari-numpy", n_jobs=2)
    assert _seconds_to_stop(call, "callback_losses", delay=0.05) < 0.5
    _still_usable()


def test_one_estimate_psm_loss_stops_on_ctrl_c() -> None:
    # VI.lb of one estimate against an n x n PSM: O(n^2) on one thread (the PSM's row sums, then
    # the estimate's pairs), polled every 256 rows. n = 8,000 (a 512 MiB PSM) takes about 0.1 s;
    # at n = 20,000 (3.2 GB) the call took 1-2.5 s and answered Ctrl-C only at its end.
    n = 8_000
    matrix = np.full((n, n), 0.5)
    np.fill_diagonal(matrix, 1.0)
    p = salsox.PSM(matrix)
    estimate = np.arange(n) % 50
    call = lambda: salsox.partition_loss(estimate, p, "VI.lb", n_jobs=2)
    assert _seconds_to_stop(call, "pairwise_losses", delay=0.02) < 0.5
    _still_usable()


def test_psm_and_summarize_stop_on_ctrl_c() -> None:
    draws = salsox.Draws(_random_draws(4000, 3000, 4, seed=6))
    labels = np.arange(3000) % 5
    assert _seconds_to_stop(lambda: salsox.psm(draws, n_jobs=2), "psm_matrix") < MARGIN
    assert _seconds_to_stop(lambda: salsox.summarize(labels, draws, "VI", n_jobs=2), "psm_matrix") < MARGIN
    _still_usable()


def test_pairwise_losses_stop_on_ctrl_c() -> None:
    p = salsox.PSM(np.full((1500, 1500), 0.5) + 0.5 * np.eye(1500))
    estimates = _random_draws(4000, 1500, 4, seed=7)
    assert _seconds_to_stop(lambda: salsox.partition_loss(estimates, p, "VI.lb", n_jobs=2), "pairwise_losses") < MARGIN
    _still_usable()


def test_a_slow_progress_callback_does_not_stall_the_search() -> None:
    # A 0.3 s callback used to be called again as soon as it returned (the throttle counted
    # from its start), so the calling thread did almost nothing else.
    draws = salsox.Draws(_noisy_draws(200, 1000, 20, 0.9, seed=8))  # about 3 s of search (12 runs)
    calls: list = []

    def slow(p: salsox.SearchProgress) -> None:
        begin = time.monotonic()
        time.sleep(0.3)
        calls.append((begin, time.monotonic(), p.runs_done))

    salsox.salso(draws, "omARI", seed=5, n_runs=12, n_jobs=1, max_clusters=25, progress=slow)
    assert len(calls) > 3
    # The last call is the final report, made once the search is over.
    for (_, end, done), (begin, _, next_done) in zip(calls[:-2], calls[1:-1]):
        if next_done == done:  # nothing finished in between: at least 0.5 s from the end
            assert begin - end >= 0.45
        else:  # a finished run: at least as long as the previous call took
            assert begin - end >= 0.25


FORK_SCRIPT = textwrap.dedent(
    """
    import multiprocessing as mp
    import numpy as np
    import salsox
    from salsox import _core

    draws = np.random.default_rng(0).integers(0, 4, size=(40, 60))

    def work(seed):
        return _core.forked_child(), salsox.salso(draws, "VI", seed=seed, n_runs=4, n_jobs=2).labels.tolist()

    if __name__ == "__main__":
        parent = salsox.salso(draws, "VI", seed=1, n_runs=4, n_jobs=2).labels.tolist()
        with mp.get_context("fork").Pool(2) as pool:
            results = pool.map(work, [1, 2])
        assert all(forked for forked, _ in results), results
        assert results[0][1] == parent
        print("ok")
    """
)


def _script_prints_ok(path: Any, text: str, hung: str, **env: str) -> None:
    """Runs ``text`` as a script at ``path`` (with ``env`` added to the environment); fails with
    ``hung`` if it has not ended within a minute, and unless it ends well, printing "ok"."""
    path.write_text(text)
    # A session of its own, so that a hung script (and any worker it started) can be killed as
    # a whole.
    proc = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, **env), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(hung)
    assert proc.returncode == 0, err
    assert out.strip().splitlines()[-1] == "ok"


@pytest.mark.skipif(sys.platform != "linux" or not _core.has_openmp(), reason="fork after OpenMP: Linux/libgomp")
def test_a_forked_child_runs_single_threaded_instead_of_hanging(tmp_path: Any) -> None:
    _script_prints_ok(tmp_path / "fork_pool.py", FORK_SCRIPT, "salso in a forked pool worker hung (OpenMP after fork)")


FEWER_THREADS_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import salsox

    draws = np.random.default_rng(0).integers(0, 4, size=(300, 40))
    for call in (lambda: salsox.psm(draws, n_jobs=2),
                 lambda: salsox.partition_loss(draws[:3], draws, "VI", n_jobs=2)):
        call()
    for loss in ("binder", "VI", "omARI"):
        est = salsox.salso(draws, loss, seed=1, n_runs=4, n_jobs=2)
        ref = salsox.salso(draws, loss, seed=1, n_runs=4, n_jobs=1)
        assert est.labels.tolist() == ref.labels.tolist() and est.expected_loss == ref.expected_loss, loss
    print("ok")
    """
)


@pytest.mark.skipif(not _core.has_openmp(), reason="OpenMP builds only")
def test_a_runtime_giving_fewer_threads_than_asked_does_not_hang(tmp_path: Any) -> None:
    # OMP_THREAD_LIMIT=1: every parallel region gets one thread, whatever n_jobs asks for. The
    # calling thread of a parallel loop used to wait for the thread it had counted on, forever.
    _script_prints_ok(tmp_path / "fewer_threads.py", FEWER_THREADS_SCRIPT,
                      "a parallel loop hung when the OpenMP runtime gave fewer threads than n_jobs",
                      OMP_THREAD_LIMIT="1")


class _SlowPairsLoss(ContingencyLoss):
    """Binder's loss from tables, each call ``delay`` seconds longer (time.sleep: the GIL is
    free meanwhile, as in a plugin waiting on I/O or a GPU); records when each call began, and
    on which thread."""

    name = "test-slow-pairs"

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls: list = []  # (start time, thread ident)
        self.on_main: Optional[Callable[[int], None]] = None  # called at each main-thread call

    def loss(self, tables: np.ndarray) -> np.ndarray:
        me = threading.get_ident()
        self.calls.append((time.monotonic(), me))
        if self.on_main is not None and me == threading.main_thread().ident:
            self.on_main(sum(ident == me for _, ident in self.calls))
        time.sleep(self.delay)
        n = tables.sum(axis=(1, 2)).astype(float)
        rows = (tables.sum(axis=2) ** 2).sum(axis=1)
        cols = (tables.sum(axis=1) ** 2).sum(axis=1)
        cells = (tables**2).sum(axis=(1, 2))
        return np.where(n > 0, (rows + cols - 2 * cells) / np.maximum(n, 1) ** 2, 0.0)

    def worker_calls_after(self, moment: float) -> int:
        main = threading.main_thread().ident
        return sum(start > moment and ident != main for start, ident in self.calls)


@pytest.fixture
def one_draw_a_batch(monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    """80 draws of 30 items, and batches of about one draw's tables: scoring one item takes
    up to 80 calls of the loss, so a thread between polls of its search has many left."""
    monkeypatch.setattr(salsox.engine.callback, "MAX_BATCH_CELLS", 300)
    return np.random.default_rng(3).integers(0, 5, size=(80, 30))


def test_a_slow_plugin_on_a_worker_thread_stops_with_the_main_thread(one_draw_a_batch: np.ndarray) -> None:
    # Ctrl-C lands in the main thread's call of the loss (its third): the worker thread, in the
    # middle of scoring an item (tens of batches of 0.05 s), went on calling the loss until that
    # item was scored, seconds later. It must start no call once the main thread has stopped.
    loss = _SlowPairsLoss(delay=0.05)
    stopped: list = []

    def third_call_is_interrupted(count: int) -> None:
        if count < 3:
            return
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5.0)  # the signal handler raises in one of these two lines
        except KeyboardInterrupt:
            stopped.append(time.monotonic())
            raise
        pytest.fail("no KeyboardInterrupt within 5 s of SIGINT")

    loss.on_main = third_call_is_interrupted
    with pytest.raises(KeyboardInterrupt):
        salsox.salso(one_draw_a_batch, loss, n_runs=2, n_jobs=2, seed=1, max_clusters=5)
    assert stopped, "the main thread's loss was not interrupted"
    assert time.monotonic() - stopped[0] < MARGIN
    assert {ident for _, ident in loss.calls} - {threading.main_thread().ident}, "no worker thread ran"
    assert loss.worker_calls_after(stopped[0]) == 0
    _still_usable()


def test_a_slow_plugin_on_a_worker_thread_stops_when_the_search_is_stopped(one_draw_a_batch: np.ndarray) -> None:
    # The search's monitor stops it (here a progress callable's error; Ctrl-C seen between two
    # items goes the same way): the worker thread must not start another call of the loss,
    # beyond one that may slip in while the monitor returns.
    loss = _SlowPairsLoss(delay=0.05)
    stopped: list = []

    def progress(p: Any) -> None:
        if loss.worker_calls_after(0.0) >= 2:
            stopped.append((time.monotonic(), p.runs_done))
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        salsox.salso(one_draw_a_batch, loss, n_runs=2, n_jobs=2, seed=1, max_clusters=5, progress=progress)
    # Stopped mid-search, not by the report after the last run (the monitor used to wait for
    # 16 items scored on the calling thread, a minute here, before it called progress again).
    assert stopped and stopped[0][1] == 0, "the progress callable ran only once the search had ended"
    stopped = [moment for moment, _ in stopped]
    assert loss.worker_calls_after(stopped[0]) <= 1
    _still_usable()


def test_a_slow_plugin_at_two_jobs_answers_ctrl_c(one_draw_a_batch: np.ndarray) -> None:
    # Ctrl-C from outside, whichever thread is calling the loss (0.1 s a call): the answer comes
    # after at most the calls in flight, not after the worker's item is scored (several seconds).
    loss = _SlowPairsLoss(delay=0.1)
    seconds = _seconds_to_stop(
        lambda: salsox.salso(one_draw_a_batch, loss, n_runs=2, n_jobs=2, seed=1, max_clusters=5),
        "salso_callback", delay=0.5,
    )
    assert seconds < MARGIN
    _still_usable()


# A call of _HoldingLoss that nothing cuts short ends after this many seconds (a hang guard).
HOLD_GUARD = 30.0


class _HoldingLoss(ContingencyLoss):
    """Binder's loss from tables, in pure Python; the first call on the thread named by ``hold``
    ("worker" or "main") runs a Python loop until HOLD_GUARD seconds have passed, and
    ``raise_on`` names a thread whose first call raises ValueError once the held call runs.
    Records each call's start, thread, and how it ended."""

    name = "test-holding-pairs"

    def __init__(self, hold: str, raise_on: Optional[str] = None) -> None:
        self.hold, self.raise_on = hold, raise_on
        self.calls: list = []  # [start time, thread ident, "returned" or the exception's type name]
        self.holding = threading.Event()

    def loss(self, tables: np.ndarray) -> np.ndarray:
        me = threading.get_ident()
        where = "main" if me == threading.main_thread().ident else "worker"
        record = [time.monotonic(), me, None]
        first = not any(ident == me for _, ident, _ in self.calls)
        self.calls.append(record)
        try:
            if first and where == self.hold:
                self.holding.set()
                deadline = time.monotonic() + HOLD_GUARD
                while time.monotonic() < deadline:
                    pass
            if first and where == self.raise_on:
                self.holding.wait(HOLD_GUARD)
                raise ValueError("this loss fails here")
            n = tables.sum(axis=(1, 2)).astype(float)
            rows = (tables.sum(axis=2) ** 2).sum(axis=1)
            cols = (tables.sum(axis=1) ** 2).sum(axis=1)
            cells = (tables**2).sum(axis=(1, 2))
            out = np.where(n > 0, (rows + cols - 2 * cells) / np.maximum(n, 1) ** 2, 0.0)
        except BaseException as err:
            record[2] = type(err).__name__
            raise
        record[2] = "returned"
        return out

    def held_calls(self) -> list:
        held = [c for c in self.calls if ("main" if c[1] == threading.main_thread().ident else "worker") == self.hold]
        return held[:1]


def test_ctrl_c_cuts_short_a_pure_python_plugin_call_on_a_worker_thread(one_draw_a_batch: np.ndarray) -> None:
    # SIGINT while the worker thread is inside a long pure-Python call of the loss: Python
    # delivers the signal to the main thread only, and the worker's call used to run to its end
    # (here HOLD_GUARD seconds) before the search returned. The stop now raises
    # KeyboardInterrupt inside that call; no call starts after SIGINT; the process stays usable.
    loss = _HoldingLoss(hold="worker")
    sent: list = []

    def interrupt() -> None:
        if loss.holding.wait(HOLD_GUARD):
            time.sleep(0.2)
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Thread(target=interrupt, daemon=True)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        try:
            salsox.salso(one_draw_a_batch, loss, n_runs=2, n_jobs=2, seed=1, max_clusters=5)
        finally:
            timer.join()
    assert sent, "the worker thread never called the loss"
    [held] = loss.held_calls()
    assert held[2] == "KeyboardInterrupt", f"the worker's call in flight ended as {held[2]!r}"
    assert not [c for c in loss.calls if c[0] > sent[0]], "a call of the loss started after SIGINT"
    _still_usable()
    # Nothing of the interruption is left pending on any thread: the same loss, not held, gives
    # the same bits on two threads as on one.
    quiet = _HoldingLoss(hold="nobody")
    two = salsox.salso(one_draw_a_batch, quiet, n_runs=2, n_jobs=2, seed=1, max_clusters=5)
    one = salsox.salso(one_draw_a_batch, quiet, n_runs=2, n_jobs=1, seed=1, max_clusters=5)
    assert two.labels.tolist() == one.labels.tolist() and two.expected_loss == one.expected_loss
    assert {c[2] for c in quiet.calls} == {"returned"}


def test_an_error_in_one_thread_cuts_short_the_other_threads_call(one_draw_a_batch: np.ndarray) -> None:
    # The worker's call fails while the main thread is inside a long pure-Python call: the
    # search stops, the main thread's call is cut short by the stop's KeyboardInterrupt, and
    # the error raised is the worker's, not that interruption.
    loss = _HoldingLoss(hold="main", raise_on="worker")
    with pytest.raises(PluginError, match="this loss fails here"):
        salsox.salso(one_draw_a_batch, loss, n_runs=2, n_jobs=2, seed=1, max_clusters=5)
    [held] = loss.held_calls()
    assert held[2] == "KeyboardInterrupt", f"the main thread's call in flight ended as {held[2]!r}"
    _still_usable()
