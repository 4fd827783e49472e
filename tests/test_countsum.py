"""Count-sum losses (salsox.plugins.CountSumLoss): formula compilation and its errors, agreement
with the built-in losses written as count sums, Jaccard and Fowlkes-Mallows against numpy brute
force, the zero-at-equality and negative-loss checks, registration, and n_jobs independence."""

from __future__ import annotations

import numpy as np
import pytest

import salsox
from salsox import plugins
from salsox.plugins import CountSumLoss, PluginError
from conftest import load_draws


def pairs(c: np.ndarray, n: int) -> np.ndarray:
    c = np.asarray(c, dtype=np.float64)
    return c * (c - 1) / 2


def xlog2x(c: np.ndarray, n: int) -> np.ndarray:
    c = np.asarray(c, dtype=np.float64)
    out = np.zeros_like(c)
    np.multiply(c, np.log2(c, where=c > 0, out=np.ones_like(c)), out=out, where=c > 0)
    return out


def square(c: np.ndarray, n: int) -> np.ndarray:
    c = np.asarray(c, dtype=np.float64)
    return c * c


PAIRS = {"X": ("cell", pairs), "B": ("estimate", pairs), "A": ("draw", pairs)}
ENTROPY = {"J": ("cell", xlog2x), "E": ("estimate", xlog2x), "D": ("draw", xlog2x)}
# Entropies in bits from sums of x log2 x, clamped at 0 as the built-ins do.
HD, HE, HJ = "max(0, log2(n) - D / n)", "max(0, log2(n) - E / n)", "max(0, log2(n) - J / n)"
TINY = "1e-12 * max(1, log2(n))"
N2 = "(n * (n - 1) / 2)"

JACCARD = CountSumLoss("jaccard-cs", PAIRS, "where(A + B - X == 0, 0, 1 - X / (A + B - X))")
FOWLKES = CountSumLoss("fm-cs", PAIRS, "where(A * B == 0, where(A + B == 0, 0, 1), 1 - X / sqrt(A * B))")

BUILTIN_TWINS = {
    "omARI": CountSumLoss(
        "omari-cs",
        PAIRS,
        f"where({N2} <= 0, 0, where(0.5 * (A + B) - A * (B / {N2}) == 0, 0, "
        f"max(0, 1 - (X - A * (B / {N2})) / (0.5 * (A + B) - A * (B / {N2})))))",
    ),
    "NVI": CountSumLoss("nvi-cs", ENTROPY, f"where({HJ} <= {TINY}, 0, max(0, 1 - ({HD} + {HE} - {HJ}) / {HJ}))"),
    "NID": CountSumLoss(
        "nid-cs",
        ENTROPY,
        f"where(max({HD}, {HE}) <= {TINY}, 0, max(0, 1 - ({HD} + {HE} - {HJ}) / max({HD}, {HE})))",
    ),
    "VI": CountSumLoss("vi-cs", ENTROPY, "(a * (D - J) + b * (E - J)) / n", params={"a": 1.0, "b": 1.0}),
    "binder": CountSumLoss(
        "binder-cs",
        {"J": ("cell", square), "E": ("estimate", square), "D": ("draw", square)},
        "(a * (D - J) + b * (E - J)) / (n * n)",
        params={"a": 1.0, "b": 1.0},
    ),
}


@pytest.fixture(scope="module")
def iris() -> salsox.Draws:
    return salsox.Draws(load_draws("iris"))


@pytest.fixture(scope="module")
def galaxy() -> salsox.Draws:
    return salsox.Draws(load_draws("galaxy")[:1000])


def random_estimates(n: int, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, k, size=n) for k in rng.integers(1, 8, size=count)])


# ---------------------------------------------------------------------------------------------
# Formula compilation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "formula, column, message",
    [
        ("1 - X / Q", 9, "unknown name 'Q'"),
        ("1 - X / (A + ", 9, "syntax error ('(' was never closed)"),
        ("X + * 2", 5, "syntax error"),
        ("1 - tanh(X)", 5, "unsupported function 'tanh'"),
        ("1 - np.log(X)", 5, "only the functions"),
        ("X.real + 1", 1, "unsupported syntax (Attribute)"),
        ("A[0]", 1, "unsupported syntax (Subscript)"),
        ("(lambda: 1)()", 1, "only the functions"),
        ("__import__('os')", 1, "unsupported function '__import__'"),
        ("X + 'a'", 5, "unsupported constant 'a'"),
        ("sqrt(X, A)", 1, "sqrt() takes 1 arguments, got 2"),
        ("where(X > 0, 1)", 1, "where() takes 3 arguments, got 2"),
        ("max(X, key=A)", 1, "takes no keyword arguments"),
        ("X // A", 1, "unsupported operator FloorDiv"),
        ("X in A", 1, "unsupported comparison In"),
        ("sqrt + 1", 1, "function 'sqrt' must be called"),
    ],
)
def test_formula_errors_name_the_loss_and_the_place(formula, column, message):
    with pytest.raises(ValueError) as info:
        CountSumLoss("my-loss", PAIRS, formula)
    text = str(info.value)
    assert "loss 'my-loss'" in text
    assert message in text
    assert f"column {column} of the formula" in text
    # The caret sits under the place.
    assert text.splitlines()[-1] == "    " + " " * (column - 1) + "^"


def test_formula_is_never_evaluated_by_python(monkeypatch):
    import builtins

    def no_eval(*args, **kwargs):  # pragma: no cover - called only if the compiler used eval
        raise AssertionError("eval called")

    monkeypatch.setattr(builtins, "eval", no_eval)
    monkeypatch.setattr(builtins, "exec", no_eval)
    loss = CountSumLoss("j", PAIRS, "where(A + B - X == 0, 0, 1 - X / (A + B - X))")
    assert loss.formula.startswith("where")


def test_formula_features_agree_with_python_semantics():
    # One draw, one estimate: the per-draw loss is the formula of the sums, so formulas in the
    # sums can be checked against Python's own arithmetic.
    draw = np.array([[0, 0, 1, 1, 1, 2]])
    est = np.array([0, 0, 0, 1, 1, 2])
    n = 6
    t = np.zeros((3, 3), dtype=np.int64)
    np.add.at(t, (draw[0], est), 1)
    X = float(pairs(t, n).sum())
    A = float(pairs(t.sum(axis=1), n).sum())
    B = float(pairs(t.sum(axis=0), n).sum())
    cases = {
        "A ** 3 - B ** 2 + X * 2 - 7 / 2 + c": A**3 - B**2 + X * 2 - 7 / 2 + 0.25,
        "abs(-A) + sqrt(B) + log(A) + log2(B) + exp(-X)": abs(-A) + np.sqrt(B) + np.log(A) + np.log2(B) + np.exp(-X),
        "min(A, B, X) + max(A, B, X) + n": min(A, B, X) + max(A, B, X) + n,
        "(X < A < B) + (A <= B) * 10 + (A != B) * 100 + (A == B) * 1000 + (B >= A) * 1e4 + (B > A) * 1e5":
            (X < A < B) + (A <= B) * 10 + (A != B) * 100 + (A == B) * 1000 + (B >= A) * 1e4 + (B > A) * 1e5,
        "(A if X > 1 else B) + where(X > 100, 1, 2) + (not X) + (X and 0) + (0 or B)":
            (A if X > 1 else B) + 2 + 0 + 0 + 1,
        "+A - -B": A + B,
    }
    for formula, expected in cases.items():
        # The formulas are not losses (not zero at equality); evaluate the compiled form directly.
        loss = CountSumLoss("f", PAIRS, formula, params={"c": 0.25})
        compiled = salsox._core.CountSumLoss("f", n, [pairs(np.arange(n + 1), n).tolist()],
                                             [pairs(np.arange(n + 1), n).tolist()],
                                             [pairs(np.arange(n + 1), n).tolist()], loss._nodes, loss._result)
        assert compiled.evaluate(float(n), [X], [B], [A]) == pytest.approx(expected, rel=1e-15), formula


def test_identical_subexpressions_are_compiled_once():
    loss = CountSumLoss("j", PAIRS, "where(A + B - X == 0, 0, 1 - X / (A + B - X))")
    ops = [node[0] for node in loss._nodes]
    assert ops.count("add") == 1 and ops.count("sub") == 2  # A + B - X once; 1 - ...


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(sums={"X": ("cells", pairs)}), ValueError, "where='cells'"),
        (dict(sums={"X": ("cell", 3)}), TypeError, "must be callable"),
        (dict(sums={"n": ("cell", pairs)}), ValueError, "reserved"),
        (dict(sums={"X": ("cell", "nope")}), ValueError, "not a method"),
        (dict(sums={}), ValueError, "non-empty dict"),
        (dict(sums={"X": ("cell", pairs)}, params={"a": float("nan")}), ValueError, "finite"),
        (dict(sums={"X": ("cell", pairs)}, params={"a": "x"}), TypeError, "must be a number"),
        (dict(sums={"X": ("cell", pairs)}, formula=""), ValueError, "non-empty string"),
    ],
)
def test_bad_definitions_are_refused_at_construction(kwargs, error, message):
    args = dict(name="bad", sums=PAIRS, formula="X")
    args.update(kwargs)
    with pytest.raises(error, match=message):
        CountSumLoss(**args)


def test_bad_sum_functions_raise_plugin_errors_naming_the_loss(galaxy):
    cases = [
        (lambda c, n: c + 1, "must be 0 at count 0"),
        (lambda c, n: np.ones(3), "returned shape"),
        (lambda c, n: np.full(c.shape, np.inf), "NaN or infinite"),
        (lambda c, n: 1 / 0, "raised ZeroDivisionError"),
    ]
    for g, message in cases:
        loss = CountSumLoss("badg", {"X": ("cell", g), "B": ("estimate", pairs), "A": ("draw", pairs)}, "A + B - 2 * X")
        with pytest.raises(PluginError, match=message) as info:
            salsox.partition_loss(np.zeros(galaxy.n_items, dtype=int), galaxy, loss)
        assert "'badg'" in str(info.value)


# ---------------------------------------------------------------------------------------------
# Built-in losses as count sums
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("builtin", sorted(BUILTIN_TWINS))
@pytest.mark.parametrize("data", ["iris", "galaxy"])
def test_builtins_as_count_sums_give_the_same_expected_losses(builtin, data, iris, galaxy):
    draws = iris if data == "iris" else galaxy
    est = random_estimates(draws.n_items, 12, seed=5)
    est = np.vstack([est, np.zeros(draws.n_items, dtype=int), np.arange(draws.n_items), draws.draw(0)])
    twin = salsox.partition_loss(est, draws, BUILTIN_TWINS[builtin], n_jobs=2)
    ref = salsox.partition_loss(est, draws, builtin, n_jobs=2)
    np.testing.assert_allclose(twin, ref, rtol=1e-12, atol=1e-15)


def test_costs_as_parameters_match_the_builtin_costs(galaxy):
    est = random_estimates(galaxy.n_items, 6, seed=2)
    vi = CountSumLoss("vi-costs", ENTROPY, "(a * (D - J) + b * (E - J)) / n", params={"a": 0.4, "b": 1.6})
    np.testing.assert_allclose(salsox.partition_loss(est, galaxy, vi),
                               salsox.partition_loss(est, galaxy, salsox.VI(a=0.4, b=1.6)), rtol=1e-12)
    # Keyword overrides of a parameter.
    assert vi.params == {"a": 0.4, "b": 1.6}
    assert type(vi)("vi2", ENTROPY, vi.formula, params=vi.params, a=1.0).params == {"a": 1.0, "b": 1.6}
    with pytest.raises(ValueError, match="unknown parameter"):
        CountSumLoss("x", ENTROPY, "D", params={"a": 1.0}, c=2.0)


@pytest.mark.parametrize("builtin", ["omARI", "NVI", "VI", "NID"])
def test_builtins_as_count_sums_find_the_same_estimates(builtin, galaxy):
    twin = salsox.salso(galaxy, BUILTIN_TWINS[builtin], n_runs=4, seed=11, n_jobs=1)
    ref = salsox.salso(galaxy, builtin, n_runs=4, seed=11, n_jobs=1)
    assert twin.expected_loss == pytest.approx(ref.expected_loss, rel=1e-12)
    # Rounding differs between the two scorings, so near-ties may break differently; on these
    # data there are none.
    np.testing.assert_array_equal(twin.labels, ref.labels)
    assert twin.info["engine"] == "counts"


def test_search_result_is_a_local_optimum_and_its_loss_is_the_evaluated_one(galaxy):
    est = salsox.salso(galaxy, JACCARD, n_runs=2, seed=4, n_jobs=1)
    assert est.expected_loss == salsox.partition_loss(est.labels, galaxy, JACCARD)
    # No single item moves to another cluster (or a new one) to a lower expected loss.
    labels = est.labels
    k = est.n_clusters
    moved = []
    for i in range(galaxy.n_items):
        for c in range(k + 1):
            if c != labels[i]:
                row = labels.copy()
                row[i] = c
                moved.append(row)
    values = salsox.partition_loss(np.array(moved), galaxy, JACCARD)
    assert values.min() >= est.expected_loss - 1e-12


def test_several_cell_and_draw_sums_search_to_a_local_optimum(galaxy):
    # Two sums of each kind (Binder's squares and VI's x log2 x): the running sums that add and
    # remove keep go through the general path, not the one-sum-of-each-kind one.
    sums = {**{k + "2": (w, square) for k, (w, _) in ENTROPY.items()}, **ENTROPY}
    combo = CountSumLoss("binder-plus-vi", sums, "(D2 - J2 + E2 - J2) / (n * n) + (D - J + E - J) / n")
    est = random_estimates(galaxy.n_items, 4, seed=8)
    np.testing.assert_allclose(salsox.partition_loss(est, galaxy, combo),
                               salsox.partition_loss(est, galaxy, "binder") + salsox.partition_loss(est, galaxy, "VI"),
                               rtol=1e-12)
    found = salsox.salso(galaxy, combo, n_runs=2, seed=6, n_jobs=1)
    assert found.expected_loss == salsox.partition_loss(found.labels, galaxy, combo)
    labels, k = found.labels, found.n_clusters
    moved = [np.where(np.arange(galaxy.n_items) == i, c, labels) for i in range(galaxy.n_items)
             for c in range(k + 1) if c != labels[i]]
    assert salsox.partition_loss(np.array(moved), galaxy, combo).min() >= found.expected_loss - 1e-12
    again = salsox.salso(galaxy, combo, n_runs=2, seed=6, n_jobs=2)
    np.testing.assert_array_equal(again.labels, labels)


# ---------------------------------------------------------------------------------------------
# Jaccard and Fowlkes-Mallows against numpy brute force
# ---------------------------------------------------------------------------------------------


def brute_force(est: np.ndarray, draws: np.ndarray, which: str) -> float:
    values = []
    for draw in draws:
        t = np.zeros((draw.max() + 1, est.max() + 1), dtype=np.int64)
        np.add.at(t, (draw, est), 1)
        X = (t * (t - 1) // 2).sum()
        A = (t.sum(axis=1) * (t.sum(axis=1) - 1) // 2).sum()
        B = (t.sum(axis=0) * (t.sum(axis=0) - 1) // 2).sum()
        if which == "jaccard":
            values.append(0.0 if A + B - X == 0 else 1 - X / (A + B - X))
        elif A * B == 0:
            values.append(0.0 if A + B == 0 else 1.0)
        else:
            values.append(1 - X / np.sqrt(A * B))
    return float(np.mean(values))


@pytest.mark.parametrize("which", ["jaccard", "fowlkes-mallows"])
def test_jaccard_and_fowlkes_mallows_match_numpy_brute_force(which, galaxy):
    raw = load_draws("galaxy")[:300]
    draws = salsox.Draws(raw)
    loss = JACCARD if which == "jaccard" else FOWLKES
    est = random_estimates(draws.n_items, 5, seed=8)
    found = salsox.salso(draws, loss, n_runs=2, seed=1, n_jobs=1)
    est = np.vstack([est, found.labels, raw[3]])
    got = salsox.partition_loss(est, draws, loss)
    want = [brute_force(row, np.asarray(raw), which) for row in est]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert found.expected_loss == pytest.approx(brute_force(found.labels, np.asarray(raw), which), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# A loss must be >= 0 and 0 at equality
# ---------------------------------------------------------------------------------------------

# Zero at equality and at both extreme pairs of partitions, negative whenever neither partition
# refines the other: the spot checks cannot see it, the search exploits it.
SNEAKY = CountSumLoss("sneaky", PAIRS, "-(A - X) * (B - X) / (n * n * n * n)")


def test_negative_loss_after_a_search_names_the_plugin_and_shows_the_table(galaxy, ):
    with pytest.raises(PluginError) as info:
        salsox.salso(galaxy, SNEAKY, n_runs=2, seed=0, n_jobs=1)
    text = str(info.value)
    assert "'sneaky'" in text and "negative loss" in text
    assert "estimate cluster sizes" in text and "draw cluster sizes" in text and "cells" in text


def test_negative_loss_in_partition_loss_shows_the_offending_table():
    draws = np.array([[0, 0, 1, 1], [0, 0, 0, 0]])
    est = np.array([0, 1, 0, 1])  # crosses draw 0: neither refines the other
    with pytest.raises(PluginError) as info:
        salsox.partition_loss(est, draws, SNEAKY)
    text = str(info.value)
    assert "against draw 0" in text
    assert "estimate cluster sizes [2 2], draw cluster sizes [2 2]" in text
    assert "[[1 1]\n [1 1]]" in text
    # A registered loss is named with its plugin.
    name = plugins.register(SNEAKY)
    try:
        with pytest.raises(PluginError, match=r"loss plugin 'sneaky' \(plugin 'loss:sneaky'\)"):
            salsox.partition_loss(est, draws, "sneaky")
    finally:
        plugins.unregister(name=name)


def test_a_loss_not_zero_at_equality_is_refused(galaxy):
    loss = CountSumLoss("offset", PAIRS, "1 - X / (A + B)")
    with pytest.raises(PluginError, match="equal to the draw is .*not 0"):
        salsox.salso(galaxy, loss, n_runs=1, seed=0)
    negative = CountSumLoss("negative", PAIRS, "(B - A) / n")
    with pytest.raises(PluginError, match="negative loss"):
        salsox.partition_loss(np.zeros(galaxy.n_items, dtype=int), galaxy, negative)


# ---------------------------------------------------------------------------------------------
# Registration, threads
# ---------------------------------------------------------------------------------------------


class Wallace(CountSumLoss):
    """One minus the Wallace index of the estimate, a subclass with class attributes."""

    name = "wallace-test"
    sums = {"X": ("cell", pairs), "B": ("estimate", "estimate_pairs")}
    formula = "where(B == 0, 0, w * (1 - X / B))"
    default_params = {"w": 1.0}

    def estimate_pairs(self, c: np.ndarray, n: int) -> np.ndarray:
        return pairs(c, n)


def test_count_sum_losses_register_and_are_found_by_name(galaxy):
    est = random_estimates(galaxy.n_items, 3, seed=1)
    names = [plugins.register(JACCARD), plugins.register(Wallace)]
    try:
        assert isinstance(salsox.losses.get_loss("jaccard-cs"), CountSumLoss)
        np.testing.assert_array_equal(salsox.partition_loss(est, galaxy, "jaccard-cs"),
                                      salsox.partition_loss(est, galaxy, JACCARD))
        assert repr(Wallace(w=2.0)) == "Wallace(w=2.0)"
        assert repr(JACCARD).startswith("CountSumLoss(name='jaccard-cs', formula='where(")
        heavy = salsox.losses.get_loss(Wallace)
        assert heavy == Wallace() and heavy != Wallace(w=2.0)
        np.testing.assert_allclose(salsox.partition_loss(est, galaxy, Wallace(w=2.0)),
                                   2 * salsox.partition_loss(est, galaxy, "wallace-test"), rtol=1e-15)
        assert salsox.salso(galaxy, "wallace-test", n_runs=1, seed=0).loss == Wallace()
    finally:
        for name in names:
            plugins.unregister(name=name)


def test_example_package_provides_count_sum_losses_through_its_entry_point(galaxy):
    found = {p.name: p for p in plugins.list_plugins() if p.kind == "loss"}
    est = random_estimates(galaxy.n_items, 4, seed=3)
    for name, twin in (("jaccard", JACCARD), ("fowlkes-mallows", FOWLKES)):
        assert name in found and found[name].source.startswith("salsox-example-losses")
        loss = salsox.losses.get_loss(name)
        assert isinstance(loss, CountSumLoss)
        np.testing.assert_allclose(salsox.partition_loss(est, galaxy, name),
                                   salsox.partition_loss(est, galaxy, twin), rtol=1e-12)
    nmi = salsox.losses.get_loss("nmi-sqrt")
    values = salsox.partition_loss(est, galaxy, nmi)
    assert np.all((values >= 0) & (values <= 1))
    assert salsox.partition_loss(galaxy.draw(2), galaxy.draw(2), nmi) == 0.0


def test_count_sum_search_does_not_depend_on_n_jobs(iris):
    one = salsox.salso(iris, FOWLKES, n_runs=6, seed=9, n_jobs=1)
    two = salsox.salso(iris, FOWLKES, n_runs=6, seed=9, n_jobs=2)
    np.testing.assert_array_equal(one.labels, two.labels)
    assert one.expected_loss == two.expected_loss
    assert [r["loss"] for r in one.info["runs"]] == [r["loss"] for r in two.info["runs"]]


def test_count_sum_search_honours_the_cluster_cap_and_initializers(galaxy):
    est = salsox.salso(galaxy, JACCARD, n_runs=3, seed=2, max_clusters=2, n_jobs=1)
    assert est.n_clusters <= 2
    start = salsox.salso(galaxy, JACCARD, n_runs=2, seed=2, n_jobs=1,
                         initializer=lambda draws, k, rng: draws[0])
    assert start.info["initialization"] == "initializer"


# ---------------------------------------------------------------------------------------------
# NVI as a count sum, and spellings of it with the same values in every cell
# ---------------------------------------------------------------------------------------------

NVI_UNCLAMPED = CountSumLoss("nvi-unclamped", ENTROPY, f"where({HJ} <= {TINY}, 0, 1 - ({HD} + {HE} - {HJ}) / {HJ})")
# x - (0 - y) is x + y exactly: the draw and estimate entropies combined by a subtraction, draw
# operand first and estimate operand first.
NVI_SPELLINGS = [
    CountSumLoss("nvi-draw-first", ENTROPY, f"where({HJ} <= {TINY}, 0, 1 - ({HD} - (0 - {HE}) - {HJ}) / {HJ})"),
    CountSumLoss("nvi-slot-first", ENTROPY, f"where({HJ} <= {TINY}, 0, 1 - ({HE} - (0 - {HD}) - {HJ}) / {HJ})"),
]


@pytest.mark.parametrize("loss", [JACCARD, NVI_UNCLAMPED], ids=lambda x: x.name)
def test_rows_narrowed_after_random_starts_keep_their_counts(loss):
    # Random starts over 60 labels widen the table's rows to 64 slots; the rows are narrowed
    # again between scans once a run keeps few clusters. The best run's loss, taken from its
    # table, is the loss of its estimate evaluated afresh.
    draws = salsox.Draws(load_draws("iris")[:400])
    est = salsox.salso(draws, loss, n_runs=4, seed=11, max_clusters=60, prob_sequential=0.0, n_jobs=1)
    assert est.n_clusters <= 31  # rows of half the width or less
    best = [r for r in est.info["runs"] if r["run"] == est.info["best_run"]][0]
    assert best["loss"] == pytest.approx(float(salsox.partition_loss(est.labels, draws, loss)), rel=1e-12)


def test_countsum_nvi_matches_the_builtin_nvi(iris):
    est = random_estimates(iris.n_items, 6, seed=4)
    np.testing.assert_allclose(salsox.partition_loss(est, iris, NVI_UNCLAMPED),
                               salsox.partition_loss(est, iris, "NVI"), rtol=1e-12)
    found = salsox.salso(iris, NVI_UNCLAMPED, n_runs=3, seed=2, n_jobs=1)
    ref = salsox.salso(iris, "NVI", n_runs=3, seed=2, n_jobs=1)
    assert found.expected_loss == pytest.approx(ref.expected_loss, rel=1e-12)
    np.testing.assert_array_equal(found.labels, ref.labels)


@pytest.mark.parametrize("loss", NVI_SPELLINGS, ids=lambda x: x.name)
def test_nvi_spellings_score_bit_for_bit_as_the_plain_formula(loss, galaxy):
    found = salsox.salso(galaxy, loss, n_runs=6, seed=4, n_jobs=1)
    ref = salsox.salso(galaxy, NVI_UNCLAMPED, n_runs=6, seed=4, n_jobs=1)
    assert [(r["loss"], r["scans"], r["zealous_accepts"]) for r in found.info["runs"]] == [
        (r["loss"], r["scans"], r["zealous_accepts"]) for r in ref.info["runs"]]
    np.testing.assert_array_equal(found.labels, ref.labels)


# ---------------------------------------------------------------------------------------------
# Fused node pairs (countsum_fuse.hpp): where(compare, ...) and a - p / q run as one loop
# ---------------------------------------------------------------------------------------------

# Jaccard written so that each fused shape and operand layout is used (comparisons of every
# kind, scalar and array operands and branches, an array minuend), with the same values as
# JACCARD in every cell: P / P is exactly 1 and P, an integer, is < 1 only when it is 0.
JACCARD_SPELLINGS = [
    "where(A + B - X <= 0, 0, 1 - X / (A + B - X))",
    "where(X >= A + B, 0, 1 - X / (A + B - X))",
    "where(A + B - X != 0, 1 - X / (A + B - X), 0 * X)",
    "where(A + B - X > 0, 1 - X / (A + B - X), 0 * X)",
    "where(A + B - X < 1, 0 * X, (A + B - X) / (A + B - X) - X / (A + B - X))",
]


@pytest.mark.parametrize("formula", JACCARD_SPELLINGS)
def test_fused_evaluation_gives_the_unfused_values_and_search(formula, galaxy):
    loss = CountSumLoss("jaccard-spelled", PAIRS, formula)
    est = random_estimates(galaxy.n_items, 4, seed=6)
    np.testing.assert_array_equal(salsox.partition_loss(est, galaxy, loss), salsox.partition_loss(est, galaxy, JACCARD))
    # The search scores every candidate with fused loops (partition_loss evaluates each draw's
    # formula node by node): the same values, the same path.
    found = salsox.salso(galaxy, loss, n_runs=4, seed=5, n_jobs=1)
    ref = salsox.salso(galaxy, JACCARD, n_runs=4, seed=5, n_jobs=1)
    np.testing.assert_array_equal(found.labels, ref.labels)
    assert found.expected_loss == ref.expected_loss
    assert [r["scans"] for r in found.info["runs"]] == [r["scans"] for r in ref.info["runs"]]
    # And the result is a local optimum of the losses evaluated per draw (never fused).
    labels, k = found.labels, found.n_clusters
    moved = [np.where(np.arange(galaxy.n_items) == i, c, labels)
             for i in range(galaxy.n_items) for c in range(k + 1) if c != labels[i]]
    assert salsox.partition_loss(np.array(moved), galaxy, loss).min() >= found.expected_loss - 1e-12
