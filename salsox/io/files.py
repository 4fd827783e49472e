"""Reading posterior draws from files: :func:`read_draws`.

Text (R's ``write.csv``/``write.table``, pandas' ``to_csv``, plain whitespace), NumPy
``.npy``/``.npz``, and netCDF (an xarray Dataset, or ArviZ InferenceData with its
``posterior`` group; xarray is imported only for these). The text reader is the command
line's (:mod:`salsox.io.readers`); this adds the file formats of the PyData world and keeps
the items' names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from .._validation import looks_like_similarity
from .draws import Draws
from .foreign import convert_foreign_named
from .readers import HEADER_CHOICES, InputError, read_matrix_named

__all__ = ["read_draws", "read_netcdf_variable", "NETCDF_SUFFIXES"]

# Extensions read as netCDF (InferenceData.to_netcdf writes .nc).
NETCDF_SUFFIXES = (".nc", ".nc4", ".netcdf", ".cdf", ".h5", ".hdf5")


def read_draws(path: Any, var: Optional[str] = None, *, header: Union[bool, str, None] = None) -> Draws:
    """Posterior draws of a partition from a file, with the items' names when it has them.

    Parameters
    ----------
    path : str or path-like
        The file; its extension says how to read it:

        * ``.csv``, ``.tsv``, ``.txt`` (anything else, too): one draw per line, comma-, tab-
          or whitespace-separated integer labels in ASCII decimal digits (``3``, ``-2``; an
          integral ``3.0`` or ``3e2`` too; ``1_0`` and other scripts' digits are errors). A
          header line of column names is kept as the item names, and so is a comment line of
          names just above the first draw (``# a,b,c``, as ``np.savetxt(header=...)``
          writes); R's row names (``write.csv(draws)``, ``write.table(draws)``) are dropped.
          Other lines starting with ``#`` and blank lines are skipped. ``"-"`` is stdin.
          Large files are parsed by pandas' C parser when pandas is installed.
        * ``.npy``; ``.npz`` (the array ``var``, else ``"draws"``, else its only array).
        * ``.nc`` (netCDF, also ``.nc4``, ``.h5``...): an xarray Dataset, or an ArviZ
          InferenceData file (its ``posterior`` group); ``var`` names the variable holding
          the labels (optional when there is one). Dimensions (chain, draw, item) as in
          :func:`salsox.from_xarray`; the item coordinate gives the names. Needs xarray and
          a netCDF engine (h5netcdf or netCDF4).
    var : str, optional
        The array (.npz) or variable (netCDF) holding the labels.
    header : bool or None, default None
        Text files: whether the first line is a header. None decides from the line: it is a
        header only when it cannot be a draw: more of its fields are names (neither numbers
        nor missing values) than numbers (``NA``, ``.`` and numbers may stand among the
        names, and are kept), or it is R's line of double-quoted names, or pandas'
        ``,0,1,...`` above its index column. A first line that could be either, distinct integers such as the
        ``0,1,...,n-1`` that ``pandas.DataFrame.to_csv(index=False)`` writes (also a draw of
        singletons, as a chain started from them has), is read as a draw with a
        :class:`salsox.SalsoxWarning`; pass ``header=True`` when it is a header. ``False``:
        the first line is a draw. The command line's ``"auto"``, ``"yes"``, ``"no"`` are
        taken too.

    Returns
    -------
    Draws
        With ``item_names`` from the header or coordinates (None without them).

    Raises
    ------
    ValueError
        (:class:`salsox.io.readers.InputError`) A missing value (``NA``, ``NaN``, an empty
        field) or a non-integer anywhere, first line included, naming the line and field (the
        draw and item for arrays); a ragged line; a sampler's bookkeeping column (``lp__``,
        ``log_lik[3]``, ``chain``, ...) or an item named twice in the header, naming them; an
        unreadable or empty file.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "draws.csv")
    >>> with open(path, "w") as f:                       # as R's write.csv(draws) writes it
    ...     _ = f.write('"","ant","bee","cat"\\n"1",1,1,2\\n"2",1,2,2\\n')
    >>> d = salsox.read_draws(path)
    >>> d.n_draws, d.n_items, d.item_names.tolist()
    (2, 3, ['ant', 'bee', 'cat'])
    >>> with open(path, "w") as f:                       # a chain started from singletons
    ...     _ = f.write("0,1,2\\n0,0,1\\n0,0,0\\n")
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     d = salsox.read_draws(path)
    >>> d.n_draws, d.item_names, caught[0].category.__name__
    (3, None, 'SalsoxWarning')
    >>> d = salsox.read_draws(path, header=True)          # pandas' column numbers: no names
    >>> d.n_draws, d.item_names
    (2, None)
    """
    shown = str(path)
    header = _header_choice(header)
    if var is not None and not isinstance(var, str):
        raise TypeError(f"var must be a string (a variable or array name), got {type(var).__name__}")
    suffix = Path(shown).suffix.lower() if shown != "-" else ""
    if suffix in NETCDF_SUFFIXES:
        matrix, names, dim = _read_netcdf(shown, var)
    else:
        try:
            matrix, text_names = read_matrix_named(shown, "draws", var, header)
        except InputError as err:
            if "non-integral" not in str(err) or shown == "-":
                raise
            _refuse_similarity_file(shown, var, header)  # says so when it is one
            raise
        names, dim = text_names, None
    if matrix.ndim != 2:
        raise InputError(f"draws must be a 2-D matrix (draws x items), got a {matrix.ndim}-D array from {shown}")
    _check_labels(matrix, shown)
    try:
        return Draws(matrix, item_names=names, item_dim=dim)
    except (ValueError, TypeError) as err:
        raise InputError(f"{shown}: {err}") from None


def _header_choice(header: Any) -> str:
    """``header`` as the readers take it: "auto" (None), "yes" (True) or "no" (False)."""
    if header is None or isinstance(header, (bool, np.bool_)):
        return "auto" if header is None else ("yes" if header else "no")
    if isinstance(header, str) and header in HEADER_CHOICES:
        return header
    raise ValueError(f"header must be True, False or None (decide from the line), got {header!r}")


def _check_labels(matrix: np.ndarray, path: str) -> None:
    """A missing or non-integral label in an array is an error naming the draw and item."""
    if matrix.dtype.kind != "f":
        return
    bad = ~np.isfinite(matrix) | (matrix != np.round(matrix))
    if not bad.any():
        return
    _refuse_similarity(matrix, path)
    h, i = (int(v) for v in np.argwhere(bad)[0])
    value = matrix[h, i]
    what = "a missing value (NaN)" if np.isnan(value) else (
        "not finite" if not np.isfinite(value) else "not an integer"
    )
    raise InputError(
        f"{path}: draw {h + 1}, item {i + 1} (1-based): {float(value)!r} is {what}; labels must be integers"
    )


def _refuse_similarity(matrix: np.ndarray, path: str) -> None:
    """A similarity matrix given as draws: an error saying what it is."""
    if looks_like_similarity(matrix):
        raise InputError(
            f"{path} holds a similarity matrix (square, symmetric, entries in [0, 1], ones on the diagonal), "
            "not draws: give the H x n draws of cluster labels (in Python, salsox.PSM(matrix) works with "
            "'binder', 'VI.lb' and 'omARI.approx')"
        )


def _refuse_similarity_file(path: str, var: Optional[str], header: str) -> None:
    """A text file whose values are not labels: read it again as numbers, and say so when it is
    a similarity matrix (any other reading error keeps the first message)."""
    try:
        matrix, _ = read_matrix_named(path, "data", var, header)
    except InputError:
        return
    _refuse_similarity(np.asarray(matrix, dtype=np.float64), path)


def read_netcdf_variable(path: str, var: Optional[str]) -> Any:
    """The labels' DataArray, loaded, from a netCDF file: a Dataset, or an InferenceData's
    posterior group (its ``chain`` dimension kept). ``var`` names the variable; ``None`` takes
    the only one."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"draws file not found: {path}")
    if p.is_dir():
        raise InputError(f"draws path is a directory, not a file: {path}")
    if p.stat().st_size == 0:
        raise InputError(f"draws file is empty: {path}")
    try:
        import xarray as xr
    except ImportError:
        raise InputError(f'reading {path} needs xarray: pip install "salsox[xarray]" (and h5netcdf)') from None
    try:
        ds = xr.open_dataset(p)
        if not ds.data_vars:  # an InferenceData file: the groups hold the variables
            ds.close()
            ds = xr.open_dataset(p, group="posterior")
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read {path} as netCDF: {err}") from None
    with ds:
        names = [str(v) for v in ds.data_vars]
        if var is None:
            if len(names) != 1:
                raise InputError(f"{path} holds variables {names}; choose the cluster labels with var= (--var)")
            var = names[0]
        if var not in names:
            raise InputError(f"{path} has no variable {var!r}; it holds {names}")
        return ds[var].load()


def _read_netcdf(path: str, var: Optional[str]) -> Any:
    """(matrix, item names, item dimension) from a netCDF file: a Dataset, or an
    InferenceData's posterior group."""
    labels = read_netcdf_variable(path, var)
    try:
        matrix, item_names, dim = convert_foreign_named(labels)
    except (ValueError, KeyError, TypeError) as err:
        raise InputError(f"{path}: variable {labels.name!r}: {err}") from None
    return np.asarray(matrix), item_names, dim
