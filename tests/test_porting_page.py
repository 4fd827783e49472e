"""The claims of docs/coming_from_r.md that are about salsox (issue 40): what it reports where
R's values are degenerate, what it refuses that R accepts and why the answer is trivial there,
how runs name their starts, the summary's item order, and R's defects it does not copy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import salsox
from salsox.datasets import example_draws

PAGE = Path(__file__).resolve().parents[1] / "docs" / "coming_from_r.md"
DRAWS = example_draws().draws[:200]


def test_the_page_lists_the_differences_and_defects() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for needle in ("0.3.78", "## Where values differ", "## What salsox refuses that R accepts",
                   "## R's known defects that salsox does not copy", "`maxScans = 0`", "bell(0)",
                   "**empty**", "**sample**", "5 of 6"):
        assert needle in text, needle
    assert "recognised as in R (" not in text  # 0.3.35, the version named, does not


def test_degenerate_pairs_take_the_documented_limits() -> None:
    one, singles = np.zeros(5, dtype=int), np.arange(5)
    for p in (one, singles):
        assert salsox.partition_loss(p, p, "omARI") == 0.0 and salsox.ARI(p, p) == 1.0
    assert salsox.partition_loss(one, one, "NVI") == 0.0
    assert salsox.partition_loss(one, one, "NID") == 0.0


@pytest.mark.parametrize("a", [0, 2])
def test_r_cost_ends_are_refused_and_their_answer_is_trivial(a: int) -> None:
    with pytest.raises(ValueError, match=r"a must be in \(0, 2\)"):
        salsox.Binder.from_r(a)
    with pytest.raises(ValueError, match=r"a must be in \(0, 2\)"):
        salsox.VI.from_r(a)
    # At the end the trivial partition the page names costs nothing: near it, almost nothing.
    n = DRAWS.shape[1]
    eps = 1e-6
    trivial = np.arange(n) if a == 0 else np.zeros(n, dtype=int)
    for cls in (salsox.Binder, salsox.VI):
        near = cls.from_r(eps if a == 0 else 2 - eps)
        assert salsox.partition_loss(trivial, DRAWS, near) < 10 * eps
        opposite = np.zeros(n, dtype=int) if a == 0 else np.arange(n)
        assert salsox.partition_loss(opposite, DRAWS, near) > 0.1


def test_max_scans_zero_is_refused_and_one_is_accepted() -> None:
    with pytest.raises(ValueError, match="max_scans must be >= 1"):
        salsox.salso(DRAWS, seed=1, max_scans=0)
    assert salsox.salso(DRAWS, seed=1, max_scans=1).n_clusters >= 1


def test_runs_name_their_starts_as_the_page_maps_them() -> None:
    est = salsox.salso(DRAWS, seed=1, n_runs=32, prob_sequential=0.5, prob_singletons=0.5)
    starts = {r["initialization"] for r in est.info["runs"]}
    assert starts == {"sequential", "singletons", "random"}
    assert est.info["initialization"] in starts


def test_order_score_sorts_items_by_decreasing_score_within_clusters() -> None:
    est = salsox.salso(DRAWS, seed=1)
    summ = est.summary(order="score")
    for k in range(summ.n_clusters):
        items = [i for i in summ.order if est.labels[i] == k]
        scores = summ.item_score[items]
        assert np.all(np.diff(scores) <= 0)


def test_r_defects_not_copied() -> None:
    assert salsox.bell(0) == 1
    assert salsox.salso(DRAWS, "NVI", seed=1).summary().n_clusters >= 1
    candidates = DRAWS[50:60][::-1].copy()
    best = salsox.dlso(DRAWS, "VI", candidates=candidates)
    np.testing.assert_array_equal(best.labels, salsox.canonicalize_labels(candidates[best.info["candidate"]]))
    # a bare similarity matrix is recognised (as R 0.3.78 does)
    psm = salsox.psm(DRAWS)
    assert salsox.salso(psm, "binder", seed=1).n_clusters >= 1
