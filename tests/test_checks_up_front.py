"""chips, wasabi and credible_ball check every argument before any work: the engine is never
called when an argument is bad."""

import numpy as np
import pytest

import salsox
from salsox import _core
from salsox.plugins import DecomposableLoss


def _draws(H=60, n=12, seed=0):
    rng = np.random.default_rng(seed)
    truth = np.repeat(np.arange(3), n // 3)
    out = np.tile(truth, (H, 1))
    flip = rng.random((H, n)) < 0.2
    out[flip] = rng.integers(0, 4, size=flip.sum())
    return out


@pytest.fixture
def no_engine(monkeypatch):
    """Every engine entry point that does the work of chips, wasabi and credible_ball fails."""
    def refuse(*args, **kwargs):
        raise AssertionError("the engine was called before the arguments were checked")

    for name in ("chips", "salso_counts", "expected_losses", "countsum_losses", "callback_losses"):
        monkeypatch.setattr(_core, name, refuse)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(loss="VII"), ValueError, "unknown loss 'VII'"),
        (dict(max_clusters=0), ValueError, "max_clusters=0: .*pass None"),
        (dict(max_clusters="2"), TypeError, "max_clusters must be an integer"),
        (dict(complete=dict(n_runs=-1)), ValueError, "complete.*n_runs must be >= 1"),
        (dict(complete=dict(bogus=1)), TypeError, "complete has 'bogus'"),
        (dict(complete=dict(engine="nope")), ValueError, "engine"),
        (dict(complete=dict(initializer="psm-hclust")), ValueError, "fixed cannot be combined with initializer"),
        (dict(complete=dict(memory_limit=0)), ValueError, "memory_limit must be >= 1"),
        (dict(initial=[0, 0, 1, 1, 2, 2, -1, -1, -1, -1, -1, -1], max_clusters=2), ValueError,
         "max_clusters=2 is below the 3 clusters of initial"),
        (dict(max_clusters=1), ValueError, "max_clusters=1 leaves the completion a single answer"),
    ],
)
def test_chips_checks_before_its_runs(no_engine, kwargs, error, match):
    with pytest.raises(error, match=match):
        salsox.chips(_draws(), 0.3, n_runs=8, seed=1, **kwargs)


def test_chips_max_clusters_below_its_clusters_speaks_of_chips():
    draws = _draws()
    res = salsox.chips(draws, 0.3, n_runs=8, seed=1, complete=False)
    k = int(res.labels.max()) + 1
    assert k >= 3
    with pytest.raises(ValueError, match=f"below the {k} clusters of the CHIPS sub-partition") as err:
        salsox.chips(draws, 0.3, n_runs=8, seed=1, max_clusters=k - 1)
    assert "fixed" not in str(err.value)


def test_chips_max_clusters_of_one_is_refused_before_a_large_run(no_engine):
    # The case: on a large input the runs took 22 s before max_clusters=1 was refused.
    # no_engine makes any engine call fail, so the refusal comes before the runs, whatever the size.
    draws = _draws(H=4000, n=3000)
    with pytest.raises(ValueError, match="max_clusters=1 leaves the completion"):
        salsox.chips(draws, 0.2, max_clusters=1)
    # Without a completion the cap is unused: the runs go ahead (here into no_engine's refusal).
    with pytest.raises(AssertionError, match="engine was called"):
        salsox.chips(draws, 0.2, max_clusters=1, complete=False)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(n_particles=0), ValueError, "n_particles"),
        (dict(init="bogus"), ValueError, "init must be"),
        (dict(eps=-1.0), ValueError, "eps"),
        (dict(mini_batch=0), ValueError, "mini_batch"),
        (dict(n_runs=0), ValueError, "n_runs"),
        (dict(max_clusters=0), ValueError, "max_clusters"),
        (dict(n_jobs=0), ValueError, "n_jobs"),
        (dict(seed=-1), ValueError, "seed"),
        (dict(n_particles=10**6), ValueError, "distinct partitions"),
    ],
)
def test_wasabi_checks_before_any_start(no_engine, monkeypatch, kwargs, error, match):
    from salsox.uncertainty.wasabi import api

    def refuse(*args, **kwargs):
        raise AssertionError("a start ran before the arguments were checked")

    monkeypatch.setattr(api, "run_start", refuse)
    args = dict(dict(n_particles=2, seed=1), **kwargs)
    with pytest.raises(error, match=match):
        salsox.wasabi(_draws(), **args)


class _Asymmetric(DecomposableLoss):
    name = "asymmetric-binder"

    def draw_term(self, counts, n):
        return 2.0 * (counts / n) ** 2

    def estimate_term(self, counts, n):
        return (counts / n) ** 2

    def cell_term(self, counts, n):
        return -3.0 * (counts / n) ** 2


def test_credible_ball_refuses_an_asymmetric_loss_before_the_distances(monkeypatch):
    draws = _draws(H=400)
    calls = []
    real = salsox.metrics.evaluation.partition_loss

    def spy(estimate, truth, loss="VI", **kwargs):
        calls.append(np.atleast_2d(np.asarray(estimate)).shape[0])
        return real(estimate, truth, loss, **kwargs)

    monkeypatch.setattr("salsox.uncertainty.credible_ball.partition_loss", spy)
    with pytest.raises(ValueError, match="is not symmetric"):
        salsox.credible_ball(draws[0], draws, _Asymmetric())
    assert calls and max(calls) == 1  # never the call scoring all 400 draws


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(loss="VI.lb"), ValueError, "computed from a PSM"),
        (dict(loss="VII"), ValueError, "unknown loss"),
        (dict(level=0.0), ValueError, "level"),
        (dict(n_jobs=0), ValueError, "n_jobs"),
    ],
)
def test_credible_ball_checks_before_any_work(no_engine, kwargs, error, match):
    draws = _draws()
    with pytest.raises(error, match=match):
        salsox.credible_ball(draws[0], draws, **kwargs)
