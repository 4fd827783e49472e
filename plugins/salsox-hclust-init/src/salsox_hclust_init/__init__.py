"""Example salsox initialiser plugin: ``"psm-hclust"``.

Average-linkage hierarchical clustering of the dissimilarity 1 - PSM (posterior similarity
matrix), cut at ``max_clusters`` clusters -- the estimate of Medvedovic et al. (2004) and
Fritsch & Ickstadt (2009), used here as SALSO's starting partition. Pure numpy (no scipy);
it holds two n x n float64 matrices (O(n^2) memory: 1.6 GB at n = 10^4) and takes O(n^2)
time, so it suits up to some 10^4 items.
"""

from .hclust import average_linkage_labels, psm_hclust

__all__ = ["average_linkage_labels", "psm_hclust"]
__version__ = "0.1.0"
