"""File readers of the command line: numeric matrices and labels from .npy, .npz and text.

Errors are :class:`InputError`: one line naming the file (and the line and field for text),
which the command line prints as is.
"""

from __future__ import annotations

import sys
import unicodedata
import zipfile
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np

from .._validation import is_bookkeeping

__all__ = ["InputError", "read_matrix", "read_matrix_named", "read_labels", "escape_controls", "shown"]

# Draws file extensions read as text; anything else that is not .npy/.npz is tried as text too.
_TEXT_SUFFIXES = (".csv", ".txt", ".tsv", ".dat")


class InputError(ValueError):
    """An input file that cannot be read as asked: a user-facing, one-line message."""


def _escape_controls(text: str, *, keep_whitespace: bool) -> str:
    """``text`` with control and format characters (ESC, BEL, bidi overrides, ...) escaped as
    Python writes them (``\\x1b``), so that a file name cannot drive the terminal."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and not (keep_whitespace and ch in " \t\n\r"):
            out.append(ascii(ch)[1:-1])
        else:
            out.append(ch)
    return "".join(out)


def _shown(path: str) -> str:
    """A file name as printed in messages: control characters escaped."""
    return _escape_controls(path, keep_whitespace=False)


def read_matrix(path: str, what: str = "draws", key: Optional[str] = None, header: str = "auto") -> np.ndarray:
    """A numeric matrix from .npy, .npz (``key``, default "draws"), or text (.csv, .txt, ...).

    Text files: comma-, tab- or whitespace-separated numbers, one row per line; a UTF-8
    byte-order mark is ignored; blank lines and lines starting with ``#`` are skipped. With
    ``header="auto"`` the first line is a header when it names the columns (every field is a
    name: neither a number nor a missing value such as ``NA``), or when it is exactly
    ``0,1,...,w-1`` (w >= 2) above further lines, as ``pandas.DataFrame.to_csv(index=False)``
    writes (a note on stderr says so). A header starting with an empty field, as R's
    ``write.csv`` and pandas' ``to_csv()`` with its index write, also drops the first column of
    row names, and so does a header one field shorter than the data lines (R's
    ``write.table``). A first line of double-quoted fields above unquoted data is a header
    too (R quotes column names, even numeric ones). ``header="yes"``/``"no"`` force the
    choice. Any other non-number in a line, and a non-integral value when ``what`` is not
    ``"data"``, is an error naming the line and field. ``-`` reads text from standard input.

    Raises
    ------
    InputError
        One-line messages naming the file (and line and field for text).
    """
    return read_matrix_named(path, what, key, header)[0]


def read_matrix_named(
    path: str, what: str = "draws", key: Optional[str] = None, header: str = "auto"
) -> Tuple[np.ndarray, Optional[List[str]]]:
    """:func:`read_matrix`, with the column names of a text file's header (None without one,
    or when the header is pandas' column numbers 0..w-1)."""
    if path == "-":
        return _parse_text(sys.stdin.read(), "<stdin>", what, ",", header)
    p = Path(path)
    if not p.exists():
        raise InputError(f"{what} file not found: {path}")
    if p.is_dir():
        raise InputError(f"{what} path is a directory, not a file: {path}")
    try:
        size = p.stat().st_size
    except OSError as err:
        raise InputError(f"cannot read {what} file {path}: {err.strerror or err}") from None
    if size == 0 and p.is_file():  # a pipe or /dev/stdin has no size until read
        raise InputError(f"{what} file is empty: {path}")
    suffix = p.suffix.lower()
    try:
        if suffix == ".npy":
            with open(p, "rb") as fh:
                if fh.read(6) != b"\x93NUMPY":
                    raise InputError(f"{path} is not a .npy file (no NumPy header)")
            try:
                arr = np.load(p, allow_pickle=False)
            except ValueError as err:
                if "pickle" in str(err):
                    raise InputError(f"{path} holds Python objects, not numbers; save a numeric array") from None
                raise InputError(f"{path} is not a valid .npy file (truncated or corrupt: {err})") from None
            except EOFError:
                raise InputError(f"{path} is not a valid .npy file (truncated)") from None
            return _numeric(arr, path, what), None
        if suffix == ".npz":
            return _read_npz(p, path, what, key), None
        text = _decode(p.read_bytes(), path, what)
    except PermissionError:
        raise InputError(f"permission denied reading {what} file: {path}") from None
    delimiter = "\t" if suffix == ".tsv" else ("," if suffix == ".csv" else None)
    return _parse_text(text, path, what, delimiter, header)


def _decode(raw: bytes, path: str, what: str) -> str:
    """A text file's contents: UTF-8 (a byte-order mark dropped), else latin-1 (as older R
    and Excel on Windows write names such as "caf\xe9"), with a note on stderr; a file with
    NUL bytes is binary."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    if b"\x00" in raw:
        raise InputError(f"{path} is not a text file; {what} must be .npy, .npz, .csv or .txt")
    sys.stderr.write(f"salsox: note: {_shown(path)} is not UTF-8; read as latin-1 (ISO-8859-1)\n")
    return raw.decode("latin-1")


def _read_npz(p: Path, path: str, what: str, key: Optional[str]) -> np.ndarray:
    try:
        with np.load(p, allow_pickle=False) as npz:
            keys = list(npz.keys())
            if not keys:
                raise InputError(f"{what} file has no arrays: {path}")
            if key is None:
                key = "draws" if "draws" in keys else (keys[0] if len(keys) == 1 else None)
                if key is None:
                    raise InputError(f"{path} holds arrays {keys}; choose one with --key (var= in salsox.read_draws)")
            if key not in keys:
                raise InputError(f"{path} has no array {key!r}; it holds {keys}")
            arr = npz[key]
    except (ValueError, EOFError, OSError, zipfile.BadZipFile) as err:
        if isinstance(err, InputError):
            raise
        raise InputError(f"{path} is not a valid .npz file ({err})") from None
    return _numeric(arr, path, what)


def _numeric(arr: np.ndarray, path: str, what: str) -> np.ndarray:
    if arr.dtype.kind not in "biuf":
        raise InputError(f"{path} holds non-numeric data (dtype {arr.dtype}); {what} must be numbers")
    if arr.size == 0:
        raise InputError(f"{what} file holds an empty array: {path}")
    return arr


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


# Spellings of a missing value: never a column name, always an error in a data line.
_MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "nil", "missing", "."})

_HEADER_CHOICES = ("auto", "yes", "no")


def _tokens(line: str, delimiter: Optional[str]) -> List[Tuple[str, bool]]:
    """The fields of ``line`` and whether each was double-quoted. A quoted field may hold the
    delimiter, and ``""`` stands for one quote (RFC 4180, as R's ``write.csv``, pandas and
    ``--with-names`` write names); unquoted fields are stripped of spaces and single quotes."""
    if delimiter is None:
        return [(f.strip('"').strip("'"), len(f) >= 2 and f[0] == f[-1] == '"') for f in line.split()]
    if '"' not in line:  # the common case, numbers only: no quoting to undo
        return [(f.strip().strip("'"), False) for f in line.split(delimiter)]
    if _whole_quotes(line, delimiter):
        # Whole fields quoted, nothing inside them to undo (R's quoted row names and names).
        return [(f.strip()[1:-1], True) if '"' in f else (f.strip().strip("'"), False) for f in line.split(delimiter)]
    out: List[Tuple[str, bool]] = []
    i, size = 0, len(line)
    while True:
        while i < size and line[i] in " \t" and line[i] != delimiter:
            i += 1
        if i < size and line[i] == '"':
            j, chars = i + 1, []
            while j < size:
                if line[j] == '"':
                    if j + 1 < size and line[j + 1] == '"':
                        chars.append('"')
                        j += 2
                        continue
                    break
                chars.append(line[j])
                j += 1
            if j < size:  # the closing quote: the field ends at the next delimiter
                end = line.find(delimiter, j + 1)
                rest = line[j + 1:] if end < 0 else line[j + 1:end]
                if not rest.strip():
                    out.append(("".join(chars), True))
                    if end < 0:
                        return out
                    i = end + 1
                    continue
            # No closing quote, or text after it: not a quoted field, read as written.
        end = line.find(delimiter, i)
        field = line[i:] if end < 0 else line[i:end]
        out.append((field.strip().strip('"').strip("'"), False))
        if end < 0:
            return out
        i = end + 1


def _whole_quotes(line: str, delimiter: str) -> bool:
    """Whether every quote of ``line`` opens or closes a whole field with no quote or delimiter
    inside (R's quoted row names and names): then splitting on the delimiter is exact. Costs
    a few steps per quote, not per field."""
    segments = line.split('"')
    last = len(segments) - 1
    if last % 2:
        return False  # an odd number of quotes
    for k in range(1, last, 2):  # inside quotes
        if delimiter in segments[k]:
            return False
    for k in range(0, last + 1, 2):  # between quoted fields: blanks and delimiters only at the ends
        text = segments[k]
        if k > 0 and not (text.lstrip(" \t").startswith(delimiter) or (k == last and not text.strip(" \t"))):
            return False
        if k < last and not (text.rstrip(" \t").endswith(delimiter) or (k == 0 and not text.strip(" \t"))):
            return False
    return True


def _split(line: str, delimiter: Optional[str]) -> List[str]:
    if delimiter is not None:  # _tokens' fast paths without the flags (every data line comes here)
        if '"' not in line:
            return [f.strip().strip("'") for f in line.split(delimiter)]
        if _whole_quotes(line, delimiter):
            return [f.strip().strip('"').strip("'") for f in line.split(delimiter)]
    return [field for field, _ in _tokens(line, delimiter)]


def _is_name(field: str) -> bool:
    """A column name: not a number and not a spelling of a missing value."""
    return not _is_number(field) and field.lower() not in _MISSING


def _header_kind(fields: List[str]) -> Optional[str]:
    """Whether the first line is a header: "names", "numbers" (0..w-1), or None (data).

    A leading empty field (R's ``write.csv`` and pandas' index column) is a row-name column.
    """
    rest = fields[1:] if fields and fields[0] == "" and len(fields) > 1 else fields
    if rest and all(_is_name(f) for f in rest):
        return "names"
    if len(rest) >= 2 and rest == [str(j) for j in range(len(rest))]:
        return "numbers"  # pandas' default column names, 0..w-1
    return None


def _is_quoted(line: str, delimiter: Optional[str]) -> List[bool]:
    """Which fields of ``line`` are enclosed in double quotes (R quotes names, not numbers)."""
    return [quoted for _, quoted in _tokens(line, delimiter)]


def _parse_text(
    text: str, path: str, what: str, delimiter: Optional[str], header: str = "auto"
) -> Tuple[np.ndarray, Optional[List[str]]]:
    if text.startswith("\ufeff"):
        text = text[1:]  # a UTF-8 byte-order mark, as spreadsheets write: not part of the data
    rows = [
        (number, line)
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not rows:
        raise InputError(f"{what} file is empty: {path}")
    if delimiter is None:
        first = rows[0][1]
        delimiter = "," if "," in first else ("\t" if "\t" in first else None)
    rows = _drop_trailing_delimiters(rows, delimiter)
    first_fields = _split(rows[0][1], delimiter)
    kind = _header_kind(first_fields)
    if header == "yes":
        has_header = True
    elif header == "no":
        has_header = False
    else:
        # A numeric 0..w-1 line is a header only above data (pandas' to_csv(index=False));
        # it could also be a draw of w singletons, hence the note and --header no.
        has_header = kind == "names" or (kind == "numbers" and len(rows) > 1)
        if kind != "names" and len(rows) > 1:
            # R's write.csv(m) quotes every column name, even "1","2",...; its numbers are bare.
            quoted = _is_quoted(rows[0][1], delimiter)
            offset = 1 if first_fields[0] == "" and len(quoted) > 1 else 0
            missing = any(f.lower() in _MISSING for f in first_fields[offset:])  # "NA" is never a name
            if all(quoted[offset:]) and not missing and not all(_is_quoted(rows[1][1], delimiter)):
                has_header, kind = True, "names"
        if has_header and kind == "numbers" and first_fields[0] != "":
            sys.stderr.write(
                f"salsox: note: {_shown(path)}: line {rows[0][0]} (0, 1, ..., {len(first_fields) - 1}) is read as "
                "a header of column numbers, as pandas writes; use --header no to read it as data\n"
            )
    drop_first_column = False
    names: Optional[List[str]] = None
    header_line = rows[0][0]
    if has_header:
        if len(rows) == 1:
            raise InputError(f"{path}: only a header line (line {rows[0][0]}), no {what}")
        drop_first_column = first_fields[0] == "" and len(first_fields) > 1  # a row-name column
        if what == "labels" and [f.lower() for f in first_fields] == ["item", "label"]:
            drop_first_column = True  # --with-names output: item names, then their labels
        names = first_fields[1:] if drop_first_column else first_fields
        for column in names if what == "draws" else ():
            if is_bookkeeping(column):  # Stan's and CODA's CSV columns beside the labels
                raise InputError(
                    f"{path}: column {column!r} (line {rows[0][0]}) is a sampler's bookkeeping column, not an "
                    "item's cluster labels; keep only the label columns"
                )
        second = rows[1][1]
        if not drop_first_column and len(_split(second, delimiter)) == len(first_fields) + 1:
            # R's write.table: a header of n names above lines of a quoted row name and n values
            # (an unquoted extra first field could be an item: the count check below refuses it).
            drop_first_column = _is_quoted(second, delimiter)[0]
        if kind == "numbers":
            names = None  # pandas' default column labels are positions, not names
        rows = rows[1:]
    integers = what != "data"  # labels must be integers; features (--data) may be any number
    width: Optional[int] = None
    out = []
    for number, line in rows:
        fields = _split(line, delimiter)
        if drop_first_column:
            fields = fields[1:]
        if width is None:
            width = len(fields)
        elif len(fields) != width:
            raise InputError(
                f"{path}: line {number} has {len(fields)} fields, expected {width} like the first row "
                "(ragged rows)"
            )
        out.append(_parse_row(fields, path, number, integers, first=2 if drop_first_column else 1))
    matrix = np.vstack(out)
    if matrix.shape[1] == 0:
        raise InputError(f"{what} file has no columns: {path}")
    if names is not None and len(names) != matrix.shape[1]:
        raise InputError(
            f"{path}: the header (line {header_line}) names {len(names)} columns but the lines hold "
            f"{matrix.shape[1]} values (unquoted row names, as R's write.table(quote = FALSE) writes? "
            "write the draws with row.names = FALSE)"
        )
    return matrix, names


def _drop_trailing_delimiters(rows: List[Tuple[int, str]], delimiter: Optional[str]) -> List[Tuple[int, str]]:
    """Lines ending in the delimiter (an empty last field, as some spreadsheets and loops
    write) lose it when every line ends so; a header line of names alone may too."""
    if delimiter is None:  # split on runs of whitespace: no empty fields
        return rows
    ends = [line.rstrip(" \r").endswith(delimiter) for _, line in rows]
    if all(ends):
        return [(number, line.rstrip(" \r")[: -len(delimiter)]) for number, line in rows]
    if ends[0] and len(rows) > 1 and not any(ends[1:]):
        head = _split(rows[0][1], delimiter)[:-1]
        if len(head) != len(_split(rows[1][1], delimiter)):
            return rows  # the empty field is a column of its own
        names = head[1:] if head and head[0] == "" else head
        if names and all(_is_name(f) for f in names):
            return [(rows[0][0], rows[0][1].rstrip(" \r")[: -len(delimiter)])] + rows[1:]
    return rows


def _parse_row(fields: List[str], path: str, number: int, integers: bool, first: int = 1) -> np.ndarray:
    """One data line as numbers; an error naming the line and field otherwise (``first`` is
    the number of the first field given: 2 after a dropped column of row names)."""
    try:  # integers exactly (labels beyond 2**53 must not collapse in float64)
        return np.array([int(f) for f in fields], dtype=np.int64)
    except (ValueError, OverflowError):
        pass
    for j, f in enumerate(fields, start=first):
        if not _is_number(f):
            hint = " (a missing value)" if f.lower() in _MISSING else ""
            if ";" in f:
                hint = (
                    " (semicolons separate the fields, as R's write.csv2 writes: write the file with "
                    "write.csv, or replace the semicolons by commas)"
                )
            raise InputError(f"{path}: line {number}, field {j}: {f!r} is not a number{hint}")
    row = np.array(fields, dtype=np.float64)
    if integers:
        bad = np.flatnonzero(~np.isfinite(row) | (row != np.round(row)))
        if bad.size:
            j = int(bad[0])
            if not np.isfinite(row[j]):
                raise InputError(f"{path}: line {number}, field {j + first}: {fields[j]!r} is not a finite number")
            raise InputError(
                f"{path}: line {number}, field {j + first}: {fields[j]!r} is a non-integral value; "
                "labels must be integers"
            )
    return row


def read_labels(path: str, key: Optional[str] = None, *, several: bool = False) -> np.ndarray:
    """One partition (a row or a column of labels), or several rows when ``several``. A text
    file with the header ``item,label`` (``--with-names`` output) gives its label column."""
    arr = read_matrix(path, "labels", key)
    if arr.ndim == 1:
        return arr
    if arr.ndim == 2 and (arr.shape[0] == 1 or arr.shape[1] == 1):
        return arr.ravel()
    if several and arr.ndim == 2:
        return arr
    raise InputError(f"labels file {path} must hold one partition (one row or one column), got shape {arr.shape}")


HEADER_CHOICES = _HEADER_CHOICES

# Public names for the command line, which escapes its own messages the same way.
escape_controls = _escape_controls
shown = _shown
