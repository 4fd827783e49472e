"""Coming from R (issue 17): safe porting of R salso calls, and R salso's remaining functions.

Checked against independent implementations (numpy pair counts, brute force, tests/reference.py)
and R salso 0.3.35's values in shared/reference/r_salso.csv.
"""

from __future__ import annotations

import numpy as np
import pytest

import salsox
from conftest import load_draws
from reference import ari_pairwise, psm_naive, rand_index_pairwise


@pytest.fixture(scope="module")
def iris() -> np.ndarray:
    return load_draws("iris")[:200]


@pytest.fixture(scope="module")
def iris_est(iris: np.ndarray) -> salsox.Estimate:
    return salsox.salso(iris, "binder", n_runs=2, seed=3, n_jobs=1)


# ---- part 1: partition_loss's arguments ----------------------------------------------------


def test_partition_loss_keywords_read_like_r(iris, iris_est):
    loss = salsox.Binder(a=2, b=1)
    want = salsox.partition_loss(iris_est.labels, iris, loss)
    assert salsox.partition_loss(truth=iris, estimate=iris_est.labels, loss=loss) == want
    # The mean over draws of the pairwise loss (numpy pair counts), costs (a, b) = (2, 1).
    est = iris_est.labels
    n = est.shape[0]
    same_est = est[:, None] == est[None, :]
    total = 0.0
    for draw in iris:
        same = draw[:, None] == draw[None, :]
        total += 2 * np.sum(same & ~same_est) + np.sum(~same & same_est)
    assert want == pytest.approx(total / len(iris) / n**2, rel=1e-12)  # ordered pairs: 2/n^2 per pair


def test_r_argument_order_is_an_error(iris, iris_est):
    with pytest.raises(ValueError, match=r"did you mean partition_loss\(estimate, draws\)\?"):
        salsox.partition_loss(iris, iris_est.labels, salsox.Binder(a=2, b=1))
    with pytest.raises(TypeError, match=r"did you mean partition_loss\(estimate, draws\)\?"):
        salsox.partition_loss(salsox.Draws(iris), iris_est.labels)
    # M partitions against one partition: the truth as a 1 x n matrix.
    got = salsox.partition_loss(iris[:3], iris[5][None, :], "VI")
    assert got.shape == (3,)
    assert got[1] == salsox.partition_loss(iris[1], iris[5], "VI")


def test_an_estimate_is_accepted_wherever_labels_are(iris, iris_est):
    labels = iris_est.labels
    assert salsox.partition_loss(iris_est, iris, "VI") == salsox.partition_loss(labels, iris, "VI")
    assert salsox.partition_loss(iris[0], iris_est, "VI") == salsox.partition_loss(iris[0], labels, "VI")
    assert salsox.RI(iris_est, iris[0]) == salsox.RI(labels, iris[0])
    assert salsox.ARI(iris[0], iris_est) == salsox.ARI(iris[0], labels)
    np.testing.assert_array_equal(salsox.psm(iris_est), psm_naive(labels))


def test_a_bare_similarity_matrix_is_recognised(iris):
    p = salsox.psm(iris)
    wrapped = salsox.salso(salsox.PSM(p), "binder", n_runs=2, seed=1, n_jobs=1)
    bare = salsox.salso(p, "binder", n_runs=2, seed=1, n_jobs=1)  # was: "non-integral values"
    np.testing.assert_array_equal(bare.labels, wrapped.labels)
    assert bare.expected_loss == wrapped.expected_loss
    assert salsox.partition_loss(iris[0], p, "VI.lb") == salsox.partition_loss(iris[0], salsox.PSM(p), "VI.lb")
    binder = salsox.Binder(a=1.5, b=0.5)
    assert salsox.partition_loss(iris[0], p, binder) == pytest.approx(
        salsox.partition_loss(iris[0], iris, binder), rel=1e-12
    )


def test_a_similarity_matrix_for_a_loss_that_needs_draws_is_refused_clearly(iris):
    p = salsox.psm(iris)
    with pytest.raises(ValueError, match="similarity matrix.*needs the draws"):
        salsox.salso(p, "VI")
    with pytest.raises(ValueError, match="similarity matrix.*needs the draws"):
        salsox.partition_loss(iris[0], p, "omARI")


def test_a_broken_similarity_matrix_gets_a_hint_to_psm(iris):
    p = salsox.psm(iris).copy()
    p[0, 1] = 0.25  # no longer symmetric
    with pytest.raises(ValueError, match=r"non-integral values.*salsox\.PSM"):
        salsox.salso(p, "binder")
    with pytest.raises(ValueError, match="symmetric"):
        salsox.PSM(p)


# ---- part 3: R salso's remaining functions -------------------------------------------------


def test_ri_and_ari_with_draws_are_the_mean_over_draws(iris, iris_est):
    est = iris_est.labels
    want_ri = np.mean([rand_index_pairwise(d, est) for d in iris[:40]])
    want_ari = np.mean([ari_pairwise(d, est) for d in iris[:40]])
    # Either order: the indices are symmetric. (R's RI(draws, estimate) scales by length(truth),
    # i.e. H * n, for a matrix: not the mean; salsox gives the mean.)
    assert salsox.RI(iris[:40], est) == pytest.approx(want_ri, rel=1e-12)
    assert salsox.RI(est, salsox.Draws(iris[:40])) == pytest.approx(want_ri, rel=1e-12)
    assert salsox.ARI(iris[:40], iris_est) == pytest.approx(want_ari, rel=1e-12)
    assert salsox.ARI(est, iris[:40]) == pytest.approx(want_ari, rel=1e-12)


def test_psm_of_one_partition_is_its_adjacency():
    labels = np.array([3, 3, 1, 2, 1, 3])
    want = (labels[:, None] == labels[None, :]).astype(float)
    np.testing.assert_array_equal(salsox.psm(labels), want)
    np.testing.assert_array_equal(salsox.psm(labels.tolist()), want)


# ---- part 2: R's parameterisation of binder and VI -----------------------------------------


def _csv_rows(loss: str):
    import csv

    from conftest import SHARED_DIR

    with open(SHARED_DIR / "reference" / "r_salso.csv", newline="") as fh:
        return [r for r in csv.DictReader(fh) if r["loss"] == loss]


@pytest.mark.parametrize("row_loss, cls, r_a, paper", [
    ("binder_a4_3", salsox.Binder, 4 / 3, (2.0, 1.0)),
    ("VI_a2_3", salsox.VI, 2 / 3, (1.0, 2.0)),
    ("binder", salsox.Binder, 1.0, (3.0, 3.0)),
])
def test_from_r_matches_r_salso(row_loss, cls, r_a, paper):
    rows = _csv_rows(row_loss)
    assert len(rows) == 4
    r_loss = cls.from_r(r_a)
    assert (r_loss.a, r_loss.b) == pytest.approx((r_a, 2 - r_a), abs=0) and type(r_loss) is cls
    # The paper's costs (a', b') are R's a = 2 a' / (a' + b'), values scaled by (a' + b') / 2.
    a, b = paper
    assert 2 * a / (a + b) == pytest.approx(r_a, rel=1e-15)
    for row in rows:
        draws = load_draws(row["dataset"])
        n = draws.shape[1]
        ests = np.stack([draws[0], np.ones(n, dtype=int), np.arange(n)])
        got = salsox.partition_loss(ests, draws, r_loss)
        want = [float(row[c]) for c in ("loss_of_draw1", "loss_of_one_cluster", "loss_of_singletons")]
        np.testing.assert_allclose(got, want, rtol=1e-9)
        scaled = salsox.partition_loss(ests, draws, cls(a=a, b=b))
        np.testing.assert_allclose(scaled, np.asarray(want) * (a + b) / 2, rtol=1e-9)


def test_from_r_refuses_degenerate_or_bad_a():
    for bad in (0, 2, -0.5, 2.5, float("nan")):
        with pytest.raises(ValueError, match=r"\(0, 2\)"):
            salsox.Binder.from_r(bad)
    with pytest.raises(TypeError, match="real number"):
        salsox.VI.from_r("1.5")


def test_cli_takes_r_a(capsys, tmp_path):
    from salsox import cli

    draws = load_draws("galaxy")
    path = tmp_path / "d.npy"
    np.save(path, draws)
    labels = tmp_path / "l.txt"
    np.savetxt(labels, draws[3][None, :], fmt="%d")
    assert cli.main(["loss", str(labels), str(path), "--loss", "binder", "--r-a", "1.5"]) == 0
    got = float(capsys.readouterr().out)
    assert got == pytest.approx(salsox.partition_loss(draws[3], draws, salsox.Binder(a=1.5, b=0.5)), rel=1e-9)
    assert cli.main(["loss", str(labels), str(path), "--loss", "binder", "--r-a", "1.5", "--a", "2"]) == 2
    assert "not both" in capsys.readouterr().err
    assert cli.main(["loss", str(labels), str(path), "--loss", "omARI", "--r-a", "1.5"]) == 2
    assert "binder and VI" in capsys.readouterr().err


_R_ZERO = "maxNClusters = 0"


@pytest.mark.parametrize(
    "call",
    [
        lambda d, k: salsox.salso(d, max_clusters=k),
        lambda d, k: salsox.chips(d, 0.5, max_clusters=k),
        lambda d, k: salsox.wasabi(d, 2, max_clusters=k),
        lambda d, k: salsox.tune(d, "binder", 3, max_clusters=k),
    ],
    ids=["salso", "chips", "wasabi", "tune"],
)
def test_max_clusters_zero_says_to_pass_none(call):
    """R's maxNClusters = 0 is the default cap; max_clusters=0 says to pass None (issue 47)."""
    draws = load_draws("iris")[:20, :30]
    for zero in (0, np.int64(0)):
        with pytest.raises(ValueError, match=rf"^max_clusters=0: .*{_R_ZERO}.*pass None"):
            call(draws, zero)
    with pytest.raises(ValueError, match=r"^max_clusters must be >= 1, got -1$"):  # other values as before
        call(draws, -1)
    with pytest.raises(TypeError, match="max_clusters must be an integer"):
        call(draws, False)


@pytest.mark.parametrize("command", ["estimate", "tune", "chips"])
def test_cli_max_clusters_zero_says_to_leave_it_out(capsys, tmp_path, command):
    from salsox import cli

    path = tmp_path / "d.npy"
    np.save(path, load_draws("iris")[:20, :30])
    extra = ["-k", "3"] if command == "tune" else []
    assert cli.main([command, str(path), *extra, "--max-clusters", "0"]) == 2
    err = capsys.readouterr().err
    assert "--max-clusters 0" in err and _R_ZERO in err and "leave --max-clusters out" in err
    assert "max_clusters" not in err


def _first_appearance(row) -> tuple:
    seen: dict = {}
    return tuple(seen.setdefault(v, len(seen)) for v in row)


def test_enumerate_partitions_is_every_partition_once_in_canonical_labels():
    import itertools

    for n in range(1, 7):
        got = salsox.enumerate_partitions(n)
        brute = sorted({_first_appearance(row) for row in itertools.product(range(n), repeat=n)})
        assert got.shape == (salsox.bell(n), n)
        assert [tuple(r) for r in got.tolist()] == brute  # canonical, lexicographic, once each
    with pytest.raises(ValueError, match="<= 13"):
        salsox.enumerate_partitions(14)


def test_lbell_is_the_log_of_the_exact_bell_number():
    import math

    import salsox.enumeration as enumeration

    for n in (0, 1, 2, 10, 100, 300, 301, 450, 1000):
        assert salsox.lbell(n) == pytest.approx(math.log(salsox.bell(n)), rel=1e-14, abs=1e-14)
    # Dobinski's sum (used beyond n = 300) agrees with the exact value below it too.
    for n in (2, 5, 40, 250):
        exact = math.log(salsox.bell(n))
        saved = enumeration._LBELL_EXACT
        try:
            enumeration._LBELL_EXACT = 0
            assert salsox.lbell(n) == pytest.approx(exact, rel=1e-14)
        finally:
            enumeration._LBELL_EXACT = saved
    assert math.isfinite(salsox.lbell(10**5))
    with pytest.raises(ValueError):
        salsox.lbell(-1)


def test_canonicalize_labels(iris):
    assert salsox.canonicalize_labels([7, 7, 3, 9, 3]).tolist() == [0, 0, 1, 2, 1]
    got = salsox.canonicalize_labels(iris[:20] * 3 + 11)
    assert [tuple(r) for r in got.tolist()] == [_first_appearance(r) for r in iris[:20].tolist()]


def test_dlso_chooses_among_candidates(iris):
    rng = np.random.default_rng(5)
    n = iris.shape[1]
    cands = np.vstack([rng.integers(0, 4, size=(6, n)), iris[7], rng.integers(0, 3, size=(3, n))])
    got = salsox.dlso(iris, "VI", candidates=cands, n_jobs=1)
    losses = [salsox.partition_loss(c, iris, "VI") for c in cands]
    best = int(np.argmin(losses))
    assert got.info["candidate"] == best and got.info["draw"] is None
    np.testing.assert_array_equal(got.labels, salsox.canonicalize_labels(cands[best]))
    assert got.expected_loss == pytest.approx(losses[best], rel=1e-12)
    # A PSM suffices with candidates, for losses a PSM determines.
    via_psm = salsox.dlso(salsox.psm(iris), "VI.lb", candidates=cands)
    assert via_psm.info["candidate"] == int(np.argmin([salsox.partition_loss(c, iris, "VI.lb") for c in cands]))
    default = salsox.dlso(iris, "VI", n_jobs=1)
    assert default.info["candidate"] == default.info["draw"]
    with pytest.raises(ValueError, match="candidates has 3 items"):
        salsox.dlso(iris, "VI", candidates=[[0, 1, 1]])


# ---- R's warnings ----------------------------------------------------------------------------


def test_warns_when_the_estimate_reaches_the_default_cluster_cap():
    draws = np.random.default_rng(0).integers(0, 2, size=(50, 20))  # two clusters per draw
    with pytest.warns(salsox.SalsoxWarning, match="default cap"):
        est = salsox.salso(draws, "binder", n_runs=4, seed=1, n_jobs=1)
    assert est.n_clusters == est.info["max_clusters"] == 2
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", salsox.SalsoxWarning)
        salsox.salso(draws, "binder", n_runs=4, seed=1, n_jobs=1, max_clusters=2)  # a cap given
        salsox.salso(draws, "VI", n_runs=4, seed=1, n_jobs=1)  # below the cap
        salsox.salso(np.arange(6)[None, :].repeat(3, axis=0), "VI", n_runs=2, seed=1)  # cap n: cannot bind
        fixed = np.full(20, -1)
        fixed[:3] = [0, 1, 2]  # three fixed clusters raise the cap of 2: not the draws' default
        salsox.salso(draws, "binder", n_runs=4, seed=1, n_jobs=1, fixed=fixed)


def test_warns_when_seconds_cut_the_runs_short(iris):
    with pytest.warns(salsox.SalsoxWarning, match="of the requested 1000000 runs were done"):
        est = salsox.salso(iris, "VI", n_runs=10**6, seconds=0.01, seed=1, n_jobs=1)
    assert est.info["runs_done"] < 10**6 and est.info["budget_exhausted"]


def test_warnings_point_at_the_users_call_however_deep_in_salsox():
    # Shown at this file's lines, not inside salsox (salso called by chips, by a threshold method).
    draws = np.random.default_rng(0).integers(0, 2, size=(50, 20))
    with pytest.warns(salsox.SalsoxWarning, match="default cap") as direct:
        salsox.salso(draws, "binder", n_runs=4, seed=1, n_jobs=1)
    with pytest.warns(salsox.SalsoxWarning, match="default cap") as via_chips:
        path = salsox.chips(draws, 0.0, path=False, n_runs=4, seed=1, complete=True, loss="binder")
    assert path.completed is not None
    with pytest.warns(salsox.SalsoxWarning, match="default cap") as via_method:
        salsox.chips(draws, path=True, n_runs=4, seed=1, loss="binder").threshold(0.0)
    for caught in (direct, via_chips, via_method):
        assert {w.filename for w in caught if issubclass(w.category, salsox.SalsoxWarning)} == {__file__}


# ---- summaries: R's exemplar and ordering rules --------------------------------------------


@pytest.fixture(scope="module")
def galaxy_small():
    draws = load_draws("galaxy")[:40]
    est = salsox.salso(draws, "VI", n_runs=2, seed=2, n_jobs=1)
    return draws, est


def _r_score(draws: np.ndarray, labels: np.ndarray, i: int) -> float:
    """R's score, by brute force: expected VI of one cluster over the draws restricted to the
    other members of item i's cluster (0 with fewer than two of them)."""
    from reference import expected_loss, loss_ct

    others = np.flatnonzero((labels == labels[i]) & (np.arange(labels.size) != i))
    if others.size < 2:
        return 0.0
    return expected_loss(np.zeros(others.size, int), draws[:, others], lambda d, e: loss_ct(d, e, "VI"))


def test_exemplar_score_is_rs_rule(galaxy_small):
    draws, est = galaxy_small
    summ = salsox.summarize(est, draws, "VI", exemplar="score")
    scores = np.array([_r_score(draws, est.labels, i) for i in range(est.labels.size)])
    np.testing.assert_allclose(summ.item_score, scores, rtol=1e-9, atol=1e-12)
    for c in range(est.n_clusters):
        members = np.flatnonzero(est.labels == c)
        assert summ.exemplars[c] == members[int(np.argmax(scores[members]))]  # which.max: the first
    np.testing.assert_array_equal(est.summary(exemplar="score").exemplars, summ.exemplars)


def test_order_hclust_is_rs_ordering_method_2(galaxy_small):
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    draws, est = galaxy_small
    summ = salsox.summarize(est, draws, "VI", order="hclust")
    dist = 1.0 - psm_naive(draws)
    np.fill_diagonal(dist, 0.0)
    leaves = leaves_list(linkage(squareform(dist, checks=False), method="complete"))
    rank = np.empty_like(leaves)
    rank[leaves] = np.arange(leaves.size)
    # R: order(estimate, order(hclust(as.dist(1 - psm))$order))
    want = sorted(range(est.labels.size), key=lambda i: (est.labels[i], rank[i]))
    assert summ.order.tolist() == want


def test_order_score_is_rs_ordering_method_1(galaxy_small):
    draws, est = galaxy_small
    summ = salsox.summarize(est, draws, "VI", order="score")
    assert sorted(summ.order.tolist()) == list(range(est.labels.size))
    clusters = est.labels[summ.order]
    blocks = [c for j, c in enumerate(clusters) if j == 0 or c != clusters[j - 1]]
    assert blocks == summ.cluster_order.tolist()  # clusters side by side, in dendrogram order
    for c in range(est.n_clusters):
        s = summ.item_score[summ.order][clusters == c]
        assert np.all(np.diff(s) <= 0)
    with pytest.raises(ValueError, match="order must be one of"):
        salsox.summarize(est, draws, "VI", order="R")
    with pytest.raises(ValueError, match="exemplar must be one of"):
        salsox.summarize(est, draws, "VI", exemplar="median")


# ---- singletons initialisation (R's probSingletonsInitialization) --------------------------


def test_prob_singletons_starts_sequential_runs_from_singletons():
    draws = load_draws("galaxy")[:200]
    opts = dict(n_runs=8, seed=4, prob_sequential=1.0, max_zealous=0, max_scans=1)
    plain = salsox.salso(draws, "VI", n_jobs=1, **opts)
    zero = salsox.salso(draws, "VI", n_jobs=1, prob_singletons=0.0, **opts)
    assert [r["loss"] for r in zero.info["runs"]] == [r["loss"] for r in plain.info["runs"]]
    ones = salsox.salso(draws, "VI", n_jobs=1, prob_singletons=1.0, **opts)
    assert {r["initialization"] for r in ones.info["runs"]} == {"singletons"}
    # A different start: one scan does not always end where the plain start does.
    assert [r["loss"] for r in ones.info["runs"]] != [r["loss"] for r in plain.info["runs"]]
    assert ones.expected_loss == pytest.approx(salsox.partition_loss(ones.labels, draws, "VI"), rel=1e-12)
    # Same seed, same estimate, whatever the threads.
    three = salsox.salso(draws, "VI", n_jobs=3, prob_singletons=1.0, **opts)
    np.testing.assert_array_equal(three.labels, ones.labels)
    assert [r["loss"] for r in three.info["runs"]] == [r["loss"] for r in ones.info["runs"]]
    half = salsox.salso(draws, "VI", n_jobs=1, n_runs=40, seed=1, prob_sequential=0.5, prob_singletons=0.5)
    kinds = [r["initialization"] for r in half.info["runs"]]
    assert {"singletons", "sequential", "random"} <= set(kinds)


@pytest.mark.parametrize("loss, extra", [("binder", dict(engine="coclustering")), ("VI.lb", {}), ("omARI", {})])
def test_prob_singletons_in_every_engine_keeps_fixed_items_and_the_cap(loss, extra):
    draws = load_draws("ex1")[:100, :60]
    fixed = np.full(60, -1)
    fixed[[3, 9]] = 0
    fixed[20] = 1
    est = salsox.salso(draws, loss, n_runs=4, seed=2, n_jobs=1, prob_sequential=1.0, prob_singletons=1.0,
                       max_clusters=5, fixed=fixed, **extra)
    assert {r["initialization"] for r in est.info["runs"]} == {"singletons"}
    assert est.n_clusters <= 5
    assert est.labels[3] == est.labels[9] != est.labels[20]
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="prob_singletons"):
            salsox.salso(draws, loss, prob_singletons=bad)


def test_cli_prints_salsox_warnings_as_one_line(tmp_path):
    import os
    import subprocess
    import sys

    draws = np.random.default_rng(0).integers(0, 2, size=(50, 20))
    path = tmp_path / "d.npy"
    np.save(path, draws)
    proc = subprocess.run(
        [sys.executable, "-m", "salsox", "estimate", str(path), "--loss", "binder", "--runs", "2", "--seed", "1"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={**os.environ, "SKBUILD_EDITABLE_VERBOSE": "0"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "salsox: warning: the estimate has 2 clusters, the default cap (the most clusters in any draw): "
        "a larger max_clusters may give a better estimate"
    ]
