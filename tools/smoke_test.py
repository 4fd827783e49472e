"""Smoke test of an installed salsox (a wheel in a fresh virtualenv, cibuildwheel's test step).

Needs only salsox and its dependencies; run it from outside the source tree, so that the
installed package, not ./salsox, is imported:

    cd /tmp && python /path/to/salsox/tools/smoke_test.py
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import os
import subprocess
import sys

import numpy as np

import salsox
from salsox import _core
from salsox.datasets import example_draws


def main() -> None:
    here = os.path.dirname(os.path.abspath(salsox.__file__))
    assert os.getcwd() != os.path.dirname(here), "run me from outside the source tree"
    # Version: one source, the same everywhere.
    assert salsox.__version__ == importlib.metadata.version("salsox"), "version mismatch"
    # Typing: the marker and the extension's stub are shipped.
    files = importlib.resources.files("salsox")
    assert files.joinpath("py.typed").is_file(), "py.typed missing"
    assert files.joinpath("_core.pyi").is_file(), "_core.pyi missing"

    ex = example_draws()
    est = salsox.salso(ex.draws, "VI", seed=1, n_runs=8)
    assert est.expected_loss == salsox.partition_loss(est.labels, ex.draws, "VI")
    assert 2 <= est.n_clusters <= 8, est
    assert salsox.ARI(est.labels, ex.true_labels) > 0.7
    same = salsox.salso(ex.draws, "VI", seed=1, n_runs=8, n_jobs=1)
    assert np.array_equal(same.labels, est.labels), "n_jobs changed the estimate"
    for loss in ("binder", salsox.Binder(a=2, b=1), salsox.VI(a=0.5, b=1), "omARI", "NVI", "ID", "NID", "VI.lb",
                 "omARI.approx"):
        e = salsox.salso(ex.draws, loss, seed=1, n_runs=2)
        assert np.isfinite(e.expected_loss) and e.expected_loss >= 0, (loss, e)
    p = salsox.psm(ex.draws)
    assert p.shape == (100, 100) and np.allclose(np.diag(p), 1)
    assert salsox.bell(5) == 52
    exact = salsox.minimize_by_enumeration(ex.draws[:, :7], "VI")
    assert exact.n_partitions == salsox.bell(7)

    # The command line, as installed.
    out = subprocess.run([sys.executable, "-m", "salsox", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"salsox {salsox.__version__}", out.stdout
    demo = subprocess.run([sys.executable, "-m", "salsox", "demo", "--runs", "4", "-q"], capture_output=True,
                          text=True, check=True)
    assert "SALSO estimate" in demo.stdout, demo.stdout

    print(f"salsox {salsox.__version__} OK: OpenMP {'on' if _core.has_openmp() else 'off'}, "
          f"{_core.max_threads()} threads, estimate {est.n_clusters} clusters, "
          f"expected loss {est.expected_loss:.6f}")


if __name__ == "__main__":
    main()
