"""Posterior draws split into chains: every input layout :func:`salsox.diagnose` takes, made one
(chains, draws, items) array of integer labels.

Layouts: an ArviZ ``(InferenceData, "z")`` pair or an xarray DataArray/Dataset with a
``chain`` dimension, a 3-D (chains, draws, items) array, a list of per-chain (draws, items)
arrays, or one (H, n) matrix with ``chains=`` ids (one per row; rows of a chain in their
order). Convergence statistics compare chains of equal length, so chains must have the same
number of draws.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from .._validation import as_integer_array
from ..io import Draws, align, item_names_of
from ..io.foreign import is_foreign
from ..io.item_index import refuse_mixed_ids
from ..io.foreign import _arviz_variable, _coord, _is_dataarray, _is_dataset, _is_inference_data

__all__ = ["split_chains"]

_SAMPLE_DIMS = ("chain", "draw")


def _from_xarray(data: Any, var_name: Optional[str]) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """(chains, draws, items) labels and item names of a DataArray / Dataset / InferenceData."""
    if _is_inference_data(data):
        if var_name is None:
            raise ValueError(
                "an InferenceData needs the name of the variable holding the cluster labels: pass (idata, 'z')"
            )
        data = _arviz_variable(data, var_name)
    elif _is_dataset(data):
        names = [str(v) for v in data.data_vars]
        if var_name is None:
            if len(names) != 1:
                raise ValueError(f"the Dataset has variables {names}; name the cluster labels: (dataset, 'z')")
            var_name = names[0]
        if var_name not in names:
            raise KeyError(f"variable {var_name!r} not found; available: {names}")
        data = data[var_name]
    if not _is_dataarray(data):
        raise TypeError(f"expected an xarray DataArray, Dataset or InferenceData, got {type(data).__name__}")
    dims = [str(d) for d in data.dims]
    if "chain" not in dims:
        raise ValueError(
            f"draws has dimensions {tuple(dims)} and no 'chain' dimension: diagnose compares chains "
            "(give chains= ids with an (H, n) matrix, or a (chain, draw, item) array)"
        )
    items = [d for d in dims if d not in _SAMPLE_DIMS]
    if "draw" not in dims or len(items) != 1:
        raise ValueError(
            f"draws has dimensions {tuple(dims)}: expected ('chain', 'draw') and one item dimension"
        )
    values = np.asarray(data.transpose("chain", "draw", items[0]).values)
    return values, _coord(data, items[0])


def _chain_ids(chains: Any, h: int) -> Tuple[np.ndarray, List[Any]]:
    """Each row's chain index (0..C-1, in order of first appearance) and the C chain ids."""
    if isinstance(chains, (str, bytes)):
        raise TypeError("chains must be a sequence of one chain id per draw, got a string")
    try:
        given = list(chains.tolist() if hasattr(chains, "tolist") else chains)
    except TypeError:
        given = []
    refuse_mixed_ids(given, "chains", "chains")
    try:
        ids = np.asarray(chains)
    except (TypeError, ValueError) as err:
        raise TypeError(f"chains must be a sequence of one chain id per draw ({err})") from None
    if ids.ndim != 1 or ids.shape[0] != h:
        raise ValueError(f"chains must hold one chain id per draw ({h}), got shape {ids.shape}")
    if ids.dtype.kind == "f" and not np.all(np.isfinite(ids)):
        raise ValueError("chains contains NaN or infinite ids")
    try:
        unique, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    except TypeError:
        raise TypeError("chains ids must be comparable values (integers or strings)") from None
    order = np.argsort(first, kind="stable")  # chains in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse.reshape(-1)], [unique[i].item() if hasattr(unique[i], "item") else unique[i] for i in order]


def split_chains(draws: Any, chains: Any = None) -> Tuple[np.ndarray, Optional[np.ndarray], List[Any]]:
    """``draws`` as a (C, N, n) integer label array, with item names (or None) and chain ids.

    Raises a ValueError or TypeError naming ``draws`` or ``chains`` for anything else: fewer
    than two chains, chains of unequal length, fewer than 4 draws per chain (ArviZ's minimum).
    """
    names: Optional[np.ndarray] = None
    if is_foreign(draws) or _is_inference_data(draws):
        if chains is not None:
            raise ValueError("chains= is for an (H, n) matrix; an xarray/ArviZ input has its own 'chain' dimension")
        if isinstance(draws, tuple):
            values, names = _from_xarray(draws[0], draws[1])
        else:
            values, names = _from_xarray(draws, None)
        array = as_integer_array(values, "draws")
    elif isinstance(draws, (list, tuple)) and len(draws) > 0 and all(
        isinstance(c, Draws) or np.ndim(c) == 2 for c in draws
    ):
        if chains is not None:
            raise ValueError("chains= is for an (H, n) matrix; a list already holds one array per chain")
        parts = [
            c.labels_matrix() if isinstance(c, Draws) else as_integer_array(c, f"draws[{i}]")
            for i, c in enumerate(draws)
        ]
        lengths = [p.shape[0] for p in parts]
        widths = {p.shape[1] for p in parts}
        if len(widths) != 1:
            raise ValueError(f"the chains have different numbers of items: {sorted(widths)}")
        # Each chain's items matched to the first chain's by name (salsox.io.item_index).
        chain_names = [item_names_of(c)[0] for c in draws]
        names = next((v for v in chain_names if v is not None), None)
        for i in range(len(parts)):
            take = align(names, parts[0].shape[1] if names is None else len(names), chain_names[i],
                         parts[i].shape[1], f"draws[{i}]", against="the first named chain")
            if take is not None:
                parts[i] = parts[i][:, take]
        if len(set(lengths)) != 1:
            raise ValueError(
                f"the chains have different numbers of draws ({lengths}): R-hat and ESS compare chains "
                "of equal length; trim them to the shortest"
            )
        array = np.stack(parts).astype(np.result_type(*parts), copy=False)  # one copy, in the chains' width
    else:
        names = item_names_of(draws)[0]
        if isinstance(draws, Draws):
            draws = draws.labels_matrix()
        array = as_integer_array(draws, "draws")
        if array.ndim == 2:
            if chains is None:
                raise ValueError(
                    "draws is one (H, n) matrix: say which chain each draw comes from with chains= "
                    "(one id per draw), or pass a (chains, draws, items) array or a list of chains"
                )
            index, ids = _chain_ids(chains, array.shape[0])
            counts = np.bincount(index)
            if np.any(counts != counts[0]):
                raise ValueError(
                    f"the chains have different numbers of draws ({counts.tolist()}): R-hat and ESS "
                    "compare chains of equal length; trim them to the shortest"
                )
            order = np.argsort(index, kind="stable")
            array = array[order].reshape(len(ids), int(counts[0]), array.shape[1])
            return _checked(array), names, ids
        if chains is not None:
            raise ValueError("chains= is for an (H, n) matrix; a 3-D array already has its chains first")
    if array.ndim != 3:
        raise ValueError(
            f"draws must be (chains, draws, items), a list of chains or (H, n) with chains=; got {array.ndim}-D"
        )
    return _checked(array), names, list(range(array.shape[0]))


def _checked(array: np.ndarray) -> np.ndarray:
    c, h, n = array.shape
    if n == 0:
        raise ValueError("draws has no items (n = 0)")
    if c < 2:
        raise ValueError(
            f"draws holds {c} chain: diagnose compares two or more chains (to check one long chain, "
            "split it, e.g. chains=np.repeat([0, 1, 2, 3], H // 4))"
        )
    if h < 4:
        raise ValueError(f"each chain has {h} draws: R-hat and ESS need at least 4 per chain")
    return array
