"""Slow, obvious, independent reference implementations used by the tests.

Nothing here imports salsox.  Every function is written straight from a
formula in Dahl, Johnson & Mueller (JCGS 2022), "Search Algorithms and Loss
Functions for Bayesian Clustering" (shared/paper/salso-paper.tex), or from a
brute-force definition, so that the compiled core can be checked against it.

Conventions
-----------
* ``x`` is the *truth* (rho, a posterior draw), ``y`` is the *estimate*
  (rho-hat).  The contingency table has the truth's clusters as rows
  (S_1..S_p) and the estimate's clusters as columns (T_1..T_q).
* Generalised Binder (eq. generalizedBinderNinvariant):
  ``a * sum_S (|S|/n)^2 + b * sum_T (|T|/n)^2 - (a+b) * sum_{S,T} (|S n T|/n)^2``
  -- ``a`` multiplies the truth's marginal, ``b`` the estimate's; ``a`` is the
  cost of splitting two items that belong together.
* Generalised VI (eq. gvi_def):
  ``a * sum_S p_S log2 p_S + b * sum_T p_T log2 p_T - (a+b) * sum p_ST log2 p_ST``
  -- ``a`` multiplies the truth's term.
* Defined edge cases (never NaN): ARI = 1 when the denominator vanishes, which
  for n >= 2 happens only when both partitions are the same trivial partition
  (one cluster, or all singletons), and for n <= 1; NVI and NID are 0 when
  their denominator (joint entropy, resp. max entropy) is 0, i.e. when both
  partitions have a single cluster.  PEAR follows the ARI convention.
"""

from __future__ import annotations

import math
from typing import Callable, Dict, NamedTuple, Tuple

import numpy as np

__all__ = [
    "contingency",
    "entropies",
    "binder_ct",
    "vi_ct",
    "omari_ct",
    "ari_ct",
    "nvi_ct",
    "id_ct",
    "nid_ct",
    "binder_pairwise",
    "rand_index_pairwise",
    "ari_pairwise",
    "loss_ct",
    "expected_loss",
    "expected_loss_from_stats",
    "table_stats",
    "TableStats",
    "psm_naive",
    "vi_lb_naive",
    "pear_naive",
    "omari_approx_naive",
    "LOSS_FROM_STATS",
]


# ---------------------------------------------------------------------------
# Contingency table and entropies
# ---------------------------------------------------------------------------


def _labels(v) -> np.ndarray:
    v = np.asarray(v)
    if v.ndim != 1:
        raise ValueError("a partition must be a 1-D label vector")
    return v


def contingency(x, y) -> np.ndarray:
    """Contingency table, truth ``x`` clusters as rows, estimate ``y`` as columns.

    Cluster order is that of ``np.unique`` (sorted labels); only non-empty
    clusters appear.  ``table[k, l] = |S_k n T_l|``.
    """
    x = _labels(x)
    y = _labels(y)
    if x.shape != y.shape:
        raise ValueError("partitions must have the same number of items")
    xs, xi = np.unique(x, return_inverse=True)
    ys, yi = np.unique(y, return_inverse=True)
    table = np.zeros((xs.size, ys.size), dtype=np.int64)
    np.add.at(table, (xi.ravel(), yi.ravel()), 1)
    return table


def _plogp_sum(counts, n: int) -> float:
    """sum_k (c_k/n) log2(c_k/n) over the non-zero counts (0 log 0 = 0)."""
    c = np.asarray(counts, dtype=np.int64).ravel()
    p = c[c > 0] / n
    return float(np.sum(p * np.log2(p)))


def _sq_sum(counts, n: int) -> float:
    """sum_k (c_k/n)^2."""
    c = np.asarray(counts, dtype=np.int64).ravel()
    return float(np.sum((c / n) ** 2))


def _comb2_sum(counts) -> int:
    """sum_k C(c_k, 2), exactly (int64 arithmetic, returned as a Python int)."""
    c = np.asarray(counts, dtype=np.int64).ravel()
    return int(np.sum(c * (c - 1) // 2))


class TableStats(NamedTuple):
    """The marginal and joint sums of a contingency table that the losses need.

    Suffix ``_x``: over the truth's clusters S (row sums), ``_y``: over the
    estimate's clusters T (column sums), ``_xy``: over the cells S n T.
    """

    n: int
    sq_x: float  # sum (|S|/n)^2
    sq_y: float
    sq_xy: float
    pl_x: float  # sum (|S|/n) log2(|S|/n)  (= -H)
    pl_y: float
    pl_xy: float
    c2_x: int  # sum C(|S|, 2)
    c2_y: int
    c2_xy: int


def table_stats(table: np.ndarray) -> TableStats:
    """Compute :class:`TableStats` of a contingency table."""
    table = np.asarray(table, dtype=np.int64)
    n = int(table.sum())
    rows = table.sum(axis=1)
    cols = table.sum(axis=0)
    return TableStats(
        n=n,
        sq_x=_sq_sum(rows, n),
        sq_y=_sq_sum(cols, n),
        sq_xy=_sq_sum(table, n),
        pl_x=_plogp_sum(rows, n),
        pl_y=_plogp_sum(cols, n),
        pl_xy=_plogp_sum(table, n),
        c2_x=_comb2_sum(rows),
        c2_y=_comb2_sum(cols),
        c2_xy=_comb2_sum(table),
    )


def entropies(table) -> Tuple[float, float, float, float]:
    """Return (H(truth), H(estimate), H(joint), I) from a contingency table (or its stats)."""
    st = table if isinstance(table, TableStats) else table_stats(table)
    h_x, h_y, h_xy = -st.pl_x, -st.pl_y, -st.pl_xy
    return h_x, h_y, h_xy, h_x + h_y - h_xy


# ---------------------------------------------------------------------------
# Losses from the contingency table (paper formulas)
# ---------------------------------------------------------------------------


def _binder_stats(st: TableStats, a: float = 1.0, b: float = 1.0) -> float:
    # eq. generalizedBinderNinvariant: a on the truth's marginal, b on the estimate's
    return a * st.sq_x + b * st.sq_y - (a + b) * st.sq_xy


def _vi_stats(st: TableStats, a: float = 1.0, b: float = 1.0) -> float:
    # eq. gvi_def (third line): a on the truth's term, b on the estimate's
    return a * st.pl_x + b * st.pl_y - (a + b) * st.pl_xy


def _ari_stats(st: TableStats) -> float:
    """Adjusted Rand index, eq. ari_matrix, with the identical-trivial case = 1."""
    big_n = st.n * (st.n - 1) // 2
    if big_n == 0:
        return 1.0
    s_rows, s_cols, s_cells = st.c2_x, st.c2_y, st.c2_xy
    # Exact integer test of den == 0: (s_rows + s_cols) * N == 2 * s_rows * s_cols,
    # which for n >= 2 holds only if both partitions are one cluster or both all singletons.
    if (s_rows + s_cols) * big_n == 2 * s_rows * s_cols:
        return 1.0
    expected = s_rows * s_cols / big_n
    num = s_cells - expected
    den = 0.5 * (s_rows + s_cols) - expected
    return num / den


def _omari_stats(st: TableStats) -> float:
    return 1.0 - _ari_stats(st)


def _nvi_stats(st: TableStats) -> float:
    _, _, h_xy, mi = entropies(st)
    if h_xy == 0.0:  # both partitions are a single cluster
        return 0.0
    return 1.0 - mi / h_xy


def _id_stats(st: TableStats) -> float:
    h_x, h_y, _, mi = entropies(st)
    return max(h_x, h_y) - mi


def _nid_stats(st: TableStats) -> float:
    h_x, h_y, _, mi = entropies(st)
    m = max(h_x, h_y)
    if m == 0.0:  # both partitions are a single cluster
        return 0.0
    return 1.0 - mi / m


#: family name -> function(stats, a, b) (a, b ignored for the parameter-free losses)
LOSS_FROM_STATS: Dict[str, Callable[..., float]] = {
    "binder": lambda st, a=1.0, b=1.0: _binder_stats(st, a, b),
    "VI": lambda st, a=1.0, b=1.0: _vi_stats(st, a, b),
    "omARI": lambda st, a=None, b=None: _omari_stats(st),
    "NVI": lambda st, a=None, b=None: _nvi_stats(st),
    "ID": lambda st, a=None, b=None: _id_stats(st),
    "NID": lambda st, a=None, b=None: _nid_stats(st),
}


def binder_ct(x, y, a: float = 1.0, b: float = 1.0) -> float:
    """Generalised n-invariant Binder loss (eq. generalizedBinderNinvariant)."""
    return _binder_stats(table_stats(contingency(x, y)), a, b)


def vi_ct(x, y, a: float = 1.0, b: float = 1.0) -> float:
    """Generalised variation of information, log base 2 (eq. gvi_def)."""
    return _vi_stats(table_stats(contingency(x, y)), a, b)


def ari_ct(x, y) -> float:
    """Adjusted Rand index from the contingency table (eq. ari_matrix)."""
    return _ari_stats(table_stats(contingency(x, y)))


def omari_ct(x, y) -> float:
    """One minus the adjusted Rand index."""
    return _omari_stats(table_stats(contingency(x, y)))


def nvi_ct(x, y) -> float:
    """Normalised VI: 1 - I / H(joint) (0 when H(joint) == 0)."""
    return _nvi_stats(table_stats(contingency(x, y)))


def id_ct(x, y) -> float:
    """Information distance: max(H(x), H(y)) - I."""
    return _id_stats(table_stats(contingency(x, y)))


def nid_ct(x, y) -> float:
    """Normalised information distance: 1 - I / max(H(x), H(y)) (0 when max is 0)."""
    return _nid_stats(table_stats(contingency(x, y)))


def loss_ct(x, y, family: str, a: float = 1.0, b: float = 1.0) -> float:
    """Loss ``family`` ("binder", "VI", "omARI", "NVI", "ID", "NID") of estimate y for truth x."""
    return LOSS_FROM_STATS[family](table_stats(contingency(x, y)), a, b)


# ---------------------------------------------------------------------------
# Brute-force pairwise definitions
# ---------------------------------------------------------------------------


def binder_pairwise(x, y, a: float = 1.0, b: float = 1.0) -> float:
    """Eq. binder by the double loop over i < j, times 2 / n^2."""
    x = _labels(x).tolist()
    y = _labels(y).tolist()
    n = len(x)
    if n == 0:
        raise ValueError("empty partition")
    total = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            same_x = x[i] == x[j]
            same_y = y[i] == y[j]
            if same_x and not same_y:
                total += a
            elif same_y and not same_x:
                total += b
    return 2.0 * total / (n * n)


def _pair_counts(x, y):
    """(n11, n10, n01, n00): pairs together in both / only x / only y / neither."""
    x = _labels(x).tolist()
    y = _labels(y).tolist()
    n = len(x)
    n11 = n10 = n01 = n00 = 0
    for i in range(n):
        for j in range(i + 1, n):
            sx = x[i] == x[j]
            sy = y[i] == y[j]
            if sx and sy:
                n11 += 1
            elif sx:
                n10 += 1
            elif sy:
                n01 += 1
            else:
                n00 += 1
    return n11, n10, n01, n00


def rand_index_pairwise(x, y) -> float:
    """Rand index: fraction of the C(n, 2) pairs on which x and y agree (1 if n < 2)."""
    n11, n10, n01, n00 = _pair_counts(x, y)
    total = n11 + n10 + n01 + n00
    if total == 0:
        return 1.0
    return (n11 + n00) / total


def ari_pairwise(x, y) -> float:
    """Adjusted Rand index by pair counting (Hubert & Arabie), trivial-identical case = 1."""
    n11, n10, n01, n00 = _pair_counts(x, y)
    total = n11 + n10 + n01 + n00
    if total == 0:
        return 1.0
    together_x = n11 + n10
    together_y = n11 + n01
    expected = together_x * together_y / total
    max_index = 0.5 * (together_x + together_y)
    if (together_x + together_y) * total == 2 * together_x * together_y:
        return 1.0
    return (n11 - expected) / (max_index - expected)


# ---------------------------------------------------------------------------
# Monte Carlo expected losses
# ---------------------------------------------------------------------------


def expected_loss(estimate, draws, fn: Callable[[np.ndarray, np.ndarray], float]) -> float:
    """Mean over the rows h of ``draws`` of ``fn(draws[h], estimate)``."""
    draws = np.asarray(draws)
    if draws.ndim == 1:
        draws = draws[None, :]
    vals = [fn(draws[h], estimate) for h in range(draws.shape[0])]
    return float(np.mean(vals))


def expected_loss_from_stats(stats, family: str, a: float = 1.0, b: float = 1.0) -> float:
    """Mean of ``LOSS_FROM_STATS[family]`` over precomputed per-draw :class:`TableStats`."""
    f = LOSS_FROM_STATS[family]
    return float(np.mean([f(st, a, b) for st in stats]))


# ---------------------------------------------------------------------------
# PSM-based criteria
# ---------------------------------------------------------------------------


def psm_naive(draws) -> np.ndarray:
    """Posterior similarity matrix: pi_ij = (1/H) sum_h I{c_i^(h) = c_j^(h)}."""
    draws = np.asarray(draws)
    if draws.ndim == 1:
        draws = draws[None, :]
    h, n = draws.shape
    counts = np.zeros((n, n), dtype=np.int64)
    for row in draws:
        counts += (row[:, None] == row[None, :]).astype(np.int64)
    return counts / h


def vi_lb_naive(estimate, psm) -> float:
    """Wade & Ghahramani lower bound of expected VI, as R mcclust.ext::VI.lb.

    (1/n) sum_i [log2 |T(i)| + log2 sum_j psm_ij - 2 log2 sum_{j in T(i)} psm_ij]
    """
    c = _labels(estimate).tolist()
    psm = np.asarray(psm, dtype=float)
    n = len(c)
    f = 0.0
    for i in range(n):
        ind = [j for j in range(n) if c[j] == c[i]]
        size = len(ind)
        row_sum = math.fsum(psm[i, j] for j in range(n))
        in_sum = math.fsum(psm[i, j] for j in ind)
        f += (math.log2(size) + math.log2(row_sum) - 2.0 * math.log2(in_sum)) / n
    return f


def pear_naive(estimate, psm) -> float:
    """Posterior expected adjusted Rand (Fritsch & Ickstadt), eq. pear_2.

    Returns 1 when the denominator vanishes (n < 2, or estimate and PSM both
    say "all together" / both say "all apart"), mirroring the ARI convention.
    """
    c = _labels(estimate).tolist()
    psm = np.asarray(psm, dtype=float)
    n = len(c)
    if n < 2:
        return 1.0
    big_n = n * (n - 1) / 2
    s_ind = 0.0  # sum_{i<j} I{c_i = c_j}
    s_pi = 0.0  # sum_{i<j} pi_ij
    s_both = 0.0  # sum_{i<j} I{c_i = c_j} pi_ij
    for i in range(n):
        for j in range(i + 1, n):
            same = 1.0 if c[i] == c[j] else 0.0
            s_ind += same
            s_pi += psm[i, j]
            s_both += same * psm[i, j]
    off = psm[~np.eye(n, dtype=bool)]
    one_cluster = s_ind == big_n
    singletons = s_ind == 0
    if (one_cluster and np.all(off == 1.0)) or (singletons and np.all(off == 0.0)):
        return 1.0
    expected = s_ind * s_pi / big_n
    num = s_both - expected
    den = 0.5 * (s_ind + s_pi) - expected
    return num / den


def omari_approx_naive(estimate, psm) -> float:
    """1 - PEAR."""
    return 1.0 - pear_naive(estimate, psm)


# ---------------------------------------------------------------------------
# Batch expected losses (many estimates against the same draws, vectorised)
# ---------------------------------------------------------------------------


def _relabel_rows(labels: np.ndarray) -> np.ndarray:
    """Labels mapped to 0..k-1 over the whole matrix (consistent within each row; a row's
    labels need not be contiguous: empty clusters add nothing to any loss)."""
    labels = np.asarray(labels)
    return np.unique(labels, return_inverse=True)[1].reshape(labels.shape).astype(np.int64)


def expected_losses_batch(estimates, draws, family: str, a: float = 1.0, b: float = 1.0) -> np.ndarray:
    """Monte Carlo expected loss of each row of ``estimates`` (C x n) against ``draws`` (H x n).

    The same paper formulas as :data:`LOSS_FROM_STATS`, evaluated on all C x H contingency
    tables at once (one ``bincount``), for checks that score many candidate partitions.
    """
    est = _relabel_rows(np.atleast_2d(estimates))
    d = _relabel_rows(np.atleast_2d(draws))
    C, n = est.shape
    H = d.shape[0]
    R, K = int(d.max()) + 1, int(est.max()) + 1
    # Cell counts of all C x H tables (C, H, R * K); the marginals come from the labels.
    idx = (np.arange(C * H).reshape(C, H, 1) * R + d[None, :, :]) * K + est[:, None, :]
    cells = np.bincount(idx.ravel(), minlength=C * H * R * K).reshape(C, H, R * K)
    rows = np.bincount((np.arange(H)[:, None] * R + d).ravel(), minlength=H * R).reshape(H, R)
    cols = np.bincount((np.arange(C)[:, None] * K + est).ravel(), minlength=C * K).reshape(C, K)
    # Every count is an integer 0..n: each per-count term is read from a table.
    x = np.arange(n + 1, dtype=np.float64)
    p = x / n
    with np.errstate(divide="ignore", invalid="ignore"):
        pl_tab = np.where(x > 0, p * np.log2(np.where(x > 0, p, 1.0)), 0.0)
    sq_tab, c2_tab = p**2, x * (x - 1) / 2

    def sums(tab: np.ndarray):
        """(draw marginal (1, H), estimate marginal (C, 1), cells (C, H)) sums of tab[count]."""
        return tab[rows].sum(axis=1)[None, :], tab[cols].sum(axis=1)[:, None], tab[cells].sum(axis=2)

    if family == "binder":
        sx, sy, sxy = sums(sq_tab)
        vals = a * sx + b * sy - (a + b) * sxy
    elif family == "VI":
        sx, sy, sxy = sums(pl_tab)
        vals = a * sx + b * sy - (a + b) * sxy
    elif family == "omARI":
        A, B, X = sums(c2_tab)
        N = n * (n - 1) / 2
        expected = A * B / N
        den = 0.5 * (A + B) - expected
        trivial = np.abs(den) <= 1e-9  # both one cluster or both all singletons: ARI 1
        vals = np.where(trivial, 0.0, 1.0 - (X - expected) / np.where(trivial, 1.0, den))
    elif family in ("NVI", "ID", "NID"):
        hx, hy, hxy = (-s for s in sums(pl_tab))
        mi = hx + hy - hxy
        if family == "ID":
            vals = np.maximum(hx, hy) - mi
        else:
            top = hxy if family == "NVI" else np.maximum(hx, hy)
            zero = top <= 1e-12
            vals = np.where(zero, 0.0, 1.0 - mi / np.where(zero, 1.0, top))
    else:
        raise ValueError(f"unknown loss family {family!r}")
    return np.broadcast_to(vals, (C, H)).mean(axis=1)


def noisy_draws(seed: int, *, H: int, n: int, k: int, p: float) -> np.ndarray:
    """Test draws: H copies of the partition i -> i mod k of n items, each label replaced with
    probability p by one of 0..k (so k + 1 clusters at most)."""
    rng = np.random.default_rng(seed)
    truth = np.arange(n) % k
    draws = np.tile(truth, (H, 1))
    move = rng.random((H, n)) < p
    draws[move] = rng.integers(0, k + 1, size=move.sum())
    return draws
