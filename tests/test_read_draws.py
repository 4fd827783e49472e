"""salsox.read_draws: the files R, pandas, NumPy, xarray and ArviZ write, with the items' names;
missing or non-integral labels anywhere are errors naming where; the CLI reads through it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import salsox
from salsox import cli
from salsox.io.readers import InputError

DRAWS = np.array([[1, 1, 2, 2], [1, 1, 2, 3], [1, 1, 1, 2]])


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_r_write_csv_with_row_names(tmp_path: Path) -> None:
    path = write(tmp_path, "d.csv", '"","V1","V2","V3","V4"\n"1",1,1,2,2\n"2",1,1,2,3\n"3",1,1,1,2\n')
    d = salsox.read_draws(path)
    assert d.n_draws == 3 and d.n_items == 4
    assert d.item_names.tolist() == ["V1", "V2", "V3", "V4"]
    np.testing.assert_array_equal(salsox.psm(d), salsox.psm(DRAWS))


def test_r_write_table_layout_drops_the_row_names(tmp_path: Path) -> None:
    """write.table: a header of n quoted names above lines of a quoted row name and n values
    (the row names used to be read as one more item)."""
    path = write(tmp_path, "d.txt", '"a" "b" "c" "d"\n"1" 1 1 2 2\n"2" 1 1 2 3\n"3" 1 1 1 2\n')
    d = salsox.read_draws(path)
    assert (d.n_draws, d.n_items) == (3, 4) and d.item_names.tolist() == list("abcd")
    np.testing.assert_array_equal(salsox.psm(d), salsox.psm(DRAWS))


def test_a_header_shorter_than_unquoted_lines_is_an_error(tmp_path: Path) -> None:
    """Without R's quotes, an extra first field could be an item: refused, not dropped."""
    path = write(tmp_path, "d.csv", "a,b,c\n1,1,2,2\n2,1,2,3\n")
    with pytest.raises(InputError, match="names 3 columns but the lines hold 4 values"):
        salsox.read_draws(path)


def test_quoted_numeric_header_is_a_header(tmp_path: Path) -> None:
    """R quotes column names even when they are numbers ("1","2",...): not a draw."""
    path = write(tmp_path, "d.csv", '"101","102","103","104"\n1,1,2,2\n1,1,2,3\n1,1,1,2\n')
    d = salsox.read_draws(path)
    assert d.n_draws == 3 and d.item_names.tolist() == ["101", "102", "103", "104"]


def test_tsv_and_plain_text(tmp_path: Path) -> None:
    d = salsox.read_draws(write(tmp_path, "d.tsv", "x\ty\tz\tw\n1\t1\t2\t2\n1\t1\t2\t3\n"))
    assert d.n_draws == 2 and d.item_names.tolist() == ["x", "y", "z", "w"]
    plain = salsox.read_draws(write(tmp_path, "d.txt", "1 1 2 2\n1 1 2 3\n"))
    assert plain.n_draws == 2 and plain.item_names is None
    # pandas' column numbers 0..n-1 (to_csv(index=False)): a header only when told so
    path = write(tmp_path, "p.csv", "0,1,2,3\n1,1,2,2\n1,1,2,3\n")
    pandas_numbers = salsox.read_draws(path, header=True)
    assert pandas_numbers.n_draws == 2 and pandas_numbers.item_names is None


@pytest.mark.parametrize(
    "text, line, field",
    [
        ("NA,1,2,2\n1,1,2,3\n", 1, 1),  # NA in the first line: an error, not a header
        ("1,NA,2,2\n1,1,2,3\n", 1, 2),
        ("NA,NA,NA,NA\n1,1,2,3\n", 1, 1),
        ("1,1,2,2\n1,1,NA,3\n", 2, 3),
        ('"","V1","V2"\n"1",NA,2\n"2",1,2\n', 2, 2),  # field counted with the row names
        ("1,1,2,2\n1,1,2.5,3\n", 2, 3),
        ("1,1,2.5,2\n1,1,2,3\n", 1, 3),
        ("1,1,,2\n1,1,2,3\n", 1, 3),
        ('"NA","NA","NA","NA"\n1,1,2,3\n', 1, 1),  # quoted, but missing values: not a header
    ],
)
def test_missing_or_non_integer_labels_name_the_line(tmp_path: Path, text: str, line: int, field: int) -> None:
    with pytest.raises(InputError, match=f"line {line}, field {field}:"):
        salsox.read_draws(write(tmp_path, "bad.csv", text))


def test_input_error_is_a_value_error() -> None:
    assert issubclass(InputError, ValueError)


def test_npy_and_npz(tmp_path: Path) -> None:
    np.save(tmp_path / "d.npy", DRAWS)
    assert salsox.read_draws(tmp_path / "d.npy").n_draws == 3
    np.savez(tmp_path / "d.npz", z=DRAWS, other=DRAWS[:1])
    assert salsox.read_draws(tmp_path / "d.npz", "z").n_draws == 3
    with pytest.raises(InputError, match="choose one"):
        salsox.read_draws(tmp_path / "d.npz")
    bad = DRAWS.astype(float)
    bad[2, 1] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    with pytest.raises(InputError, match=r"draw 3, item 2 \(1-based\): nan is a missing value"):
        salsox.read_draws(tmp_path / "nan.npy")
    bad[2, 1] = 0.5
    np.save(tmp_path / "half.npy", bad)
    with pytest.raises(InputError, match="not an integer"):
        salsox.read_draws(tmp_path / "half.npy")


def test_argument_checks(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="header must be True, False or None"):
        salsox.read_draws(tmp_path / "d.csv", header="maybe")
    with pytest.raises(TypeError, match="var must be a string"):
        salsox.read_draws(tmp_path / "d.csv", var=3)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="not found"):
        salsox.read_draws(tmp_path / "missing.csv")
    with pytest.raises(InputError, match="not found"):
        salsox.read_draws(tmp_path / "missing.nc")
    (tmp_path / "empty.nc").write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        salsox.read_draws(tmp_path / "empty.nc")
    (tmp_path / "dir.nc").mkdir()
    with pytest.raises(InputError, match="directory"):
        salsox.read_draws(tmp_path / "dir.nc")
    (tmp_path / "junk.nc").write_bytes(b"junk")
    with pytest.raises(InputError, match="cannot read .*junk.nc as netCDF"):
        salsox.read_draws(tmp_path / "junk.nc")


@pytest.fixture
def netcdf_files(tmp_path: Path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    z = xr.DataArray(DRAWS.reshape(1, 3, 4), dims=("chain", "draw", "obs"), coords={"obs": list("abcd")})
    ds = xr.Dataset({"z": z, "mu": xr.DataArray(np.zeros((1, 3)), dims=("chain", "draw"))})
    ds.to_netcdf(tmp_path / "ds.nc", engine="h5netcdf")
    z.to_dataset(name="z").to_netcdf(tmp_path / "one.nc", engine="h5netcdf")
    az = pytest.importorskip("arviz")
    idata = az.from_dict(posterior={"z": DRAWS.reshape(1, 3, 4)}, coords={"obs": list("wxyz")}, dims={"z": ["obs"]})
    idata.to_netcdf(str(tmp_path / "idata.nc"), engine="h5netcdf")
    return tmp_path


def test_netcdf_dataset_and_inference_data(netcdf_files: Path) -> None:
    d = salsox.read_draws(netcdf_files / "ds.nc", "z")
    assert (d.n_draws, d.n_items) == (3, 4) and d.item_names.tolist() == list("abcd") and d.item_dim == "obs"
    assert salsox.read_draws(netcdf_files / "one.nc").item_names.tolist() == list("abcd")
    with pytest.raises(InputError, match="choose the cluster labels"):
        salsox.read_draws(netcdf_files / "ds.nc")
    with pytest.raises(InputError, match="no variable 'q'"):
        salsox.read_draws(netcdf_files / "ds.nc", "q")
    idata = salsox.read_draws(netcdf_files / "idata.nc", "z")
    assert idata.item_names.tolist() == list("wxyz") and idata.n_draws == 3
    est = salsox.salso(idata, seed=1)
    assert est.to_xarray().dims == ("obs",)


def test_cli_reads_netcdf_with_var_and_prints_names(netcdf_files: Path, capsys) -> None:
    code = cli.main(["summary", str(netcdf_files / "ds.nc"), "--var", "z", "--seed", "1", "--one-based"])
    out = capsys.readouterr()
    assert code == 0, out.err
    lines = out.out.splitlines()
    assert lines[2].split()[0] == "1" and lines[2].split()[2] in list("abcd")
    code = cli.main(["estimate", str(netcdf_files / "ds.nc"), "--var", "z", "--key", "z"])
    assert code == 2 and "not both" in capsys.readouterr().err


def test_cli_subcommands_printing_items_take_one_based(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "d.csv", '"","ant","bee","cat","dog"\n"1",1,1,2,2\n"2",1,1,2,3\n"3",1,1,1,2\n')
    for command in ("estimate", "summary", "ball", "chips", "tune"):
        extra = ["--clusters", "2"] if command == "tune" else []
        code = cli.main([command, path, "--seed", "1", "--json", "--one-based", *extra])
        out = capsys.readouterr()
        assert code == 0, (command, out.err)
        assert "ant" in out.out, command  # item names in the JSON report
    code = cli.main(["ball", path, "--seed", "1", "--one-based", "--json"])
    import json

    ball = json.loads(capsys.readouterr().out)
    assert min(ball["estimate"]) == 1 and ball["item_names"] == ["ant", "bee", "cat", "dog"]


def test_cli_r_file_end_to_end_in_a_subprocess(tmp_path: Path) -> None:
    """An R write.table file with an NA in the first line fails with exit status 1 and the
    line named (no draw silently dropped)."""
    path = write(tmp_path, "d.txt", '"a" "b" "c"\n"1" NA 1 2\n"2" 1 1 2\n')
    import os
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "salsox", "estimate", path], capture_output=True, text=True, cwd=tmp_path,
        env=dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0"), timeout=120,
    )
    assert proc.returncode == 1 and "line 2, field 2: 'NA'" in proc.stderr, proc.stderr
