"""The default thread count: the CPUs the process may use (affinity mask, cgroup quota),
OMP_NUM_THREADS when set, and the OpenMP limit that threadpoolctl sets."""

import io
import os
import subprocess
import tempfile
import sys

import numpy as np
import pytest

import salsox
from salsox import _core
from salsox._cpus import CGROUP_ROOT_ENV, cpu_info
from salsox._validation import check_n_jobs

pytestmark = pytest.mark.skipif(not _core.has_openmp(), reason="a build without OpenMP runs one thread")

DRAWS = np.array([[0, 0, 1, 1, 2], [0, 0, 1, 1, 1], [0, 0, 1, 1, 2], [0, 1, 1, 2, 2]] * 8)


def _affinity():
    return len(os.sched_getaffinity(0))


@pytest.fixture
def no_omp_env(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)


@pytest.fixture(autouse=True)
def engine_cpus_reset():
    """A fake quota reaches the engine's CPU count (check_n_jobs passes it on): forget it after
    each test (the next call that takes n_jobs sets the real one)."""
    yield
    _core.set_usable_cpus(0)


def _v2(tmp_path, text):
    (tmp_path / "cpu.max").write_text(text + "\n")
    return str(tmp_path)


@pytest.mark.parametrize("text, cpus", [("100000 100000", 1), ("150000 100000", 1), ("50000 100000", 1)])
def test_a_cgroup_v2_quota_of_one_cpu_gives_one_thread(tmp_path, monkeypatch, no_omp_env, text, cpus):
    monkeypatch.setenv(CGROUP_ROOT_ENV, _v2(tmp_path, text))
    assert cpu_info().default == cpus
    assert check_n_jobs(None) == cpus and check_n_jobs(-1) == cpus
    est = salsox.salso(DRAWS, "VI", n_runs=4, seed=1, max_clusters=5)
    assert est.info["n_jobs"] == cpus
    assert check_n_jobs(2) == 2  # an explicit count is the user's


def test_a_quota_above_the_cpus_leaves_the_affinity(tmp_path, monkeypatch, no_omp_env):
    monkeypatch.setenv(CGROUP_ROOT_ENV, _v2(tmp_path, f"{100000 * (_affinity() + 3)} 100000"))
    assert check_n_jobs(None) == min(_affinity(), _core.max_threads())


def test_no_quota_max(tmp_path, monkeypatch, no_omp_env):
    monkeypatch.setenv(CGROUP_ROOT_ENV, _v2(tmp_path, "max 100000"))
    info = cpu_info()
    assert info.quota is None and info.default == min(_affinity(), _core.max_threads())


def test_a_cgroup_v1_quota(tmp_path, monkeypatch, no_omp_env):
    d = tmp_path / "cpu,cpuacct"
    d.mkdir()
    (d / "cpu.cfs_quota_us").write_text("100000\n")
    (d / "cpu.cfs_period_us").write_text("100000\n")
    monkeypatch.setenv(CGROUP_ROOT_ENV, str(tmp_path))
    assert cpu_info().quota == 1.0 and check_n_jobs(None) == 1
    (d / "cpu.cfs_quota_us").write_text("-1\n")  # no quota
    assert cpu_info().quota is None


def test_omp_num_threads_when_set_is_the_default():
    code = "from salsox._validation import check_n_jobs; print(check_n_jobs(None), check_n_jobs(-1))"
    env = dict(os.environ, OMP_NUM_THREADS="3")
    # Outside the checkout, so that the installed package (with its extension) is imported.
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=tempfile.gettempdir()
    )
    assert out.stdout.split() == ["3", "3"]


def test_omp_num_threads_wins_over_a_cgroup_quota(tmp_path):
    # A quota of one CPU, seen (quota 1.0), and OMP_NUM_THREADS=3: the user's own choice is the
    # default, as without a quota; without OMP_NUM_THREADS the quota gives 1. In a process of
    # its own: OMP_NUM_THREADS also sets the OpenMP runtime's limit when it starts.
    code = (
        "from salsox._cpus import cpu_info; from salsox._validation import check_n_jobs; "
        "i = cpu_info(); print(i.quota, i.omp_num_threads, i.default, check_n_jobs(None))"
    )
    root = _v2(tmp_path, "100000 100000")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    env[CGROUP_ROOT_ENV] = root
    run = lambda extra: subprocess.run(
        [sys.executable, "-c", code], env=dict(env, **extra), capture_output=True, text=True, check=True,
        cwd=tempfile.gettempdir(),
    ).stdout.split()
    assert run({"OMP_NUM_THREADS": "3"}) == ["1.0", "3", "3", "3"]
    assert run({}) == ["1.0", "None", "1", "1"]


def test_threadpool_limits_limits_salsox_as_numpy():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    libs = [lib for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "openmp"]
    assert libs, "threadpoolctl sees no OpenMP runtime in a process that loaded salsox"
    with threadpoolctl.threadpool_limits(1):
        assert check_n_jobs(None) == 1
        assert salsox.salso(DRAWS, "VI", n_runs=4, seed=1, max_clusters=5).info["n_jobs"] == 1
        blas = [lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]
        assert all(n == 1 for n in blas)
    assert check_n_jobs(None) == cpu_info().default


def test_a_quota_of_one_cpu_reaches_the_engines_loops(tmp_path, monkeypatch, no_omp_env):
    # Explicit n_jobs too: the engine's loops and crews take no more threads awake than the
    # quota (the OpenMP runtime counts the affinity's CPUs only), with the same results.
    want = salsox.psm(DRAWS, n_jobs=2)
    monkeypatch.setenv(CGROUP_ROOT_ENV, _v2(tmp_path, "100000 100000"))
    assert check_n_jobs(2) == 2 and _core.usable_cpus() == 1
    np.testing.assert_array_equal(salsox.psm(DRAWS, n_jobs=2), want)
    monkeypatch.setenv(CGROUP_ROOT_ENV, _v2(tmp_path, "max 100000"))
    check_n_jobs(2)
    assert _core.usable_cpus() == _affinity()


def test_show_config_prints_what_it_found(tmp_path, monkeypatch, no_omp_env):
    monkeypatch.setenv(CGROUP_ROOT_ENV, _v2(tmp_path, "100000 100000"))
    out = io.StringIO()
    salsox.show_config(file=out)
    text = out.getvalue()
    assert "default_n_jobs: 1" in text and "engine_cpus: 1" in text
    assert f"cgroup_quota_file: {tmp_path / 'cpu.max'}" in text
    assert f"cpus_affinity: {_affinity()}" in text
