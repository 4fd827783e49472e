"""Summaries of an estimate (layer 6): per-item and per-cluster scores from the PSM, and the
average linkage that orders clusters (scipy). Plots of them live in :mod:`salsox.plots`."""

from .summary import Summary, summarize

__all__ = ["Summary", "summarize"]
