"""A straightforward numpy implementation of CHIPS (Page, Barrientos, Dahl & Dunson 2025), for
checking salsox.chips. Nothing here imports salsox.

Every step recounts every unallocated item over the consistent draws (no pruning). Ties are
decided by ``choose(kind, options)`` ("item" or "label", options ascending): by default at
random, or replaying another implementation's decisions.
"""

from __future__ import annotations

import itertools
from typing import Callable, Dict, Iterator, List, Optional, Sequence

import numpy as np

Choose = Callable[[str, np.ndarray], int]


def relabel_draws(draws: np.ndarray) -> np.ndarray:
    """Each draw relabelled 0..k-1 (only label identity matters)."""
    draws = np.asarray(draws)
    return np.stack([np.unique(row, return_inverse=True)[1].reshape(-1) for row in draws]).astype(np.int64)


def consistent(draws: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Mask of the draws whose restriction to the allocated items is exactly `labels`."""
    z = relabel_draws(draws)
    S = np.flatnonzero(np.asarray(labels) >= 0)
    rho = np.asarray(labels)[S]
    out = np.ones(z.shape[0], dtype=bool)
    for h in range(z.shape[0]):
        pairs = {(int(a), int(b)) for a, b in zip(z[h, S], rho)}
        out[h] = len(pairs) == len(set(rho.tolist())) == len({a for a, _ in pairs})
    return out


def probability(draws: np.ndarray, labels: np.ndarray) -> float:
    """p(rho_S): fraction of the draws consistent with the sub-partition."""
    return float(consistent(draws, labels).mean())


def chips_run(
    draws: np.ndarray,
    threshold: float = 0.0,
    initial: Optional[np.ndarray] = None,
    choose: Optional[Choose] = None,
    rng: Optional[np.random.Generator] = None,
) -> Dict[str, object]:
    """One CHIPS run. Returns the steps (items, labels in creation order, counts after each
    step), and where it stopped below the threshold, the unallocated items with their counts."""
    z = relabel_draws(draws)
    H, n = z.shape
    if choose is None:
        rng = rng if rng is not None else np.random.default_rng()
        choose = lambda kind, options: int(rng.choice(options))
    labels = np.full(n, -1, dtype=np.int64) if initial is None else np.asarray(initial, dtype=np.int64).copy()
    K = int(labels.max()) + 1 if np.any(labels >= 0) else 0
    A = consistent(z, labels)
    cmap = np.full((H, int(z.max()) + 1), -1, dtype=np.int64)  # draw cluster -> CHIPS cluster
    for i in np.flatnonzero(labels >= 0):
        cmap[A, z[A, i]] = labels[i]
    steps: Dict[str, List[int]] = {"items": [], "labels": [], "counts": []}
    empty = np.array([], dtype=np.int64)
    out: Dict[str, object] = {"unallocated": empty, "unallocated_counts": empty}
    while np.any(labels < 0):
        U = np.flatnonzero(labels < 0)
        rows = np.flatnonzero(A)
        joined = cmap[rows[:, None], z[rows][:, U]]  # |A| x |U|: the CHIPS cluster each joins
        joined[joined < 0] = K  # unmapped: a new cluster
        cells = (np.arange(U.size) * (K + 1) + joined).ravel()  # (item, cluster) pairs
        table = np.bincount(cells, minlength=U.size * (K + 1)).reshape(U.size, K + 1)
        c = table.max(axis=1)
        best = int(c.max())
        if best / H < threshold:
            out["unallocated"], out["unallocated_counts"] = U, c
            break
        u = choose("item", U[c == best])
        row = table[np.searchsorted(U, u)]
        label = choose("label", np.flatnonzero(row == best))
        m = cmap[rows, z[rows, u]]
        keep = (m == label) | ((m < 0) & (label == K))
        new = rows[keep & (m < 0)]
        cmap[new, z[new, u]] = label
        A[rows[~keep]] = False
        K += int(label == K)
        labels[u] = label
        steps["items"].append(u)
        steps["labels"].append(label)
        steps["counts"].append(int(A.sum()))
    out.update({k: np.asarray(v, dtype=np.int64) for k, v in steps.items()})
    out["final_labels"] = labels
    return out


def replay(items: Sequence[int], labels: Sequence[int]) -> Choose:
    """A chooser that replays recorded decisions, checking each is one of the tied options."""
    it = iter(zip(items, labels))
    current: List[int] = []

    def choose(kind: str, options: np.ndarray) -> int:
        if kind == "item":
            current[:] = list(next(it))
            value = current[0]
        else:
            value = current[1]
        assert value in options.tolist(), f"{kind} {value} is not among the tied {options.tolist()}"
        return value

    return choose


def set_partitions(items: Sequence[int]) -> Iterator[List[int]]:
    """All partitions of `items` as label lists (restricted growth strings)."""
    m = len(items)
    if m == 0:
        yield []
        return

    def grow(prefix: List[int], top: int) -> Iterator[List[int]]:
        if len(prefix) == m:
            yield list(prefix)
            return
        for lab in range(top + 2):
            yield from grow(prefix + [lab], max(top, lab))

    yield from grow([0], 0)


def best_by_size(draws: np.ndarray) -> np.ndarray:
    """Brute force: for each size s = 0..n, the highest probability of any sub-partition."""
    z = relabel_draws(draws)
    n = z.shape[1]
    best = np.zeros(n + 1)
    for s in range(n + 1):
        for S in itertools.combinations(range(n), s):
            for rho in set_partitions(S):
                lab = np.full(n, -1)
                lab[list(S)] = rho
                best[s] = max(best[s], probability(z, lab))
    return best
