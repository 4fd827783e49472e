"""WASABI (salsox.wasabi, issue 19): the global optimum by brute force on tiny posteriors, the
properties of the result, the per-item contributions, the meet, and argument errors."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import salsox
from salsox import _core
from salsox.enumeration import set_partitions
from salsox.uncertainty.wasabi import elbow, evi_contributions, meet, vi_contributions

PARTITIONS_6 = set_partitions(6)


def _posterior(seed: int) -> np.ndarray:
    """About 200 draws of 6 items made of 3 to 6 repeated partitions, shuffled."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 7))
    rows = PARTITIONS_6[rng.choice(len(PARTITIONS_6), size=k, replace=False)]
    draws = np.repeat(rows, rng.integers(5, 80, size=k), axis=0)
    return draws[rng.permutation(len(draws))]


def _brute_force(draws: np.ndarray, L: int) -> float:
    """The smallest W over every choice of L partitions of the 6 items (203 of them)."""
    unique, counts = np.unique(draws, axis=0, return_counts=True)
    vi = np.stack([np.asarray(salsox.partition_loss(PARTITIONS_6, u[None, :], "VI")) for u in unique], axis=1)
    w = counts / counts.sum()
    if L == 1:
        return float((vi @ w).min())
    pair = np.minimum(vi[:, None, :], vi[None, :, :])
    if L == 2:
        return float((pair @ w).min())
    return float(min((np.minimum(pair, vi[i]) @ w).min() for i in range(len(vi))))


def _vi_to(draws: np.ndarray, particles: np.ndarray) -> np.ndarray:
    """H x L VI by the plain pairwise definition (entropies from the contingency table)."""
    out = np.empty((len(draws), len(particles)))
    for j, p in enumerate(particles):
        out[:, j] = [salsox.partition_loss(d, p, "VI") for d in draws]
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("L", [1, 2, 3])
def test_equals_the_brute_force_optimum(seed: int, L: int) -> None:
    draws = _posterior(seed)
    res = salsox.wasabi(draws, L, seed=seed, n_jobs=1)
    assert res.distance == pytest.approx(_brute_force(draws, L), abs=1e-9)


def test_topvi_and_fixed_starts_reach_the_optimum_too() -> None:
    draws = _posterior(3)
    best = _brute_force(draws, 2)
    topvi = salsox.wasabi(draws, 2, init="topvi", n_starts=2, seed=0, n_jobs=1)
    assert topvi.distance == pytest.approx(best, abs=1e-9)
    start = np.unique(draws, axis=0)[:2]
    res = salsox.wasabi(draws, 2, init=start, n_starts=3, seed=0, n_jobs=1)
    assert res.info["init"] == "fixed"
    assert res.distance <= salsox.wasabi(draws, 2, init=start, max_iter=0, n_starts=1, seed=0).distance


@pytest.mark.parametrize("seed", range(4))
def test_result_is_consistent_with_its_particles(seed: int) -> None:
    draws = _posterior(seed + 10)
    res = salsox.wasabi(draws, 3, seed=seed, n_jobs=1)
    vi = _vi_to(draws, res.particles)
    # Every draw is with a nearest particle, and W, weights and EVI are of these particles.
    own = vi[np.arange(len(draws)), res.assignment]
    np.testing.assert_allclose(own, vi.min(axis=1), atol=1e-12)
    assert res.distance == pytest.approx(own.mean(), abs=1e-12)
    assert res.weights.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(res.weights, np.bincount(res.assignment, minlength=3) / len(draws))
    assert np.all(np.diff(res.weights) <= 0)  # heaviest first
    for j in range(3):
        assert res.evi[j] == pytest.approx(own[res.assignment == j].mean(), abs=1e-12)
    assert res.distance == pytest.approx(float(res.weights @ res.evi), abs=1e-12)
    # Canonical labels, all distinct.
    for p in res.particles:
        assert p[0] == 0 and np.all(np.diff(np.maximum.accumulate(p)) <= 1)
    assert len(np.unique(res.particles, axis=0)) == 3


def test_w_never_increases_along_the_iterations() -> None:
    # Draws around three modes with noise: the iterations have work to do.
    rng = np.random.default_rng(5)
    modes = np.array([np.arange(30) % 3, np.arange(30) // 10, np.arange(30) % 5])
    draws = modes[rng.integers(0, 3, size=300)]
    noise = rng.random(draws.shape) < 0.2
    draws[noise] = rng.integers(0, 6, size=noise.sum())
    for seed in range(3):
        res = salsox.wasabi(draws, 3, n_starts=4, max_iter=30, eps=0.0, seed=seed, n_jobs=1)
        assert np.all(np.diff(res.history) <= 1e-12), res.history
        assert res.history[-1] == pytest.approx(res.distance, abs=1e-12)


def test_same_result_for_any_n_jobs() -> None:
    draws = _posterior(7)
    a = salsox.wasabi(draws, 2, seed=11, n_jobs=1)
    b = salsox.wasabi(draws, 2, seed=11, n_jobs=2)
    np.testing.assert_array_equal(a.particles, b.particles)
    np.testing.assert_array_equal(a.assignment, b.assignment)
    np.testing.assert_array_equal(a.start_distances, b.start_distances)
    assert a.distance == b.distance


def test_mini_batches_then_full_batch() -> None:
    draws = _posterior(2)
    res = salsox.wasabi(draws, 2, mini_batch=50, seed=1, n_jobs=1)
    assert res.info["batch_history"]
    for step in res.info["batch_history"]:
        assert step["after"] <= step["before"] + 1e-12  # compared on one batch
    assert res.distance == pytest.approx(_brute_force(draws, 2), abs=1e-9)


def test_engine_vi_matrix_matches_pairwise_vi() -> None:
    rng = np.random.default_rng(0)
    draws = rng.integers(0, 7, size=(130, 40))  # more draws than one block of 64
    particles = np.stack([rng.integers(0, k, size=40) for k in (1, 3, 40)])
    canon = salsox.Draws(particles)
    p = np.stack([canon.draw(i) for i in range(3)]).astype(np.int32)
    vi = np.asarray(_core.particle_vi(salsox.Draws(draws)._core, p, 2))
    np.testing.assert_allclose(vi, _vi_to(draws, p), atol=1e-12)
    assert np.asarray(_core.particle_vi(salsox.Draws(p)._core, p, 1)).diagonal().tolist() == [0.0] * 3


def test_vi_contributions_sum_to_vi() -> None:
    rng = np.random.default_rng(1)
    for _ in range(20):
        x, y = rng.integers(0, 5, size=25), rng.integers(0, 4, size=25)
        c = vi_contributions(x, y)
        assert np.all(c >= 0)
        assert c.sum() == pytest.approx(salsox.partition_loss(x, y, "VI"), abs=1e-12)
    np.testing.assert_array_equal(vi_contributions([0, 0, 1], [5, 5, 2]), 0.0)
    # Item 2 alone in x and with 0, 1 in y: only the items whose clusters differ contribute.
    c = vi_contributions([0, 0, 1, 2], [0, 0, 0, 2])
    assert c[3] == 0.0 and c[2] > 0


def test_evi_contributions_sum_to_expected_vi() -> None:
    draws = _posterior(4)
    est = salsox.salso(draws, seed=0)
    c = evi_contributions(est, draws)
    assert c.sum() == pytest.approx(est.expected_loss, abs=1e-12)
    res = salsox.wasabi(draws, 2, seed=0, n_jobs=1)
    by_particle = res.evi_contributions()
    assert by_particle.shape == (2, 6)
    np.testing.assert_allclose(by_particle.sum(axis=1), res.weights * res.evi, atol=1e-12)
    assert by_particle.sum() == pytest.approx(res.distance, abs=1e-12)


def test_meet_refines_every_particle() -> None:
    draws = _posterior(1)
    res = salsox.wasabi(draws, 3, seed=0, n_jobs=1)
    m = res.meet()
    for p in res.particles:
        # Each meet cluster lies inside one cluster of the particle.
        assert all(len(set(p[m.labels == k])) == 1 for k in range(m.n_clusters))
    np.testing.assert_allclose(np.diag(m.coclustering), 1.0)


def test_meet_of_eight_partitions_of_twenty_clusters() -> None:
    # The R package's table of prod K_l = 20^8 cells fails here; the meet needs none.
    rng = np.random.default_rng(2)
    parts = np.stack([rng.permutation(np.arange(400) % 20) for _ in range(8)])
    m = meet(parts, np.full(8, 1 / 8))
    keys = {tuple(parts[:, i]) for i in range(400)}
    assert m.n_clusters == len(keys)
    for i, j in [(0, 1), (5, 9), (17, 300)]:
        assert (m.labels[i] == m.labels[j]) == np.array_equal(parts[:, i], parts[:, j])
    assert m.coclustering.shape == (len(keys), len(keys))


def test_elbow_reports_the_fitted_distances() -> None:
    draws = _posterior(0)
    curve = elbow(draws, 3, seed=0, n_jobs=1)
    np.testing.assert_array_equal(curve.n_particles, [1, 2, 3])
    np.testing.assert_allclose(curve.distance, [r.distance for r in curve.results])
    assert np.all(np.diff(curve.distance) <= 1e-12)
    # Capped at the number of distinct draws, where W = 0.
    few = np.repeat(PARTITIONS_6[[0, 5, 9]], [10, 20, 30], axis=0)
    capped = elbow(few, 6, seed=0, n_jobs=1)
    assert capped.n_particles.tolist() == [1, 2, 3] and capped.distance[-1] == 0.0


def test_bad_arguments_give_clear_errors() -> None:
    draws = _posterior(0)
    with pytest.raises(ValueError, match="n_particles=300 is more than the .* distinct"):
        salsox.wasabi(draws, 300)
    with pytest.raises(ValueError, match="n_particles must be >= 1"):
        salsox.wasabi(draws, 0)
    with pytest.raises(TypeError, match="n_particles must be an integer"):
        salsox.wasabi(draws, 1.5)
    with pytest.raises(ValueError, match="init must be '\\+\\+', 'topvi'"):
        salsox.wasabi(draws, 2, init="kmeans")
    with pytest.raises(ValueError, match="init has 1 partitions but n_particles=2"):
        salsox.wasabi(draws, 2, init=draws[:1])
    with pytest.raises(ValueError, match="init has duplicate partitions"):
        salsox.wasabi(draws, 2, init=np.stack([draws[0], draws[0]]))
    with pytest.raises(ValueError, match="eps must be finite and >= 0"):
        salsox.wasabi(draws, 2, eps=-1)
    with pytest.raises(ValueError, match="n_starts must be >= 1"):
        salsox.wasabi(draws, 2, n_starts=0)
    with pytest.raises(ValueError, match="mini_batch must be >= 1"):
        salsox.wasabi(draws, 2, mini_batch=0)
    with pytest.raises(ValueError, match="draws must be 2-D"):
        salsox.wasabi(draws[0], 1)
    with pytest.raises(ValueError, match="x has 3 items but y has 2"):
        vi_contributions([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="weights must have one value per partition"):
        meet(draws[:2], [1.0])
    with pytest.raises(TypeError, match="elbow\\(\\) sets n_particles"):
        elbow(draws, 2, n_particles=2)


def test_cli_wasabi_text_json_and_plots(tmp_path, capsys) -> None:
    import json

    from salsox.cli import main

    draws = _posterior(0)
    path = tmp_path / "draws.csv"
    np.savetxt(path, draws, fmt="%d", delimiter=",")
    fast = ["--seed", "3", "--starts", "2", "-j", "1"]
    assert main(["wasabi", str(path), "-L", "2", "--json", *fast]) == 0
    payload = json.loads(capsys.readouterr().out)
    res = salsox.wasabi(draws, 2, seed=3, n_starts=2, n_jobs=1)
    assert payload["distance"] == pytest.approx(res.distance)
    assert payload["particles"] == res.particles.tolist()
    assert main(["wasabi", str(path), "-L", "2", *fast]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("WASABI: 2 particle(s)")
    assert lines[-2:] == [",".join(map(str, p)) for p in res.particles]
    for kind in ("mds", "heatmap", "contributions", "elbow"):
        out = tmp_path / f"{kind}.png"
        args = ["wasabi", str(path), "-L", "2", *fast, "--plot", str(out), "--kind", kind]
        assert main(args + (["--elbow"] if kind == "elbow" else [])) == 0
        assert out.stat().st_size > 0
    capsys.readouterr()
    assert main(["wasabi", str(path), "-L", "2", "--plot", str(tmp_path / "x.png"), "--kind", "elbow"]) == 2
    assert "--kind elbow needs --elbow" in capsys.readouterr().err
    assert main(["wasabi", str(path), "-L", "999"]) == 2
    assert "--particles 999 is more than" in capsys.readouterr().err


def test_plots_titles_carry_the_weights() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    draws = _posterior(1)
    res = salsox.wasabi(draws, 3, seed=0, n_jobs=1)
    fig = salsox.plots.plot_wasabi(res, kind="heatmap")
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
    assert [t.split("\n")[0] for t in titles] == [f"particle {p}: weight {w:.3f}" for p, w in enumerate(res.weights)]
    plt.close(fig)
    ax = salsox.plots.plot_wasabi_contributions(res)
    heights = np.array([patch.get_height() for patch in ax.patches])
    assert heights.sum() == pytest.approx(res.distance)
    plt.close(ax.figure)
    ax = salsox.plots.plot_wasabi_elbow(elbow(draws, 2, seed=0, n_jobs=1))
    assert len(ax.lines[0].get_xdata()) == 2
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="data has 3 rows but the result has 6 items"):
        salsox.plots.plot_wasabi(res, data=np.zeros((3, 2)))
    with pytest.raises(TypeError, match="expected a WasabiResult"):
        salsox.plots.plot_wasabi(draws)


def test_docs_page_examples_run_and_print_what_it_shows() -> None:
    from test_docs import test_examples_run_and_print_what_the_page_shows as check_page

    check_page("wasabi.md")


def test_engine_vi_matrix_stops_on_ctrl_c() -> None:
    from test_interrupts import MARGIN, _seconds_to_stop, _still_usable

    rng = np.random.default_rng(0)
    draws = salsox.Draws(rng.integers(0, 6, size=(2000, 2000)))
    particles = np.ascontiguousarray(rng.integers(0, 6, size=(200, 2000)), dtype=np.int32)  # ~10 s uninterrupted
    assert _seconds_to_stop(lambda: _core.particle_vi(draws._core, particles, 2), "particle_vi") < MARGIN
    _still_usable()


def test_parallel_starts_stop_on_ctrl_c() -> None:
    import _thread
    import threading
    import time

    from test_interrupts import MARGIN, _noisy_draws, _still_usable

    # ~10 s uninterrupted on a 2-core machine; the interrupt comes 0.5 s in. An earlier
    # version took ~1 s and sent Ctrl-C at 1 s: on a fast machine the call finished first and
    # the stray interrupt then stopped pytest itself.
    draws = _noisy_draws(2000, 4000, 40, 0.8)
    sent: list[float] = []

    def interrupt() -> None:
        sent.append(time.monotonic())
        _thread.interrupt_main()

    timer = threading.Timer(0.5, interrupt)
    try:
        timer.start()
        salsox.wasabi(draws, 3, n_starts=4, n_jobs=2, seed=0)
    except KeyboardInterrupt:
        assert sent, "KeyboardInterrupt before the simulated Ctrl-C"
        assert time.monotonic() - sent[0] < MARGIN
    else:
        # Finished first: let a pending interrupt land here rather than in pytest.
        timer.cancel()
        try:
            timer.join()
            time.sleep(0.2)
        except KeyboardInterrupt:
            pass
        pytest.fail("wasabi finished before the simulated Ctrl-C: the problem is too small")
    finally:
        timer.cancel()
    # The starts' threads are gone (other tests may leave threads of their own).
    assert not [t for t in threading.enumerate() if t.name.startswith("salsox-wasabi")]
    _still_usable()


def test_starts_stop_on_ctrl_c_while_they_pick_and_assign_their_particles() -> None:
    from test_interrupts import MARGIN, _noisy_draws, _seconds_to_stop, _still_usable

    # 40 particles: each start's "++" picks take 40 VI passes over the draws, its first
    # assignment one pass of 40 particles: seconds on a 2-core machine, during which the starts
    # (on worker threads, where no signal handler runs) never looked at the stop flag, and the
    # main thread waited for them (14 s here). Ctrl-C comes 0.3 s after the first VI pass begins.
    draws = _noisy_draws(1000, 8000, 8, 0.3, seed=2)
    call = lambda: salsox.wasabi(draws, 40, n_starts=2, n_jobs=2, seed=0)
    assert _seconds_to_stop(call, "particle_vi") < MARGIN
    assert not [t for t in threading.enumerate() if t.name.startswith("salsox-wasabi")]
    _still_usable()
