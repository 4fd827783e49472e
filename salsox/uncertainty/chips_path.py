"""The labels of a CHIPS path, stored compactly and rebuilt row by row on demand.

A path has n + 1 rows of n labels (4 n^2 bytes as int32: 10 GB at n = 50,000), but each row is
the state of one run after a prefix of its steps. :class:`PathLabels` keeps the start and, per
row, the run and the number of its steps; a row's labels are the start's with that run's first
steps applied, relabelled by first appearance.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Sequence

import numpy as np

__all__ = ["PathLabels", "canonical_rows"]


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
