"""The labels of a CHIPS path, stored compactly and rebuilt row by row on demand.

A path has n + 1 rows of n labels (4 n^2 bytes as int32: 10 GB at n = 50,000), but each row is
the state of one run after a prefix of its steps. :class:`PathLabels` keeps the start and, per
row, the run and the number of its steps; a row's labels are the start's with that run's first
steps applied, relabelled by first appearance.

It also lays out the path's states for :class:`salsox.ChipsResult`'s text and HTML views:
the first and last states only (:func:`state_table_lines`, :func:`state_table_html`), as
pandas shows a long frame, so that ``print(path)`` of 50,000 items is a screen, not 50,001 lines.
"""

from __future__ import annotations

import html
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["PathLabels", "canonical_rows", "MAX_ROWS", "shown_states", "state_table_lines", "state_table_html"]

# States the views of a path (or of all candidates) show at most: the first two thirds of them
# and the last third; the rest are counted in a line of their own.
MAX_ROWS = 15


def shown_states(count: int, max_rows: Optional[int] = MAX_ROWS) -> Tuple[np.ndarray, np.ndarray]:
    """The states a view shows: (the first ones, the last ones). All of them, as the first,
    when ``max_rows`` is None or at least ``count``; else ``max_rows`` of them, two thirds
    from the head.

    Examples
    --------
    >>> head, tail = shown_states(101, 15)
    >>> head.tolist(), tail.tolist()
    ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [96, 97, 98, 99, 100])
    >>> [part.tolist() for part in shown_states(4, 15)]
    [[0, 1, 2, 3], []]
    """
    if max_rows is not None:
        from .._validation import check_int

        max_rows = check_int("max_rows", max_rows, minimum=1)
    if max_rows is None or count <= max_rows:
        return np.arange(count), np.arange(0)
    tail = max_rows // 3
    return np.arange(max_rows - tail), np.arange(count - tail, count)


def _hidden_note(hidden: int) -> str:
    states = "state" if hidden == 1 else "states"
    return f"... {hidden} {states} not shown (to_text(max_rows=None) or to_dataframe() has them all) ..."


def _state_cells(n_items: np.ndarray, n_clusters: np.ndarray, probability: np.ndarray,
                 rows: np.ndarray) -> List[Tuple[int, int, float]]:
    return [(int(n_items[r]), int(n_clusters[r]), float(probability[r])) for r in rows]


def state_table_lines(n_items: Any, n_clusters: Any, probability: Any, max_rows: Optional[int] = MAX_ROWS) -> List[str]:
    r"""The text table of a path's states: items, clusters and probability of each, the first
    and last ones when there are more than ``max_rows`` (None: all), with a line saying how
    many are not shown.

    Examples
    --------
    >>> lines = state_table_lines(np.arange(100, -1, -1), np.full(101, 2), np.linspace(0, 1, 101), 6)
    >>> print("\n".join(lines))
     items clusters probability
       100        2           0
        99        2        0.01
        98        2        0.02
        97        2        0.03
    ... 95 states not shown (to_text(max_rows=None) or to_dataframe() has them all) ...
         1        2        0.99
         0        2           1
    """
    n_items, n_clusters, probability = np.asarray(n_items), np.asarray(n_clusters), np.asarray(probability)
    head, tail = shown_states(n_items.shape[0], max_rows)
    lines = [f"{'items':>6} {'clusters':>8} {'probability':>11}"]
    lines += [f"{m:>6d} {k:>8d} {p:>11.4g}" for m, k, p in _state_cells(n_items, n_clusters, probability, head)]
    if len(tail):
        lines.append(_hidden_note(n_items.shape[0] - len(head) - len(tail)))
        lines += [f"{m:>6d} {k:>8d} {p:>11.4g}" for m, k, p in _state_cells(n_items, n_clusters, probability, tail)]
    return lines


def state_table_html(n_items: Any, n_clusters: Any, probability: Any, max_rows: Optional[int] = MAX_ROWS) -> str:
    """The HTML table of the same states as :func:`state_table_lines` (a row of "..." where
    states are not shown, and a note saying how many).

    Examples
    --------
    >>> table = state_table_html(np.arange(100, -1, -1), np.full(101, 2), np.linspace(0, 1, 101), 6)
    >>> table.count("<tr>") - 1, "95 states not shown" in table      # 6 states and the "..." row
    (7, True)
    """
    n_items, n_clusters, probability = np.asarray(n_items), np.asarray(n_clusters), np.asarray(probability)
    head, tail = shown_states(n_items.shape[0], max_rows)

    def row(cells: Sequence[Any]) -> str:
        return "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>"

    body = [row((m, k, f"{p:.4g}")) for m, k, p in _state_cells(n_items, n_clusters, probability, head)]
    note = ""
    if len(tail):
        body.append(row(("...", "...", "...")))
        body += [row((m, k, f"{p:.4g}")) for m, k, p in _state_cells(n_items, n_clusters, probability, tail)]
        note = f"<p>{html.escape(_hidden_note(n_items.shape[0] - len(head) - len(tail)))}</p>"
    head_row = "".join(f"<th>{h}</th>" for h in ("items", "clusters", "probability"))
    return f"<table><thead><tr>{head_row}</tr></thead><tbody>{''.join(body)}</tbody></table>{note}"


def canonical_rows(labels: np.ndarray) -> np.ndarray:
    """Rows of labels (-1: unallocated) relabelled 0..k-1 by first appearance, -1 kept."""
    labels = np.atleast_2d(labels)
    out = np.full(labels.shape, -1, dtype=np.int32)
    for r, row in enumerate(labels):
        where = np.flatnonzero(row >= 0)
        values, first = np.unique(row[where], return_index=True)
        mapping = np.empty(int(values[-1]) + 1 if values.size else 0, dtype=np.int32)
        mapping[values[np.argsort(first)]] = np.arange(values.size, dtype=np.int32)
        out[r, where] = mapping[row[where]]
    return out


class PathLabels(Sequence[np.ndarray]):
    """The (m, n) int32 labels of a CHIPS path, read-only, each row rebuilt when asked for.

    Row ``i`` is the state of run ``position[i]`` after its first ``steps[i]`` steps: the start's
    labels, then ``items[:steps]`` given ``labels[:steps]`` of that run (``info["runs"]``),
    relabelled 0..k-1 by first appearance (-1: unallocated). Holds O(n) per run, not O(n^2).

    Indexing takes what a 2-D array takes and returns ndarrays: ``path.labels[3]`` (one row),
    ``path.labels[:10]``, ``path.labels[[0, 5]]``, ``path.labels[2, 7]``,
    ``path.labels[:, [0, 4]]``. ``len()``, iteration (row by row), ``shape``, ``dtype``,
    ``tolist()`` and ``np.asarray(path.labels)`` (all rows at once: m x n x 4 bytes) work too.

    Examples
    --------
    >>> draws = [[0, 0, 1, 1], [0, 0, 1, 0], [1, 1, 0, 0]]
    >>> path = salsox.chips(draws, seed=1)
    >>> path.labels.shape, len(path.labels)
    ((5, 4), 5)
    >>> path.labels[-1]                                     # the start: nothing allocated
    array([-1, -1, -1, -1], dtype=int32)
    >>> np.asarray(path.labels)[1:3]
    array([[ 0,  0,  1, -1],
           [-1,  0,  1, -1]], dtype=int32)
    """

    dtype = np.dtype(np.int32)
    ndim = 2

    def __init__(self, start: np.ndarray, items: List[np.ndarray], labels: List[np.ndarray],
                 position: np.ndarray, steps: np.ndarray) -> None:
        self._start = np.asarray(start, dtype=np.int32)
        self._items = items
        self._labels = labels
        self._position = np.asarray(position, dtype=np.int64)
        self._steps = np.asarray(steps, dtype=np.int64)

    @property
    def shape(self) -> tuple:
        """(rows, items)."""
        return (self._position.shape[0], self._start.shape[0])

    @property
    def size(self) -> int:
        """rows x items."""
        return self.shape[0] * self.shape[1]

    @property
    def nbytes(self) -> int:
        """Bytes the rows would take as one array (``np.asarray``), not what this object holds."""
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def n_clusters(self) -> np.ndarray:
        """Clusters in each row, without rebuilding the rows: the start's, plus the new
        clusters (labels in creation order) among the run's first steps."""
        k0 = int(self._start.max(initial=-1)) + 1
        out = np.full(len(self), k0, dtype=np.int64)
        for p in np.unique(self._position):
            rows = np.flatnonzero(self._position == p)
            steps = self._steps[rows]
            grown = np.maximum.accumulate(np.concatenate(([k0 - 1], np.asarray(self._labels[p], dtype=np.int64))))
            out[rows] = grown[steps] + 1
        return out

    def _rows(self, rows: np.ndarray) -> np.ndarray:
        out = np.empty((rows.shape[0], self.shape[1]), dtype=np.int32)
        for k, r in enumerate(rows):
            p, t = int(self._position[r]), int(self._steps[r])
            lab = self._start.copy()
            lab[self._items[p][:t]] = self._labels[p][:t]
            out[k] = canonical_rows(lab)[0]
        return out

    def __getitem__(self, key: Any) -> np.ndarray:  # type: ignore[override]
        rest: tuple = ()
        if isinstance(key, tuple):
            if not key:
                return self._rows(np.arange(len(self)))
            key, rest = key[0], key[1:]
        index = np.arange(len(self))[key]  # IndexError, TypeError as an array would raise them
        if np.ndim(index) == 0:
            out = self._rows(np.atleast_1d(index))[0]
            return out[rest] if rest else out
        flat = np.asarray(index).reshape(-1)
        out = self._rows(flat).reshape(np.shape(index) + (self.shape[1],))
        return out[(slice(None),) * np.ndim(index) + rest] if rest else out

    def __iter__(self) -> Iterator[np.ndarray]:
        for r in range(len(self)):
            yield self._rows(np.array([r]))[0]

    def chunks(self, rows: int = 256) -> Iterator[np.ndarray]:
        """The rows in blocks of at most ``rows`` (each an ndarray), in order."""
        for lo in range(0, len(self), rows):
            yield self._rows(np.arange(lo, min(lo + rows, len(self))))

    def __array__(self, dtype: Optional[Any] = None, copy: Optional[bool] = None) -> np.ndarray:
        if copy is False:
            raise ValueError("a CHIPS path's labels are rebuilt on request: np.asarray needs copy=None or True")
        out = self._rows(np.arange(len(self)))
        return out if dtype is None else out.astype(dtype, copy=False)

    def tolist(self) -> list:
        """The rows as lists of ints."""
        return [row.tolist() for row in self]

    def __repr__(self) -> str:
        return f"PathLabels(shape={self.shape}, dtype=int32, rebuilt on demand)"
