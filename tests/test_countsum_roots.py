"""Square roots of a count-sum formula taken per factor (salsox.losses.countsum_forms):
sqrt(x * y), x per estimate cluster and y per draw, both never negative, runs as
sqrt(x) * sqrt(y), so that the engine takes the roots per cluster and per draw, not per cell."""

from __future__ import annotations

import numpy as np
import pytest

import salsox
from salsox.losses.countsum_forms import exact_nonnegative, factor_square_roots
from salsox.plugins import CountSumLoss
from conftest import load_draws
from test_countsum import FOWLKES, PAIRS, pairs, random_estimates

# The same loss with the roots already apart, as the rewrite makes them.
FOWLKES_APART = CountSumLoss(
    "fm-apart", PAIRS, "where(A * B == 0, where(A + B == 0, 0, 1), 1 - X / (sqrt(A) * sqrt(B)))"
)
# And with them kept whole: the product of the pair counts times 1 varies with the cells'
# cluster and draw at once, so it is never split.
FOWLKES_WHOLE = CountSumLoss(
    "fm-whole", PAIRS, "where(A * B == 0, where(A + B == 0, 0, 1), 1 - X / sqrt(A * B * 1))"
)


@pytest.fixture(scope="module")
def galaxy() -> salsox.Draws:
    return salsox.Draws(load_draws("galaxy")[:1000])


ALL_EXACT = {(w, j): True for w in ("cell", "estimate", "draw") for j in range(3)}


def ops(nodes):
    return [x[0] for x in nodes]


def roots(nodes):
    """The operation under each square root."""
    return [nodes[x[1]][0] for x in nodes if x[0] == "sqrt"]


def test_the_root_of_a_cluster_sum_times_a_draw_sum_is_taken_apart():
    nodes, result = factor_square_roots(FOWLKES._nodes, FOWLKES._result, ALL_EXACT)
    assert sorted(roots(nodes)) == ["draw", "estimate"]
    assert ops(nodes).count("mul") == 2  # A * B stays for the guard, plus the product of the roots
    # Nothing unused is left for the engine to evaluate, and the order is topological.
    used = {u for op, a, b, c, _ in nodes if op not in ("const", "n", "cell", "estimate", "draw") for u in (a, b, c)}
    assert set(range(len(nodes))) - used == {result}
    assert all(u < k for k, (op, a, b, c, _) in enumerate(nodes) if op not in ("estimate", "draw", "cell")
               for u in (a, b, c))
    # The hand-written form compiles to the same nodes.
    assert (nodes, result) == factor_square_roots(FOWLKES_APART._nodes, FOWLKES_APART._result, ALL_EXACT)


def test_roots_stay_whole_unless_both_factors_are_known_non_negative():
    none_exact = {key: False for key in ALL_EXACT}
    nodes, result = factor_square_roots(FOWLKES._nodes, FOWLKES._result, none_exact)
    assert (nodes, result) == (FOWLKES._nodes, FOWLKES._result)
    # Clamped at 0 by the formula itself, they may be split whatever the sums.
    clamped = CountSumLoss("c", PAIRS, "1 - X / (1 + sqrt(max(0, A - 1) * max(0, B - 1)))")
    nodes, _ = factor_square_roots(clamped._nodes, clamped._result, none_exact)
    assert "mul" not in [nodes[x[1]][0] for x in nodes if x[0] == "sqrt"]
    # max(x, 0) is never negative (x < 0 gives 0, NaN stays NaN): split, whatever x.
    loss = CountSumLoss("c", PAIRS, "1 - X / (1 + sqrt(max(A - 1, 0) * B))")
    nodes, _ = factor_square_roots(loss._nodes, loss._result, ALL_EXACT)
    assert "mul" not in roots(nodes)
    # A factor that may be negative, one with the cells in it, or two of the same kind: whole.
    for formula in ("1 - X / (1 + sqrt((A - 1) * B))", "1 - X / (1 + sqrt(max(A - 1, B - 1) * B))",
                    "1 - X / (1 + sqrt(-A * -B))", "1 - X / (1 + sqrt(X * A))", "1 - X / (1 + sqrt(A * A))",
                    "1 - X / (1 + sqrt(n * B))"):
        loss = CountSumLoss("c", PAIRS, formula)
        nodes, _ = factor_square_roots(loss._nodes, loss._result, ALL_EXACT)
        assert roots(nodes) == roots(loss._nodes) and "mul" in roots(nodes), formula


def _pair_sums(est: np.ndarray, draws: np.ndarray):
    """Per draw: the pairs together in the draw (A), in the estimate (B) and in both (X)."""
    p = lambda sizes: float((sizes * (sizes - 1) / 2).sum())
    B = p(np.bincount(est))
    A = np.array([p(np.bincount(d)) for d in draws])
    X = np.array([p(np.unique(np.stack([d, est]), axis=1, return_counts=True)[1]) for d in draws])
    return A, B, X


def test_a_root_of_factors_that_min_may_make_negative_is_kept_whole():
    # min(x, c) is at most c, and negative when x is, whatever c: unlike max(x, 0) it does not
    # make its operand safe to split. Here both factors are <= 0, so their product is >= 0 and
    # the root is real, while sqrt of each factor would be NaN.
    formula = "(A + B - 2 * X) * (1 + sqrt(min(A - t, 0) * min(B - t, 0)))"
    loss = CountSumLoss("min-root", PAIRS, formula, params={"t": 12.0})
    nodes, _ = factor_square_roots(loss._nodes, loss._result, ALL_EXACT)
    assert roots(nodes) == ["mul"]
    for other in ("1 - X / (1 + sqrt(min(A - 1, 5) * B))", "1 - X / (1 + sqrt(min(A, B - 1) * B))"):
        whole = CountSumLoss("c", PAIRS, other)
        nodes, _ = factor_square_roots(whole._nodes, whole._result, ALL_EXACT)
        assert "mul" in roots(nodes), other
    # And its values, against numpy: small clusters, so that pair counts fall on both sides of t.
    rng = np.random.default_rng(8)
    draws = rng.integers(0, 5, (30, 12))
    est = random_estimates(12, 8, seed=8)
    want = []
    for e in est:
        A, B, X = _pair_sums(e, draws)
        want.append(np.mean((A + B - 2 * X) * (1 + np.sqrt(np.minimum(A - 12, 0) * np.minimum(B - 12, 0)))))
    got = salsox.partition_loss(est, draws, loss)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    assert np.ptp(want) > 0
    found = salsox.salso(draws, loss, n_runs=2, max_clusters=12, seed=1, n_jobs=1)
    A, B, X = _pair_sums(found.labels, draws)
    value = np.mean((A + B - 2 * X) * (1 + np.sqrt(np.minimum(A - 12, 0) * np.minimum(B - 12, 0))))
    assert found.expected_loss == pytest.approx(value, rel=1e-12)


def test_only_integer_tables_make_exact_non_negative_sums():
    counts = np.arange(101)
    assert exact_nonnegative(pairs(counts, 100), 100)
    assert not exact_nonnegative(pairs(counts, 100) / 3, 100)  # running sums may round below 0
    assert not exact_nonnegative(counts - 1.0, 100)
    assert not exact_nonnegative(counts * 2.0**50, 100)  # sums past 2^53 are rounded


def test_split_roots_give_the_hand_factored_loss_bit_for_bit(galaxy):
    est = random_estimates(galaxy.n_items, 6, seed=3)
    got = salsox.partition_loss(est, galaxy, FOWLKES)
    np.testing.assert_array_equal(got, salsox.partition_loss(est, galaxy, FOWLKES_APART))
    # Kept whole, the root rounds differently, within a few ulps.
    whole = salsox.partition_loss(est, galaxy, FOWLKES_WHOLE)
    np.testing.assert_allclose(got, whole, rtol=1e-14, atol=0)
    found = salsox.salso(galaxy, FOWLKES, n_runs=4, seed=2, n_jobs=1)
    ref = salsox.salso(galaxy, FOWLKES_APART, n_runs=4, seed=2, n_jobs=1)
    np.testing.assert_array_equal(found.labels, ref.labels)
    assert found.expected_loss == ref.expected_loss
    assert [r["scans"] for r in found.info["runs"]] == [r["scans"] for r in ref.info["runs"]]


def kept_whole(formula: str) -> str:
    """``formula`` with the operand of its square root wrapped in abs(): the same values for a
    non-negative operand, and no product under the root to split."""
    start = formula.index("sqrt(") + len("sqrt(")
    depth, end = 1, start
    while depth:
        depth += {"(": 1, ")": -1}.get(formula[end], 0)
        end += 1
    return formula[:start] + "abs(" + formula[start:end - 1] + ")" + formula[end - 1:]


@pytest.mark.parametrize("name", ["fowlkes-mallows", "nmi-sqrt"])
def test_example_losses_with_roots_match_their_unsplit_values(name, galaxy):
    loss = salsox.losses.get_loss(name)
    whole = CountSumLoss(name + "-whole", dict(loss.sums), kept_whole(loss.formula))
    assert "sqrt(abs(" in whole.formula
    est = random_estimates(galaxy.n_items, 6, seed=4)
    np.testing.assert_allclose(salsox.partition_loss(est, galaxy, loss), salsox.partition_loss(est, galaxy, whole),
                               rtol=1e-14, atol=1e-15)
