"""Expected loss of 100 estimates on ex1 (10000 x 200) for every loss, and the PSM of ex1.

salsox (C++ count tables) against a plain, vectorised numpy implementation measured in the
same run. Usage: python benchmarks/bench_losses.py [--jobs N]
"""

from __future__ import annotations

import argparse

import numpy as np

import salsox
from _common import best_time, load_draws, print_table


def relabel(draws: np.ndarray) -> np.ndarray:
    out = np.empty_like(draws)
    for h, row in enumerate(draws):
        out[h] = np.unique(row, return_inverse=True)[1]
    return out


def numpy_expected_loss(est: np.ndarray, draws: np.ndarray, loss: str, a: float = 1, b: float = 1) -> float:
    """All H contingency tables of one estimate with one bincount, then the paper's formulas."""
    H, n = draws.shape
    k_draw, k_est = draws.max() + 1, est.max() + 1
    idx = (np.arange(H)[:, None] * k_draw + draws) * k_est + est[None, :]
    cells = np.bincount(idx.ravel(), minlength=H * k_draw * k_est).reshape(H, k_draw, k_est).astype(float)
    rows, cols = cells.sum(2), cells.sum(1)
    if loss == "binder":
        v = (a * (rows**2).sum(1) + b * (cols**2).sum(1) - (a + b) * (cells**2).sum((1, 2))) / n**2
        return float(v.mean())
    if loss == "omARI":
        c2 = lambda x: x * (x - 1) / 2
        A, B, X, N = c2(rows).sum(1), c2(cols).sum(1), c2(cells).sum((1, 2)), n * (n - 1) / 2
        e = A * B / N
        den = 0.5 * (A + B) - e
        return float(np.mean(np.where(den == 0, 0.0, 1 - (X - e) / np.where(den == 0, 1, den))))
    xl = lambda x: np.where(x > 0, x * np.log2(np.where(x > 0, x, 1)), 0.0)
    D, E, J = xl(rows).sum(1), xl(cols).sum(1), xl(cells).sum((1, 2))
    if loss == "VI":
        return float(((a * D + b * E - (a + b) * J) / n).mean())
    h_draw, h_est, h_joint = np.log2(n) - D / n, np.log2(n) - E / n, np.log2(n) - J / n
    mutual = h_draw + h_est - h_joint
    if loss == "NVI":
        v = np.where(h_joint > 1e-12, 1 - mutual / np.where(h_joint > 1e-12, h_joint, 1), 0.0)
    elif loss == "ID":
        v = np.maximum(h_draw, h_est) - mutual
    else:
        top = np.maximum(h_draw, h_est)
        v = np.where(top > 1e-12, 1 - mutual / np.where(top > 1e-12, top, 1), 0.0)
    return float(v.mean())


def numpy_psm(draws: np.ndarray) -> np.ndarray:
    H, n = draws.shape
    k = draws.max() + 1
    onehot = np.zeros((n, H * k), dtype=np.float32)
    onehot[np.repeat(np.arange(n)[None, :], H, 0).ravel(), (np.arange(H)[:, None] * k + draws).ravel()] = 1
    return (onehot @ onehot.T).astype(np.float64) / H


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=1, help="salsox threads (default 1, like numpy)")
    parser.add_argument("--estimates", type=int, default=100)
    args = parser.parse_args()

    draws = relabel(load_draws("ex1"))
    d = salsox.Draws(draws)
    rng = np.random.default_rng(0)
    # Realistic estimates: draws with a few items moved.
    ests = draws[rng.choice(len(draws), args.estimates, replace=False)].copy()
    ests[rng.random(ests.shape) < 0.05] = rng.integers(0, 8)
    ests = np.stack([np.unique(e, return_inverse=True)[1] for e in ests])
    rows = []
    for loss in ("binder", "VI", "omARI", "NVI", "ID", "NID"):
        t_sx, ours = best_time(lambda loss=loss: salsox.partition_loss(ests, d, loss, n_jobs=args.jobs))
        t_np, theirs = best_time(lambda loss=loss: [numpy_expected_loss(e, draws, loss) for e in ests], repeat=1)
        err = float(np.max(np.abs(np.asarray(theirs) - ours) / np.maximum(1e-300, np.abs(ours))))
        rows.append([loss, args.estimates, t_sx, t_np, t_np / t_sx, err])
    t_sx, p = best_time(lambda: salsox.psm(d, n_jobs=args.jobs))
    t_np, q = best_time(lambda: numpy_psm(draws), repeat=1)
    rows.append(["psm", "-", t_sx, t_np, t_np / t_sx, float(np.max(np.abs(p - q)))])
    print(f"ex1: {draws.shape[0]} draws x {draws.shape[1]} items; salsox n_jobs={args.jobs}")
    print_table(["task", "estimates", "salsox s", "numpy s", "speed-up", "max rel diff"], rows)


if __name__ == "__main__":
    main()
