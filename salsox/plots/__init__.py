"""Plots of a partition estimate (optional dependency: ``pip install salsox[plot]``).

Every function takes the result first: a :class:`~salsox.Summary` (from ``Estimate.summary()``
or :func:`salsox.summarize`), an Estimate (it holds its draws), or labels together with
``draws``; then the user's data where a plot draws some. Data rows are matched to the items by
name when both name them (names that differ are an error), by position otherwise:

* :func:`plot_heatmap` -- the posterior similarity matrix, items ordered by the estimate,
  cluster boundaries drawn;
* :func:`plot_mds` -- classical multidimensional scaling of 1 - PSM, coloured by cluster;
* :func:`plot_pairs` -- a scatter-plot matrix of the user's data, coloured by cluster;
* :func:`plot_dendrogram` -- R salso's expected-loss dendrogram of the clusters
  (``kind="loss"``), or average linkage on 1 - PSM (of the clusters, or of the items);
* :func:`plot_credible_ball` -- the estimate and the bounds of its credible ball side by side;
* :func:`plot_chips` -- a CHIPS sub-partition (:func:`salsox.chips`), unallocated items as open circles;
* :func:`plot_wasabi`, :func:`plot_wasabi_elbow`, :func:`plot_wasabi_contributions` -- a WASABI
  summary (:func:`salsox.wasabi`): its particles, the elbow curve, per-item contributions.
* :func:`plot_diagnosis_traces`, :func:`plot_diagnosis_ranks`, :func:`plot_chain_estimates`,
  :func:`plot_chain_gap` -- a convergence diagnosis (:func:`salsox.diagnose`): mapped traces, rank
  plots, chains' estimates, the gap between chains with its null.

The largest clusters get the most distinct colours (the same in every plot of one estimate);
when an estimate has several singletons, they are grey, as "other".

Single-panel plots draw into ``ax`` when given and return the matplotlib ``Axes``;
:func:`plot_pairs` and :func:`plot_credible_ball` return the ``Figure``. matplotlib is
imported only when a plot is drawn, the MDS is computed here with numpy, the linkage by scipy.
"""

from .chips import plot_chips
from .credible_ball import plot_credible_ball
from .dendrogram import loss_linkage, plot_dendrogram
from .diagnostics import plot_chain_estimates, plot_chain_gap, plot_diagnosis_ranks, plot_diagnosis_traces
from .heatmap import plot_heatmap
from .mds import classical_mds, plot_mds
from .pairs import plot_pairs
from .wasabi import plot_wasabi, plot_wasabi_contributions, plot_wasabi_elbow

__all__ = ["plot_heatmap", "plot_mds", "plot_pairs", "plot_dendrogram", "plot_chips", "classical_mds"]
__all__ += ["plot_credible_ball", "loss_linkage"]
__all__ += ["plot_wasabi", "plot_wasabi_elbow", "plot_wasabi_contributions"]
__all__ += ["plot_diagnosis_traces", "plot_diagnosis_ranks", "plot_chain_estimates", "plot_chain_gap"]
