"""Credible ball around a partition estimate (Wade & Ghahramani 2018, Bayesian Analysis 13(2)).

The 100 ``level`` % credible ball is the smallest ball around the estimate, in the VI or
Binder distance (or any symmetric loss, a plugin's too), with posterior probability at least
``level``. It is estimated from the
draws exactly as R's ``mcclust.ext::credibleball``: the draws are sorted by their distance to
the estimate and the first ``ceil(level * H)`` of them form the ball. Three bounds summarise
it:

* horizontal bound: the partitions in the ball farthest from the estimate;
* upper vertical bound: among the partitions in the ball with the fewest clusters, the
  farthest from the estimate;
* lower vertical bound: among those with the most clusters, the farthest.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from .._validation import as_label_matrix, byte_size, check_n_jobs, relabel_bytes, relabel_rows
from ..engine import check_limit
from ..io import Draws, convert_foreign_named, labels_series, matched, refuse_similarity
from ..losses import ID, NID, NVI, OMARI, VI, Binder, Loss, PSMLoss, get_loss
from ..metrics import partition_loss
from ..summaries.display import html_block, html_table

__all__ = ["Bound", "CredibleBall", "credible_ball"]


@dataclasses.dataclass(frozen=True, eq=False)
class Bound:
    """One bound of a credible ball.

    Attributes
    ----------
    labels : ndarray of int, shape (m, n)
        The distinct partitions attaining the bound (canonical labels, one per row; usually
        m = 1), in order of first appearance among the draws.
    distance : float
        Their distance to the estimate.
    n_clusters : ndarray of int, shape (m,)
        Number of clusters of each.
    draws : ndarray of int
        Indices of every draw (row of the draws) equal to one of these partitions and inside
        the ball.
    """

    labels: np.ndarray
    distance: float
    n_clusters: np.ndarray
    draws: np.ndarray

    def __repr__(self) -> str:
        return (
            f"Bound(distance={self.distance:.6g}, n_clusters={self.n_clusters.tolist()}, "
            f"partitions={self.labels.shape[0]})"
        )


@dataclasses.dataclass(frozen=True, eq=False)
class CredibleBall:
    """A credible ball around an estimate, with its horizontal and vertical bounds.

    Attributes
    ----------
    estimate : ndarray of int, shape (n,)
        The centre (canonical labels).
    loss : Loss
        The distance: e.g. ``VI()`` or ``Binder()`` (N-invariant, i.e. 2/n^2 times the
        pairwise Binder loss, as mcclust.ext), or any symmetric loss, a plugin's too.
    level : float
        Requested posterior probability.
    radius : float
        Largest distance from the estimate of a draw in the ball (= horizontal bound's).
    n_in_ball : int
        ``ceil(level * H)`` draws.
    probability : float
        ``n_in_ball / H``, the ball's estimated posterior probability (>= level).
    distances : ndarray of shape (H,)
        Distance of every draw to the estimate.
    in_ball : ndarray of bool, shape (H,)
        Which draws form the ball.
    horizontal, upper_vertical, lower_vertical : Bound
    item_names : ndarray of shape (n,) or None
        The items' names, when the draws or the estimate carried them.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1], [0, 0, 1, 1]]
    >>> ball = salsox.credible_ball([0, 0, 1, 1], draws, "VI", 0.75)
    >>> ball.n_in_ball, round(ball.radius, 4)
    (3, 0.5)
    >>> ball.horizontal.labels
    array([[0, 0, 1, 2]])
    """

    estimate: np.ndarray
    loss: Loss
    level: float
    radius: float
    n_in_ball: int
    probability: float
    distances: np.ndarray
    in_ball: np.ndarray
    horizontal: Bound
    upper_vertical: Bound
    lower_vertical: Bound
    item_names: Optional[np.ndarray] = None

    def to_series(self, name: str = "cluster") -> Any:
        """The centre's labels as a ``pandas.Series`` indexed by item name (by position when
        unknown). Needs pandas."""
        return labels_series(self.estimate, self.item_names, name)

    def to_dataframe(self) -> Any:
        """One row per item (indexed as :meth:`to_series`), one column per partition: the
        ``estimate`` and the first partition of each bound (``horizontal``, ``upper_vertical``,
        ``lower_vertical``). Needs pandas."""
        frame = self.to_series("estimate").to_frame()
        for key in ("horizontal", "upper_vertical", "lower_vertical"):
            frame[key] = getattr(self, key).labels[0]
        return frame

    def to_dict(self, *, one_based: bool = False) -> Dict[str, Any]:
        """JSON-ready dict. ``one_based`` numbers cluster labels and draws from 1, as R does;
        ``item_names`` lists the items' names (None when unknown)."""
        shift = 1 if one_based else 0

        def bound(b: Bound) -> Dict[str, Any]:
            return {
                "distance": b.distance,
                "n_clusters": b.n_clusters.tolist(),
                "labels": (b.labels + shift).tolist(),
                "draws": (b.draws + shift).tolist(),
            }

        return {
            "loss": self.loss.name,
            "level": self.level,
            "radius": self.radius,
            "n_in_ball": self.n_in_ball,
            "probability": self.probability,
            "item_names": None if self.item_names is None else [str(v) for v in self.item_names],
            "estimate": (self.estimate + shift).tolist(),
            "horizontal": bound(self.horizontal),
            "upper_vertical": bound(self.upper_vertical),
            "lower_vertical": bound(self.lower_vertical),
        }

    def _rows(self, one_based: bool) -> List[Tuple[str, str, str, int, str]]:
        shift = 1 if one_based else 0
        rows = []
        for name, b in (
            ("horizontal", self.horizontal),
            ("upper vertical", self.upper_vertical),
            ("lower vertical", self.lower_vertical),
        ):
            ks = ",".join(str(v) for v in sorted(set(b.n_clusters.tolist())))
            first = ",".join(str(int(d) + shift) for d in b.draws[:5]) + ("..." if b.draws.shape[0] > 5 else "")
            rows.append((name, f"{b.distance:.4g}", ks, int(b.labels.shape[0]), first))
        return rows

    def _title(self) -> str:
        k = int(self.estimate.max()) + 1
        return (
            f"{100 * self.level:g}% credible ball ({self.loss.name} distance) around an estimate with "
            f"{k} clusters: radius {self.radius:.6g}, {self.n_in_ball} draws"
        )

    def to_text(self, *, one_based: bool = False) -> str:
        """A printable report: each bound's distance, clusters, number of partitions and the
        first draws attaining it (numbered from 1 with ``one_based``)."""
        lines = [self._title(), f"{'bound':<15} {'distance':>9} {'clusters':>9} {'partitions':>10}  draws"]
        for name, distance, ks, count, first in self._rows(one_based):
            lines.append(f"{name:<15} {distance:>9} {ks:>9} {count:>10d}  {first}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        header = ("bound", "distance", "clusters", "partitions", "draws")
        return html_block(self._title(), html_table(header, self._rows(False)))

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return (
            f"CredibleBall(loss={self.loss.name!r}, level={self.level}, radius={self.radius:.6g}, "
            f"horizontal={self.horizontal!r}, upper_vertical={self.upper_vertical!r}, "
            f"lower_vertical={self.lower_vertical!r})"
        )


# Losses known to be symmetric with these parameters (a plugin loss is checked on a few draws).
_SYMMETRIC = (OMARI, NVI, ID, NID)

# Relative difference between the two directions of a loss taken as rounding.
_SYMMETRY_RTOL = 1e-8


def _metric(loss: Any) -> Loss:
    resolved = get_loss(loss)
    if isinstance(resolved, PSMLoss):
        raise ValueError(
            f"loss {resolved.name!r} is computed from a PSM, not between two partitions: a credible ball needs "
            "a distance between partitions (VI, binder, omARI, NVI, ID, NID or a plugin's loss)"
        )
    if type(resolved) in (VI, Binder) and resolved.a != resolved.b:  # type: ignore[attr-defined]
        # Unequal costs make the loss asymmetric: not a distance, so no ball.
        raise ValueError(f"loss must have equal costs a = b to be a distance, got {resolved!r}")
    return resolved


def _check_symmetric(
    metric: Loss, matrix: np.ndarray, centre: np.ndarray, picks: List[int], distances: Optional[np.ndarray] = None
) -> None:
    """A loss not known to be symmetric must be, on the draws ``picks``: before the distances
    are computed (``distances`` None), a few draws spread over the sample, each scored both
    ways; after, the farthest draw against its distance (the draws were scored as estimates,
    one engine call for all)."""
    if type(metric) in (VI, Binder) or type(metric) in _SYMMETRIC:
        return
    for index in picks:
        other = float(partition_loss(centre, matrix[index], metric, n_jobs=1))
        if distances is None:
            d = float(partition_loss(matrix[index], centre, metric, n_jobs=1))
        else:
            d = float(distances[index])
        if abs(other - d) > _SYMMETRY_RTOL * max(1.0, abs(d), abs(other)):
            raise ValueError(
                f"loss {metric.name!r} is not symmetric: between the estimate and draw {index} it is {other!r} "
                f"with the draw as truth and {d!r} with the estimate as truth; a credible ball needs a distance "
                "(a symmetric loss, 0 only between equal partitions)"
            )


def _draws_matrix(draws: Any) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """The draws as canonical label rows, and the item names they carry (or None)."""
    draws, names, _ = convert_foreign_named(draws)
    refuse_similarity(draws, "draws", "credible_ball")
    if isinstance(draws, Draws):
        return np.stack([draws.draw(h) for h in range(draws.n_draws)]).astype(np.int32), names
    matrix, single = as_label_matrix(draws, "draws")
    if single:
        raise ValueError("draws must be 2-D (H draws x n items)")
    return matrix, names


def check_options(
    loss: Any = "VI", level: Any = 0.95, *, n_jobs: Any = None, memory_limit: Any = None
) -> Tuple[Loss, float, int, int]:
    """:func:`credible_ball`'s arguments other than the estimate and the draws, checked before
    they are read: the distance, the level, n_jobs and the memory limit."""
    metric = _metric(loss)
    if isinstance(level, bool) or not isinstance(level, numbers.Real):
        raise TypeError(f"level must be a probability in (0, 1], got {type(level).__name__}")
    level = float(level)
    if not (0.0 < level <= 1.0):
        raise ValueError(f"level must be in (0, 1], got {level!r}")
    return metric, level, check_n_jobs(n_jobs), check_limit(memory_limit)


def credible_ball(
    estimate: Any,
    draws: Any,
    loss: Union[str, Loss] = "VI",
    level: float = 0.95,
    *,
    n_jobs: Optional[int] = None,
    memory_limit: Optional[int] = None,
) -> CredibleBall:
    """Credible ball around a partition estimate, with its bounds (Wade & Ghahramani 2018).

    Parameters
    ----------
    estimate : Estimate or array-like of shape (n,)
        The centre of the ball.
    draws : array-like (H, n), Draws, xarray DataArray or (InferenceData, name)
        Posterior draws of the partition.
    loss : str or Loss, default "VI"
        The distance between partitions: ``"VI"``, ``"binder"`` (mcclust.ext's N-invariant
        Binder distance; VI and Binder with equal costs a = b), ``"omARI"``, ``"NVI"``,
        ``"ID"``, ``"NID"``, or any plugin loss -- count-sum, tabulated or general -- by name
        or as an instance (a :class:`~salsox.plugins.CountSumLoss` such as the Jaccard
        distance, for example). It must be symmetric: a loss not known to be is checked on a
        few draws (the farthest from the estimate among them) and refused with a ValueError
        if its two directions differ. PSM-based losses (``"VI.lb"``, ``"omARI.approx"``)
        are not distances between partitions and are refused.
    level : float, default 0.95
        Posterior probability of the ball, in (0, 1]; mcclust.ext's ``1 - alpha``.
    n_jobs : int, optional
        Threads for the distances (default: the CPUs the process may use).
    memory_limit : int, optional
        Bytes the ball may allocate (the draws as H x n label rows, the distances and their
        evaluation); more is a MemoryError up front. Default 16 GiB.

    Returns
    -------
    CredibleBall

    Notes
    -----
    The distances of all H draws to the estimate are computed in one engine call, O(H n)
    for native losses (built-in, tabulated, count-sum); a general plugin loss is called
    from that engine call in batches of tables.
    Draws tied with the last one admitted at the ball's edge are left out in draw order, as
    mcclust.ext does; a bound lists every distinct partition that attains it.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 0, 1], [0, 0, 1, 1]]
    >>> ball = salsox.credible_ball([0, 0, 1, 1], draws, "VI", level=0.75)
    >>> ball.n_in_ball, ball.radius
    (3, 0.5)
    >>> ball.upper_vertical.n_clusters, ball.lower_vertical.n_clusters
    (array([2]), array([3]))
    """
    metric, level, jobs, limit = check_options(loss, level, n_jobs=n_jobs, memory_limit=memory_limit)
    matrix, names = _draws_matrix(draws)
    h, n = matrix.shape

    # The estimate's items matched to the draws' by name (salsox.io.item_index).
    estimate, names = matched(estimate, names, n, "estimate")
    centre = as_label_matrix(estimate, "estimate", n)[0][0]
    # The label rows above (built first: their size gives the rest), the distances and sort order,
    # the evaluation against the centre.
    route = metric._route(Draws(centre[None, :]))
    need = relabel_bytes(h, n) + 24 * h + route.losses_bytes(h, int(matrix.max(initial=0)) + 1, jobs)
    if need > limit:
        raise MemoryError(
            f"the credible ball needs about {byte_size(need)} ({h} draws of {n} items), more than "
            f"memory_limit={limit} bytes; raise memory_limit or lower n_jobs"
        )
    _check_symmetric(metric, matrix, centre, np.linspace(0, h - 1, min(h, 4)).astype(int).tolist())

    # One vectorised call: the H draws as "estimates" scored against the centre. With a = b
    # the loss is symmetric, so this is the distance.
    distances = np.asarray(
        partition_loss(matrix, centre[None, :], metric, n_jobs=jobs, memory_limit=limit), dtype=np.float64
    )
    distances = np.maximum(distances, 0.0)  # rounding can give -1e-16 for identical partitions
    _check_symmetric(metric, matrix, centre, [int(np.argmax(distances))], distances)
    order = np.argsort(distances, kind="stable")  # R's sort(index.return=TRUE) is stable
    # ceil(level * H), guarded against 0.95 * 100 = 95.00000000000001.
    size = min(h, max(1, math.ceil(level * h - 1e-9 * h)))
    ball = order[:size]
    in_ball = np.zeros(h, dtype=bool)
    in_ball[ball] = True
    ball_dist = distances[ball]
    radius = float(ball_dist[-1])
    k = matrix.max(axis=1).astype(np.int64) + 1  # rows are canonical: labels 0..k-1
    k_ball = k[ball]

    horizontal = _bound(matrix, ball[ball_dist == radius], radius)
    fewest = ball[k_ball == k_ball.min()]
    d_fewest = float(distances[fewest].max())
    upper = _bound(matrix, fewest[distances[fewest] == d_fewest], d_fewest)
    most = ball[k_ball == k_ball.max()]
    d_most = float(distances[most].max())
    lower = _bound(matrix, most[distances[most] == d_most], d_most)
    return CredibleBall(
        estimate=centre.astype(np.intp),
        loss=metric,
        level=level,
        radius=radius,
        n_in_ball=int(size),
        probability=size / h,
        distances=distances,
        in_ball=in_ball,
        horizontal=horizontal,
        upper_vertical=upper,
        lower_vertical=lower,
        item_names=names,
    )


def _bound(matrix: np.ndarray, rows: np.ndarray, distance: float) -> Bound:
    """The distinct partitions among draws ``rows`` (ball order), as a Bound."""
    rows = np.sort(rows)  # report in draw order
    parts = relabel_rows(matrix[rows])
    _, first = np.unique(parts, axis=0, return_index=True)
    first = np.sort(first)
    labels = parts[first].astype(np.intp)
    return Bound(
        labels=labels,
        distance=float(distance),
        n_clusters=labels.max(axis=1).astype(np.intp) + 1,
        draws=rows.astype(np.intp),
    )
