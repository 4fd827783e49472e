"""The entry point: ``[project.entry-points.salsox] hclust_init = "salsox_hclust_init.plugin"``."""

from __future__ import annotations

from typing import List

import salsox
from salsox.plugins import Initializer

from .hclust import psm_hclust


@salsox.hookimpl
def salsox_initializers() -> List[Initializer]:
    return [
        Initializer(
            "psm-hclust",
            psm_hclust,
            description="average-linkage clustering of 1 - PSM cut at max_clusters",
            deterministic=True,
        )
    ]
