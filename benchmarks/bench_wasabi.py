"""WASABI (salsox.wasabi) on ex1 (L = 2, 3, 10 starts) and on a larger synthetic draw set, with
the time of one 16-run salso (VI) on the same draws beside it.

The R package runs a fresh 16-run salso for every group at every iteration; here a particle
update is one SALSO run warm-started from the particle (plus n_runs - 1 fresh ones), and the
VI of all draws to the particles is one engine call (particle_vi), also timed against the
generic per-draw loss evaluation (expected_losses with the particle as a one-draw "truth").

Wall times, all threads (n_jobs=None unless --jobs), fastest of --repeat calls.

Usage: python benchmarks/bench_wasabi.py [--n 1000] [--H 2000] [--starts 10] [--repeat 1] [--jobs N]
"""

from __future__ import annotations

import argparse

import numpy as np

import salsox
from _common import best_time, load_draws, print_table
from salsox import _core
from salsox.uncertainty.wasabi.contributions import draws_matrix
from synthetic import synthetic_draws


def vi_matrix_times(matrix: np.ndarray, particles: np.ndarray, jobs: int, repeat: int) -> tuple[float, float]:
    """Seconds for the H x L VI matrix: the engine kernel, and one generic evaluation per particle."""
    draws = salsox.Draws(matrix)
    p = np.ascontiguousarray(particles, dtype=np.int32)
    kernel, _ = best_time(lambda: _core.particle_vi(draws._core, p, jobs), repeat)
    loss = _core.CountLoss.builtin("VI", 1.0, 1.0, matrix.shape[1])
    one_draw = [_core.CompactDraws(np.ascontiguousarray(row[None, :])) for row in p]
    generic, _ = best_time(lambda: [_core.expected_losses(d, loss, matrix, jobs) for d in one_draw], repeat)
    return kernel, generic


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="synthetic items")
    parser.add_argument("--H", type=int, default=2000, help="synthetic draws")
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    from salsox._validation import check_n_jobs

    jobs = check_n_jobs(args.jobs)
    sets = {
        "ex1": draws_matrix(load_draws("ex1")),
        f"synthetic n={args.n}": draws_matrix(synthetic_draws(args.n, args.H, k=10, seed=1)),
    }
    rows = []
    for name, matrix in sets.items():
        h, n = matrix.shape
        t_salso, est = best_time(lambda m=matrix: salsox.salso(m, "VI", n_runs=16, seed=1, n_jobs=jobs), args.repeat)
        for L in (2, 3):
            t_w, res = best_time(
                lambda m=matrix, L=L: salsox.wasabi(m, L, n_starts=args.starts, seed=1, n_jobs=jobs), args.repeat
            )
            kernel, generic = vi_matrix_times(matrix, res.particles, jobs, args.repeat)
            rows.append([
                name, h, n, L, args.starts, t_w, res.distance, res.n_iter, t_salso, est.expected_loss,
                t_w / t_salso, kernel * 1e3, generic * 1e3,
            ])
    print(f"threads: {jobs}")
    print_table(
        ["draws", "H", "n", "L", "starts", "wasabi s", "W", "iters", "salso16 s", "salso EVI", "ratio",
         "VI matrix ms", "generic ms"],
        rows,
    )


if __name__ == "__main__":
    main()
