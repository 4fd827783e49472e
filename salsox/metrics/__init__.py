"""Loss values of given partitions (layer 5): partition_loss, psm, RI, ARI, and as_truth,
which reads draws or a PSM for a loss."""

from ..io import PSM
from .evaluation import ARI, RI, as_truth, canonicalize_labels, partition_loss, psm

__all__ = ["PSM", "ARI", "RI", "as_truth", "canonicalize_labels", "partition_loss", "psm"]
