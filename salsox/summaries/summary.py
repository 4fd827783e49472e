"""How good is each cluster of an estimate? Per-item and per-cluster summaries from the PSM.

:func:`summarize` (also ``Estimate.summary(draws)``) scores any partition against posterior
draws, in the spirit of R salso's ``summary.salso.estimate``:

* per item: its mean posterior similarity to the other members of its cluster, and its score;
* per cluster: size, exemplar (the member with the highest mean similarity to the rest), mean
  within-cluster and between-cluster similarity;
* an item order (clusters side by side, best-fitting items first) for heatmaps.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any, Dict, List, Optional, Union

import numpy as np

from .._validation import as_integer_array, as_label_matrix, check_n_jobs
from ..io import PSM, Draws, labels_series, matched, pandas_index
from ..losses import VI, Binder, Loss, PSMLoss, get_loss
from ..metrics import as_truth, psm
from ..metrics.evaluation import _losses
from .display import html_block, html_table, item_label
from .linkage import average_linkage, leaf_order

__all__ = ["Summary", "summarize"]

_EXEMPLARS = ("similarity", "score")
_ORDERS = ("similarity", "score", "hclust")

# Cap (bytes) on the H x m blocks used for the closed-form scores; larger clusters are chunked.
_SCORE_BLOCK_BYTES = 64 * 2**20


@dataclasses.dataclass(frozen=True, eq=False)
class Summary:
    """Per-item and per-cluster summary of a partition estimate.

    Items and clusters are numbered from 0; cluster ``k`` is label ``k`` of the canonical
    labels (0..K-1 in order of first appearance).

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
        The estimate, canonical labels.
    loss : Loss
        The loss behind ``expected_loss`` and ``item_score``.
    expected_loss : float
        Monte Carlo expected loss of the estimate.
    psm : ndarray of shape (n, n)
        Posterior similarity matrix.
    item_similarity : ndarray of shape (n,)
        Mean posterior similarity of each item to the *other* members of its cluster (NaN
        for an item alone in its cluster).
    item_score : ndarray of shape (n,)
        R salso's score: the expected loss, over the draws restricted to the other members
        of the item's cluster, of putting those members in one cluster (0 when there are
        none). Within a cluster, a low score marks an item whose removal leaves a more
        coherent cluster, i.e. an item that fits its cluster poorly.
    sizes : ndarray of shape (K,)
    exemplars : ndarray of shape (K,)
        Per cluster, the member with the highest ``item_similarity``, or with
        ``exemplar="score"`` the highest ``item_score`` (R's rule); lowest index on ties, the
        only member of a singleton.
    within_similarity : ndarray of shape (K,)
        Mean posterior similarity over pairs of distinct members (NaN for singletons).
    between_similarity : ndarray of shape (K,)
        Mean posterior similarity between members and non-members (NaN when K = 1).
    cluster_similarity : ndarray of shape (K, K)
        Mean similarity between clusters k and l; the diagonal is ``within_similarity``.
    cluster_linkage : ndarray of shape (K - 1, 4)
        Average linkage of the clusters on 1 - similarity (scipy's layout).
    cluster_order : ndarray of shape (K,)
        Clusters in dendrogram order (similar clusters next to each other).
    order : ndarray of shape (n,)
        Items for display (see ``order`` of :func:`summarize`): by default clusters in
        ``cluster_order``, within each the most similar first.
    item_names : ndarray of shape (n,) or None
        The items' names when the draws (or the estimate) carried them; reports and tables
        show items by name then.
    cluster_labels : ndarray of shape (K,) or None
        The user's label of each cluster when ``summarize`` was given labels other than
        0..K-1 in order of first appearance (e.g. R's 1-based labels): cluster ``k`` is the
        user's ``cluster_labels[k]``. Reports, ``to_dataframe`` and the plots show these
        labels; ``labels``, the per-cluster arrays and ``to_dict`` keep the canonical numbers
        (``to_dict`` lists the user's labels under ``"cluster_labels"``). None otherwise.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1]]
    >>> s = salsox.summarize([0, 0, 1, 1], draws)
    >>> s.sizes, s.exemplars
    (array([2, 2]), array([0, 2]))
    >>> s.to_dataframe()[["cluster", "similarity"]]
          cluster  similarity
    item
    0           0    1.000000
    1           0    1.000000
    2           1    0.333333
    3           1    0.333333
    """

    labels: np.ndarray
    loss: Loss
    expected_loss: float
    psm: np.ndarray
    item_similarity: np.ndarray
    item_score: np.ndarray
    sizes: np.ndarray
    exemplars: np.ndarray
    within_similarity: np.ndarray
    between_similarity: np.ndarray
    cluster_similarity: np.ndarray
    cluster_linkage: np.ndarray
    cluster_order: np.ndarray
    order: np.ndarray
    item_names: Optional[np.ndarray] = None
    cluster_labels: Optional[np.ndarray] = None

    @property
    def cluster_ids(self) -> np.ndarray:
        """The label shown for each cluster: the user's (``cluster_labels``) when given, else
        0..K-1."""
        return np.arange(self.n_clusters) if self.cluster_labels is None else np.asarray(self.cluster_labels)

    @property
    def n_items(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_clusters(self) -> int:
        return int(self.sizes.shape[0])

    @property
    def items(self) -> Dict[str, np.ndarray]:
        """Per-item table as columns (``pandas.DataFrame(summary.items)`` makes a frame)."""
        return {
            "item": np.arange(self.n_items),
            "cluster": self.labels.copy(),
            "similarity": self.item_similarity.copy(),
            "score": self.item_score.copy(),
        }

    @property
    def clusters(self) -> Dict[str, np.ndarray]:
        """Per-cluster table as columns."""
        return {
            "cluster": np.arange(self.n_clusters),
            "size": self.sizes.copy(),
            "exemplar": self.exemplars.copy(),
            "within": self.within_similarity.copy(),
            "between": self.between_similarity.copy(),
        }

    def to_series(self, name: str = "cluster") -> Any:
        """The estimate's labels as a ``pandas.Series`` indexed by item name (by position when
        unknown), as ``Estimate.to_series()``."""
        return labels_series(self.labels, self.item_names, name)

    def to_dataframe(self, table: str = "items") -> Any:
        """The per-item table (``"items"``, indexed by item name, or position when unknown)
        or the per-cluster one (``"clusters"``) as a ``pandas.DataFrame`` (pandas is
        imported only here)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Summary.to_dataframe() needs pandas: pip install pandas") from None
        if table == "items":
            columns = self.items
            columns["cluster"] = self.cluster_ids[columns["cluster"]]
            columns.pop("item")
            return pd.DataFrame(columns, index=pandas_index(self.item_names, len(self.labels)))
        if table == "clusters":
            columns = self.clusters
            if self.item_names is not None:
                columns["exemplar_name"] = np.asarray(self.item_names)[columns["exemplar"]]
            columns["cluster"] = self.cluster_ids
            return pd.DataFrame(columns).set_index("cluster")
        raise ValueError(f"table must be 'items' or 'clusters', got {table!r}")

    def to_dict(self, *, one_based: bool = False) -> Dict[str, Any]:
        """JSON-ready dict (NaN becomes None); the PSM is left out. ``one_based`` numbers
        items and clusters from 1 (labels, ``item``, ``cluster``, ``exemplar``, orders), as R
        does. ``item_names`` is the list of names (None when unknown)."""

        def clean(a: np.ndarray) -> List[Any]:
            return [None if isinstance(v, float) and not np.isfinite(v) else v for v in a.tolist()]

        shift = 1 if one_based else 0
        items = self.items
        clusters = self.clusters
        for table, key in ((items, "item"), (items, "cluster"), (clusters, "cluster"), (clusters, "exemplar")):
            table[key] = table[key] + shift
        names = None if self.item_names is None else [str(v) for v in self.item_names]
        return {
            "n_items": self.n_items,
            "n_clusters": self.n_clusters,
            "loss": self.loss.name,
            "loss_params": self.loss.params,
            "expected_loss": self.expected_loss,
            "labels": (self.labels + shift).tolist(),
            "item_names": names,
            "cluster_labels": None if self.cluster_labels is None else self.cluster_labels.tolist(),
            "items": {k: clean(v) for k, v in items.items()},
            "clusters": {k: clean(v) for k, v in clusters.items()},
            "cluster_similarity": [clean(row) for row in self.cluster_similarity],
            "cluster_order": (self.cluster_order + shift).tolist(),
            "order": (self.order + shift).tolist(),
        }

    def to_text(self, n_uncertain: int = 5, *, one_based: bool = False) -> str:
        """A printable report: the cluster table and the least certain items, by name when
        known (else by position; ``one_based`` numbers items and clusters from 1). Clusters
        show the user's labels when ``summarize`` was given its own (``cluster_labels``)."""
        shift = 1 if one_based and self.cluster_labels is None else 0
        exemplars = [item_label(i, self.item_names, one_based) for i in self.exemplars]
        width = max([8] + [len(e) for e in exemplars])
        lines = [
            f"{self.n_clusters} clusters of {self.n_items} items; loss {self.loss!r}, "
            f"expected loss {self.expected_loss:.6g}",
            f"{'cluster':>7} {'size':>6} {'exemplar':>{width}} {'within':>7} {'between':>7}",
        ]
        ids = self.cluster_ids
        for k in range(self.n_clusters):
            lines.append(
                f"{ids[k] + shift:>7d} {self.sizes[k]:>6d} {exemplars[k]:>{width}} "
                f"{_fmt(self.within_similarity[k]):>7} {_fmt(self.between_similarity[k]):>7}"
            )
        uncertain = self._least_certain(n_uncertain, one_based)
        if uncertain:
            lines.append(uncertain)
        return "\n".join(lines)

    def _least_certain(self, n_uncertain: int, one_based: bool = False) -> str:
        """The report's line of least certain items ("" when there are none to show)."""
        finite = np.flatnonzero(np.isfinite(self.item_similarity))
        if n_uncertain <= 0 or not finite.size:
            return ""
        worst = finite[np.argsort(self.item_similarity[finite], kind="stable")[:n_uncertain]]
        shown = ", ".join(f"{item_label(i, self.item_names, one_based)} ({self.item_similarity[i]:.2f})" for i in worst)
        return f"least certain items (mean similarity to own cluster): {shown}"

    def _repr_html_(self) -> str:
        rows = [
            (
                self.cluster_ids[k],
                int(self.sizes[k]),
                item_label(int(self.exemplars[k]), self.item_names),
                _fmt(self.within_similarity[k]),
                _fmt(self.between_similarity[k]),
            )
            for k in range(self.n_clusters)
        ]
        title = (
            f"Summary: {self.n_clusters} clusters of {self.n_items} items; loss {self.loss!r}, "
            f"expected loss {self.expected_loss:.6g}"
        )
        table = html_table(("cluster", "size", "exemplar", "within", "between"), rows)
        uncertain = self._least_certain(5)
        return html_block(title, table + (f"<p>{html.escape(uncertain)}</p>" if uncertain else ""))

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (
            f"Summary(n_items={self.n_items}, n_clusters={self.n_clusters}, "
            f"expected_loss={self.expected_loss:.6g}, sizes={self.sizes.tolist()})"
        )


def _fmt(x: float) -> str:
    return "-" if not np.isfinite(x) else f"{x:.3f}"


def summarize(
    labels: Any,
    draws: Any,
    loss: Union[str, Loss] = "VI",
    *,
    exemplar: str = "similarity",
    order: str = "similarity",
    n_jobs: Optional[int] = None,
) -> Summary:
    """Summarise a partition estimate against posterior draws.

    Parameters
    ----------
    labels : array-like of shape (n,), or Estimate
        The estimate (any integer labels). Clusters are numbered 0..K-1 in order of first
        appearance; labels other than those are kept as ``cluster_labels`` and shown in the
        reports, tables and plots.
    draws : array-like (H, n), Draws, PSM, xarray DataArray or (InferenceData, name)
        Posterior draws of the partition. A :class:`PSM` suffices for the similarities; the
        scores then need a loss computable from it (``"binder"``, ``"VI.lb"``,
        ``"omARI.approx"``).
    loss : str or Loss, default "VI"
        Loss for the expected loss and the item scores (an Estimate's own loss is used by
        ``Estimate.summary``).
    exemplar : {"similarity", "score"}, default "similarity"
        Each cluster's exemplar: the member with the highest mean similarity to the others,
        or (``"score"``, R salso's rule) the member with the highest ``item_score``.
    order : {"similarity", "score", "hclust"}, default "similarity"
        Item order for display. ``"similarity"``: clusters in ``cluster_order``, within each
        the most similar items first. ``"score"``: clusters in ``cluster_order``, within each
        by decreasing ``item_score`` (R's ``orderingMethod = 1`` within clusters; R orders the
        clusters by its loss dendrogram instead, see docs/coming_from_r.md). ``"hclust"`` (R's
        ``orderingMethod = 2``): clusters by label, within each in the leaf order of a
        complete-linkage clustering of all items on 1 - PSM (R's ``hclust`` default; scipy
        may order tied merges differently).
    n_jobs : int, optional
        Threads for the PSM and loss evaluations (default: the CPUs the process may use).

    Returns
    -------
    Summary

    Notes
    -----
    Builds the n x n PSM. Item scores cost O(H n) for ``"binder"`` and ``"VI"`` (closed
    form) and O(H sum_k n_k^2) for other count losses (one evaluation per item).

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1]]
    >>> s = salsox.summarize([0, 0, 1, 1], draws, "VI")
    >>> print(s)
    2 clusters of 4 items; loss VI(a=1.0, b=1.0), expected loss 0.562907
    cluster   size exemplar  within between
          0      2        0   1.000   0.167
          1      2        2   0.333   0.167
    least certain items (mean similarity to own cluster): 2 (0.33), 3 (0.33), 0 (1.00), 1 (1.00)
    >>> s.item_similarity
    array([1.        , 1.        , 0.33333333, 0.33333333])
    """
    loss = get_loss(loss)
    if exemplar not in _EXEMPLARS:
        raise ValueError(f"exemplar must be one of {', '.join(map(repr, _EXEMPLARS))}, got {exemplar!r}")
    if order not in _ORDERS:
        raise ValueError(f"order must be one of {', '.join(map(repr, _ORDERS))}, got {order!r}")
    jobs = check_n_jobs(n_jobs)
    truth = as_truth(draws, loss)
    n = truth.n_items
    # The labels' items matched to the draws' by name (salsox.io.item_index).
    labels, names = matched(labels, truth.item_names, n, "labels")
    rows, _ = as_label_matrix(labels, "labels", n)
    if rows.shape[0] != 1:
        raise ValueError(f"labels must be one partition (n labels), got {rows.shape[0]} rows")
    est = rows[0].astype(np.intp)
    k = int(est.max()) + 1
    given = as_integer_array(labels, "labels").reshape(-1)[np.unique(est, return_index=True)[1]]
    cluster_labels = None if np.array_equal(given, np.arange(k)) else given.astype(np.int64)

    if isinstance(truth, PSM):
        if not loss._accepts_psm:
            raise ValueError(
                f"loss {loss.name!r} needs draws, not a PSM; pass the draws, or a loss computable "
                "from a PSM ('binder', 'VI.lb', 'omARI.approx')"
            )
        p = truth.matrix
    else:
        p = psm(truth, jobs)

    # PSM losses would rebuild the PSM from the draws: hand them the one just built.
    scored = PSM(p) if isinstance(loss, PSMLoss) and not isinstance(truth, PSM) else truth
    expected_loss = float(_losses(rows, scored, loss, jobs)[0])

    onehot = np.zeros((n, k))
    onehot[np.arange(n), est] = 1.0
    sizes = np.bincount(est, minlength=k)
    to_cluster = p @ onehot  # (n, k): summed similarity of item i to the members of cluster l
    block = onehot.T @ to_cluster  # (k, k): summed similarity between clusters
    own = to_cluster[np.arange(n), est]
    with np.errstate(invalid="ignore", divide="ignore"):
        item_similarity = np.where(sizes[est] > 1, (own - 1.0) / (sizes[est] - 1), np.nan)
        cluster_similarity = block / np.outer(sizes, sizes).astype(np.float64)
        within = np.where(sizes > 1, (np.diag(block) - sizes) / (sizes * (sizes - 1.0)), np.nan)
        total = block.sum(axis=1)
        between = np.where(n - sizes > 0, (total - np.diag(block)) / (sizes * (n - sizes * 1.0)), np.nan)
    np.fill_diagonal(cluster_similarity, within)

    score = _item_scores(est, sizes, truth, p, loss)

    exemplars = np.empty(k, dtype=np.intp)
    for c in range(k):
        members = np.flatnonzero(est == c)
        if exemplar == "score":  # R: which.max, the first of equal scores
            exemplars[c] = members[int(np.argmax(score[members]))]
            continue
        sims = item_similarity[members]
        exemplars[c] = members[0] if not np.any(np.isfinite(sims)) else members[int(np.nanargmax(sims))]

    # Order clusters by average linkage on 1 - similarity (the item-level UPGMA continued from
    # the estimate's clusters); within a cluster, best-fitting items first.
    off = cluster_similarity.copy()
    z = average_linkage(1.0 - off, weights=sizes) if k > 1 else np.empty((0, 4))
    cluster_order = leaf_order(z) if k > 1 else np.zeros(1, dtype=np.intp)
    rank = np.empty(k, dtype=np.intp)
    rank[cluster_order] = np.arange(k)
    if order == "hclust":
        item_order = np.lexsort((_hclust_rank(p), est))
    else:
        fit = score if order == "score" else np.where(np.isfinite(item_similarity), item_similarity, 1.0)
        item_order = np.lexsort((np.arange(n), -fit, rank[est]))

    return Summary(
        labels=est,
        loss=loss,
        expected_loss=expected_loss,
        psm=p,
        item_similarity=item_similarity,
        item_score=score,
        sizes=sizes,
        exemplars=exemplars,
        within_similarity=within,
        between_similarity=between,
        cluster_similarity=cluster_similarity,
        cluster_linkage=z,
        cluster_order=cluster_order,
        order=item_order,
        item_names=names,
        cluster_labels=cluster_labels,
    )


def _hclust_rank(p: np.ndarray) -> np.ndarray:
    """Each item's position in the leaf order of complete linkage on 1 - PSM (R's
    ``order(hclust(as.dist(1 - psm))$order)``)."""
    n = p.shape[0]
    rank = np.zeros(n, dtype=np.intp)
    if n < 2:
        return rank
    from scipy.cluster import hierarchy  # deferred: scipy would double `import salsox`'s time
    from scipy.spatial.distance import squareform

    d = 1.0 - 0.5 * (p + p.T)  # symmetric to rounding, as squareform requires
    np.fill_diagonal(d, 0.0)
    leaves = hierarchy.leaves_list(hierarchy.linkage(squareform(d, checks=False), method="complete"))
    rank[leaves] = np.arange(n)
    return rank


def _draws_matrix(d: Draws) -> np.ndarray:
    """The draws relabelled 0..k_h-1, as an H x n int32 matrix."""
    return np.stack([d.draw(h) for h in range(d.n_draws)]).astype(np.int32, copy=False)


def _item_scores(est: np.ndarray, sizes: np.ndarray, truth: Union[Draws, PSM], p: np.ndarray, loss: Loss) -> np.ndarray:
    n = est.shape[0]
    score = np.zeros(n)
    from_psm = isinstance(truth, PSM) or isinstance(loss, PSMLoss)
    matrix: Optional[np.ndarray] = None
    for c in range(sizes.shape[0]):
        members = np.flatnonzero(est == c)
        m = members.shape[0]
        if m <= 2:
            continue  # 0 or 1 other member: one cluster is exactly right, loss 0
        if type(loss) is Binder:
            # Exact from the PSM whether draws or a PSM were given (the loss is linear in it).
            score[members] = _binder_score_from_psm(p, members, loss.b)
        elif from_psm:
            ones = np.zeros((1, m - 1), dtype=np.int32)
            for j, i in enumerate(members):
                others = np.delete(members, j)
                score[i] = float(_losses(ones, PSM(p[np.ix_(others, others)]), loss, 1)[0])
        else:
            if matrix is None:
                matrix = _draws_matrix(truth)  # type: ignore[arg-type]
            if type(loss) is VI:
                score[members] = _vi_scores(matrix[:, members], loss.b)
            else:
                ones = np.zeros((1, m - 1), dtype=np.int32)
                block = matrix[:, members]
                for j, i in enumerate(members):
                    sub = Draws(np.delete(block, j, axis=1))
                    score[i] = float(_losses(ones, sub, loss, 1)[0])
    return score


def _binder_score_from_psm(p: np.ndarray, members: np.ndarray, b: float) -> np.ndarray:
    # E sum_s n_s^2 over the other members = sum of their PSM block (diagonal included).
    block = p[np.ix_(members, members)]
    total = block.sum()
    m1 = members.shape[0] - 1.0
    rest = total - 2.0 * block.sum(axis=1) + 1.0
    return b * (1.0 - rest / (m1 * m1))


def _vi_scores(sub: np.ndarray, b: float) -> np.ndarray:
    """VI scores of one cluster's members from its H x m block of draw labels.

    For a one-cluster estimate of m' items whose draw clusters have sizes n_s, the
    generalised VI is b (log2 m' - sum_s n_s log2 n_s / m'). Leaving item i out lowers one
    n_s by one, so each item costs O(H) once the counts are tabulated.
    """
    h, m = sub.shape
    kmax = int(sub.max()) + 1
    flat = sub.astype(np.int64) + (np.arange(h, dtype=np.int64) * kmax)[:, None]
    counts = np.bincount(flat.ravel(), minlength=h * kmax).reshape(h, kmax).astype(np.float64)
    m1 = float(m - 1)

    def xlog2x(x: np.ndarray) -> np.ndarray:
        out = np.zeros_like(x)
        pos = x > 0
        out[pos] = x[pos] * np.log2(x[pos])
        return out

    total = xlog2x(counts).sum(axis=1)  # (H,)
    out = np.empty(m)
    step = max(1, _SCORE_BLOCK_BYTES // (8 * 4 * max(h, 1)))  # columns per chunk
    for start in range(0, m, step):
        cols = slice(start, min(m, start + step))
        own = np.take_along_axis(counts, sub[:, cols].astype(np.intp), axis=1)
        rest = total[:, None] - xlog2x(own) + xlog2x(own - 1.0)
        out[cols] = b * (np.log2(m1) - rest / m1).mean(axis=0)
    return out
