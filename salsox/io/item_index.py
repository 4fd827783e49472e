"""One item index: how every item-indexed input is matched to the items of the draws.

Every public function that takes a second item-indexed input (an estimate or labels, ``fixed=``,
``initial=``, a PSM, data for a plot, another chain's draws...) matches it to the items of the
draws (or PSM) it is computed against through :func:`align`, by one rule:

* both sides name their items: matched by name, in any order. Different name sets are refused,
  with the names that differ. Ids are compared as given: ``0`` and ``"0"`` are different ids.
* one side names its items and the other is a bare array of the right length: positions are
  used and a :class:`PositionalMatchWarning` naming the argument says so, unless the names are
  ``0..n-1`` in order (an unnamed input's items are known by their positions ``0..n-1``, as
  ``Estimate.to_series()`` shows them, so a bare side is matched by those when the named side's
  names are exactly the integers ``0..n-1``, in any order).
* a bare array of the wrong length is refused.

Names are checked where they are read (:func:`check_item_names`): duplicates are refused, and
so is a mix of text and numbers (``0`` and ``"0"`` would look alike in every report). pandas'
default ``RangeIndex`` (``0..n-1`` in order) is positions, not names.
"""

from __future__ import annotations

import numbers
from collections import Counter
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from .._warnings import SalsoxWarning, warn_at_caller

__all__ = [
    "NamedLabels",
    "InItemOrder",
    "PositionalMatchWarning",
    "align",
    "aligned",
    "check_item_names",
    "id_kind",
    "index_names",
    "is_labels_like",
    "labels_and_names",
    "matched",
    "labels_series",
    "pandas_index",
    "refuse_mixed_ids",
]


class PositionalMatchWarning(SalsoxWarning):
    """An input was matched to the draws' items by position, because only one side names its
    items. Give both sides names (or neither) to silence it; make it an error with
    ``warnings.simplefilter("error", salsox.PositionalMatchWarning)``.

    Examples
    --------
    >>> import pandas as pd, warnings
    >>> draws = pd.DataFrame([[0, 0, 1], [0, 1, 1]], columns=["ant", "bee", "cat"])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     value = salsox.partition_loss([0, 0, 1], draws, "binder")
    >>> caught[0].category.__name__
    'PositionalMatchWarning'
    """


class InItemOrder:
    """Labels that salsox itself has already put in the draws' item order (an internal call:
    CHIPS' completion, WASABI's and diagnose's warm starts); matched as they are, without a
    warning."""

    __slots__ = ("values",)

    def __init__(self, values: Any) -> None:
        self.values = values


class NamedLabels:
    """One partition's labels with the names of its items, in any order: what an ``item,label``
    file holds. Matched to the draws' items by name like a pandas Series.

    Examples
    --------
    >>> from salsox.io.item_index import NamedLabels
    >>> draws = salsox.Draws([[0, 0, 1], [0, 1, 1]], item_names=["a", "b", "c"])
    >>> salsox.partition_loss(NamedLabels([1, 0, 0], ["c", "a", "b"]), draws, "binder")
    0.2222222222222222
    """

    __slots__ = ("labels", "item_names")

    def __init__(self, labels: Any, item_names: Any) -> None:
        self.labels = np.asarray(labels)
        self.item_names = check_item_names(item_names, len(self.labels), "the item column")

    def __len__(self) -> int:
        return len(self.labels)


def id_kind(name: Any) -> str:
    """'text' or 'number' (how two names could look alike in a report), else 'other'."""
    if isinstance(name, (str, np.str_)):
        return "text"
    if isinstance(name, numbers.Number) and not isinstance(name, (bool, np.bool_)):
        return "number"
    return "other"


def _shown(names: Union[Sequence[Any], np.ndarray], limit: int = 5) -> str:
    text = ", ".join(repr(v) for v in list(names)[:limit])
    return text + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def check_item_names(names: Any, n: int, argument: str = "item_names") -> Optional[np.ndarray]:
    """``names`` as a read-only 1-D object array of ``n`` distinct names (None stays None).

    Refused: a single string, a length other than ``n``, a name given twice, and a mix of text
    and numbers (``0`` and ``"0"`` are different ids that print alike).

    Examples
    --------
    >>> from salsox.io.item_index import check_item_names
    >>> check_item_names(["a", "b"], 2)
    array(['a', 'b'], dtype=object)
    >>> check_item_names(["a", "a"], 2)
    Traceback (most recent call last):
    ...
    ValueError: item_names names an item twice ('a'); item names must be unique
    """
    if names is None:
        return None
    if isinstance(names, str):
        raise TypeError(f"{argument} must be a sequence of n names, not a single string")
    try:
        values = list(names)
    except TypeError:
        raise TypeError(f"{argument} must be a sequence of n names, got {type(names).__name__}") from None
    if len(values) != n:
        raise ValueError(f"{argument} must hold one name per item ({n}), got {len(values)}")
    # Plain Python values (numpy scalars print as np.str_('a') in reprs and JSON chokes on them);
    # filled element by element, so that tuples (MultiIndex columns) stay one name each.
    plain = [v.item() if isinstance(v, np.generic) else v for v in values]
    arr = np.empty(len(plain), dtype=object)
    arr[:] = plain
    try:
        counts = Counter(plain)
    except TypeError:
        raise TypeError(f"{argument}: item names must be hashable (strings, numbers, tuples)") from None
    twice = [v for v, c in counts.items() if c > 1]
    if twice:
        raise ValueError(f"{argument} names an item twice ({_shown(twice)}); item names must be unique")
    refuse_mixed_ids(plain, argument, "items")
    arr.setflags(write=False)
    return arr


def refuse_mixed_ids(ids: Sequence[Any], argument: str, what: str) -> None:
    """A ValueError naming ``argument`` when ``ids`` mix text and numbers: ids are compared as
    given, so ``0`` and ``"0"`` would be two ``what`` (items, chains) that print alike."""
    kinds = {id_kind(v) for v in ids}
    if {"text", "number"} <= kinds:
        text = next(v for v in ids if id_kind(v) == "text")
        number = next(v for v in ids if id_kind(v) == "number")
        raise ValueError(
            f"{argument} mixes text and numbers (e.g. {text!r} and {number!r}); ids are compared as given, "
            f"so 0 and '0' would be different {what} that print alike: make them all text or all numbers"
        )


def _is_default_range(index: Any) -> bool:
    """pandas' default RangeIndex 0..n-1: positions, not names."""
    return type(index).__name__ == "RangeIndex" and index.start == 0 and index.step == 1


def index_names(index: Any) -> Optional[List[Any]]:
    """The names a pandas Index (or any sequence of names) holds; None for pandas' default
    RangeIndex (positions)."""
    if index is None or _is_default_range(index):
        return None
    return list(index)


def _is_estimate(x: Any) -> bool:
    return hasattr(x, "labels") and hasattr(x, "expected_loss") and hasattr(x, "n_clusters")


def is_labels_like(x: Any) -> bool:
    """Whether ``x`` is one partition that can name its items: an Estimate, a pandas Series, a
    dict (item -> label) or a 1-D xarray DataArray."""
    if _is_estimate(x) or isinstance(x, (dict, NamedLabels)):
        return True
    if hasattr(x, "index") and hasattr(x, "to_numpy") and not hasattr(x, "columns"):
        return True
    dims = getattr(x, "dims", None)
    return dims is not None and hasattr(x, "coords") and len(dims) == 1


def labels_and_names(x: Any, argument: str) -> Tuple[Any, Optional[np.ndarray]]:
    """(labels, item names) of a labels-like input: an Estimate (or any result with ``labels``
    and ``item_names``), a pandas Series (its index), a dict (item -> label), a 1-D xarray
    DataArray (its coordinate), a DataFrame of partitions (its columns, one per item). Anything
    else is returned as it is, without names."""
    if isinstance(x, NamedLabels):
        return x.labels, x.item_names
    if _is_estimate(x):
        names = getattr(x, "item_names", None)
        return x.labels, None if names is None else check_item_names(names, len(x.labels), argument)
    if isinstance(x, dict):
        keys = list(x.keys())
        return np.asarray(list(x.values())), check_item_names(keys, len(keys), f"{argument}'s keys")
    if hasattr(x, "index") and hasattr(x, "to_numpy") and not hasattr(x, "columns"):  # a Series
        names = index_names(x.index)
        values = x.to_numpy()
        return values, None if names is None else check_item_names(names, len(values), f"{argument}'s index")
    if hasattr(x, "columns") and hasattr(x, "iloc"):  # a DataFrame of partitions, one column per item
        names = index_names(x.columns)
        return x, None if names is None else check_item_names(names, len(names), f"{argument}'s columns")
    dims = getattr(x, "dims", None)
    if dims is not None and hasattr(x, "coords") and len(dims) == 1:  # a 1-D xarray DataArray
        dim = dims[0]
        values = np.asarray(x.values)
        if dim in x.coords:
            return values, check_item_names(np.asarray(x.coords[dim].values), len(values), f"{argument}'s {dim!r}")
        return values, None
    return x, None


def _positional(names: np.ndarray) -> bool:
    """Whether ``names`` are the integers 0..n-1 (in any order): the ids an unnamed input's
    items are known by."""
    n = len(names)
    if not all(id_kind(v) == "number" and float(v).is_integer() for v in names):
        return False
    values = np.array([int(v) for v in names], dtype=np.int64)
    return bool(np.array_equal(np.sort(values), np.arange(n)))


def align(
    target: Optional[np.ndarray],
    n: int,
    names: Optional[np.ndarray],
    length: int,
    argument: str,
    *,
    against: str = "the draws",
) -> Optional[np.ndarray]:
    """Where each of the ``n`` target items is in an input of ``length`` items.

    Parameters
    ----------
    target : ndarray of names, or None
        The items' names on the side that fixes the order (the draws, the PSM, the estimate).
    n : int
        Number of target items.
    names : ndarray of names, or None
        The input's item names (from :func:`check_item_names`), or None for a bare array.
    length : int
        Number of items in the input.
    argument : str
        The argument named in errors and warnings.
    against : str
        What the target is, for messages.

    Returns
    -------
    ndarray of int, or None
        ``take`` such that ``input[take]`` lists the input's values in the target's item order;
        None when that order is the input's own (no copy needed).

    Examples
    --------
    >>> from salsox.io.item_index import align
    >>> align(np.array(["a", "b", "c"], dtype=object), 3, np.array(["c", "a", "b"], dtype=object), 3, "labels")
    array([1, 2, 0])
    >>> align(None, 3, None, 3, "labels") is None
    True
    """
    if target is not None and names is not None:
        return _by_name(target, names, argument, against)
    if length != n:
        raise ValueError(f"{argument} has {length} items, not the {n} of {against}")
    if target is None and names is not None:
        if _positional(names):  # the ids 0..n-1 an unnamed input's items are known by
            take = np.array([int(v) for v in names], dtype=np.int64)
            order = np.empty(n, dtype=np.intp)
            order[take] = np.arange(n)
            return None if np.array_equal(order, np.arange(n)) else order
        warn_at_caller(
            f"only {argument} names its items ({_shown(names, 3)}), not {against}: matched by position. "
            f"Give {against} item names too to match by name",
            PositionalMatchWarning,
        )
        return None
    if target is not None and names is None and not _in_order_positions(target):
        warn_at_caller(
            f"{argument} has no item names, unlike {against} ({_shown(target, 3)}): matched by position. "
            f"Pass {argument} with names (e.g. a pandas Series indexed by item) to match by name",
            PositionalMatchWarning,
        )
    return None


def _in_order_positions(names: np.ndarray) -> bool:
    return all(id_kind(v) == "number" and v == i for i, v in enumerate(names))


def _by_name(target: np.ndarray, names: np.ndarray, argument: str, against: str) -> Optional[np.ndarray]:
    where = {v: i for i, v in enumerate(names)}
    missing = [v for v in target if v not in where]
    wanted = set(target)
    extra = [v for v in names if v not in wanted]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} items of {against} are not in {argument} ({_shown(missing)})")
        if extra:
            parts.append(f"{len(extra)} items of {argument} are not in {against} ({_shown(extra)})")
        hint = ""
        if {str(v) for v in target} == {str(v) for v in names}:
            hint = (
                "; the names agree as text: one side names its items by numbers and the other by strings, "
                "and ids are compared as given (convert one side, e.g. index.astype(str))"
            )
        raise ValueError(f"{argument} does not name the same items as {against}: " + "; ".join(parts) + hint)
    take = np.fromiter((where[v] for v in target), dtype=np.intp, count=len(target))
    return None if np.array_equal(take, np.arange(len(take))) else take


def _n_items(values: Any) -> Optional[int]:
    """Number of items (the last axis) of an array-like; None when it has no clear shape."""
    if hasattr(values, "shape") and hasattr(values, "iloc"):
        return int(values.shape[-1])
    try:
        shape = np.shape(values)
    except (ValueError, TypeError):
        return None
    return int(shape[-1]) if shape else None


def matched(
    x: Any, target: Optional[np.ndarray], n: int, argument: str, *, against: str = "the draws"
) -> Tuple[Any, Optional[np.ndarray]]:
    """``x`` (labels, partitions, an Estimate, a Series, a dict...) with its items in the
    target's order, by :func:`align`'s rule, and the names a result should carry: the target's,
    else the input's when it was matched by position (None when it was matched by the ids
    ``0..n-1`` of unnamed items).

    A bare input against an unnamed target is returned as it is: the caller's own checks then
    say what is wrong with it.

    Examples
    --------
    >>> import pandas as pd
    >>> from salsox.io.item_index import matched
    >>> target = np.array(["a", "b", "c"], dtype=object)
    >>> matched(pd.Series([5, 6, 7], index=["c", "a", "b"]), target, 3, "labels")[0]
    array([6, 7, 5])
    """
    if isinstance(x, InItemOrder):
        return x.values, target
    values, names = labels_and_names(x, argument)
    if names is None and target is None:
        return values, None
    length = _n_items(values)
    if length is None:
        return values, target
    take = align(target, n, names, length, argument, against=against)
    if take is None:
        return values, target if target is not None else names
    if hasattr(values, "iloc"):
        return values.iloc[:, take], target
    return np.asarray(values)[..., take], target


def aligned(
    x: Any, target: Optional[np.ndarray], n: int, argument: str, *, against: str = "the draws"
) -> Any:
    """:func:`matched`'s values alone: ``x`` with its items in the target's order.

    Examples
    --------
    >>> import pandas as pd
    >>> from salsox.io.item_index import aligned
    >>> aligned({"b": 1, "a": 0}, np.array(["a", "b"], dtype=object), 2, "labels")
    array([0, 1])
    """
    return matched(x, target, n, argument, against=against)[0]


def pandas_index(names: Optional[np.ndarray], n: int, dim: str = "item") -> Any:
    """The items as a ``pandas.Index`` named ``dim``: their names, else their positions 0..n-1
    (the ids an unnamed input's items are matched by). Every result's ``to_series()`` and
    ``to_dataframe()`` index their rows with it."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("this view needs pandas: pip install pandas") from None
    return pd.Index(np.asarray(names, dtype=object) if names is not None else np.arange(n), name=dim)


def labels_series(labels: Any, names: Optional[np.ndarray], name: str = "cluster", dim: str = "item") -> Any:
    """Labels as a ``pandas.Series`` indexed by :func:`pandas_index`."""
    import pandas as pd

    values = np.asarray(labels)
    return pd.Series(values, index=pandas_index(names, len(values), dim), name=name)
