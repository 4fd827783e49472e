"""The item index (salsox/io/item_index.py) at every entry point: a named input shuffled,
reversed or subset-then-reordered gives the same answer to the bit, or is refused with a message
naming the argument; never read by position behind the user's back."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import salsox
from salsox.datasets import example_draws
from salsox.io.item_index import NamedLabels, align, check_item_names

pd = pytest.importorskip("pandas")

N_ITEMS, N_DRAWS = 14, 80
NAMES = [f"s{j:02d}" for j in range(N_ITEMS)]


@pytest.fixture(scope="module")
def frame():
    draws = np.asarray(example_draws().draws)[:N_DRAWS, :N_ITEMS]
    return pd.DataFrame(draws, columns=NAMES)


@pytest.fixture(scope="module")
def estimate(frame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", salsox.SalsoxWarning)
        return salsox.salso(frame, "VI", seed=1, n_runs=4, n_jobs=1)


def _orders(n, seed=0):
    """Shuffled and reversed item orders."""
    rng = np.random.default_rng(seed)
    return {"shuffled": rng.permutation(n), "reversed": np.arange(n)[::-1]}


def _reorder_series(series, order):
    return series.iloc[order]


# Each case: (argument, a function of a named input that answers, a named input).
def _cases(frame, estimate):
    series = estimate.to_series()
    fixed = pd.Series(-1, index=NAMES)
    fixed.iloc[[0, 1, 5]] = [0, 0, 1]
    partial = pd.Series(-1, index=NAMES)
    partial.iloc[[0, 1]] = [0, 0]
    two_rows = pd.DataFrame(np.stack([estimate.labels, np.arange(N_ITEMS) % 3]), columns=NAMES)
    quiet = dict(seed=3, n_jobs=1)
    return [
        ("estimate", lambda s: salsox.partition_loss(s, frame, "VI"), series),
        ("estimate", lambda s: salsox.partition_loss(s, frame, "binder"), two_rows),
        ("estimate", lambda s: salsox.partition_loss(s, series, "omARI"), series.rename(lambda v: v)),
        ("x", lambda s: salsox.RI(s, series), series),
        ("x", lambda s: salsox.ARI(s, frame), series),
        ("labels", lambda s: salsox.summarize(s, frame).item_similarity, series),
        ("estimate", lambda s: salsox.credible_ball(s, frame, "VI").distances, series),
        ("fixed", lambda s: salsox.salso(frame, "VI", n_runs=3, fixed=s, **quiet).labels, fixed),
        ("initial", lambda s: salsox.salso(frame, "VI", n_runs=3, initial=s, **quiet).labels, two_rows),
        ("candidates", lambda s: salsox.dlso(frame, "VI", candidates=s).labels, two_rows),
        ("initial", lambda s: salsox.chips(frame, 0.5, initial=s, complete=False, **quiet).labels, partial),
        ("init", lambda s: salsox.wasabi(frame, 2, init=s, n_starts=1, **quiet).particles, two_rows),
        ("y", lambda s: salsox.vi_contributions(series, s), series),
        ("estimate", lambda s: salsox.evi_contributions(s, frame), series),
    ]


def _same(a, b):
    """Equal to the bit (NaN where the other has NaN)."""
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def _permuted(named, order):
    if isinstance(named, pd.Series):
        return named.iloc[order]
    return named.iloc[:, order]


def _subset(named):
    return named.iloc[1:][::-1] if isinstance(named, pd.Series) else named.iloc[:, 1:][named.columns[1:][::-1]]


CASE_IDS = ["partition_loss-series", "partition_loss-rows", "partition_loss-two-series", "RI", "ARI", "summarize",
            "credible_ball", "salso-fixed", "salso-initial", "dlso-candidates", "chips-initial", "wasabi-init",
            "vi_contributions", "evi_contributions"]


@pytest.mark.parametrize("case", range(len(CASE_IDS)), ids=CASE_IDS)
def test_every_entry_point_matches_its_named_input_by_name(frame, estimate, case):
    argument, answer, named = _cases(frame, estimate)[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error", salsox.PositionalMatchWarning)
        warnings.simplefilter("ignore", salsox.SalsoxWarning)
        expected = np.asarray(answer(named))
        for how, order in _orders(N_ITEMS).items():
            got = np.asarray(answer(_permuted(named, order)))
            assert _same(got, expected), (argument, how)
        with pytest.raises(ValueError, match=f"^{argument} does not name the same items"):
            answer(_subset(named))


def test_the_cases_cover_every_entry_point(frame, estimate):
    assert len(_cases(frame, estimate)) == len(CASE_IDS)


def test_the_draws_columns_in_any_order_give_the_same_answer(frame, estimate):
    series = estimate.to_series()
    expected_loss = salsox.partition_loss(series, frame, "VI")
    expected_sim = pd.Series(salsox.summarize(series, frame).item_similarity, index=NAMES)
    for how, order in _orders(N_ITEMS, seed=1).items():
        moved = frame.iloc[:, order]
        assert salsox.partition_loss(series, moved, "VI") == pytest.approx(expected_loss, rel=1e-13, abs=0), how
        assert salsox.partition_loss(estimate, moved, "VI") == pytest.approx(expected_loss, rel=1e-13, abs=0), how
        s = salsox.summarize(estimate, moved)
        got = pd.Series(s.item_similarity, index=s.item_names)
        assert np.allclose(got[NAMES].to_numpy(), expected_sim.to_numpy(), rtol=1e-13, atol=0, equal_nan=True), how


def test_diagnose_matches_chains_whose_columns_come_in_different_orders(frame):
    chains = [frame.iloc[20 * k : 20 * (k + 1)].reset_index(drop=True) for k in range(4)]
    expected = salsox.diagnose(chains, seed=1, n_references=3)
    rng = np.random.default_rng(5)
    moved = [c if k == 0 else c.iloc[:, rng.permutation(N_ITEMS)] for k, c in enumerate(chains)]
    got = salsox.diagnose(moved, seed=1, n_references=3)
    assert np.array_equal(got.rhat, expected.rhat, equal_nan=True)
    assert list(got.item_names) == NAMES and got.to_series().index.tolist() == NAMES
    frame_out = got.to_dataframe()
    assert frame_out.index.tolist() == NAMES and frame_out.shape == (N_ITEMS, 4)
    renamed = [c.rename(columns={"s03": "other"}) if k == 2 else c for k, c in enumerate(chains)]
    with pytest.raises(ValueError, match=r"^draws\[2\] does not name the same items"):
        salsox.diagnose(renamed, seed=1, n_references=3)


def test_diagnose_refuses_chain_ids_that_mix_text_and_numbers(frame):
    ids = [0] * 20 + ["0"] * 20 + [1] * 20 + ["1"] * 20
    with pytest.raises(ValueError, match="chains mixes text and numbers"):
        salsox.diagnose(frame.to_numpy(), chains=ids)


def test_a_psm_frame_whose_rows_were_reordered_is_read_by_name(frame, estimate):
    p = pd.DataFrame(salsox.psm(frame), index=NAMES, columns=NAMES)
    expected = salsox.partition_loss(estimate, salsox.PSM(p), "binder")
    for order in _orders(N_ITEMS).values():
        assert salsox.partition_loss(estimate, salsox.PSM(p.iloc[order]), "binder") == expected
        assert salsox.partition_loss(estimate, salsox.PSM(p.iloc[order, order]), "binder") == pytest.approx(
            expected, rel=1e-13, abs=0)
    with pytest.raises(ValueError, match="psm's rows"):
        salsox.PSM(p.rename(index={"s01": "zz"}))


def test_one_named_side_is_matched_by_position_with_a_warning(frame, estimate):
    with pytest.warns(salsox.PositionalMatchWarning, match="^estimate has no item names"):
        bare = salsox.partition_loss(estimate.labels, frame, "VI")
    assert bare == estimate.expected_loss
    unnamed = frame.to_numpy()
    with pytest.warns(salsox.PositionalMatchWarning, match="^only fixed names its items"):
        salsox.salso(unnamed, fixed=pd.Series(-1, index=NAMES), n_runs=2, seed=1, n_jobs=1)
    # The ids 0..n-1 of unnamed items, in any order: matched by them, silently.
    series = salsox.salso(unnamed, seed=1, n_runs=4, n_jobs=1).to_series()
    with warnings.catch_warnings():
        warnings.simplefilter("error", salsox.PositionalMatchWarning)
        assert salsox.partition_loss(series.sort_values(), unnamed) == salsox.partition_loss(series, unnamed)
    with pytest.raises(ValueError, match="^estimate has 13 items, not the 14 of truth"):
        salsox.partition_loss(series.iloc[1:], unnamed)


def test_ids_are_compared_as_given():
    draws = salsox.Draws([[0, 0, 1], [0, 1, 1]], item_names=[0, 1, 2])
    with pytest.raises(ValueError, match="agree as text"):
        salsox.partition_loss(pd.Series([0, 0, 1], index=["0", "1", "2"]), draws)
    with pytest.raises(ValueError, match="mixes text and numbers"):
        salsox.Draws([[0, 0, 1]], item_names=[0, "1", 2])
    assert salsox.partition_loss(pd.Series([1, 0, 0], index=[2, 0, 1]), draws) == salsox.partition_loss(
        [0, 0, 1], draws)


@pytest.mark.parametrize(
    "make",
    [
        lambda: salsox.Draws(pd.DataFrame([[0, 1, 1]], columns=["a", "a", "b"])),
        lambda: salsox.Draws([[0, 1, 1]], item_names=["a", "b", "a"]),
        lambda: salsox.partition_loss(pd.Series([0, 0, 1], index=["a", "a", "b"]), [[0, 1, 1]]),
        lambda: salsox.PSM(pd.DataFrame(np.eye(2), index=["a", "a"], columns=["a", "b"])),
    ],
)
def test_duplicate_names_are_refused_where_read(make):
    with pytest.raises(ValueError, match="twice"):
        make()


def test_align_and_check_item_names_directly():
    target = check_item_names(["a", "b", "c"], 3)
    assert align(target, 3, check_item_names(["c", "a", "b"], 3), 3, "x").tolist() == [1, 2, 0]
    assert align(target, 3, target, 3, "x") is None
    assert NamedLabels([1, 2], ["p", "q"]).item_names.tolist() == ["p", "q"]


def test_results_name_their_items(frame, estimate):
    ball = salsox.credible_ball(estimate, frame)
    for result in (estimate, estimate.summary(), ball):
        assert list(result.item_names) == NAMES
        series = result.to_series()
        assert series.index.tolist() == NAMES


# Public functions and the item-indexed parameters they take: each is exercised above (or, for
# the plots, in test_plot_data.py). A new entry point with such a parameter must be added here.
ITEM_INDEXED = {
    "partition_loss": {"estimate", "truth"},
    "RI": {"x", "y"},
    "ARI": {"x", "y"},
    "summarize": {"labels", "draws"},
    "credible_ball": {"estimate", "draws"},
    "salso": {"draws", "fixed", "initial"},
    "dlso": {"draws", "candidates"},
    "chips": {"draws", "initial"},
    "wasabi": {"draws", "init"},
    "vi_contributions": {"x", "y"},
    "evi_contributions": {"estimate", "draws"},
    "diagnose": {"draws", "chains"},
}
ONE_INPUT = {  # item-indexed parameters of functions that take no second item-indexed input
    "psm": {"draws"}, "tune": {"draws"}, "wasabi_elbow": {"draws"}, "canonicalize_labels": {"labels"},
    "minimize_by_enumeration": {"truth"}, "from_xarray": {"data"},
}
_ITEM_PARAMETERS = {"estimate", "truth", "labels", "draws", "x", "y", "fixed", "initial", "init", "candidates",
                    "data", "chains", "partition", "psm"}


def test_every_public_entry_point_with_an_item_indexed_argument_is_covered():
    uncovered = []
    for name in salsox.__all__:
        obj = getattr(salsox, name)
        if not callable(obj) or inspect.isclass(obj):
            continue
        try:
            params = set(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            continue
        item_params = params & _ITEM_PARAMETERS
        known = ITEM_INDEXED.get(name, ONE_INPUT.get(name))
        if item_params and (known is None or not item_params <= known):
            uncovered.append(f"{name}({', '.join(sorted(item_params))})")
    for name in salsox.plots.__all__:
        params = set(inspect.signature(getattr(salsox.plots, name)).parameters)
        if params & {"data", "draws"} and name not in PLOTS_COVERED:
            uncovered.append(f"plots.{name}")
    assert not uncovered, "entry points taking item-indexed arguments without an item-index test: " + ", ".join(
        uncovered)


# Plots whose data/draws rows are matched by name (tests/test_plot_data.py; heatmap, MDS and the
# dendrogram take their labels through summarize).
PLOTS_COVERED = {"plot_pairs", "plot_credible_ball", "plot_chips", "plot_wasabi", "plot_heatmap", "plot_mds",
                 "plot_dendrogram"}


def test_no_positional_warning_from_salsox_own_calls_on_named_draws(frame, estimate):
    """Functions that call others inside salsox pass labels they already matched: a user who
    names every input sees no PositionalMatchWarning."""
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    small = frame.iloc[:40, :8]
    quick = dict(seed=1, n_jobs=1)
    calls = [
        lambda: salsox.wasabi(small, 2, n_starts=1, **quick),
        lambda: salsox.wasabi(small, 2, init="topvi", **quick),
        lambda: salsox.minimize_by_enumeration(small.iloc[:, :6]),
        lambda: salsox.tune(small, "binder", 2, n_runs=2, **quick),
        lambda: salsox.chips(small, 0.5, n_runs=4, **quick),
        lambda: salsox.chips(small, n_runs=4, **quick).threshold(0.5),
        lambda: salsox.credible_ball(estimate, frame),
        lambda: estimate.summary(),
        lambda: salsox.diagnose([small.iloc[10 * k : 10 * (k + 1)] for k in range(4)], n_references=2, **quick),
        lambda: salsox.plots.plot_dendrogram(estimate, frame, kind="loss"),
        lambda: salsox.plots.plot_credible_ball(salsox.credible_ball(estimate, frame), draws=frame),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", salsox.PositionalMatchWarning)
        warnings.simplefilter("ignore", salsox.SalsoxWarning)
        for call in calls:
            call()
            plt.close("all")
