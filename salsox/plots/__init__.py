"""Plots of a partition estimate (optional dependency: ``pip install salsox[plot]``).

Every function takes a :class:`~salsox.Summary` (from ``Estimate.summary(draws)`` or
:func:`salsox.summarize`), or an estimate (an Estimate or labels) together with ``draws``:

* :func:`plot_heatmap` -- the posterior similarity matrix, items ordered by the estimate,
  cluster boundaries drawn;
* :func:`plot_mds` -- classical multidimensional scaling of 1 - PSM, coloured by cluster;
* :func:`plot_pairs` -- a scatter-plot matrix of the user's data, coloured by cluster;
* :func:`plot_dendrogram` -- average linkage of the estimate's clusters (or of the items);
* :func:`plot_chips` -- a CHIPS sub-partition (:func:`salsox.chips`), unallocated items grey;
* :func:`plot_wasabi`, :func:`plot_wasabi_elbow`, :func:`plot_wasabi_contributions` -- a WASABI
  summary (:func:`salsox.wasabi`): its particles, the elbow curve, per-item contributions.

Single-panel plots draw into ``ax`` when given and return the matplotlib ``Axes``;
:func:`plot_pairs` returns the ``Figure``. matplotlib is imported only when a plot is drawn,
the MDS is computed here with numpy, the linkage by scipy.
"""

from .chips import plot_chips
from .dendrogram import plot_dendrogram
from .heatmap import plot_heatmap
from .mds import classical_mds, plot_mds
from .pairs import plot_pairs
from .wasabi import plot_wasabi, plot_wasabi_contributions, plot_wasabi_elbow

__all__ = ["plot_heatmap", "plot_mds", "plot_pairs", "plot_dendrogram", "plot_chips", "classical_mds"]
__all__ += ["plot_wasabi", "plot_wasabi_elbow", "plot_wasabi_contributions"]
