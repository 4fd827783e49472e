"""Calibrated tests of the chains' agreement, by relabelling blocks of draws at random.

Two statistics of :func:`salsox.diagnose` get a null distribution from the run itself:

- **The largest R-hat over the traces.** ``diagnose`` maps each draw to many real traces and
  takes the largest rank-normalised split R-hat: a maximum, which exceeds a fixed threshold
  such as 1.01 more often than any one trace does. :func:`rhat_null_max` relabels the chains
  at random and recomputes that maximum, so that the threshold of the maximum is a quantile of
  what the same run gives when the chains are exchangeable.
- **The between-chain gap** ``G_ij = P_ij - (P_ii + P_jj) / 2``, where ``P_ij`` is the expected
  distance between a draw of chain i and one of chain j (``P_ii``: two distinct draws of chain
  i). It is half the energy distance of Székely and Rizzo (2004) between the chains'
  distributions, zero when they agree; :func:`gap_test` gives its largest value over the pairs
  of chains a permutation p-value (the k-sample test of Rizzo and Székely 2010, DISCO).

MCMC draws are autocorrelated, so single draws are not exchangeable between chains; contiguous
blocks of draws, each several autocorrelation times long, nearly are (a block permutation). The
blocks are relabelled, not the draws: :func:`block_count` chooses how many from the chains'
autocorrelation.
"""

from __future__ import annotations

import math
from typing import List, Tuple

import numpy as np

__all__ = [
    "BLOCK_AUTOCORRELATION_TIMES",
    "block_count",
    "split_blocks",
    "rank_z",
    "split_rhat_blocks",
    "rhat_null_max",
    "gap_matrix",
    "gap_test",
]

# A block spans this many autocorrelation times (N / within-chain ESS): long enough that the
# correlation between neighbouring blocks, which relabelling breaks, is small.
BLOCK_AUTOCORRELATION_TIMES = 10

# Blocks per chain: at least 4 (2 per half), so that relabelling has many arrangements (a
# p-value can reach below 0.01), and at most 64 (more adds little and costs time).
MIN_BLOCKS, MAX_BLOCKS = 4, 64

# Permutations evaluated at once (bounds the memory of the vectorised statistics).
_CHUNK = 128


def block_count(n_draws: int, tau: float) -> int:
    """Blocks per chain (even, 4 to 64, at most one draw each) for chains of ``n_draws`` draws
    of autocorrelation time ``tau`` (``n_draws`` / within-chain ESS).

    Examples
    --------
    >>> block_count(125, 1.0), block_count(4000, 20.0), block_count(100, 40.0), block_count(4, 1.0)
    (12, 20, 4, 4)
    """
    if not math.isfinite(tau) or tau < 1.0:
        tau = 1.0
    blocks = int(n_draws // (BLOCK_AUTOCORRELATION_TIMES * tau))
    blocks = max(MIN_BLOCKS, min(MAX_BLOCKS, blocks))
    blocks = min(blocks, 2 * (n_draws // 2))  # a half has at least one draw per block
    return blocks - blocks % 2


def split_blocks(n_draws: int, blocks: int) -> List[Tuple[int, int]]:
    """``blocks`` contiguous (start, stop) ranges of draws: half of them tile the first half of a
    chain, half the last half, as ArviZ's split R-hat cuts a chain (the middle draw of an odd
    length belongs to neither).

    Examples
    --------
    >>> split_blocks(9, 4)
    [(0, 2), (2, 4), (5, 7), (7, 9)]
    """
    half = n_draws // 2
    edges = np.linspace(0, half, blocks // 2 + 1).round().astype(int)
    first = [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]
    offset = n_draws - half
    return first + [(a + offset, b + offset) for a, b in first]


def rank_z(traces: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The rank-normalised values of ArviZ's split R-hat, for (T, C, N) traces: ``(bulk,
    folded)``, each (T, C, 2 * (N // 2)) (each chain's halves side by side, the middle draw of
    an odd N dropped), the normal quantiles of the pooled average ranks of the values and of
    their distances to the median (Vehtari et al. 2021)."""
    from scipy.special import ndtri
    from scipy.stats import rankdata

    half = traces.shape[2] // 2
    split = np.concatenate([traces[:, :, :half], traces[:, :, traces.shape[2] - half :]], axis=2)
    t = split.shape[0]
    flat = split.reshape(t, -1)
    folded = np.abs(flat - np.median(flat, axis=1, keepdims=True))
    size = flat.shape[1]

    def z(values: np.ndarray) -> np.ndarray:
        ranks = rankdata(values, method="average", axis=1)
        return ndtri((ranks - 0.375) / (size + 0.25)).reshape(split.shape)

    return z(flat), z(folded)


def _block_sums(z: np.ndarray, blocks: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per trace and block (C x blocks of them, chain by chain): the sum and the sum of squares
    of z (T, C, 2 * half), and each block's size."""
    t, c, m = z.shape
    edges = split_blocks(m, blocks)  # m is even: no middle draw
    s1 = np.stack([z[:, :, a:b].sum(axis=2) for a, b in edges], axis=2).reshape(t, c * blocks)
    s2 = np.stack([(z[:, :, a:b] ** 2).sum(axis=2) for a, b in edges], axis=2).reshape(t, c * blocks)
    sizes = np.tile([b - a for a, b in edges], c).astype(np.float64)
    return s1, s2, sizes


def _rhat_from_sums(s1: np.ndarray, s2: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Split R-hat from each (pseudo) half-chain's sum, sum of squares and size (last axis: the
    halves). inf where every half is constant but the halves differ, NaN where all agree."""
    mean = s1 / n
    var = np.maximum(s2 - s1 * mean, 0.0) / (n - 1)
    within = var.mean(axis=-1)
    size = n.mean(axis=-1)
    between = size * np.var(mean, axis=-1, ddof=1)
    # Sums of squares leave rounding residue where a half is constant: 1e-12 of the unit-variance
    # z scale is zero.
    within = np.where(within < 1e-12, 0.0, within)
    between = np.where(between < 1e-12, 0.0, between)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt((between / within + size - 1) / size)
    return np.where(within == 0, np.where(between > 0, np.inf, np.nan), out)


def split_rhat_blocks(
    bulk: np.ndarray, folded: np.ndarray, blocks: int, order: np.ndarray
) -> np.ndarray:
    """Rank-normalised split R-hat of every trace (rows of :func:`rank_z`'s arrays) for pseudo
    chains made of relabelled blocks: ``order`` (P, C * blocks) lists, for each of P
    relabellings, the blocks of pseudo-chain 0 (the first half's, then the second half's), then
    of pseudo-chain 1, ... The identity order gives ArviZ's R-hat of the chains. Returns (P, T).
    """
    t, c, _ = bulk.shape
    out = np.empty((order.shape[0], t))
    stats = [_block_sums(bulk, blocks), _block_sums(folded, blocks)]
    halves = 2 * c
    for start in range(0, order.shape[0], _CHUNK):
        chunk = order[start : start + _CHUNK]
        p = chunk.shape[0]
        both = []
        for s1, s2, sizes in stats:
            # (T, P, 2C): the blocks of each pseudo half-chain summed.
            a = s1[:, chunk].reshape(t, p, halves, -1).sum(axis=3)
            b = s2[:, chunk].reshape(t, p, halves, -1).sum(axis=3)
            n = sizes[chunk].reshape(p, halves, -1).sum(axis=2)
            both.append(_rhat_from_sums(a, b, np.broadcast_to(n, a.shape)))
        with np.errstate(invalid="ignore"):
            out[start : start + p] = np.fmax(both[0], both[1]).T
    return out


def _random_orders(rng: np.random.Generator, units: int, n_permutations: int) -> np.ndarray:
    """(n_permutations, units) random permutations of 0..units-1."""
    return np.argsort(rng.random((n_permutations, units)), axis=1)


def rhat_null_max(
    traces: np.ndarray, blocks: int, n_permutations: int, rng: np.random.Generator
) -> Tuple[np.ndarray, np.ndarray]:
    """The largest R-hat over the (non-constant) traces when blocks of draws are relabelled.

    ``traces`` (T, C, N); each chain's halves are cut into ``blocks / 2`` contiguous blocks
    (:func:`split_blocks`), and each relabelling deals the C x ``blocks`` blocks at random to C
    pseudo-chains of ``blocks`` blocks. Returns ``(observed, null)``: the R-hat of each trace
    computed the same way for the chains as given (T,), and the largest over the traces for
    each of ``n_permutations`` relabellings (NaN where every trace is constant).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> traces = rng.normal(size=(3, 4, 100))          # 3 traces of 4 chains that agree
    >>> observed, null = rhat_null_max(traces, 10, 199, rng)
    >>> bool(np.nanmax(observed) < np.quantile(null, 0.99))
    True
    """
    t, c, _ = traces.shape
    bulk, folded = rank_z(traces)
    identity = np.arange(c * blocks)[None, :]
    observed = split_rhat_blocks(bulk, folded, blocks, identity)[0]
    informative = ~np.isnan(observed)
    if not informative.any():
        return observed, np.full(n_permutations, np.nan)
    orders = _random_orders(rng, c * blocks, n_permutations)
    null = split_rhat_blocks(bulk[informative], folded[informative], blocks, orders)
    with np.errstate(invalid="ignore"):
        return observed, np.nanmax(np.where(np.isnan(null), -np.inf, null), axis=1)


def gap_matrix(sums: np.ndarray, counts: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``(P, G)`` from a (C, C) matrix of summed distances between the draws of two chains (the
    diagonal: over ordered pairs of distinct draws of one chain) and the chains' draw counts:
    ``P_ij`` the mean distance, ``G_ij = P_ij - (P_ii + P_jj) / 2`` (leading axes broadcast)."""
    pairs = counts[..., :, None] * counts[..., None, :]
    c = counts.shape[-1]
    eye = np.eye(c, dtype=bool)
    pairs = np.where(eye, counts[..., :, None] * (counts[..., None, :] - 1), pairs)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / pairs
    diag = np.diagonal(mean, axis1=-2, axis2=-1)
    gap = mean - (diag[..., :, None] + diag[..., None, :]) / 2
    return mean, np.where(eye, 0.0, gap)


def gap_test(
    dist: np.ndarray, chain: np.ndarray, block: np.ndarray, n_chains: int, n_permutations: int,
    rng: np.random.Generator,
) -> Tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """The between-chain gap of M draws and its permutation p-value.

    ``dist`` (M, M): the distances between the draws (symmetric, zero diagonal); ``chain`` (M,):
    each draw's chain (0..C-1); ``block`` (M,): its block, numbered so that every chain holds
    the same number of consecutive block numbers. Each relabelling deals the blocks at random
    to the chains, keeping each chain's number of blocks; the statistic is the largest
    ``G_ij`` over the pairs i < j. Returns ``(P, G, p_value, null)``; the p-value is
    ``(1 + #{null >= observed}) / (1 + n_permutations)``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = np.r_[rng.normal(size=60), rng.normal(size=20) + 3]      # chain 3 elsewhere
    >>> dist = np.abs(x[:, None] - x[None, :])
    >>> chain, block = np.repeat(np.arange(4), 20), np.repeat(np.arange(40), 2)
    >>> P, G, p, null = gap_test(dist, chain, block, 4, 999, rng)
    >>> bool(G[0, 3] > 1), p
    (True, 0.001)
    """
    units = int(block.max()) + 1
    onehot = np.zeros((units, dist.shape[0]))
    onehot[block, np.arange(dist.shape[0])] = 1.0
    q = onehot @ dist @ onehot.T  # (units, units) summed distances between blocks
    sizes = onehot.sum(axis=1)
    per_chain = units // n_chains
    owner = np.zeros(units, dtype=np.intp)
    owner[block] = chain
    upper = np.triu_indices(n_chains, 1)

    def statistic(orders: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        # orders (P, units): the blocks of chain 0, then of chain 1, ...
        labels = np.empty_like(orders)
        np.put_along_axis(labels, orders, np.repeat(np.arange(n_chains), per_chain)[None, :], axis=1)
        assign = np.zeros((orders.shape[0], n_chains, units))
        np.put_along_axis(assign, labels[:, None, :], 1.0, axis=1)
        sums = assign @ q @ np.swapaxes(assign, 1, 2)
        mean, gap = gap_matrix(sums, assign @ sizes)
        return mean, gap, gap[:, upper[0], upper[1]].max(axis=1)

    identity = np.argsort(owner, kind="stable")[None, :]
    mean, gap, observed = statistic(identity)
    orders = _random_orders(rng, units, n_permutations)
    null = np.concatenate([statistic(orders[s : s + _CHUNK])[2] for s in range(0, n_permutations, _CHUNK)])
    # Relabelling changes the order of summation: 1e-12 absorbs the rounding of equal gaps.
    p_value = (1 + int(np.sum(null >= observed[0] - 1e-12))) / (1 + n_permutations)
    return mean[0], gap[0], p_value, null
