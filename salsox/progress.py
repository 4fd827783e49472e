"""Progress of a running search: what the engine reports, and a text bar that shows it.

``salso(..., progress=callback)`` calls ``callback(SearchProgress(...))`` from the calling
thread when runs finish, about twice a second in between, and once at the end. Calls are
spaced from the end of the previous one (by at least 0.5 s when no run finished, and at least
as long as the previous call took), so a slow callback slows the search by at most about half.
``progress=True`` draws a :class:`ProgressBar` on standard error.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable, NamedTuple, Optional, TextIO, Union


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

    def render(self, p: SearchProgress) -> str:
        """The bar's text for ``p`` (without carriage return)."""
        total = max(p.runs_total, 1)
        filled = min(self.width, (self.width * p.runs_done) // total)
        bar = "#" * filled + "-" * (self.width - filled)
        best = "-" if math.isinf(p.best_loss) else f"{p.best_loss:.6g}"
        return f"{self.label} [{bar}] {p.runs_done}/{p.runs_total} runs, best loss {best}, {p.seconds:.1f} s"

    def __call__(self, p: SearchProgress) -> None:
        if self.last is None and p.seconds < self.delay:
            return
        out = self._out()
        out.write("\r" + self.render(p) + "\033[K")
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
