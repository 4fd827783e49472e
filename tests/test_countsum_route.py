"""One count-sum route (issue 38): a DecomposableLoss is a CountSumLoss with an additive
formula, searched by the engine's tabulated losses; every count-sum formula compiles once per
search, and every per-draw loss of a reported value is checked, additive or not."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest

import salsox
from salsox import _core
from salsox.losses.countsum_forms import additive_form
from salsox.losses.countsum_formula import compile_formula
from salsox.plugins import CountSumLoss, DecomposableLoss, PluginError
from conftest import load_draws


def pairs(c, n):
    c = np.asarray(c, dtype=np.float64)
    return c * (c - 1) / 2


PAIRS = {"X": ("cell", pairs), "B": ("estimate", pairs), "A": ("draw", pairs)}


def pair_sums(est, draws):
    """Per draw: the pairs together in the draw (A), in the estimate (B) and in both (X)."""
    p = lambda sizes: float((sizes * (sizes - 1) / 2).sum())
    B = p(np.bincount(est))
    A = np.array([p(np.bincount(d)) for d in draws])
    X = np.array([p(np.unique(np.stack([d, est]), axis=1, return_counts=True)[1]) for d in draws])
    return A, B, X


class PairBinder(DecomposableLoss):
    """Binder's loss in pair counts, as a decomposable plugin; counts its tabulations."""

    name = "pair-binder"

    def __init__(self) -> None:
        self.tabulated = 0

    def draw_term(self, counts, n):
        self.tabulated += 1
        return pairs(counts, n) / n**2

    def estimate_term(self, counts, n):
        return pairs(counts, n) / n**2

    def cell_term(self, counts, n):
        return -2 * pairs(counts, n) / n**2


class TwoCells(DecomposableLoss):
    """+1 per estimate cluster of two items, -1 per cell of two items: 0 when the estimate
    equals the draw, and between the one-cluster and all-singletons partitions, but -2 for an
    estimate cluster of four items that a draw splits in two pairs."""

    name = "two-cells"

    def draw_term(self, counts, n):
        return np.zeros(len(counts))

    def estimate_term(self, counts, n):
        return (counts == 2).astype(float)

    def cell_term(self, counts, n):
        return -(counts == 2).astype(float)


class MinusPairCells(DecomposableLoss):
    """The issue's example: -1 per contingency cell of two items, nothing else."""

    name = "minus-pair-cells"

    def draw_term(self, counts, n):
        return np.zeros(len(counts))

    estimate_term = draw_term

    def cell_term(self, counts, n):
        return -(counts == 2).astype(float)


def _canonical(labels):
    seen: dict = {}
    return [seen.setdefault(int(v), len(seen)) for v in labels]


IRIS = load_draws("iris")[:300]


@pytest.fixture(scope="module")
def iris() -> salsox.Draws:
    return salsox.Draws(IRIS)


def test_a_decomposable_loss_is_an_additive_count_sum():
    loss = PairBinder()
    assert isinstance(loss, CountSumLoss)
    assert salsox.losses.loss_tier(loss) == "tabulated"
    assert salsox.losses.loss_tier(CountSumLoss("c", PAIRS, "A + B - 2 * X")) == "count-sum"
    # Its own parameters, repr and equality, as any loss.
    assert loss.params == {} and repr(loss) == "PairBinder()" and loss == PairBinder()


def test_additive_forms():
    sums = {"A": ("draw", 0), "B": ("estimate", 0), "X": ("cell", 0), "Y": ("cell", 1)}
    form = lambda f: additive_form(*compile_formula("x", f, sums, {"a": 3.0}))
    assert form("A + B - 2 * X") == {("draw", 0): 1.0, ("estimate", 0): 1.0, ("cell", 0): -2.0}
    assert form("-(X - Y) * a + (A - B) / 2") == {
        ("cell", 0): -3.0, ("cell", 1): 3.0, ("draw", 0): 0.5, ("estimate", 0): -0.5
    }
    assert form("X - X + A") == {("draw", 0): 1.0}
    # Not additive: n (it counts the items placed so far), a constant term, products of sums,
    # division by a sum, functions, nothing left.
    for formula in ("(A - X) / n", "A - X + 1", "A * X", "A / X", "abs(A - X)", "A / 0", "X - X", "2"):
        assert form(formula) is None, formula


@pytest.mark.parametrize(
    "loss, tabulated",
    [
        (PairBinder(), True),
        (CountSumLoss("binder-cs", PAIRS, "(A + B - 2 * X) / 22500"), True),
        (CountSumLoss("binder-n", PAIRS, "(A + B - 2 * X) / (n * n)"), False),
        (CountSumLoss("jaccard", PAIRS, "where(A + B - X == 0, 0, 1 - X / (A + B - X))"), False),
    ],
    ids=["decomposable", "additive", "with-n", "ratio"],
)
def test_additive_formulas_search_with_the_tabulated_losses(iris, loss, tabulated):
    route = loss._route(iris)
    compiled = route.compiled()
    assert (compiled.tabulated is not None) == tabulated
    options = dict(max_clusters=iris.max_clusters, n_runs=4, seed=3, n_jobs=1)
    est = salsox.salso(iris, loss, **options)
    assert est.info["engine"] == "counts"
    engine = dict(options, max_zealous=10, prob_sequential=0.5, prob_singletons=0.0, max_scans=0, seconds=0.0)
    if tabulated:
        # The same runs as the tabulated engine given the three tables directly.
        n = iris.n_items
        c = np.arange(n + 1)
        if isinstance(loss, DecomposableLoss):  # its own terms, bit for bit
            tables = [f(c, n).tolist() for f in (loss.draw_term, loss.estimate_term, loss.cell_term)]
        else:  # each sum's coefficient times its table: 1 / 22500 and -2 / 22500
            tables = [(1 / 22500 * pairs(c, n)).tolist()] * 2 + [(-2 / 22500 * pairs(c, n)).tolist()]
        raw = _core.salso_counts(iris._core, _core.CountLoss.tabulated(*tables), **engine)
    else:
        raw = _core.salso_countsum(iris._core, compiled.formula, **engine)
    assert [r["loss"] for r in est.info["runs"]] == [r["loss"] for r in raw["runs"]]
    assert est.labels.tolist() == _canonical(np.asarray(raw["labels"]).reshape(-1))
    # The reported value: the mean over draws of the formula, against numpy.
    A, B, X = pair_sums(est.labels, IRIS)
    n = iris.n_items
    denominator = n**2 if isinstance(loss, DecomposableLoss) or loss.name == "binder-n" else 22500
    if loss.name != "jaccard":
        assert est.expected_loss == pytest.approx(np.mean((A + B - 2 * X) / denominator), rel=1e-12)


def test_the_formula_compiles_once_per_search(iris):
    loss = PairBinder()
    salsox.salso(iris, loss, n_runs=2, seed=1, n_jobs=1)  # memory check, search and value
    assert loss.tabulated == 1
    salsox.partition_loss(np.zeros(iris.n_items, dtype=int), iris, loss)
    assert loss.tabulated == 2
    salsox.dlso(iris, loss)
    assert loss.tabulated == 3
    calls = []

    def counted(c, n):
        calls.append(n)
        return pairs(c, n)

    jaccard = CountSumLoss("j", {**PAIRS, "X": ("cell", counted)}, "where(A + B - X == 0, 0, 1 - X / (A + B - X))")
    salsox.salso(iris, jaccard, n_runs=2, seed=1, n_jobs=1)
    assert calls == [iris.n_items]


def test_a_shipped_route_leaves_its_compiled_loss_behind(iris):
    route = CountSumLoss("binder-cs", PAIRS, "A + B - 2 * X")._route(iris)
    assert route.compiled() is route.compiled()
    shipped = route.with_payload(None)
    assert shipped.compiled_loss is None and shipped.draws is None
    pickle.dumps(shipped.compiled_loss)


def test_a_decomposable_loss_negative_for_some_draw_is_refused():
    draws = np.array([[0, 0, 1, 1, 2, 2, 3, 3], [0, 0, 0, 0, 1, 1, 1, 1]])
    loss = TwoCells()
    # Its checks on the tables pass: 0 against itself, not negative between the extremes.
    assert salsox.partition_loss(draws[0], draws[:1], loss) == 0.0
    with pytest.raises(PluginError, match=r"loss plugin 'two-cells'.*negative loss -4\.0 against draw 0"):
        salsox.partition_loss([0, 0, 0, 0, 1, 1, 1, 1], draws[:1], loss)
    with pytest.raises(PluginError, match="negative loss"):
        salsox.salso(draws, loss, n_runs=2, seed=0, n_jobs=1)
    with pytest.raises(PluginError, match="negative loss"):
        salsox.dlso(draws, loss)


def test_the_issues_negative_decomposable_loss_is_refused():
    x = np.array([0, 0, 1, 1, 2, 2])
    loss = MinusPairCells()
    for call in (lambda: salsox.partition_loss(x, [x], loss), lambda: salsox.salso([x, x], loss, seed=0)):
        with pytest.raises(PluginError, match="minus-pair-cells.*equal to the draw is -3.0, not 0"):
            call()
    # The same loss as a count sum and as a contingency loss: refused too.
    cs = CountSumLoss("minus-pair-cells-cs", {"C": ("cell", lambda c, n: -(c == 2).astype(float))}, "C")
    with pytest.raises(PluginError, match="equal to the draw is -3.0, not 0"):
        salsox.partition_loss(x, [x], cs)


def test_large_additive_terms_keep_a_tolerance_to_scale():
    # Terms near 1e250: the sums round far above 1e-9, yet a loss of 0 (by symmetry) is not refused.
    class Huge(DecomposableLoss):
        name = "huge"

        def draw_term(self, counts, n):
            return 1e250 * pairs(counts, n) / n**2

        estimate_term = draw_term

        def cell_term(self, counts, n):
            return -2e250 * pairs(counts, n) / n**2

    draws = load_draws("iris")[:50]
    got = salsox.partition_loss(draws, draws, Huge())
    want = salsox.partition_loss(draws, draws, salsox.Binder()) * 1e250 / 2
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_countsum_uses_the_compilers_public_interface_only():
    source = (Path(salsox.__file__).parent / "losses" / "countsum.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("countsum_formula", "countsum_forms"):
            assert not [a.name for a in node.names if a.name.startswith("_")], ast.unparse(node)
        if isinstance(node, ast.Attribute):
            assert node.attr != "index", ast.unparse(node)  # the compiler's private lookup of its nodes
