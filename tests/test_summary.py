"""Estimate.summary / salsox.summarize: every number checked against its definition."""

from __future__ import annotations

import json

import numpy as np
import pytest

import salsox
from conftest import load_draws
from salsox.io import PSM


def _brute_force(labels: np.ndarray, draws: np.ndarray, loss: str):
    """The definitions, item by item and cluster by cluster (slow, obvious)."""
    labels = np.asarray(labels)
    n = labels.shape[0]
    p = np.zeros((n, n))
    for row in draws:
        p += row[:, None] == row[None, :]
    p /= draws.shape[0]
    k = labels.max() + 1
    sim = np.full(n, np.nan)
    score = np.zeros(n)
    for i in range(n):
        others = np.flatnonzero((labels == labels[i]) & (np.arange(n) != i))
        if others.size:
            sim[i] = p[i, others].mean()
        if others.size >= 2:
            # R salso: partition.loss(draws[, others], rep(1, length(others)), loss)
            score[i] = salsox.partition_loss(np.zeros(others.size, dtype=int), draws[:, others], loss)
    within = np.full(k, np.nan)
    between = np.full(k, np.nan)
    block = np.zeros((k, k))
    for c in range(k):
        a = np.flatnonzero(labels == c)
        b = np.flatnonzero(labels != c)
        if a.size > 1:
            sub = p[np.ix_(a, a)]
            within[c] = (sub.sum() - a.size) / (a.size * (a.size - 1))
        if b.size:
            between[c] = p[np.ix_(a, b)].mean()
        for d in range(k):
            block[c, d] = p[np.ix_(a, np.flatnonzero(labels == d))].mean()
    np.fill_diagonal(block, within)
    return p, sim, score, within, between, block


@pytest.fixture(scope="module")
def iris():
    return load_draws("iris")


@pytest.fixture(scope="module")
def iris_estimate(iris):
    return salsox.salso(iris, "binder", n_runs=2, seed=7)


def test_summary_matches_definitions_on_iris(iris, iris_estimate):
    s = iris_estimate.summary(iris)
    p, sim, score, within, between, block = _brute_force(s.labels, iris, "binder")
    assert s.loss == salsox.Binder()
    assert s.expected_loss == pytest.approx(iris_estimate.expected_loss, rel=1e-12)
    np.testing.assert_allclose(s.psm, p, atol=1e-12)
    np.testing.assert_allclose(s.item_similarity, sim, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(s.item_score, score, atol=1e-12)
    np.testing.assert_allclose(s.within_similarity, within, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(s.between_similarity, between, atol=1e-12)
    np.testing.assert_allclose(s.cluster_similarity, block, atol=1e-12, equal_nan=True)
    assert s.sizes.tolist() == np.bincount(s.labels).tolist()
    for c in range(s.n_clusters):
        members = np.flatnonzero(s.labels == c)
        e = s.exemplars[c]
        assert s.labels[e] == c
        if members.size > 1:
            assert s.item_similarity[e] == np.nanmax(s.item_similarity[members])


@pytest.mark.parametrize(
    "loss", ["VI", "omARI", "VI.lb", "binder", salsox.VI(a=0.7, b=1.3), salsox.Binder(a=1.5, b=0.5)]
)
def test_item_scores_follow_r_definition_on_galaxy(loss):
    draws = load_draws("galaxy")[:1500]  # enough draws to be varied, few enough to be quick
    labels = salsox.salso(draws, "VI", n_runs=1, seed=3).labels
    s = salsox.summarize(labels, draws, loss)
    _, _, score, _, _, _ = _brute_force(labels, draws, loss)
    np.testing.assert_allclose(s.item_score, score, rtol=1e-10, atol=1e-12)


def test_singletons_and_one_cluster():
    draws = load_draws("galaxy")[:300]
    n = draws.shape[1]
    labels = np.zeros(n, dtype=int)
    labels[5] = 1  # a singleton
    s = salsox.summarize(labels, draws, "VI")
    assert s.n_clusters == 2 and s.sizes.tolist() == [n - 1, 1]
    assert np.isnan(s.item_similarity[5]) and np.isnan(s.within_similarity[1])
    assert s.exemplars[1] == 5 and s.item_score[5] == 0.0
    one = salsox.summarize(np.zeros(n, dtype=int), draws, "binder")
    assert one.n_clusters == 1 and np.isnan(one.between_similarity[0])
    assert one.cluster_order.tolist() == [0] and sorted(one.order.tolist()) == list(range(n))


def test_order_groups_clusters_best_first(iris, iris_estimate):
    s = iris_estimate.summary(iris)
    assert sorted(s.order.tolist()) == list(range(s.n_items))
    ordered = s.labels[s.order]
    # Clusters are contiguous blocks, in cluster_order.
    blocks = [ordered[0]] + [b for a, b in zip(ordered[:-1], ordered[1:]) if a != b]
    assert blocks == s.cluster_order.tolist()
    for c in range(s.n_clusters):
        sims = s.item_similarity[s.order][ordered == c]
        sims = np.where(np.isnan(sims), 1.0, sims)
        assert np.all(np.diff(sims) <= 1e-15)
    # Each block is led by its exemplar.
    starts = np.r_[0, np.flatnonzero(np.diff(ordered)) + 1]
    for start in starts:
        c = ordered[start]
        if s.sizes[c] > 1:
            assert s.item_similarity[s.order[start]] == s.item_similarity[s.exemplars[c]]


def test_summary_from_psm(iris, iris_estimate):
    matrix = salsox.psm(iris)
    from_psm = salsox.summarize(iris_estimate.labels, PSM(matrix), "binder")
    from_draws = salsox.summarize(iris_estimate.labels, iris, "binder")
    np.testing.assert_allclose(from_psm.item_score, from_draws.item_score, atol=1e-12)
    assert from_psm.expected_loss == pytest.approx(from_draws.expected_loss, rel=1e-12)
    lb = salsox.summarize(iris_estimate.labels, PSM(matrix), "VI.lb")
    assert lb.expected_loss == pytest.approx(salsox.partition_loss(iris_estimate.labels, PSM(matrix), "VI.lb"))
    with pytest.raises(ValueError, match="needs draws"):
        salsox.summarize(iris_estimate.labels, PSM(matrix), "VI")


def test_tables_text_and_json(iris, iris_estimate):
    s = iris_estimate.summary(iris)
    items, clusters = s.items, s.clusters
    assert set(items) == {"item", "cluster", "similarity", "score"}
    assert set(clusters) == {"cluster", "size", "exemplar", "within", "between"}
    assert all(len(v) == s.n_items for v in items.values())
    assert all(len(v) == s.n_clusters for v in clusters.values())
    payload = json.loads(json.dumps(s.to_dict()))  # NaN-free, serialisable
    assert payload["n_clusters"] == s.n_clusters and payload["labels"] == s.labels.tolist()
    text = str(s)
    assert f"{s.n_clusters} clusters of {s.n_items} items" in text and "exemplar" in text
    assert "Summary(n_items=150" in repr(s)


def test_bad_arguments(iris):
    with pytest.raises(ValueError, match="labels has 3 items but the draws have 150"):
        salsox.summarize([0, 1, 1], iris)
    with pytest.raises(ValueError, match="unknown loss"):
        salsox.summarize(np.zeros(150, dtype=int), iris, "nope")
