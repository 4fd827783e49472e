"""``salsox diagnose`` (issue 41): the command line gives the numbers of salsox.diagnose, from
a netCDF file with chains, one file per chain or one stacked file, and refuses bad input in one
line."""

from __future__ import annotations

import json
import subprocess
import warnings

import numpy as np
import pytest

import salsox
from salsox import cli
from salsox.datasets import example_draws

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    az = pytest.importorskip("arviz")

# The searches of small test chains often end at the draws' cluster cap: R's warning, not ours to test.
pytestmark = pytest.mark.filterwarnings("ignore::salsox.SalsoxWarning")

OPTIONS = ["--seed", "7", "--runs", "2", "--references", "2", "--jobs", "2"]


def main(capsys, *args: str) -> subprocess.CompletedProcess:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, captured.out, captured.err)


@pytest.fixture(scope="module")
def chains() -> np.ndarray:
    draws = np.asarray(example_draws().draws)[:, :40]
    return draws[np.random.default_rng(3).permutation(len(draws))][:200].reshape(4, 50, 40)


@pytest.fixture(scope="module")
def files(tmp_path_factory, chains):
    d = tmp_path_factory.mktemp("diagnose")
    for k, chain in enumerate(chains):
        np.savetxt(d / f"chain{k}.csv", chain + 1, fmt="%d", delimiter=",")
    np.save(d / "stacked.npy", chains.reshape(-1, chains.shape[2]))
    az.from_dict(posterior={"z": chains}).to_netcdf(str(d / "chains.nc"))
    return d


def _python(chains: np.ndarray) -> dict:
    diag = salsox.diagnose(chains, seed=7, n_runs=2, n_references=2, n_jobs=2)
    return json.loads(json.dumps(diag.to_dict()))


def test_every_file_layout_gives_the_python_numbers(capsys, files, chains):
    expected = _python(chains)
    layouts = {
        "netcdf": [str(files / "chains.nc")],
        "one file per chain": [str(files / f"chain{k}.csv") for k in range(4)],
        "stacked": [str(files / "stacked.npy"), "--chains", "4"],
    }
    for name, args in layouts.items():
        proc = main(capsys, "diagnose", *args, *OPTIONS, "--json")
        assert proc.returncode == 0, (name, proc.stderr)
        got = json.loads(proc.stdout)
        for key in ("traces", "posterior_distance", "estimate_distance", "half_distance", "mcse", "chain_estimates"):
            assert got[key] == expected[key], (name, key)
        assert got["converged"] == expected["converged"] and got["verdict"] == expected["verdict"]


def test_text_report_and_fail_status(capsys, files, chains, tmp_path):
    proc = main(capsys, "diagnose", str(files / "chains.nc"), *OPTIONS)
    assert proc.returncode == 0
    assert "trace" in proc.stdout and "R-hat" in proc.stdout and "n_clusters" in proc.stdout
    odd = chains.copy()
    odd[1] = np.arange(40) % 9  # one chain on another partition
    np.save(tmp_path / "odd.npy", odd.reshape(-1, 40))
    proc = main(capsys, "diagnose", str(tmp_path / "odd.npy"), "--chains", "4", *OPTIONS, "--fail")
    assert proc.returncode == 3 and proc.stdout.startswith("Not converged")
    assert main(capsys, "diagnose", str(tmp_path / "odd.npy"), "--chains", "4", *OPTIONS).returncode == 0


def test_calibration_options_and_inf(capsys, files, chains, tmp_path):
    proc = main(capsys, "diagnose", str(files / "chains.nc"), *OPTIONS, "--json", "--alpha", "0.05",
                "--permutations", "99", "--gap-draws", "10")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    expected = salsox.diagnose(chains, seed=7, n_runs=2, n_references=2, n_jobs=2, alpha=0.05, n_permutations=99,
                               gap_draws=10)
    assert got["alpha"] == 0.05 and got["n_permutations"] == 99 and got["gap_draws"] == 10
    assert got["gap_pvalue"] == expected.gap_pvalue and got["status"] == expected.status
    assert got["rhat_limit"] == expected.rhat_limit and got["gap"] == expected.gap.tolist()
    stuck = np.stack([np.broadcast_to(np.arange(40) % (k + 2), (50, 40)) for k in range(4)])
    np.save(tmp_path / "stuck.npy", stuck.reshape(-1, 40))
    proc = main(capsys, "diagnose", str(tmp_path / "stuck.npy"), "--chains", "4", *OPTIONS, "--fail")
    assert proc.returncode == 3 and "(largest inf," in proc.stdout and " inf " in proc.stdout


def test_a_bad_plot_extension_is_refused_before_any_work(capsys, files, monkeypatch):
    pytest.importorskip("matplotlib")
    import salsox.diagnostics

    calls = []
    monkeypatch.setattr(salsox.diagnostics, "diagnose", lambda *a, **k: calls.append(1))
    proc = main(capsys, "diagnose", str(files / "chains.nc"), *OPTIONS, "--plot", str(files / "traces.pgn"))
    assert proc.returncode == 2 and not calls
    assert "--plot" in proc.stderr and "extension" in proc.stderr and "png" in proc.stderr


@pytest.mark.parametrize("kind", ["traces", "rank", "estimates", "gap"])
def test_plots(capsys, files, tmp_path, kind):
    pytest.importorskip("matplotlib")
    out = tmp_path / f"{kind}.png"
    proc = main(capsys, "diagnose", str(files / "chains.nc"), *OPTIONS, "--plot", str(out), "--kind", kind)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args, code, needle",
    [
        (["stacked.npy"], 2, "--chains"),
        (["stacked.npy", "--chains", "3"], 2, "does not divide"),
        (["chain0.csv", "chain1.csv", "--chains", "2"], 2, "one file per chain"),
        (["chains.nc", "--chains", "2"], 2, "chain' dimension"),
        (["chain0.csv", "chain1.csv", "--rhat", "1"], 2, "--rhat"),
        (["chain0.csv", "chain1.csv", "--ess", "-5"], 2, "--ess"),
        (["chain0.csv", "chain1.csv", "--references", "0"], 2, "--references"),
        (["chain0.csv", "chain1.csv", "--distance", "euclid"], 2, "--distance"),
        (["chain0.csv", "chain1.csv", "--references", "51"], 2, "--references must be in [1, 50], got 51"),
        (["chain0.csv", "chain1.csv", "--alpha", "0"], 2, "--alpha"),
        (["chain0.csv", "chain1.csv", "--alpha", "1"], 2, "--alpha must be below 1"),
        (["chain0.csv", "chain1.csv", "--permutations", "0"], 2, "--permutations"),
        (["chain0.csv", "chain1.csv", "--gap-draws", "x"], 2, "--gap-draws"),
        (["chain0.csv", "chain1.csv", "--plot", "out.txt"], 2, "--plot out.txt"),
        (["chain0.csv", "missing.csv"], 1, "missing.csv"),
        (["chain0.csv", "chain1.csv", "--out", "chain1.csv"], 2, "overwrite"),
    ],
)
def test_bad_input_is_one_line(capsys, files, monkeypatch, args, code, needle):
    monkeypatch.chdir(files)
    proc = main(capsys, "diagnose", *args)
    assert proc.returncode == code, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr
