"""The entry point: ``[project.entry-points.salsox] hclust_init = "salsox_hclust_init.plugin"``."""

from __future__ import annotations

from typing import List

import salsox
from salsox.plugins import Initializer

from .hclust import psm_hclust, psm_hclust_random, psm_linkage


@salsox.hookimpl
def salsox_initializers() -> List[Initializer]:
    return [
        Initializer(
            "psm-hclust",
            psm_hclust,
            description="average-linkage clustering of 1 - PSM cut at max_clusters",
            deterministic=True,
            setup=psm_linkage,
        ),
        Initializer(
            "psm-hclust-random",
            psm_hclust_random,
            description="the same tree of 1 - PSM cut at a random number of clusters, 1..max_clusters, per run",
            setup=psm_linkage,
        ),
    ]
