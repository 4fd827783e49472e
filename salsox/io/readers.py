"""File readers of the command line: numeric matrices and labels from .npy, .npz and text.

Errors are :class:`InputError`: one line naming the file (and the line and field for text),
which the command line prints as is.
"""

from __future__ import annotations

import codecs
import csv
import io
import sys
import threading
import unicodedata
import zipfile
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

from .._cpus import default_threads
from .._validation import is_bookkeeping
from .._warnings import warn_at_caller

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
    byte-order mark is ignored; blank lines and lines starting with ``#`` are skipped. Numbers
    are written in ASCII decimal notation (``3``, ``-2``, ``3.0``, ``3e2``); ``1_0`` and the
    digits of other scripts are errors. With ``header="auto"`` the first line is a header only
    when it cannot be a row of numbers: more of its fields are names (neither numbers nor
    missing values such as ``NA``) than numbers, so that ``NA``, ``.`` and numbers may stand
    among names, or it starts with an empty field and continues ``0,1,...`` (pandas'
    ``to_csv()`` with its index), or every field is double-quoted above unquoted numbers (R
    quotes column names, even numeric ones). A first line of distinct
    integers (``0,1,...,w-1`` as ``to_csv(index=False)`` writes, or a draw of singletons) is
    read as data with a :class:`salsox.SalsoxWarning`. Without a header, a comment line just
    above the first row with as many fields, more names than numbers and no name twice
    (``# a,b,c``, as ``np.savetxt(header=...)`` writes) gives the names. A header starting with an empty
    field, as R's ``write.csv`` and pandas' ``to_csv()`` with its index write, also drops the
    first column of row names, and so does a header one field shorter than the data lines
    whose first field is quoted (R's ``write.table``). ``header="yes"``/``"no"`` force the
    choice. For draws, a sampler's bookkeeping column (``lp__``, ``log_lik[3]``, ``chain``,
    ...) and a name given twice are errors naming them. Any other non-number in a line, and a
    non-integral value when ``what`` is not ``"data"``, is an error naming the line and field.
    ``-`` reads text from standard input. Large files are parsed by pandas' C parser when
    pandas is installed, with the same result.

    Raises
    ------
    InputError
        One-line messages naming the file (and line and field for text).
    ValueError
        ``header`` not one of "auto", "yes", "no".

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "draws.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("# ant,bee,cat\\n1,1,2\\n1,2,2\\n")
    >>> read_matrix_named(path)
    (array([[1, 1, 2],
           [1, 2, 2]]), ['ant', 'bee', 'cat'])
    """
    return read_matrix_named(path, what, key, header)[0]


def read_matrix_named(
    path: str, what: str = "draws", key: Optional[str] = None, header: str = "auto"
) -> Tuple[np.ndarray, Optional[List[str]]]:
    """:func:`read_matrix`, with the column names of a text file's header (None without one,
    or when the header is pandas' column numbers 0..w-1). The matrix may be in Fortran order
    (pandas' layout)."""
    if header not in _HEADER_CHOICES:
        raise ValueError(f"header must be one of {_HEADER_CHOICES}, got {header!r}")
    if path == "-":
        matrix, names, warning = _parse_text(sys.stdin.read(), "<stdin>", what, ",", header)
        if warning is not None:
            warn_at_caller(warning)
        return matrix, names
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
        raw = p.read_bytes()
    except PermissionError:
        raise InputError(f"permission denied reading {what} file: {path}") from None
    delimiter = "\t" if suffix == ".tsv" else ("," if suffix == ".csv" else None)
    return _read_text(raw, path, what, delimiter, header)


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


def _number_like(field: str) -> bool:
    """Whether Python's ``float`` reads ``field``, in any notation it takes (``1_0``, other
    scripts' digits, ``inf``): such a field is never a column name."""
    try:
        float(field)
    except ValueError:
        return False
    return True


def _is_number(field: str) -> bool:
    """A number as a file may hold it: ASCII decimal notation (digits 0-9, a sign, a decimal
    point, an exponent), or ``inf``/``nan`` spelled out (refused later as not finite). Not
    ``1_0`` and not the digits of other scripts, which Python's ``int`` and ``float`` take."""
    return field.isascii() and "_" not in field and _number_like(field)


def _not_a_number_hint(field: str) -> str:
    """Why a field is not a number, for the error message."""
    if field.lower() in _MISSING:
        return " (a missing value)"
    if ";" in field:
        return (
            " (semicolons separate the fields, as R's write.csv2 writes: write the file with "
            "write.csv, or replace the semicolons by commas)"
        )
    if _number_like(field):
        underscores = ", without '_' separators" if "_" in field else ""
        return f" (numbers are written with the ASCII digits 0-9{underscores})"
    return ""


# Spellings of a missing value: never what makes a line a header, always an error in a data line.
_MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "nil", "missing", "."})

_HEADER_CHOICES = ("auto", "yes", "no")

# Text files from this size are parsed by pandas' C parser when pandas is installed (smaller
# ones are not worth its import); the Python parser below reads every file the same way and
# names the line and field of any error.
_FAST_BYTES = 1 << 20


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
    """A column name: not a number in any notation and not a spelling of a missing value. A
    line holding one cannot be a draw."""
    return not _number_like(field) and field.lower() not in _MISSING


def _names_outnumber(fields: List[str]) -> bool:
    """Whether a line reads as a line of names: more of its fields are names than numbers (in
    any notation). ``NA``, ``.`` and numbers may stand among the names (``a,NA,b``,
    ``a,1,b``); a line of numbers with a stray word (``x,1,2,3``) is no header but an error
    naming the word."""
    names = sum(1 for f in fields if _is_name(f))
    numbers = sum(1 for f in fields if _number_like(f))
    return names > numbers


def _is_quoted(line: str, delimiter: Optional[str]) -> List[bool]:
    """Which fields of ``line`` are enclosed in double quotes (R quotes names, not numbers)."""
    return [quoted for _, quoted in _tokens(line, delimiter)]


def _is_positions(fields: List[str]) -> bool:
    """Whether ``fields`` are exactly 0, 1, ..., w-1 (pandas' default column labels)."""
    return fields == [str(j) for j in range(len(fields))]


def _distinct_integers(fields: List[str]) -> bool:
    """Whether a line of two or more fields holds distinct integers: a header of column
    numbers could read so, and so does a draw of singletons."""
    if len(fields) < 2 or not all(_is_number(f) for f in fields):
        return False
    try:
        values = [int(f) for f in fields]
    except ValueError:
        return False
    return len(set(values)) == len(values)


def _r_quoted_names(first: str, second: str, fields: List[str], delimiter: Optional[str]) -> bool:
    """R's ``write.csv(m)``: every column name double-quoted, even numeric ones ("1","2",...),
    above unquoted numbers; missing-value spellings are never names."""
    quoted = _is_quoted(first, delimiter)
    offset = 1 if fields[0] == "" and len(quoted) > 1 else 0
    missing = any(f.lower() in _MISSING for f in fields[offset:])
    return all(quoted[offset:]) and not missing and not all(_is_quoted(second, delimiter))


def _comment_names(line: str, delimiter: Optional[str], width: int) -> Optional[List[str]]:
    """The names of a header written as a comment (``# a,b,c``, as ``np.savetxt(header=...)``
    writes) just above the first line of numbers: as many fields as that line, more names
    than numbers, no name twice. None when the comment is not such a header (prose, say)."""
    text = line.lstrip().lstrip("#").strip()
    if not text:
        return None
    fields = _split(text, delimiter)
    if len(fields) != width or not _names_outnumber(fields) or len(set(fields)) != width:
        return None
    return fields


class _Layout(NamedTuple):
    """How a text file's first lines read: its header's line (None without one), the item
    names, whether the first column holds row names, which of the first rows is the first
    draw, and a warning for a first line that could be a header."""

    header_line: Optional[int]
    names: Optional[List[str]]
    drop_first_column: bool
    data_start: int
    warning: Optional[str]


def _layout(
    rows: List[Tuple[int, str]],
    comment: Optional[Tuple[int, str]],
    delimiter: Optional[str],
    header: str,
    path: str,
    what: str,
) -> _Layout:
    """The layout of a text file from its first two rows (line number, text) and the comment
    line just above the first (``# a,b,c``), if any.

    ``header="auto"``: the first line is a header only when it cannot be a draw: more of its
    fields are names (neither a number nor a missing value) than numbers, or a leading empty
    field precedes pandas' ``0,1,...`` (``to_csv()`` with its index), or every field is
    double-quoted above unquoted numbers (R's ``write.csv``). A first line of distinct
    integers is read as a draw, with a warning: it could be a header of column numbers.
    """
    first_number, first_line = rows[0]
    fields = _split(first_line, delimiter)
    lead_empty = fields[0] == "" and len(fields) > 1
    rest = fields[1:] if lead_empty else fields
    quoted_names = False
    if header == "yes":
        has_header = True
    elif header == "no":
        has_header = False
    else:
        has_header = _names_outnumber(rest) or (lead_empty and _is_positions(rest))
        if not has_header and len(rows) > 1 and _r_quoted_names(first_line, rows[1][1], fields, delimiter):
            has_header = quoted_names = True
    if not has_header:
        if header == "auto" and comment is not None:
            commented = _comment_names(comment[1], delimiter, len(fields))
            if commented is not None:
                _check_names(commented, path, what, comment[0], 0)
                return _Layout(comment[0], commented, False, 0, None)
        warning = None
        # Features (--data) are any numbers: only pandas' own column numbers are worth a warning.
        ambiguous = _is_positions(fields) if what == "data" else _distinct_integers(fields)
        if header == "auto" and len(rows) > 1 and len(fields) > 1 and ambiguous:
            shown = ", ".join(fields) if len(fields) <= 6 else ", ".join(fields[:3] + ["..."] + fields[-1:])
            row = "a draw with every item in a cluster of its own" if what == "draws" else f"a row of {what}"
            warning = (
                f"{_shown(path)}: line {first_number} ({shown}) could be a header of column numbers, as pandas' "
                f"to_csv writes 0, 1, ..., n-1, or {row}: it is read as {row.split(' with ')[0]}; pass "
                "header=True (--header yes) if it is a header"
            )
        return _Layout(None, None, False, 0, warning)
    if len(rows) == 1:
        raise InputError(f"{path}: only a header line (line {first_number}), no {what}")
    drop_first_column = lead_empty  # a column of row names: R's write.csv, pandas' index
    if what == "labels" and [f.lower() for f in fields] == ["item", "label"]:
        drop_first_column = True  # --with-names output: item names, then their labels
    names: Optional[List[str]] = fields[1:] if drop_first_column else fields
    skipped = 1 if drop_first_column else 0
    second = rows[1][1]
    if not drop_first_column and len(_split(second, delimiter)) == len(fields) + 1:
        # R's write.table: a header of n names above lines of a quoted row name and n values
        # (an unquoted extra first field could be an item: the count check refuses it).
        drop_first_column = _is_quoted(second, delimiter)[0]
    _check_names(names, path, what, first_number, skipped)
    if not quoted_names and names is not None and _is_positions(names) and len(names) >= (1 if lead_empty else 2):
        names = None  # pandas' default column labels are positions, not names
    return _Layout(first_number, names, drop_first_column, 1, None)


def _check_names(names: Optional[List[str]], path: str, what: str, line: int, skipped: int) -> None:
    """A draws file's item names: no sampler's bookkeeping column (Stan's ``lp__``, ...), no
    name twice (``skipped`` leading fields are not names: the row names' column)."""
    if what != "draws" or names is None:
        return
    for column in names:
        if is_bookkeeping(column):
            raise InputError(
                f"{path}: column {column!r} (line {line}) is a sampler's bookkeeping column, not an "
                "item's cluster labels; keep only the label columns"
            )
    fields: Dict[str, List[int]] = {}
    for j, name in enumerate(names, start=1 + skipped):
        fields.setdefault(name, []).append(j)
    twice = [(name, js) for name, js in fields.items() if len(js) > 1]
    if twice:
        listed = ", ".join(f"{name!r} (fields {', '.join(map(str, js))})" for name, js in twice[:5])
        more = f" and {len(twice) - 5} more" if len(twice) > 5 else ""
        raise InputError(
            f"{path}: the header (line {line}) names the same item more than once: {listed}{more}; "
            "item names must be unique"
        )


def _content_rows(
    lines: List[str], limit: Optional[int] = None
) -> Tuple[List[Tuple[int, str]], Optional[Tuple[int, str]]]:
    """The lines holding fields, as (line number, text), and the comment line just above the
    first of them (blank lines and lines starting with ``#`` are not rows), stopping after
    ``limit`` rows."""
    rows: List[Tuple[int, str]] = []
    comment: Optional[Tuple[int, str]] = None
    above: Optional[Tuple[int, str]] = None
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped:
            above = None
            continue
        if stripped.startswith("#"):
            above = (number, line)
            continue
        if not rows:
            comment = above
        rows.append((number, line))
        if limit is not None and len(rows) >= limit:
            break
    return rows, comment


def _sniff(line: str) -> Optional[str]:
    """The delimiter of a text file without a known one, from its first row."""
    return "," if "," in line else ("\t" if "\t" in line else None)


def _parse_text(
    text: str, path: str, what: str, delimiter: Optional[str], header: str = "auto"
) -> Tuple[np.ndarray, Optional[List[str]], Optional[str]]:
    """A text file's matrix, item names and warning, line by line in Python: the reference
    reading, which names the line and field of any error."""
    if text.startswith("\ufeff"):
        text = text[1:]  # a UTF-8 byte-order mark, as spreadsheets write: not part of the data
    rows, comment = _content_rows(text.splitlines())
    if not rows:
        raise InputError(f"{what} file is empty: {path}")
    if delimiter is None:
        delimiter = _sniff(rows[0][1])
    rows = _drop_trailing_delimiters(rows, delimiter)
    layout = _layout(rows[:2], comment, delimiter, header, path, what)
    integers = what != "data"  # labels must be integers; features (--data) may be any number
    first = 2 if layout.drop_first_column else 1
    width: Optional[int] = None
    out = []
    for number, line in rows[layout.data_start:]:
        fields = _split(line, delimiter)
        if layout.drop_first_column:
            fields = fields[1:]
        if width is None:
            width = len(fields)
        elif len(fields) != width:
            raise InputError(
                f"{path}: line {number} has {len(fields)} fields, expected {width} like the first row "
                "(ragged rows)"
            )
        strict = line.isascii() and "_" not in line
        try:
            out.append(_parse_row(fields, path, number, integers, first, strict))
        except InputError as err:
            if out or layout.data_start or header != "auto":
                raise
            raise InputError(f"{err} (if line {number} is a header, pass header=True, --header yes)") from None
    matrix = np.vstack(out)
    _check_width(matrix, layout, path, what)
    return matrix, layout.names, layout.warning


def _check_width(matrix: np.ndarray, layout: _Layout, path: str, what: str) -> None:
    if matrix.shape[1] == 0:
        raise InputError(f"{what} file has no columns: {path}")
    if layout.names is not None and len(layout.names) != matrix.shape[1]:
        raise InputError(
            f"{path}: the header (line {layout.header_line}) names {len(layout.names)} columns but the lines "
            f"hold {matrix.shape[1]} values (unquoted row names, as R's write.table(quote = FALSE) writes? "
            "write the draws with row.names = FALSE)"
        )


def _read_text(
    raw: bytes, path: str, what: str, delimiter: Optional[str], header: str
) -> Tuple[np.ndarray, Optional[List[str]]]:
    """A text file's matrix and names: pandas' C parser for the numbers of a large file when
    it reads them exactly as the Python parser would, else the Python parser."""
    read = _read_text_fast(raw, path, what, delimiter, header)
    if read is None:
        read = _parse_text(_decode(raw, path, what), path, what, delimiter, header)
    matrix, names, warning = read
    if warning is not None:
        warn_at_caller(warning)
    return matrix, names


def _read_text_fast(
    raw: bytes, path: str, what: str, delimiter: Optional[str], header: str
) -> Optional[Tuple[np.ndarray, Optional[List[str]], Optional[str]]]:
    """:func:`_parse_text`'s answer, with the lines of numbers parsed by pandas' C parser, or
    None when that could differ from it (the Python parser then reads the file, and names
    any error): pandas absent, a small file, a body that is not plain ASCII numbers.

    The first lines are read as :func:`_parse_text` reads them (the same :func:`_layout`).
    Below the header pandas reads one row per physical line (no quoting), skipping blank
    lines as the Python parser does; every column must come out as int64 or float64 (a field
    that is not a number makes it a string column). Its int64 parser takes ASCII digits with
    a sign and blanks around; its float parser the ASCII decimal notation and ``inf``. The
    bytes it would read differently (vertical tab and form feed, which it takes as blanks
    where Python starts a new line; ``#``, NUL and the other line separators in a column of
    row names, which it never parses) send the file to the Python parser; so does a float
    beyond 2**53 (the Python parser keeps exact the integers of a line without floats). A
    column of row names is skipped unparsed, a count of the delimiters standing in for
    pandas' check of the number of fields. Files of several segments (``_SEGMENT_BYTES``)
    are read by the default number of threads, each segment starting at a line.
    """
    if len(raw) < _FAST_BYTES:
        return None
    try:
        import pandas as pd
    except ImportError:
        return None
    bom = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    size = 1 << 16
    while True:  # the first lines, whole, up to the third row
        cut = len(raw) if size >= len(raw) else raw.rfind(b"\n", 0, size) + 1
        if cut > bom:
            try:
                text = raw[bom:cut].decode("utf-8")
            except UnicodeDecodeError:
                return None  # latin-1 or corrupt: the Python parser's decoding and note
            if text.startswith("\ufeff"):
                return None
            lines = text.splitlines()
            rows, comment = _content_rows(lines, limit=3)
            if len(rows) >= 3 or cut == len(raw):
                break
        size *= 2
    if len(rows) < 3:
        return None
    if delimiter is None:
        delimiter = _sniff(rows[0][1])
    if delimiter is not None and rows[1][1].rstrip(" \r").endswith(delimiter):
        return None  # empty last fields on the data lines: _drop_trailing_delimiters' case
    head = _drop_trailing_delimiters(rows[:2], delimiter)
    layout = _layout(head, comment, delimiter, header, path, what)
    number, line = rows[layout.data_start]
    offset = bom + len("".join(text.splitlines(keepends=True)[: number - 1]).encode("utf-8"))
    if not (raw.isascii() or raw[offset:].isascii()):
        return None  # the Python parser names a non-ASCII digit
    if raw.find(b"\x0b", offset) >= 0 or raw.find(b"\x0c", offset) >= 0:
        return None
    if layout.drop_first_column and any(raw.find(c, offset) >= 0 for c in (b"#", b"\x00", b"\x1c", b"\x1d", b"\x1e")):
        return None
    width = len(_split(line, delimiter))
    # R's row names are never parsed (as strings they would cost more than the labels). pandas
    # then reads a longer line's first fields only: a count of the delimiters finds it.
    skip_names = layout.drop_first_column and delimiter is not None and width > 1
    options = dict(
        sep=delimiter if delimiter is not None else r"\s+",
        header=None,
        index_col=False,
        usecols=range(1, width) if skip_names else None,
        quoting=csv.QUOTE_NONE,
        na_filter=False,
        skip_blank_lines=True,
        engine="c",
        chunksize=max(1, _CHUNK_BYTES // max(1, len(line))),
    )
    columns = width - 1 if skip_names else width
    drop = layout.drop_first_column and not skip_names
    read = _in_segments(raw, offset, lambda part, stop: _pandas_rows(pd, part, options, columns, drop, what, stop))
    if read is None:
        return None
    parts, rows_read = read
    if not parts:
        return None
    if skip_names and delimiter is not None and raw.count(delimiter.encode("ascii"), offset) != rows_read * (width - 1):
        return None  # a line with more fields (a shorter one leaves an empty field: a string column)
    matrix = np.concatenate(parts) if len(parts) > 1 else parts[0]
    if matrix.dtype.kind == "f" and np.max(np.abs(matrix)) >= 2.0**53:
        return None  # integers of one chunk made floats by another's: the Python parser's values
    _check_width(matrix, layout, path, what)
    return matrix, layout.names, layout.warning


_Rows = Tuple[List[np.ndarray], int]


def _pandas_rows(
    pd: Any, data: Any, options: Dict[str, Any], columns: int, drop: bool, what: str, stop: threading.Event
) -> Optional[_Rows]:
    """The rows of ``data`` (a stream) read by pandas in chunks of a few MB, each as
    :func:`_fast_part` makes it, and how many; None when a chunk could read otherwise in the
    Python parser, or when ``stop`` is set (checked between chunks)."""
    parts: List[np.ndarray] = []
    rows = 0
    try:
        with pd.read_csv(data, **options) as chunks:
            for chunk in chunks:  # cache-friendly, and a Ctrl-C (stop) answered between them
                if stop.is_set() or chunk.shape[1] != columns:
                    return None
                part = _fast_part(chunk.iloc[:, 1:] if drop else chunk, what)
                if part is None:
                    return None
                parts.append(part)
                rows += part.shape[0]
    except pd.errors.EmptyDataError:
        return [], 0  # blank lines only (a segment may hold no more)
    except (ValueError, OverflowError, TypeError):
        return None  # ragged lines (pandas' ParserError), ...: the Python parser names them
    return parts, rows


def _in_segments(
    raw: bytes, offset: int, read: Callable[[Any, threading.Event], Optional[_Rows]]
) -> Optional[_Rows]:
    """``read`` over ``raw[offset:]``, cut at line ends into segments of at least
    ``_SEGMENT_BYTES`` read side by side by the default number of threads (pandas' C parser
    releases the GIL while it tokenises and converts); the rows in the file's order, or None
    when a segment gives None. Ctrl-C stops every segment at its next chunk."""
    size = len(raw) - offset
    threads = min(default_threads(), max(1, size // _SEGMENT_BYTES), _MAX_SEGMENTS)
    stop = threading.Event()
    if threads <= 1:
        stream = io.BytesIO(raw)  # shares raw's bytes, no copy
        stream.seek(offset)
        return read(stream, stop)
    cuts = [offset]
    for k in range(1, threads):
        cut = raw.find(b"\n", offset + k * size // threads) + 1
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(len(raw))
    segments = [raw[lo:hi] for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]
    pool = ThreadPoolExecutor(max_workers=len(segments), thread_name_prefix="salsox-read")
    try:
        futures = [pool.submit(read, io.BytesIO(segment), stop) for segment in segments]
        del segments
        while wait(futures, timeout=0.05).not_done:
            pass  # short waits: a Ctrl-C lands here promptly, whichever thread the signal reached
        results = [future.result() for future in futures]
    except BaseException:  # Ctrl-C: the workers stop at their next chunk; nothing waits for them
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    parts: List[np.ndarray] = []
    rows = 0
    for result in results:
        if result is None:
            return None
        parts.extend(result[0])
        rows += result[1]
    return parts, rows


def _fast_part(chunk: Any, what: str) -> Optional[np.ndarray]:
    """One chunk of pandas' rows as the Python parser would read them, or None when it could
    differ: a column that is not all numbers, a missing or non-integral label, a value beyond
    2**53 in a float column (the Python parser keeps such integers exact). Draws come in C
    order and the narrowest integer type holding them (the engine reads them so, at a
    quarter of the cost of the copy of int64); other matrices keep int64."""
    if chunk.shape[1] == 0 or not all(dtype in _FAST_DTYPES for dtype in chunk.dtypes):
        return None
    matrix = chunk.to_numpy()
    if matrix.dtype.kind == "f":
        if not np.all(np.isfinite(matrix)) or np.max(np.abs(matrix)) >= 2.0**53:
            return None  # refused or inexact: the Python parser's message, or its exact integers
        if what != "data" and not np.all(matrix == np.round(matrix)):
            return None
        return np.ascontiguousarray(matrix)
    if what != "draws":
        return np.ascontiguousarray(matrix)
    low, high = int(matrix.min()), int(matrix.max())
    dtype = next(t for t in _NARROW if np.iinfo(t).min <= low and high <= np.iinfo(t).max)
    out = np.empty(matrix.shape, dtype=dtype)
    out[...] = matrix
    return out


_FAST_DTYPES = (np.dtype(np.int64), np.dtype(np.float64))
_NARROW = (np.int8, np.int16, np.int32, np.int64)
_CHUNK_BYTES = 4 << 20  # text parsed at once by pandas
_SEGMENT_BYTES = 8 << 20  # the least text a thread reads
_MAX_SEGMENTS = 8


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
        if names and _names_outnumber(names):
            return [(rows[0][0], rows[0][1].rstrip(" \r")[: -len(delimiter)])] + rows[1:]
    return rows


def _parse_row(
    fields: List[str], path: str, number: int, integers: bool, first: int = 1, strict: bool = False
) -> np.ndarray:
    """One data line as numbers; an error naming the line and field otherwise (``first`` is
    the number of the first field given: 2 after a dropped column of row names). ``strict``:
    the line is known to be ASCII without ``_``, so Python's ``int`` reads its fields as the
    file format does."""
    if not strict:
        _check_fields(fields, path, number, first)
    try:  # integers exactly (labels beyond 2**53 must not collapse in float64)
        return np.array([int(f) for f in fields], dtype=np.int64)
    except (ValueError, OverflowError):
        pass
    _check_fields(fields, path, number, first)
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


def _check_fields(fields: List[str], path: str, number: int, first: int) -> None:
    """Every field a number in ASCII decimal notation; else an error naming the first that is not."""
    for j, f in enumerate(fields, start=first):
        if not _is_number(f):
            raise InputError(f"{path}: line {number}, field {j}: {f!r} is not a number{_not_a_number_hint(f)}")


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
