"""Runs spread over a Dask LocalCluster give exactly the local estimate."""

from __future__ import annotations

import numpy as np
import pytest

import salsox
from conftest import load_draws
from salsox.search.distributed import batches

distributed = pytest.importorskip("distributed")  # optional dependency: salsox[dask]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_batches_cover_every_run_once():
    for n_runs in (1, 5, 16, 17):
        for k in (1, 3, 4, 40):
            ranges = batches(n_runs, k)
            assert [r for a, b in ranges for r in range(a, b)] == list(range(n_runs))


@pytest.mark.parametrize("loss", ["VI", "binder", "NID", "VI.lb"])
def test_cluster_estimate_is_identical_to_local(client, loss):
    draws = salsox.Draws(load_draws("galaxy")[::10])
    local = salsox.salso(draws, loss, seed=21, n_runs=7, n_jobs=1)
    remote = salsox.salso(draws, loss, seed=21, n_runs=7, n_jobs=1, client=client)
    np.testing.assert_array_equal(local.labels, remote.labels)
    assert local.expected_loss == remote.expected_loss
    assert [r["loss"] for r in local.info["runs"]] == [r["loss"] for r in remote.info["runs"]]
    assert local.info["best_run"] == remote.info["best_run"]


def test_repeated_cluster_searches_on_the_same_draws(client):
    # The same Draws object searched again (a benchmark's repeats found the scattered copy
    # released under the second call when keys were content hashes).
    draws = salsox.Draws(load_draws("galaxy")[::10])
    local = salsox.salso(draws, "VI", seed=1, n_runs=5, n_jobs=1)
    for _ in range(8):
        est = salsox.salso(draws, "VI", seed=1, n_runs=5, n_jobs=1, client=client)
        np.testing.assert_array_equal(est.labels, local.labels)


def test_default_threads_are_the_workers_own(client):
    from salsox.search.distributed import _run_batch, _worker_threads

    draws = salsox.Draws(load_draws("iris")[::10])
    opts = dict(max_clusters=draws.max_clusters, n_runs=2, max_zealous=1, prob_sequential=0.5, max_scans=0,
                seconds=0.0, n_jobs=-1, seed=0, inner_threads=0)
    route = salsox.VI()._route(draws)  # the count-table route; Dask ships it without its draws
    raw = client.submit(_run_batch, route.with_payload(None), draws, opts, 0, 2, pure=False).result()
    assert raw["runs_done"] == 2
    assert client.submit(_worker_threads, pure=False).result() == 1  # the fixture's workers have 1 thread
    est = salsox.salso(draws, "VI", seed=4, n_runs=4, client=client)  # n_jobs left to the workers
    np.testing.assert_array_equal(est.labels, salsox.salso(draws, "VI", seed=4, n_runs=4, n_jobs=1).labels)


def test_cluster_progress_is_reported_per_batch(client):
    draws = salsox.Draws(load_draws("galaxy")[::10])
    seen = []
    est = salsox.salso(draws, "VI", seed=3, n_runs=8, n_jobs=1, client=client, progress=seen.append)
    done = [p.runs_done for p in seen]
    assert done == sorted(done) and done[-1] == 8 and all(p.runs_total == 8 for p in seen)
    assert seen[-1].best_loss == pytest.approx(est.expected_loss, rel=1e-9)


def test_failing_task_is_reported_not_hidden(client):
    draws = load_draws("iris")
    from salsox.search.distributed import run_on_dask

    # Bypass salso's validation so that the engine itself fails on the workers.
    with pytest.raises(RuntimeError, match="failed on the Dask cluster"):
        run_on_dask(client, salsox.VI()._route(salsox.Draws(draws)),
                    dict(max_clusters=10**6, n_runs=2, max_zealous=1, prob_sequential=0.5,
                         max_scans=0, seconds=0.0, n_jobs=1, seed=0))


def test_client_must_be_a_dask_client():
    with pytest.raises(TypeError, match="client"):
        salsox.salso(load_draws("iris"), "VI", client="localhost:8786", n_runs=1)
