"""The entry point: ``[project.entry-points.salsox] example_losses = "salsox_example_losses.plugin"``."""

from __future__ import annotations

from typing import Any, List

import salsox

from .losses import BinderPlugin, FowlkesMallows, Jaccard, NMISqrt, OMARINumpy, VIPlugin


@salsox.hookimpl
def salsox_losses() -> List[Any]:
    """Loss classes: instantiated with no arguments when selected by name."""
    return [VIPlugin, BinderPlugin, OMARINumpy, Jaccard, FowlkesMallows, NMISqrt]
