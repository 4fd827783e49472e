"""What :func:`~salsox.wasabi` allocates, checked against ``memory_limit`` before any start."""

from __future__ import annotations

__all__ = ["wasabi_bytes"]

# Label cells hashed at once by unique_rows (draws.py), as uint64 and their products.
_HASH_CELLS = 1 << 21


def _draws_copy(m: int, n: int, label_bytes: int) -> int:
    """An m x n canonical int32 matrix as the engine's Draws: its compact labels, and the check
    that the rows are canonical (a running maximum and comparisons when rows are long)."""
    return label_bytes * m * n + (8 * m * n if n > m else 16 * m)


def wasabi_bytes(
    h: int, n: int, n_unique: int, n_particles: int, workers: int, table_bytes: int, label_bytes: int = 2,
    topvi: bool = False,
) -> int:
    """Bytes :func:`~salsox.wasabi` allocates for h draws of n items (``n_unique`` distinct,
    held by the engine at ``label_bytes`` a label), L = ``n_particles``, with ``workers`` starts
    at once.

    Counted: finding the distinct draws (hash keys, their sort and one chunk's temporaries,
    freed before what follows), the distinct draws (int32 and the engine's copy) with each
    draw's index, and per start running at once its worst particle update, a group of all h
    draws (its distinct rows, expanded to int32, then the engine's copy) searched with
    ``table_bytes`` of count tables, and the draws' VI to the particles. ``topvi``: each
    start's 1 - PSM, its condensed copy and the linkage's (8 n^2 + 8 n^2 + 4 n^2 + 4 n^2).
    """
    cells = min(h, max(1, _HASH_CELLS // max(n, 1))) * n
    hashing = 48 * h + 20 * cells
    distinct = 4 * n_unique * n + _draws_copy(n_unique, n, label_bytes)
    group = 4 * (h + n_unique) * n + _draws_copy(h, n, label_bytes) + table_bytes
    vi = 24 * n_unique * n_particles + 8 * n_particles * n
    start = group + vi + (24 * n * n if topvi else 0)
    return 16 * h + max(hashing, distinct + workers * start)
