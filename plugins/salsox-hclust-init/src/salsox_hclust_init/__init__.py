"""Example salsox initialiser plugin: ``"psm-hclust"`` and ``"psm-hclust-random"``.

Average-linkage hierarchical clustering of the dissimilarity 1 - PSM (posterior similarity
matrix), cut at ``max_clusters`` clusters -- the estimate of Medvedovic et al. (2004) and
Fritsch & Ickstadt (2009), used here as SALSO's starting partition; ``"psm-hclust-random"`` cuts the same tree at a
random number of clusters for each run. Both compute the PSM and the tree once per search,
in the initialisers' setup step (:func:`psm_linkage`), and cut it per run in O(n). Pure numpy (no scipy);
it holds two n x n float64 matrices (O(n^2) memory: 1.6 GB at n = 10^4) and takes O(n^2)
time, so it suits up to some 10^4 items.
"""

from .hclust import (
    average_linkage_labels,
    average_linkage_merges,
    cut_merges,
    psm_hclust,
    psm_hclust_random,
    psm_linkage,
)

__all__ = [
    "average_linkage_labels",
    "average_linkage_merges",
    "cut_merges",
    "psm_hclust",
    "psm_hclust_random",
    "psm_linkage",
]
__version__ = "0.1.0"
