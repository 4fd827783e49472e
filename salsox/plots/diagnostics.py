"""Convergence plots of a :class:`~salsox.Diagnosis` (:func:`salsox.diagnose`): the mapped traces
per chain, their rank plots (ArviZ's), and the chains' estimates side by side on one ordering of
the items."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np

from ..diagnostics import Diagnosis
from ..metrics import psm
from ..summaries.linkage import average_linkage, leaf_order
from ._common import _pyplot

__all__ = ["plot_diagnosis_traces", "plot_diagnosis_ranks", "plot_chain_estimates", "plot_chain_gap"]

# Traces drawn by default: the cluster counts and the first references.
_DEFAULT_TRACES = 4


def _check_diagnosis(diag: Any, who: str) -> None:
    if not isinstance(diag, Diagnosis):
        raise TypeError(f"{who} takes a Diagnosis (from salsox.diagnose) first, got {type(diag).__name__}")


def _chosen(diag: Any, traces: Optional[Sequence[Any]]) -> List[int]:
    """Indices of the traces to draw: names or positions in ``diag.trace_names``."""
    names = list(diag.trace_names)
    if traces is None:
        return list(range(min(_DEFAULT_TRACES, len(names))))
    if isinstance(traces, (str, int)):
        traces = [traces]
    out = []
    for t in traces:
        if isinstance(t, str):
            if t not in names:
                raise ValueError(f"traces: no trace {t!r}; the traces are {names}")
            out.append(names.index(t))
        elif isinstance(t, (int, np.integer)) and not isinstance(t, bool) and 0 <= int(t) < len(names):
            out.append(int(t))
        else:
            raise ValueError(f"traces: {t!r} is neither a trace name nor a position in 0..{len(names) - 1}")
    if not out:
        raise ValueError("traces is empty")
    return out


def _chain_colors(c: int) -> np.ndarray:
    from matplotlib import colormaps

    return colormaps["tab10"](np.arange(c) % 10)


def plot_diagnosis_traces(diag: Any, traces: Optional[Sequence[Any]] = None, *, figsize: Any = None) -> Any:
    """Trace plots of mapped values, one panel per trace, one line per chain.

    Chains of one posterior overlap and wander over the same range; a chain stuck in another
    mode stays apart, and a chain still in its burn-in drifts.

    Parameters
    ----------
    diag : Diagnosis
    traces : list of str or int, optional
        Trace names (``diag.trace_names``) or positions; default the cluster counts and the
        first three reference distances.
    figsize : (float, float), optional

    Returns
    -------
    matplotlib Figure

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> chains = example_draws().draws[:200, :30].reshape(4, 50, 30)
    >>> diag = salsox.diagnose(chains, seed=1, n_runs=2, n_references=1)
    >>> fig = salsox.plots.plot_diagnosis_traces(diag)     # n_clusters and the first 3 references
    >>> len(fig.axes)
    4
    """
    _check_diagnosis(diag, "plot_diagnosis_traces")
    plt = _pyplot()
    chosen = _chosen(diag, traces)
    fig, axes = plt.subplots(
        len(chosen), 1, figsize=figsize or (8, 1.9 * len(chosen) + 0.6), sharex=True, layout="constrained",
        squeeze=False,
    )
    colors = _chain_colors(diag.n_chains)
    steps = np.arange(diag.n_draws)
    for ax, t in zip(axes[:, 0], chosen):
        for c in range(diag.n_chains):
            style = "steps-mid" if diag.trace_names[t] == "n_clusters" else "default"
            ax.plot(steps, diag.traces[t, c], color=colors[c], lw=0.8, alpha=0.8, drawstyle=style,
                    label=f"chain {diag.chain_ids[c]}")
        r = diag.rhat[t]
        ax.set_ylabel(diag.trace_names[t])
        ax.set_title(f"{diag.trace_names[t]}: R-hat {r:.3f}" if np.isfinite(r) else diag.trace_names[t],
                     loc="left", fontsize="medium")
    axes[0, 0].legend(loc="upper right", ncols=min(diag.n_chains, 6), fontsize="small", frameon=False)
    axes[-1, 0].set_xlabel("draw")
    return fig


def plot_diagnosis_ranks(
    diag: Any, traces: Optional[Sequence[Any]] = None, *, seed: int = 0, figsize: Any = None
) -> Any:
    """Rank plots (ArviZ's ``plot_rank``): per trace and chain, the histogram of the chain's
    draws' ranks among all draws. Chains of one posterior give flat histograms; a chain in
    another region piles up at one end.

    Tied values (the cluster counts, repeated partitions) are ranked in random order
    (``seed``), so that ties spread evenly rather than filling one bar.

    Parameters
    ----------
    diag : Diagnosis
    traces : list of str or int, optional
        As in :func:`plot_diagnosis_traces`.
    seed : int, default 0
        Order of tied values.
    figsize : (float, float), optional

    Returns
    -------
    matplotlib Figure

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> chains = example_draws().draws[:200, :30].reshape(4, 50, 30)
    >>> diag = salsox.diagnose(chains, seed=1, n_runs=2, n_references=1)
    >>> fig = salsox.plots.plot_diagnosis_ranks(diag, ["n_clusters", "VI to ref 0"])
    >>> [ax.get_title() for ax in fig.axes]
    ['n_clusters', 'VI to ref 0']
    """
    from ..diagnostics._arviz import arviz

    _check_diagnosis(diag, "plot_diagnosis_ranks")
    az = arviz()
    plt = _pyplot()
    chosen = _chosen(diag, traces)
    fig, axes = plt.subplots(1, len(chosen), figsize=figsize or (3.2 * len(chosen), 3.4), layout="constrained",
                             squeeze=False)
    rng = np.random.default_rng(seed)
    for ax, t in zip(axes[0], chosen):
        values = diag.traces[t].ravel()
        jitter = rng.permutation(values.size)
        order = np.lexsort((jitter, values))  # ties in random order
        ranks = np.empty(values.size)
        ranks[order] = np.arange(values.size)
        az.plot_rank({diag.trace_names[t]: ranks.reshape(diag.traces[t].shape)}, ax=ax)
        ax.set_title(diag.trace_names[t], fontsize="medium")
    return fig


def plot_chain_estimates(diag: Any, *, figsize: Any = None, cmap: str = "viridis") -> Any:
    """The chains' estimates side by side, items in one order for all.

    Each panel is one chain: below the diagonal its posterior similarity matrix (PSM, from its
    own draws), above it its estimate's co-clustering (1 when two items share a cluster). The
    items are ordered by average linkage of 1 - the pooled PSM, the same order in every panel,
    so that chains of one posterior look alike.

    Parameters
    ----------
    diag : Diagnosis
    figsize : (float, float), optional
    cmap : str, default "viridis"

    Returns
    -------
    matplotlib Figure

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> chains = example_draws().draws[:200, :30].reshape(4, 50, 30)
    >>> diag = salsox.diagnose(chains, seed=1, n_runs=2, n_references=1)
    >>> fig = salsox.plots.plot_chain_estimates(diag)      # 4 panels and a colour bar
    >>> [ax.get_title().splitlines()[0] for ax in fig.axes[:4]]
    ['chain 0: 4 clusters', 'chain 1: 4 clusters', 'chain 2: 5 clusters', 'chain 3: 4 clusters']
    """
    _check_diagnosis(diag, "plot_chain_estimates")
    plt = _pyplot()
    c = diag.n_chains
    psms = [psm(d) for d in diag.chain_draws]
    pooled = np.mean(psms, axis=0)
    order = leaf_order(average_linkage(1.0 - pooled)) if diag.n_items > 2 else np.arange(diag.n_items)
    cols = min(c, 4)
    rows = -(-c // cols)
    fig, axes = plt.subplots(rows, cols, figsize=figsize or (3.3 * cols, 3.3 * rows + 0.4), layout="constrained",
                             squeeze=False)
    lower = np.tril(np.ones((diag.n_items, diag.n_items), dtype=bool))
    image = None
    for k in range(rows * cols):
        ax = axes.flat[k]
        if k >= c:
            ax.axis("off")
            continue
        est = diag.chain_estimates[k].labels[order]
        together = (est[:, None] == est[None, :]).astype(float)
        shown = np.where(lower, psms[k][np.ix_(order, order)], together)
        image = ax.imshow(shown, cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(
            f"chain {diag.chain_ids[k]}: {diag.chain_estimates[k].n_clusters} clusters\n"
            f"loss {diag.chain_estimates[k].expected_loss:.3g}",
            fontsize="medium",
        )
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.7, label="PSM (below) / estimate (above)")
    return fig


def plot_chain_gap(diag: Any, *, figsize: Any = None, cmap: str = "RdBu_r") -> Any:
    """The gap between chains and its null: is one chain's posterior apart from the others'?

    Left, the matrix of gaps ``G_ij = P_ij - (P_ii + P_jj) / 2`` (``diag.gap``), centred on 0:
    chains of one posterior give gaps near 0 in every cell, a chain apart a row and column of
    positive ones. Right, the histogram of the largest gap over the pairs for each random
    relabelling of blocks of draws between the chains (``diag.gap_null``), with the largest
    gap of the chains as given and its p-value.

    Parameters
    ----------
    diag : Diagnosis
    figsize : (float, float), optional
    cmap : str, default "RdBu_r"
        A diverging colour map (0 in the middle).

    Returns
    -------
    matplotlib Figure

    Examples
    --------
    >>> from salsox.datasets import example_draws
    >>> chains = example_draws().draws[:200, :30].reshape(4, 50, 30)
    >>> diag = salsox.diagnose(chains, seed=1, n_runs=2, n_references=1)
    >>> fig = salsox.plots.plot_chain_gap(diag)
    >>> fig.axes[1].get_title().startswith("largest gap")
    True
    """
    _check_diagnosis(diag, "plot_chain_gap")
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=figsize or (9, 3.8), layout="constrained")
    c = diag.n_chains
    bound = float(np.max(np.abs(diag.gap))) or 1.0
    image = left.imshow(diag.gap, cmap=cmap, vmin=-bound, vmax=bound, interpolation="nearest")
    ticks = [str(k) for k in diag.chain_ids]
    left.set_xticks(range(c), ticks)
    left.set_yticks(range(c), ticks)
    left.set_xlabel("chain")
    left.set_ylabel("chain")
    if c <= 8:
        for i in range(c):
            for j in range(c):
                left.text(j, i, f"{diag.gap[i, j]:.3g}", ha="center", va="center", fontsize="small")
    left.set_title(f"gap G (expected {diag.distance})", fontsize="medium")
    fig.colorbar(image, ax=left, shrink=0.8)
    i, j = diag.gap_pair
    right.hist(diag.gap_null, bins=40, color="0.6")
    right.axvline(diag.gap[i, j], color="C3", lw=2, label=f"chains {diag.chain_ids[i]}, {diag.chain_ids[j]}")
    right.set_xlabel("largest gap over the pairs of chains")
    right.set_ylabel("relabellings")
    right.legend(frameon=False, fontsize="small")
    right.set_title(f"largest gap {diag.gap[i, j]:.3g}, p = {diag.gap_pvalue:.3g}", fontsize="medium")
    return fig
