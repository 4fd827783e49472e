"""Dendrograms of an estimate's clusters: R salso's expected-loss merge dendrogram, and average
linkage on 1 - posterior similarity (of the clusters, or of the items)."""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import numpy as np

from ..io import PSM, Draws
from ..losses import Loss, get_loss
from ..metrics import as_truth, partition_loss
from ..summaries import Summary
from ..summaries.linkage import average_linkage, leaf_order
from ._common import _new_axes, _summary_of, cluster_colors, text_color, thin_tick_labels


# Item-level dendrograms are O(n^2) memory and unreadable beyond this.
_DENDROGRAM_MAX_ITEMS = 5000

# The loss dendrogram evaluates O(K^3) candidate partitions (K clusters).
_LOSS_DENDROGRAM_MAX_CLUSTERS = 60


def loss_linkage(
    labels: Any, truth: Any, loss: Union[str, Loss] = "VI", *, n_jobs: Optional[int] = None
) -> Tuple[np.ndarray, np.ndarray]:
    """R salso's expected-loss dendrogram of an estimate's clusters (``as.dendrogram`` of a
    salso estimate, the dendrogram of ``summary(estimate)``).

    Starting from the estimate, the two clusters whose merge gives the partition of lowest
    expected loss are merged, until one cluster is left; each merge sits at that expected
    loss. A leaf sits at its cluster's own expected loss (the loss of the cluster as one block
    against the draws restricted to its items), rescaled as R does to run from 0 (the
    tightest cluster) to the estimate's expected loss (the loosest); when all are equal,
    every leaf is at the estimate's expected loss.

    Parameters
    ----------
    labels : array-like of shape (n,)
        The estimate (any integer labels; cluster k is the k-th label in order of first
        appearance).
    truth : draws (H, n), Draws, or PSM
        A PSM only for losses computable from it (``"binder"``, ``"VI.lb"``, ``"omARI.approx"``).
    loss : str or Loss, default "VI"
    n_jobs : int, optional

    Returns
    -------
    z : ndarray of shape (K - 1, 4)
        scipy's linkage layout: row t merges ``z[t, 0]`` and ``z[t, 1]`` (clusters 0..K-1, then
        K + t for the cluster formed at row t) at expected loss ``z[t, 2]``; ``z[t, 3]`` is the
        number of estimate clusters merged. Heights need not increase.
    leaf_heights : ndarray of shape (K,)

    Examples
    --------
    >>> draws = [[0, 0, 1, 1, 2], [0, 0, 1, 1, 1], [0, 0, 1, 2, 2], [0, 1, 1, 2, 2], [0, 0, 1, 1, 2]]
    >>> z, leaf_heights = salsox.plots.loss_linkage([0, 0, 1, 1, 2], draws, "VI")
    >>> z.round(3)  # clusters 1 and 2 merge first, then cluster 0 joins them
    array([[1.   , 2.   , 0.601, 2.   ],
           [0.   , 3.   , 1.412, 3.   ]])
    >>> leaf_heights.round(3)
    array([0.295, 0.59 , 0.   ])
    """
    from .._validation import as_label_matrix

    loss = get_loss(loss)
    t = as_truth(truth, loss, "truth")
    est = as_label_matrix(labels, "labels", t.n_items)[0][0].astype(np.int32)
    k = int(est.max()) + 1
    if k > _LOSS_DENDROGRAM_MAX_CLUSTERS:
        raise ValueError(
            f"the loss dendrogram of {k} clusters evaluates about {k ** 3 // 6} partitions (limit "
            f"{_LOSS_DENDROGRAM_MAX_CLUSTERS} clusters); use kind='similarity'"
        )
    height = float(partition_loss(est, t, loss, n_jobs=n_jobs))
    own = np.empty(k)
    full = t.matrix if isinstance(t, PSM) else t.labels_matrix()
    for c in range(k):
        members = np.flatnonzero(est == c)
        part: Union[PSM, Draws] = PSM(full[np.ix_(members, members)]) if isinstance(t, PSM) else Draws(full[:, members])
        own[c] = float(partition_loss(np.zeros(members.shape[0], dtype=np.int32), part, loss, n_jobs=n_jobs))
    spread = own.max() - own.min()
    leaf_heights = height * (own - own.min()) / spread if spread > 0 else np.full(k, height)
    z = np.empty((max(k - 1, 0), 4))
    name = np.arange(k)  # linkage name of the cluster now carrying each label
    count = np.ones(k)
    current = est.copy()
    alive = list(range(k))
    for step in range(k - 1):
        pairs = [(a, b) for i, a in enumerate(alive) for b in alive[i + 1:]]
        candidates = np.repeat(current[None, :], len(pairs), axis=0)
        for row, (a, b) in enumerate(pairs):
            candidates[row][current == b] = a
        values = np.atleast_1d(partition_loss(candidates, t, loss, n_jobs=n_jobs))
        best = int(np.argmin(values))  # the first pair on ties, as R's which.min
        a, b = pairs[best]
        z[step] = (name[a], name[b], float(values[best]), count[a] + count[b])
        current[current == b] = a
        count[a] += count[b]
        name[a] = k + step
        alive.remove(b)
    return z, leaf_heights


def _loss_truth(s: Summary, draws: Any) -> Any:
    if draws is not None:
        return draws
    if s.loss._accepts_psm:
        return PSM(s.psm)
    raise ValueError(
        f"kind='loss' with loss {s.loss.name!r} needs the draws (a Summary holds only the PSM): "
        "plot_dendrogram(summary, draws, kind='loss')"
    )


def plot_dendrogram(
    x: Any,
    draws: Any = None,
    *,
    loss: Any = None,
    kind: str = "similarity",
    leaves: str = "clusters",
    ax: Any = None,
    title: Optional[str] = None,
) -> Any:
    """Dendrogram of the estimate's clusters.

    Parameters
    ----------
    x, draws, loss, ax, title
        As in :func:`plot_heatmap`. With ``kind="loss"``, ``draws`` may accompany a Summary
        (which holds only the PSM): they are needed for losses not computable from the PSM,
        such as VI.
    kind : {"similarity", "loss"}, default "similarity"
        ``"similarity"``: average linkage on 1 - posterior similarity; a cluster's leaf sits at
        1 - its mean within-cluster similarity (singletons at 0). ``"loss"``: R salso's
        dendrogram, merges at the expected loss of the merged partition (see
        :func:`loss_linkage`).
    leaves : {"clusters", "items"}, default "clusters"
        ``"clusters"``: the estimate's clusters are the leaves (labelled with their sizes; when
        labels would overlap, the smaller clusters' are left out). ``"items"`` (similarity
        only): the full item tree (up to 5000 items), leaves marked with the colour of their
        cluster.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> draws = example_draws().draws
    >>> ax = salsox.plots.plot_dendrogram(salsox.salso(draws, seed=1).summary())
    >>> ax.get_ylabel() != ""
    True
    """
    from matplotlib.collections import LineCollection

    if kind not in ("similarity", "loss"):
        raise ValueError(f"kind must be 'similarity' or 'loss', got {kind!r}")
    if leaves not in ("clusters", "items"):
        raise ValueError(f"leaves must be 'clusters' or 'items', got {leaves!r}")
    if kind == "loss" and leaves != "clusters":
        raise ValueError("kind='loss' has the estimate's clusters as leaves: use leaves='clusters'")
    if kind == "loss" and isinstance(x, Summary):
        s = x
        truth = _loss_truth(s, draws)
    else:
        s = _summary_of(x, draws, loss)
        truth = draws
    k = s.n_clusters
    colors, _ = cluster_colors(s.sizes)
    if leaves == "items" and s.n_items > _DENDROGRAM_MAX_ITEMS:
        raise ValueError(
            f"an item dendrogram of {s.n_items} items is too large (limit {_DENDROGRAM_MAX_ITEMS}); "
            "use leaves='clusters'"
        )
    width = max(6.0, 0.3 * k + 2.5) if leaves == "clusters" else 6.0
    ax = _new_axes(ax, (width, 4.2))
    if kind == "loss":
        z, leaf_y = loss_linkage(s.labels, truth, s.loss)
        ylabel = f"expected loss ({s.loss.name})"
        default = "Expected-loss dendrogram (as R salso)"
    elif leaves == "clusters":
        z = s.cluster_linkage
        leaf_y = np.where(np.isfinite(s.within_similarity), 1.0 - s.within_similarity, 0.0)
        ylabel = "1 - mean posterior similarity"
        default = "Average-linkage dendrogram of the clusters"
    else:
        z = average_linkage(1.0 - s.psm)
        leaf_y = np.zeros(s.n_items)
        ylabel = "1 - mean posterior similarity"
        default = "Average-linkage dendrogram of the items"
    segments, order, heights = dendrogram_layout(z, leaf_y)
    ax.add_collection(LineCollection(list(segments), colors="0.25", linewidths=0.9))
    m = order.shape[0]
    values = np.r_[heights, leaf_y]
    top, bottom = float(values.max()), min(0.0, float(values.min()))
    span = max(top - bottom, 1e-9)
    ax.set_xlim(-0.75, m - 0.25)
    ax.set_ylim(bottom - 0.04 * span, top + 0.06 * span)
    ax.set_ylabel(ylabel)
    ax.set_title(title if title is not None else (default if k > 1 else "One cluster: nothing to merge"))
    if leaves == "clusters":
        ax.scatter(np.arange(m), leaf_y[order], s=50, color=colors[order], zorder=3, edgecolors="white")
        ax.set_xlabel("clusters of the estimate (n: size)")
        texts = [f"{s.cluster_ids[c]} (n={s.sizes[c]})" for c in order]
        ax.tick_params(axis="x", labelsize=8, labelrotation=90 if m > 8 else 0, length=2)
        (kept,) = thin_tick_labels([(ax, "x", np.arange(m), texts, s.sizes[order], 2.0)])
        for text, c in zip(ax.get_xticklabels(), order[kept]):
            text.set_color(text_color(colors[c]))
    else:
        ax.scatter(np.arange(m), leaf_y[order], s=6, color=colors[s.labels[order]], zorder=3, marker="s")
        ax.set_xticks([])
        ax.set_xlabel("items (colour: cluster in the estimate)")
    return ax


def dendrogram_layout(
    z: np.ndarray, leaf_heights: Optional[np.ndarray] = None
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segments to draw the dendrogram of linkage ``z``.

    Parameters
    ----------
    z : ndarray of shape (m - 1, 4)
        scipy's linkage layout.
    leaf_heights : ndarray of shape (m,), optional
        Where each leaf's branch starts (default 0).

    Returns
    -------
    segments : ndarray of shape (m - 1, 4, 2)
        For each merge, the four points of its upside-down U: (x, y) pairs.
    order : ndarray of shape (m,)
        Leaves left to right; leaf ``order[i]`` sits at x = i.
    heights : ndarray of shape (m - 1,)
    """
    m = z.shape[0] + 1
    order = leaf_order(z)
    x = np.empty(2 * m - 1)
    y = np.zeros(2 * m - 1)
    if leaf_heights is not None:
        y[:m] = leaf_heights
    x[order] = np.arange(m, dtype=np.float64)
    segments = np.empty((m - 1, 4, 2))
    for t in range(m - 1):
        a, b, h = int(z[t, 0]), int(z[t, 1]), float(z[t, 2])
        segments[t] = ((x[a], y[a]), (x[a], h), (x[b], h), (x[b], y[b]))
        x[m + t] = 0.5 * (x[a] + x[b])
        y[m + t] = h
    return segments, order, z[:, 2].copy()
