"""Progress of a running search: what the engine reports, and a text bar that shows it.

``salso(..., progress=callback)`` calls ``callback(SearchProgress(...))`` from the calling
thread when runs finish, about twice a second in between, and once at the end. Calls are
spaced from the end of the previous one (by at least 0.5 s when no run finished, and at least
as long as the previous call took), so a slow callback slows the search by at most about half.
``progress=True`` draws a :class:`ProgressBar` on standard error.

The bar is laid out by tqdm (``tqdm.format_meter``), which also fits it to the terminal's
width: a line that wrapped would print a new line at every redraw.
"""

from __future__ import annotations

import math
import os
import sys
from typing import Any, Callable, NamedTuple, Optional, TextIO, Union

from tqdm import tqdm
from tqdm.utils import disp_len, disp_trim

__all__ = ["SearchProgress", "ProgressBar", "ProgressCallback", "engine_callback", "close", "fit_line"]


class SearchProgress(NamedTuple):
    """A search's state when it is reported.

    Attributes
    ----------
    runs_done : int
        Runs finished so far.
    runs_total : int
        Runs requested (a ``seconds`` budget may end the search before all are done).
    best_loss : float
        Lowest expected loss among the finished runs (``inf`` before the first finishes).
    seconds : float
        Time since the search started.

    Examples
    --------
    >>> seen = []
    >>> est = salsox.salso([[0, 0, 1], [0, 1, 1]], n_runs=4, n_jobs=1, seed=1, progress=seen.append)
    >>> seen[-1].runs_done, seen[-1].runs_total
    (4, 4)
    """

    runs_done: int
    runs_total: int
    best_loss: float
    seconds: float


ProgressCallback = Callable[[SearchProgress], Any]


class ProgressBar:
    """A one-line bar on a text stream: runs done of total, best loss so far, elapsed time.

    Redrawn in place with a carriage return; :meth:`close` ends the line. Usable directly as
    ``salso(..., progress=ProgressBar())``.

    Parameters
    ----------
    stream : text stream, optional
        Where to draw (default: ``sys.stderr`` at the time of each call).
    label : str, default "salso"
        Text before the bar.
    width : int, default 24
        Characters in the bar itself.
    delay : float, default 0
        Seconds into the search before the bar first appears (quick searches then print
        nothing).

    Examples
    --------
    >>> import io
    >>> stream = io.StringIO()
    >>> est = salsox.salso([[0, 0, 1], [0, 1, 1]], n_runs=4, seed=1, progress=salsox.ProgressBar(stream))
    >>> "4/4" in stream.getvalue()
    True
    """

    def __init__(
        self, stream: Optional[TextIO] = None, label: str = "salso", width: int = 24, delay: float = 0.0
    ) -> None:
        if not isinstance(width, int) or isinstance(width, bool) or width < 1:
            raise ValueError(f"width must be a positive int, got {width!r}")
        if not isinstance(delay, (int, float)) or isinstance(delay, bool) or not delay >= 0:
            raise ValueError(f"delay must be a number >= 0, got {delay!r}")
        self.stream = stream
        self.label = label
        self.width = width
        self.delay = float(delay)
        self.last: Optional[SearchProgress] = None

    def _out(self) -> TextIO:
        return self.stream if self.stream is not None else sys.stderr

    def render(self, p: SearchProgress, columns: Optional[int] = None) -> str:
        """The bar's text for ``p`` (without carriage return), at most ``columns`` wide when
        given (the bar shrinks first, then the text is cut)."""
        best = "-" if math.isinf(p.best_loss) else f"{p.best_loss:.6g}"
        prefix = f"{self.label} ["
        suffix = f"] {p.runs_done}/{p.runs_total} runs, best loss {best}, {p.seconds:.1f} s"
        # format_meter fills {bar} to ncols: at most `width` cells, fewer on a narrow terminal.
        full = disp_len(prefix) + self.width + disp_len(suffix)
        ncols = full if columns is None else max(1, min(full, columns))
        line = tqdm.format_meter(
            n=min(max(p.runs_done, 0), max(p.runs_total, 1)),
            total=max(p.runs_total, 1),
            elapsed=p.seconds,
            ncols=ncols,
            bar_format=_literal(prefix) + "{bar}" + _literal(suffix),
            ascii="-#",
        )
        return line if disp_len(line) <= ncols else disp_trim(line, ncols)

    def __call__(self, p: SearchProgress) -> None:
        if self.last is None and p.seconds < self.delay:
            return
        out = self._out()
        out.write("\r" + self.render(p, terminal_columns(out)) + "\033[K")
        out.flush()
        self.last = p

    def close(self) -> None:
        """End the bar's line (if anything was drawn)."""
        if self.last is not None:
            out = self._out()
            out.write("\n")
            out.flush()
            self.last = None


EngineCallback = Callable[[int, int, float, float], None]


def engine_callback(progress: Union[None, bool, ProgressCallback], scale: float = 1.0) -> Optional[EngineCallback]:
    """The engine-side callable for ``salso``'s ``progress`` argument once ``True`` has become a
    :class:`ProgressBar` (None or False: no reports).

    ``scale`` converts the engine's losses to the loss's own scale (the engine works with unit
    costs for Binder and VI).
    """
    if progress is None or progress is False:
        return None
    if progress is True or not callable(progress):
        raise TypeError(f"progress must be None, a bool or a callable, got {type(progress).__name__}")
    user = progress

    def report(done: int, total: int, best: float, seconds: float) -> None:
        user(SearchProgress(int(done), int(total), float(best) * scale, float(seconds)))

    return report


def close(progress: Any) -> None:
    """End a bar that ``salso`` drew for ``progress=True`` or was given."""
    if isinstance(progress, ProgressBar):
        progress.close()


def _literal(text: str) -> str:
    """``text`` for a tqdm ``bar_format`` (a str.format template): braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def terminal_columns(stream: Any) -> Optional[int]:
    """Usable width of the terminal ``stream`` writes to (one less than its columns, so that the
    cursor never wraps), or None when it is not a terminal."""
    try:
        if not stream.isatty():
            return None
        return max(1, os.get_terminal_size(stream.fileno()).columns - 1)
    except (AttributeError, ValueError, OSError):
        return None


def fit_line(text: str, stream: Any) -> str:
    """``text`` cut to the width of the terminal ``stream`` writes to (unchanged elsewhere)."""
    columns = terminal_columns(stream)
    return text if columns is None or disp_len(text) <= columns else disp_trim(text, columns)
