"""Showing items by name: the labels printed in reports and the HTML tables of notebooks.

Shared by :class:`~salsox.Summary`, :class:`~salsox.Estimate` and the credible ball, so that
items read the same everywhere: by name when the draws named them, else by position (0-based,
or 1-based as R numbers them).
"""

from __future__ import annotations

import html
from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np

__all__ = ["item_label", "html_table", "html_block", "items_preview"]

# Items listed per cluster in an HTML table before "...".
_PREVIEW = 8


def item_label(i: int, names: Optional[np.ndarray], one_based: bool = False) -> str:
    """Item ``i`` as shown: its name when known, else its position."""
    if names is not None:
        return str(names[i])
    return str(int(i) + (1 if one_based else 0))


def items_preview(
    members: Union[Sequence[int], np.ndarray], names: Optional[np.ndarray], one_based: bool = False
) -> str:
    """The first few members of a cluster, comma-separated, "..." when there are more."""
    shown = [item_label(i, names, one_based) for i in members[:_PREVIEW]]
    return ", ".join(shown) + (", ..." if len(members) > _PREVIEW else "")


def html_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """An HTML table; every cell is escaped (item names come from users' files)."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_block(title: str, table: str) -> str:
    """A titled block for ``_repr_html_``."""
    return f"<div><p><b>{html.escape(title)}</b></p>{table}</div>"
