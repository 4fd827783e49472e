"""Every public function refuses a bad argument before any work on the draws.

The draws here are large (2,000 x 500), but nothing is timed: the ``no_work`` fixture makes
every heavy entry point fail with :class:`WorkStarted` (the engine's searches and loss tables,
the compaction of the draws into a ``Draws``, and the Python passes over every label:
``as_integer_array`` and ``relabel_rows`` on a large matrix). A refusal that comes after such
work therefore shows up as ``WorkStarted`` instead of the ValueError or TypeError naming the
argument, whatever the machine's load.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import salsox
from salsox import _core
from salsox import _validation
from salsox.io import draws as draws_module

H, N = 2000, 500
# Inputs of at least this many labels count as "the draws": a pass over them is work.
# The estimate (N labels) and a handful of rows stay below it.
LARGE = 50_000


class WorkStarted(BaseException):
    """Raised by any heavy entry point: a BaseException, so that no ``except Exception`` in
    the library can turn it into an ordinary error."""


# The engine's entry points that only report, or build small objects: cheap at any size.
_CHEAP = frozenset({
    "CountLoss", "CountSumLoss", "EngineOptions", "count_table_bytes", "countsum_bytes",
    "expected_losses_bytes", "forked_child", "has_openmp", "max_threads", "set_usable_cpus",
    "simd_path", "simd_paths", "usable_cpus",
})


def _size(x):
    try:
        return int(np.size(x))
    except Exception:
        return 0


def _refuse_large(real, what):
    def guarded(x, *args, **kwargs):
        if _size(x) >= LARGE:
            raise WorkStarted(f"{what} on {_size(x)} labels before the arguments were checked")
        return real(x, *args, **kwargs)

    return guarded


@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(0)
    truth = np.repeat(np.arange(4), N // 4)
    out = np.tile(truth, (H, 1))
    flip = rng.random((H, N)) < 0.1
    out[flip] = rng.integers(0, 5, size=flip.sum())
    return out


@pytest.fixture
def no_work(monkeypatch):
    for name in dir(_core):
        if name.startswith("_") or name in _CHEAP:
            continue
        if name == "CompactDraws":
            continue

        def refuse(*args, _name=name, **kwargs):
            raise WorkStarted(f"salsox._core.{_name} was called before the arguments were checked")

        monkeypatch.setattr(_core, name, refuse)
    real_compact = draws_module.Draws._compact
    monkeypatch.setattr(
        draws_module.Draws, "_compact", staticmethod(_refuse_large(real_compact, "Draws(...)"))
    )
    # The Python passes over every label, wherever they were imported by name.
    for fname in ("as_integer_array", "relabel_rows"):
        real = getattr(_validation, fname)
        guarded = _refuse_large(real, fname)
        for mod in list(sys.modules.values()):
            if getattr(mod, "__name__", "").startswith("salsox") and getattr(mod, fname, None) is real:
                monkeypatch.setattr(mod, fname, guarded)


def test_no_work_catches_work(no_work, big):
    # The fixture itself: good arguments reach the work, which it refuses.
    with pytest.raises(WorkStarted):
        salsox.Draws(big)
    with pytest.raises(WorkStarted):
        salsox.psm(big)
    with pytest.raises(WorkStarted):
        salsox.partition_loss(big[0], big)
    # ...and small inputs are not work.
    assert salsox.Draws(big[:3]).n_draws == 3


def _refused(call, names):
    """``call()`` raises a ValueError or TypeError naming one of ``names``."""
    with pytest.raises((ValueError, TypeError)) as err:
        call()
    text = str(err.value)
    assert any(name in text for name in names), f"the refusal names none of {names}: {text}"


# (function, the keyword, a bad value, what the message must name). The keyword is also the
# default name looked for.
_SALSO = [
    ("loss", "VII", "VII"),
    ("loss", 3, "loss"),
    ("max_clusters", 0, None),
    ("max_clusters", "2", None),
    ("max_clusters", 2.5, None),
    ("n_runs", 0, None),
    ("n_runs", True, None),
    ("max_zealous", -1, None),
    ("prob_sequential", 1.5, None),
    ("prob_sequential", "x", None),
    ("prob_singletons", -0.1, None),
    ("max_scans", 0, None),
    ("seconds", -1.0, None),
    ("seconds", "1", None),
    ("n_jobs", 0, None),
    ("n_jobs", 1.5, None),
    ("seed", -1, None),
    ("seed", "1", None),
    ("memory_limit", 0, None),
    ("memory_limit", "1G", None),
    ("engine", "nope", None),
    ("initializer", "nope", None),
    ("prob_initializer", 2.0, None),
    ("inner_jobs", 0, None),
    ("progress", "yes", None),
]


@pytest.mark.parametrize("key, value, name", _SALSO, ids=[f"{k}={v!r}" for k, v, _ in _SALSO])
def test_salso(no_work, big, key, value, name):
    extra = {"initializer": "psm-hclust"} if key == "prob_initializer" else {}
    _refused(lambda: salsox.salso(big, **{key: value}, **extra), [name or key])


_DLSO = [
    ("loss", "VII", "VII"),
    ("n_jobs", 0, None),
    ("memory_limit", 0, None),
]


@pytest.mark.parametrize("key, value, name", _DLSO, ids=[f"{k}" for k, _, _ in _DLSO])
def test_dlso(no_work, big, key, value, name):
    _refused(lambda: salsox.dlso(big, **{key: value}), [name or key])


_PARTITION_LOSS = [
    ("loss", "VII", "VII"),
    ("n_jobs", 0, None),
    ("n_jobs", "2", None),
    ("memory_limit", 0, None),
]


@pytest.mark.parametrize("key, value, name", _PARTITION_LOSS, ids=[f"{k}={v!r}"[:30] for k, v, _ in _PARTITION_LOSS])
def test_partition_loss(no_work, big, key, value, name):
    kwargs = {"estimate": big[0], key: value}
    _refused(lambda: salsox.partition_loss(truth=big, **kwargs), [name or key])


@pytest.mark.parametrize("key, value", [("n_jobs", 0), ("n_jobs", "2"), ("memory_limit", 0), ("memory_limit", -5)])
def test_psm(no_work, big, key, value):
    _refused(lambda: salsox.psm(big, **{key: value}), [key])


_SUMMARIZE = [
    ("loss", "VII", "VII"),
    ("exemplar", "nope", None),
    ("order", "nope", None),
    ("n_jobs", 0, None),
]


@pytest.mark.parametrize("key, value, name", _SUMMARIZE, ids=[k for k, _, _ in _SUMMARIZE])
def test_summarize(no_work, big, key, value, name):
    kwargs = {"labels": big[0], key: value}
    _refused(lambda: salsox.summarize(draws=big, **kwargs), [name or key])


_BALL = [
    ("loss", "VII", "VII"),
    ("loss", "VI.lb", "VI.lb"),
    ("level", 0.0, None),
    ("level", 1.5, None),
    ("level", "0.9", None),
    ("n_jobs", 0, None),
    ("memory_limit", 0, None),
]


@pytest.mark.parametrize("key, value, name", _BALL, ids=[f"{k}={v!r}"[:30] for k, v, _ in _BALL])
def test_credible_ball(no_work, big, key, value, name):
    kwargs = {"estimate": big[0], key: value}
    _refused(lambda: salsox.credible_ball(draws=big, **kwargs), [name or key])


_CHIPS = [
    ("threshold", -0.5, None),
    ("threshold", 2.0, None),
    ("threshold", "0.1", None),
    ("n_runs", 0, None),
    ("path", "yes", None),
    ("all_candidates", "yes", None),
    ("n_jobs", 0, None),
    ("seed", -1, None),
    ("complete", "yes", None),
    ("complete", dict(n_runs=0), "n_runs"),
    ("loss", "VII", "VII"),
    ("max_clusters", 0, None),
    ("max_clusters", 1, None),
    ("memory_limit", 0, None),
]


@pytest.mark.parametrize("key, value, name", _CHIPS, ids=[f"{k}={v!r}"[:30] for k, v, _ in _CHIPS])
def test_chips(no_work, big, key, value, name):
    kwargs = {"threshold": 0.2, key: value}
    _refused(lambda: salsox.chips(big, **kwargs), [name or key])


_WASABI = [
    ("n_particles", 0, None),
    ("n_particles", "2", None),
    ("init", "bogus", None),
    ("n_starts", 0, None),
    ("max_iter", -1, None),
    ("eps", -1.0, None),
    ("mini_batch", 0, None),
    ("n_runs", 0, None),
    ("max_clusters", 0, None),
    ("n_jobs", 0, None),
    ("seed", -1, None),
    ("memory_limit", 0, None),
]


@pytest.mark.parametrize("key, value, name", _WASABI, ids=[f"{k}={v!r}" for k, v, _ in _WASABI])
def test_wasabi(no_work, big, key, value, name):
    kwargs = {"n_particles": 2, key: value}
    _refused(lambda: salsox.wasabi(big, **kwargs), [name or key])


_ELBOW = [
    ("max_particles", 0, None),
    ("max_particles", "3", None),
    ("n_starts", 0, None),
    ("bogus", 1, None),
]


@pytest.mark.parametrize("key, value, name", _ELBOW, ids=[f"{k}={v!r}" for k, v, _ in _ELBOW])
def test_wasabi_elbow(no_work, big, key, value, name):
    kwargs = {"max_particles": 3, key: value}
    _refused(lambda: salsox.wasabi_elbow(big, **kwargs), [name or key])


_TUNE = [
    ("loss", "VII", "VII"),
    ("n_clusters", 0, None),
    ("n_clusters", "3", None),
    ("param", "nope", None),
    ("bounds", (2.0, 1.0), None),
    ("b", -1.0, None),
    ("max_clusters", 0, None),
    ("rtol", -1.0, None),
    ("max_evaluations", 0, None),
    ("n_runs", 0, None),
    ("seed", -1, None),
    ("n_jobs", 0, None),
    ("bogus", 1, None),
    ("max_zealous", -1, None),
]


@pytest.mark.parametrize("key, value, name", _TUNE, ids=[f"{k}={v!r}" for k, v, _ in _TUNE])
def test_tune(no_work, big, key, value, name):
    kwargs = {"n_clusters": 4, key: value}
    _refused(lambda: salsox.tune(big, **kwargs), [name or key])


_DIAGNOSE = [
    ("loss", "VII", "VII"),
    ("distance", "nope", None),
    ("n_references", 0, None),
    ("n_runs", 0, None),
    ("rhat_threshold", 0.5, None),
    ("ess_threshold", -1.0, None),
    ("alpha", 2.0, None),
    ("n_permutations", 0, None),
    ("gap_draws", 0, None),
    ("ts", "yes", None),
    ("seed", -1, None),
    ("n_jobs", 0, None),
    ("memory_limit", 0, None),
]


@pytest.mark.parametrize("key, value, name", _DIAGNOSE, ids=[f"{k}={v!r}"[:30] for k, v, _ in _DIAGNOSE])
def test_diagnose(no_work, big, key, value, name):
    kwargs = {"chains": np.repeat([0, 1], H // 2), key: value}
    _refused(lambda: salsox.diagnose(big, **kwargs), [name or key])


@pytest.mark.parametrize(
    "key, value, name", [("loss", "VII", "VII"), ("chunk_size", 0, "chunk_size"), ("chunk_size", "8", "chunk_size")]
)
def test_minimize_by_enumeration(no_work, key, value, name):
    truth = np.tile(np.arange(8) % 3, (LARGE, 1))  # many draws of few items
    _refused(lambda: salsox.minimize_by_enumeration(truth, **{key: value}), [name])


@pytest.mark.parametrize(
    "weights, name",
    [(np.ones((2, H)), "weights"), (-np.ones(H), "weights"), ("x", "weights"), ([np.nan] * H, "weights")],
    ids=["2-D", "negative", "string", "nan"],
)
def test_evi_contributions(no_work, big, weights, name):
    _refused(lambda: salsox.evi_contributions(big[0], big, weights=weights), [name])


def test_read_draws_header(no_work, big, tmp_path, monkeypatch):
    path = tmp_path / "draws.csv"
    np.savetxt(path, big[:200], fmt="%d", delimiter=",")
    from salsox.io import files

    def refuse(*args, **kwargs):
        raise WorkStarted("the file was read before header was checked")

    monkeypatch.setattr(files, "read_matrix_named", refuse)
    _refused(lambda: salsox.read_draws(path, header="maybe"), ["header"])


# The command line: every subcommand refuses a bad option (exit status 2, the option named)
# before it reads the draws file, let alone works on the draws.
_CLI = [
    ("estimate", ["--loss", "VII"], "--loss"),
    ("estimate", ["--loss", "binder", "--param", "zzz=1"], "--param"),
    ("estimate", ["--a", "-1"], "--a"),
    ("estimate", ["--r-a", "1", "--a", "2"], "--r-a"),
    ("estimate", ["--max-clusters", "0"], "--max-clusters"),
    ("estimate", ["--runs", "0"], "--runs"),
    ("estimate", ["--max-zealous", "-1"], "--max-zealous"),
    ("estimate", ["--seconds", "-1"], "--seconds"),
    ("estimate", ["--seed", "-1"], "--seed"),
    ("estimate", ["--initializer", "nope"], "--initializer"),
    ("estimate", ["--prob-initializer", "0.5"], "--prob-initializer"),
    ("estimate", ["--initializer", "psm-hclust", "--prob-initializer", "2"], "--prob-initializer"),
    ("estimate", ["-j", "0"], "--jobs"),
    ("loss", ["--loss", "VII"], "--loss"),
    ("loss", ["-j", "0"], "--jobs"),
    ("psm", ["-j", "0"], "--jobs"),
    ("psm", ["--digits", "-1"], "--digits"),
    ("summary", ["--loss", "VII"], "--loss"),
    ("summary", ["--runs", "0"], "--runs"),
    ("summary", ["--initializer", "nope"], "--initializer"),
    ("summary", ["--plot", "out.nope"], "--plot"),
    ("summary", ["--dpi", "0"], "--dpi"),
    ("summary", ["--exemplar", "nope"], "--exemplar"),
    ("ball", ["--level", "1.5"], "--level"),
    ("ball", ["--level", "0"], "--level"),
    ("ball", ["--distance", "nope"], "--distance"),
    ("ball", ["--distance", "VI.lb"], "--distance"),
    ("ball", ["--loss", "VII"], "--loss"),
    ("ball", ["--plot", "out.nope"], "--plot"),
    ("ball", ["--seed", "-1"], "--seed"),
    ("credible-ball", ["--level", "2"], "--level"),
    ("tune", ["-k", "0"], "--clusters"),
    ("tune", ["-k", "3", "--loss", "VII"], "--loss"),
    ("tune", ["-k", "3", "--tune", "nope"], "--tune"),
    ("tune", ["-k", "3", "--bounds", "2", "1"], "--bounds"),
    ("tune", ["-k", "3", "--b", "-1"], "--b"),
    ("tune", ["-k", "3", "--max-clusters", "0"], "--max-clusters"),
    ("tune", ["-k", "3", "--runs", "0"], "--runs"),
    ("tune", ["-k", "3", "--seed", "-1"], "--seed"),
    ("chips", ["--threshold", "2"], "--threshold"),
    ("chips", ["--threshold", "0.2", "--loss", "VII"], "--loss"),
    ("chips", ["--threshold", "0.2", "--runs", "0"], "--runs"),
    ("chips", ["--plot", "out.nope"], "--plot"),
    ("wasabi", ["--particles", "0"], "--particles"),
    ("wasabi", ["--particles", "2", "--starts", "0"], "--starts"),
    ("wasabi", ["--particles", "2", "--max-iter", "-1"], "--max-iter"),
    ("wasabi", ["--particles", "2", "--eps", "-1"], "--eps"),
    ("wasabi", ["--particles", "2", "--mini-batch", "0"], "--mini-batch"),
    ("wasabi", ["--particles", "2", "--runs", "0"], "--runs"),
    ("wasabi", ["--particles", "2", "--plot", "out.nope"], "--plot"),
    ("diagnose", ["--loss", "VII"], "--loss"),
    ("diagnose", ["--distance", "nope"], "--distance"),
    ("diagnose", ["--references", "0"], "--references"),
    ("diagnose", ["--rhat", "0.5"], "--rhat"),
    ("diagnose", ["--ess", "-1"], "--ess"),
    ("diagnose", ["--alpha", "2"], "--alpha"),
    ("diagnose", ["--permutations", "0"], "--permutations"),
    ("diagnose", ["--gap-draws", "0"], "--gap-draws"),
    ("diagnose", ["--plot", "out.nope"], "--plot"),
]


@pytest.fixture(scope="module")
def big_file(big, tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "draws.npy"
    np.save(path, big.astype(np.int8))
    return str(path)


@pytest.mark.parametrize("command, options, option", _CLI, ids=[f"{c} {' '.join(o)}" for c, o, _ in _CLI])
def test_cli(no_work, big_file, monkeypatch, capsys, tmp_path, command, options, option):
    import salsox.io
    from salsox.cli import main

    def refuse(*args, **kwargs):
        raise WorkStarted("the draws file was read before the options were checked")

    monkeypatch.setattr(salsox.io, "read_draws", refuse)
    monkeypatch.chdir(tmp_path)
    extra = ["--chains", "2"] if command == "diagnose" else []
    first = []
    if command == "loss":  # loss LABELS DRAWS: the labels are read after the draws
        first = [str(tmp_path / "labels.txt")]
        np.savetxt(first[0], np.zeros(N, dtype=int), fmt="%d")
    status = main([command, *first, big_file, *options, *extra])
    err = capsys.readouterr().err
    assert status == 2, err
    assert option in err, err
