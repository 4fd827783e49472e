"""What :func:`salsox.wasabi` returns, the meet of its particles, and the elbow curve."""

from __future__ import annotations

import dataclasses
import html
from typing import Any, Dict, List, Optional

import numpy as np

from ..._validation import as_label_matrix, relabel_rows
from ...io import pandas_index
from .contributions import contribution_rows

__all__ = ["WasabiResult", "Meet", "Elbow", "meet"]


@dataclasses.dataclass(frozen=True, eq=False)
class Meet:
    """The meet of some partitions (their coarsest common refinement) with a weighted
    co-clustering matrix over its clusters.

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
        The meet, canonical labels 0..K-1: two items share a cluster exactly when they share
        one in every partition.
    coclustering : ndarray of float, shape (K, K)
        Entry (a, b): the total weight of the partitions that put meet clusters a and b
        together (each meet cluster lies inside one cluster of every partition); the diagonal
        is the total weight.
    """

    labels: np.ndarray
    coclustering: np.ndarray

    @property
    def n_clusters(self) -> int:
        return int(self.coclustering.shape[0])


def meet(partitions: Any, weights: Optional[Any] = None) -> Meet:
    """The meet of partitions (rows, each of n labels), with a weighted co-clustering matrix.

    Built from the distinct label columns, in O(L n log n), never from a table of all label
    combinations (the R package's prod K_l cells fail for 8 partitions of 20 clusters).

    Parameters
    ----------
    partitions : array-like of shape (L, n) or (n,)
    weights : array-like of shape (L,), optional
        Weights of the partitions (default: 1 / L each).
    """
    labels, _ = as_label_matrix(partitions, "partitions")
    count = labels.shape[0]
    if weights is None:
        w = np.full(count, 1.0 / count)
    else:
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.shape != (count,):
            raise ValueError(f"weights must have one value per partition ({count}), got shape {w.shape}")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("weights must be finite and >= 0")
    _, inverse = np.unique(labels.T, axis=0, return_inverse=True)
    met = relabel_rows(inverse.reshape(1, -1))[0].astype(np.intp)
    k = int(met.max()) + 1
    representative = np.empty(k, dtype=np.intp)
    representative[met[::-1]] = np.arange(len(met))[::-1]  # first item of each meet cluster
    reps = labels[:, representative]  # L x K: each meet cluster's label in each partition
    co = np.zeros((k, k))
    for row, weight in zip(reps, w):
        co += weight * (row[:, None] == row[None, :])
    return Meet(labels=met, coclustering=co)


@dataclasses.dataclass(frozen=True, eq=False)
class WasabiResult:
    """A posterior summarised by a few weighted partitions ("particles").

    Attributes
    ----------
    particles : ndarray of int, shape (L, n)
        The particles, canonical labels, heaviest first.
    weights : ndarray of float, shape (L,)
        The share of draws nearest to each particle (sums to 1; all > 0).
    distance : float
        W, the Wasserstein distance (VI ground metric, bits) between the draws' empirical
        distribution and sum_l weights[l] delta(particles[l]): the mean VI of the draws to their
        nearest particles, ``sum(weights * evi)``.
    assignment : ndarray of int, shape (H,)
        Each draw's particle (row of ``particles``): one at the smallest VI (ties at random).
    evi : ndarray of float, shape (L,)
        Mean VI of each particle to its draws.
    history : ndarray of float
        W at the start and after each full-batch iteration of the best start (never
        increasing).
    n_iter : int
        Full-batch iterations of the best start.
    converged : bool
        Whether the best start stopped because W changed by at most ``eps * log2(n)``
        (otherwise ``max_iter`` ended it).
    start_distances : ndarray of float
        Final W of every start (the result is the start of smallest W, the first on ties).
    info : dict
        ``seed``, ``best_start``, ``init``, ``n_runs``, ``mini_batch``, ``batch_history``
        (W on each mini-batch before/after its update), ``seconds``.
    item_names : ndarray of shape (n,) or None
        The items' names when the draws carried them (DataFrame columns, xarray coordinates,
        a file's header); tables, JSON and plots show items by name then.

    :meth:`to_dataframe` gives the particles as columns of a table of items,
    :meth:`to_series` one particle; in a notebook the result shows as a table.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 2], [0, 1, 1, 1], [0, 1, 1, 1], [0, 1, 1, 2]]
    >>> result = salsox.wasabi(draws, 2, seed=1)
    >>> print(result)
    WASABI: 2 particle(s), W = 0.19812 bits (1 iterations, converged)
    particle   weight      EVI clusters
           0   0.5000   0.1667        2
           1   0.5000   0.2296        2
    >>> result.n_clusters
    array([2, 2])
    >>> round(float(result.evi_contributions().sum()), 4)  # per-item, per-particle shares of W
    0.1981
    """

    particles: np.ndarray
    weights: np.ndarray
    distance: float
    assignment: np.ndarray
    evi: np.ndarray
    history: np.ndarray
    n_iter: int
    converged: bool
    start_distances: np.ndarray
    info: Dict[str, Any]
    draws: np.ndarray = dataclasses.field(repr=False)
    item_names: Optional[np.ndarray] = dataclasses.field(default=None, repr=False)

    @property
    def n_particles(self) -> int:
        return int(self.particles.shape[0])

    @property
    def n_clusters(self) -> np.ndarray:
        """Clusters of each particle."""
        return self.particles.max(axis=1) + 1

    def meet(self) -> Meet:
        """The meet of the particles, with the co-clustering matrix weighted by ``weights``."""
        return meet(self.particles, self.weights)

    def evi_contributions(self) -> np.ndarray:
        """Per-item contributions to W, by particle: an (L, n) array whose row l is
        ``weights[l]`` times the mean over particle l's draws of VIC_i(draw, particle l).
        Row l sums to ``weights[l] * evi[l]``, column sums give each item's contribution to W,
        and the whole array sums to ``distance``."""
        h, n = self.draws.shape
        out = np.zeros((self.n_particles, n))
        for particle in range(self.n_particles):
            rows = self.draws[self.assignment == particle]
            out[particle] = contribution_rows(rows, self.particles[particle]).sum(axis=0) / h
        return out

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict."""
        return {
            "distance": self.distance,
            "weights": self.weights.tolist(),
            "evi": self.evi.tolist(),
            "n_clusters": self.n_clusters.tolist(),
            "particles": self.particles.tolist(),
            "assignment": self.assignment.tolist(),
            "history": self.history.tolist(),
            "n_iter": self.n_iter,
            "converged": self.converged,
            "start_distances": self.start_distances.tolist(),
            "seed": self.info.get("seed"),
            "item_names": None if self.item_names is None else [str(v) for v in self.item_names],
        }

    def _index(self, pd: Any) -> Any:
        return pandas_index(self.item_names, self.particles.shape[1])

    def to_series(self, particle: int = 0, name: Optional[str] = None) -> Any:
        """One particle's labels as a ``pandas.Series`` indexed by item name (by position when
        unknown); particle 0 is the heaviest. Needs pandas (imported only here)."""
        pd = _pandas("WasabiResult.to_series()")
        if isinstance(particle, bool) or not isinstance(particle, (int, np.integer)):
            raise TypeError(f"particle must be an integer, got {type(particle).__name__}")
        if not 0 <= particle < self.n_particles:
            raise ValueError(f"particle must be in 0..{self.n_particles - 1}, got {particle}")
        label = f"particle {particle}" if name is None else name
        return pd.Series(self.particles[particle], index=self._index(pd), name=label)

    def to_dataframe(self) -> Any:
        """The particles as a ``pandas.DataFrame``: one row per item (indexed by name, or
        position when unknown), one column per particle (``"particle 0"``, heaviest first),
        and each item's contribution to W (``"contribution"``, the column sums of
        :meth:`evi_contributions`). Needs pandas (imported only here)."""
        pd = _pandas("WasabiResult.to_dataframe()")
        columns: Dict[str, Any] = {f"particle {p}": self.particles[p] for p in range(self.n_particles)}
        columns["contribution"] = self.evi_contributions().sum(axis=0)
        return pd.DataFrame(columns, index=self._index(pd))

    def _repr_html_(self) -> str:
        from ...summaries.display import html_block, html_table, item_label

        contribution = self.evi_contributions().sum(axis=0)
        top = np.argsort(-contribution, kind="stable")[:5]
        rows = [
            (p, f"{w:.4f}", f"{e:.4g}", int(k))
            for p, (w, e, k) in enumerate(zip(self.weights, self.evi, self.n_clusters))
        ]
        title = (
            f"WASABI: {self.n_particles} particle(s) of {self.particles.shape[1]} items, W = {self.distance:.6g} bits "
            f"({self.n_iter} iterations, {'converged' if self.converged else 'max_iter reached'})"
        )
        items = ", ".join(f"{item_label(int(i), self.item_names)} ({contribution[i]:.3g})" for i in top)
        table = html_table(("particle", "weight", "EVI", "clusters"), rows)
        return html_block(title, table + f"<p>items contributing most to W: {html.escape(items)}</p>")

    def to_text(self, n_items: int = 0) -> str:
        """A printable report: the particles' weights, EVI and clusters; with ``n_items``, also
        the items that contribute most to W (by name when known)."""
        lines = [
            f"WASABI: {self.n_particles} particle(s), W = {self.distance:.6g} bits "
            f"({self.n_iter} iterations, {'converged' if self.converged else 'max_iter reached'})",
            f"{'particle':>8} {'weight':>8} {'EVI':>8} {'clusters':>8}",
        ]
        for p, (w, e, k) in enumerate(zip(self.weights, self.evi, self.n_clusters)):
            lines.append(f"{p:>8d} {w:>8.4f} {e:>8.4g} {int(k):>8d}")
        if n_items > 0:
            from ...summaries.display import item_label

            contribution = self.evi_contributions().sum(axis=0)
            top = np.argsort(-contribution, kind="stable")[:n_items]
            shown = ", ".join(f"{item_label(int(i), self.item_names)} ({contribution[i]:.3g})" for i in top)
            lines.append(f"items contributing most to W (bits): {shown}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (
            f"WasabiResult(n_particles={self.n_particles}, distance={self.distance:.6g}, "
            f"weights={np.round(self.weights, 4).tolist()}, n_clusters={self.n_clusters.tolist()})"
        )


def _pandas(what: str) -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(f"{what} needs pandas: pip install pandas") from None
    return pd


@dataclasses.dataclass(frozen=True, eq=False)
class Elbow:
    """W for L = 1..max particles, to choose L where adding particles stops paying.

    Attributes
    ----------
    n_particles : ndarray of int
        1..L_max (L_max: ``max_particles``, at most the number of distinct draws).
    distance : ndarray of float
        The W of each fitted result (not a bound).
    results : list of WasabiResult
    """

    n_particles: np.ndarray
    distance: np.ndarray
    results: List[WasabiResult]

    def to_dict(self) -> Dict[str, Any]:
        return {"n_particles": self.n_particles.tolist(), "distance": self.distance.tolist()}
