"""memory_limit wherever memory grows beyond O(n + H): a limit one byte below a call's estimate
is a MemoryError up front (the engine never called), and the estimate itself is enough."""

import numpy as np
import pytest

import salsox
from salsox import _core
from salsox.losses import get_loss
from salsox._validation import relabel_bytes
from salsox.metrics import as_truth


def _draws(H=300, n=40, k=5, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, size=n)
    out = np.tile(truth, (H, 1))
    flip = rng.random((H, n)) < 0.3
    out[flip] = rng.integers(0, k, size=int(flip.sum()))
    return out


@pytest.fixture
def engine_calls(monkeypatch):
    """Counts the calls of the engine's evaluation entry points."""
    calls = []
    for name in ("expected_losses", "pairwise_losses", "psm_matrix", "countsum_losses", "callback_losses"):
        real = getattr(_core, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(_core, name, spy)
    return calls


def _losses_need(draws, loss, estimates, n_jobs):
    route = get_loss(loss)._route(as_truth(draws, get_loss(loss)))
    est = np.atleast_2d(estimates)
    return route.losses_bytes(len(est), int(est.max()) + 1, n_jobs)


@pytest.mark.parametrize("loss", ["VI", "binder", "omARI", "VI.lb", "jaccard", "omari-numpy"])
@pytest.mark.parametrize("m", [1, 5])
def test_partition_loss(engine_calls, loss, m):
    draws = salsox.Draws(_draws())
    est = _draws(H=m, seed=3)
    need = _losses_need(draws, loss, est, 2)
    with pytest.raises(MemoryError, match="memory_limit"):
        salsox.partition_loss(est, draws, loss, n_jobs=2, memory_limit=need - 1)
    assert engine_calls == []
    ok = salsox.partition_loss(est, draws, loss, n_jobs=2, memory_limit=need)
    np.testing.assert_array_equal(ok, salsox.partition_loss(est, draws, loss, n_jobs=2))


def test_one_estimate_tables_are_blocks_not_every_draw():
    # n = 2,000, H = 3,000, k = 400 (the case): the count tables of every draw took
    # about 1 GiB; a block of draws per thread takes at most 1 MiB.
    rng = np.random.default_rng(1)
    draws = salsox.Draws(rng.integers(0, 400, size=(3000, 2000), dtype=np.int16))
    need = _losses_need(draws, "binder", np.arange(2000) % 400, 2)
    assert need < 4 * 2**20


def test_psm(engine_calls):
    draws = _draws()
    n = draws.shape[1]
    with pytest.raises(MemoryError, match="memory_limit"):
        salsox.psm(draws, memory_limit=8 * n * n - 1)
    assert engine_calls == []
    np.testing.assert_array_equal(salsox.psm(draws, memory_limit=8 * n * n), salsox.psm(draws))


def test_psm_is_built_in_place():
    # The fraction of draws, as numpy computes it from the counts.
    draws = _draws(H=7)
    together = (draws[:, :, None] == draws[:, None, :]).sum(axis=0)
    np.testing.assert_array_equal(salsox.psm(draws), together / 7.0)


def test_dlso(engine_calls):
    draws = salsox.Draws(_draws())
    route = get_loss("VI")._route(draws)
    h, n = draws.n_draws, draws.n_items
    need = relabel_bytes(h, n) + route.losses_bytes(h, int(draws._core.kmax), 2)
    with pytest.raises(MemoryError, match="memory_limit"):
        salsox.dlso(draws, "VI", n_jobs=2, memory_limit=need - 1)
    assert engine_calls == []
    assert salsox.dlso(draws, "VI", n_jobs=2, memory_limit=need).labels.shape == (draws.n_items,)
    cands = _draws(H=4, seed=5)
    need = _losses_need(draws, "VI", cands, 2)
    with pytest.raises(MemoryError, match="memory_limit"):
        salsox.dlso(draws, "VI", candidates=cands, n_jobs=2, memory_limit=need - 1)


def test_credible_ball(engine_calls):
    draws = _draws()
    centre = draws[0]
    h, n = draws.shape
    route = get_loss("VI")._route(salsox.Draws(centre[None, :]))
    need = relabel_bytes(h, n) + 24 * h + route.losses_bytes(h, int(draws.max()) + 1, 2)
    with pytest.raises(MemoryError, match="memory_limit"):
        salsox.credible_ball(centre, draws, "VI", n_jobs=2, memory_limit=need - 1)
    assert engine_calls == []
    ball = salsox.credible_ball(centre, draws, "VI", n_jobs=2, memory_limit=need)
    assert ball.radius >= 0


def test_salso_final_evaluation_is_checked_before_the_search(engine_calls, monkeypatch):
    draws = salsox.Draws(_draws())
    loss = get_loss("VI")
    route = loss._route(draws)
    kd = draws.max_clusters
    search = route.memory_bytes(2, kd)
    final = route.losses_bytes(1, kd, 2)
    searched = []
    monkeypatch.setattr(_core, "salso_counts", lambda *a, **k: searched.append(1))
    with pytest.raises(MemoryError, match="memory_limit"):
        salsox.salso(draws, "VI", n_runs=2, n_jobs=2, seed=1, memory_limit=max(search, final) - 1)
    assert searched == [] and engine_calls == []


def test_salso_counts_its_copy_of_draws_given_as_an_array(engine_calls, monkeypatch):
    raw = _draws()
    draws = salsox.Draws(raw)
    route = get_loss("VI")._route(draws)
    kd = draws.max_clusters
    tables = max(route.memory_bytes(2, kd), route.losses_bytes(1, kd, 2))
    searched = []
    real = _core.salso_counts
    monkeypatch.setattr(_core, "salso_counts", lambda *a, **k: searched.append(1) or real(*a, **k))
    args = dict(n_runs=2, n_jobs=2, seed=1, max_scans=1)
    with pytest.raises(MemoryError, match="the engine's copy of the draws"):
        salsox.salso(raw, "VI", memory_limit=tables + draws.nbytes - 1, **args)
    assert searched == [] and engine_calls == []
    salsox.salso(raw, "VI", memory_limit=tables + draws.nbytes, **args)
    salsox.salso(draws, "VI", memory_limit=tables, **args)  # a Draws is used as it is
    assert len(searched) == 2


@pytest.mark.parametrize("threshold, mode", [(0.0, "path"), (0.5, "single")])
def test_chips(monkeypatch, threshold, mode):
    from salsox.uncertainty.chips import chips_bytes

    draws = _draws()
    h, n = draws.shape
    need = chips_bytes(n, h, 8, 2, mode)
    real = _core.chips
    calls = []
    monkeypatch.setattr(_core, "chips", lambda *a, **k: calls.append(1) or real(*a, **k))
    with pytest.raises(MemoryError, match="memory_limit"):
        salsox.chips(draws, threshold, n_runs=8, n_jobs=2, seed=1, memory_limit=need - 1)
    assert calls == []
    res = salsox.chips(draws, threshold, n_runs=8, n_jobs=2, seed=1, memory_limit=need, complete=False)
    assert res.mode == mode and calls == [1]


@pytest.mark.filterwarnings("ignore:the estimate has 5 clusters, the default cap")
def test_chips_completion_shares_the_limit(monkeypatch):
    # The completion runs while the runs' results are held: it has what the limit leaves after
    # them. It had salso's default (16 GiB) and grew 8x past a limit the runs fitted in.
    from salsox.uncertainty import chips as chips_module
    from salsox.uncertainty.chips import chips_bytes

    draws = salsox.Draws(_draws())
    h, n = draws.n_draws, draws.n_items
    runs_need = chips_bytes(n, h, 8, 2, "single")
    route = get_loss("VI")._route(draws)
    kd = draws.max_clusters
    completion_need = max(route.memory_bytes(2, kd), route.losses_bytes(1, kd, 2))
    assert completion_need > runs_need  # a limit fitting the runs alone is refused
    calls = []
    for name in ("chips", "salso_counts"):
        real = getattr(_core, name)
        monkeypatch.setattr(_core, name, lambda *a, _real=real, **k: calls.append(1) or _real(*a, **k))
    limit = runs_need + completion_need
    with pytest.raises(MemoryError, match="the completion .* leaves after the CHIPS runs"):
        salsox.chips(draws, 0.5, n_runs=8, n_jobs=2, seed=1, complete=dict(n_runs=2), memory_limit=limit - 1)
    assert calls == []
    limits = []
    real_salso = chips_module.salso
    monkeypatch.setattr(chips_module, "salso", lambda *a, **k: limits.append(k["memory_limit"]) or real_salso(*a, **k))
    res = salsox.chips(draws, 0.5, n_runs=8, n_jobs=2, seed=1, complete=dict(n_runs=2), memory_limit=limit)
    assert res.completed is not None and limits == [completion_need]
    # complete=dict(memory_limit=...) may lower the completion's share, never raise it.
    salsox.chips(draws, 0.5, n_runs=8, n_jobs=2, seed=1, complete=dict(n_runs=2, memory_limit=2**40),
                 memory_limit=limit)
    assert limits[-1] == completion_need


def test_a_contingency_loss_counts_its_batches_not_every_draw_s_tables(monkeypatch):
    from salsox.engine import callback

    draws = salsox.Draws(_draws())
    loss = get_loss("omari-numpy")
    route = loss._route(draws)
    est = _draws(H=1, seed=3)
    # One estimate's evaluation counts a batch of one table a draw, straight from the draws
    # (300 tables of 5 x 5 here), and the loss's copy of it: it was refused below 32 MiB.
    cells = draws.n_draws * draws.max_clusters * (int(est.max()) + 1)
    assert route.losses_bytes(1, int(est.max()) + 1, 2) <= 8 * cells * (1 + callback.PLUGIN_BATCH_COPIES) + 2**16
    salsox.partition_loss(est, draws, loss, memory_limit=2**20)
    # A search's batches are full (MAX_BATCH_CELLS cells) here: each thread's cell is counted
    # with the loss's copies of it (a search grew 1.5x past its limit without them).
    need = {}
    for cells in (1000, 2000):
        monkeypatch.setattr(callback, "MAX_BATCH_CELLS", cells)
        need[cells] = route.memory_bytes(2, draws.max_clusters)
    assert need[2000] - need[1000] == 2 * 8 * 1000 * (1 + callback.PLUGIN_BATCH_COPIES)


@pytest.mark.parametrize("init", ["++", "topvi"])
def test_wasabi(monkeypatch, init):
    from salsox._cpus import usable_cpus
    from salsox.uncertainty.wasabi import api
    from salsox.uncertainty.wasabi.draws import DrawSet, unique_rows
    from salsox.uncertainty.wasabi.memory import wasabi_bytes

    draws = _draws(H=200, n=30)
    h, n = draws.shape
    first, inverse = unique_rows(draws)
    ds = DrawSet(draws[first], np.bincount(inverse).astype(np.int64))
    workers = min(2, usable_cpus())  # starts at once: n_jobs=2, n_starts=2, at most the CPUs
    need = api._memory_needed(ds, h, 2, workers, 2 // workers, None, init)
    label_bytes = ds.draws.label_bits // 8
    base = wasabi_bytes(h, n, ds.n_unique, 2, workers, 0, label_bytes)
    assert need >= base + (24 * n * n * workers if init == "topvi" else 0)
    started = []
    real = api.run_start
    monkeypatch.setattr(api, "run_start", lambda *a, **k: started.append(1) or real(*a, **k))
    with pytest.raises(MemoryError, match="memory_limit"):
        salsox.wasabi(draws, 2, init=init, n_starts=2, n_jobs=2, seed=1, memory_limit=need - 1)
    assert started == []
    res = salsox.wasabi(draws, 2, init=init, n_starts=2, n_jobs=2, seed=1, memory_limit=need)
    assert res.particles.shape == (2, n) and len(started) == 2
    with pytest.raises(ValueError, match="memory_limit"):
        salsox.wasabi(draws, 2, memory_limit=0)


def test_wasabi_topvi_estimate_covers_what_topvi_allocates():
    # "topvi" adds, per start at once, its n x n work (1 - PSM, the PSM it came from, the
    # condensed distances and their clipped copy; the linkage's own copy is allocated in C):
    # the estimate's topvi term must hold what numpy allocates there, measured by tracemalloc,
    # and not be far above it. The test comparing against the same formula let a planted
    # error in this term pass.
    import tracemalloc

    from salsox.uncertainty.wasabi import api
    from salsox.uncertainty.wasabi.draws import DrawSet, unique_rows
    from salsox.uncertainty.wasabi.init import top_vi

    draws = salsox.canonicalize_labels(_draws(H=200, n=500)).astype(np.int32)
    h, n = draws.shape
    first, inverse = unique_rows(draws)
    ds = DrawSet(draws[first], np.bincount(inverse).astype(np.int64))
    need = lambda workers, init: api._memory_needed(ds, h, 2, workers, 1, None, init)
    term = {workers: need(workers, "topvi") - need(workers, "++") for workers in (1, 3)}
    assert term[3] == 3 * term[1]  # per start running at once
    top_vi(ds, draws, 2, np.random.default_rng(1), 1)  # imports scipy's modules, not counted below
    tracemalloc.start()
    try:
        top_vi(ds, draws, 2, np.random.default_rng(1), 1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 16 * n * n <= peak <= term[1] <= 2 * peak


def test_relabelling_long_rows_stays_within_its_estimate():
    # Draws given as an array are relabelled in chunks of rows (relabel_bytes counts one chunk's
    # temporaries); the check for rows already canonical ran on the whole array at once, about
    # 17 bytes a label more (and deaf to Ctrl-C for seconds on 4e7 labels).
    import tracemalloc

    from salsox._validation import relabel_rows

    arr = np.random.default_rng(0).integers(0, 30, size=(40, 200_000))
    arr[7] = relabel_rows(arr[7:8])[0]  # one row already canonical, in the second chunk
    relabel_rows(arr[:2])
    tracemalloc.start()
    try:
        out = relabel_rows(arr)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 1.05 * relabel_bytes(*arr.shape)
    np.testing.assert_array_equal(out[::3], np.vstack([relabel_rows(arr[i : i + 1]) for i in range(0, 40, 3)]))
    np.testing.assert_array_equal(out[7], arr[7])


def test_a_small_need_is_stated_in_bytes_or_kib_not_as_0_mib() -> None:
    from salsox._validation import byte_size

    assert [byte_size(b) for b in (0, 1023, 1024, 3 * 2**20 // 2, 5 * 2**30)] == [
        "0 bytes",
        "1023 bytes",
        "1.0 KiB",
        "1.5 MiB",
        "5.0 GiB",
    ]
    with pytest.raises(MemoryError, match=r"needs about \d+ bytes of count tables"):
        salsox.salso([[0, 0, 1], [0, 1, 1]], "VI", memory_limit=10)
    with pytest.raises(MemoryError, match=r"needs about \d+\.\d KiB"):
        salsox.chips([[0, 0, 1], [0, 1, 1]], memory_limit=10)


@pytest.mark.parametrize("layout", ["array", "list", "list-int32", "NID"])
def test_diagnose_counts_what_each_input_kind_allocates(layout):
    """diagnose's estimate covers the split's copy of a list of chains, the compact chains and
    the gap's draws: refused below peak / 1.2, accepted at twice the peak (tracemalloc)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    base = rng.integers(0, 5, size=(4, 60, 1500))
    make = {
        "array": lambda: base, "NID": lambda: base,
        "list": lambda: [base[k] for k in range(4)],
        "list-int32": lambda: [base[k].astype(np.int32) for k in range(4)],
    }[layout]
    kw = dict(n_runs=1, n_references=1, seed=1, n_permutations=9, n_jobs=1)
    if layout == "NID":
        kw["distance"] = "NID"
    x = make()
    salsox.diagnose(x, **kw)  # first: ArviZ's and the plotting modules' imports are not the call's
    tracemalloc.start()
    salsox.diagnose(x, **kw)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    with pytest.raises(MemoryError, match="diagnose needs about"):
        salsox.diagnose(make(), memory_limit=int(peak / 1.2), **kw)
    salsox.diagnose(make(), memory_limit=2 * peak, **kw)
