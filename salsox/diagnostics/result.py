"""The result of :func:`salsox.diagnose`: :class:`Diagnosis`."""

from __future__ import annotations

import dataclasses
import html
import math
from typing import Any, Dict, List

import numpy as np

from ..io import Draws
from ..losses import Loss
from ..search import Estimate
from ..summaries.display import html_table

__all__ = ["Diagnosis"]


def _fmt(x: float, spec: str = ".4g") -> str:
    return "nan" if not math.isfinite(x) else format(x, spec)


@dataclasses.dataclass(frozen=True, eq=False)
class Diagnosis:
    """Convergence diagnostics of C partition-valued chains of N draws each.

    Attributes
    ----------
    n_chains, n_draws, n_items : int
        C, N (draws per chain) and n.
    chain_ids : list
        The chains' ids (0..C-1, or those given in ``chains=``).
    loss : Loss
        The loss of the per-chain estimates.
    distance : str
        The distance of the mappings and of the comparisons below (``"VI"`` in bits, ...).
    chain_estimates : list of Estimate
        The SALSO estimate of each chain's draws; ``chain_estimates[c].expected_loss`` is its
        expected loss over chain c.
    chain_mcse : ndarray (C,)
        Monte Carlo standard error of that expected loss, from chain c's autocorrelated
        per-draw loss trace (``arviz.mcse``). NaN for a PSM-based loss.
    loss_matrix : ndarray (C, C)
        ``loss_matrix[i, j]``: expected loss of chain i's estimate over chain j's draws (the
        diagonal is each chain's own expected loss).
    expected_loss, mcse : ndarray (C,)
        Each chain estimate's expected loss over all C x N draws, and its Monte Carlo standard
        error from the C per-draw loss traces. The estimate of smallest pooled expected loss is
        :attr:`estimate` (chain :attr:`best_chain`).
    loss_traces : ndarray (C, C, N)
        ``loss_traces[i, j, t]``: the loss of chain i's estimate against draw t of chain j.
    estimate_distance : ndarray (C, C)
        Distance between the chains' estimates.
    posterior_distance : ndarray (C, C)
        Expected distance between a draw of chain i and a draw of chain j, estimated from every
        draw of one chain and the reference draws of the other (the two estimates averaged; a
        reference is not paired with itself). The diagonal is the expected distance between two
        draws of one chain: chains of one posterior have off-diagonal entries close to it.
    half_estimates : ndarray (C, 2, n)
        The estimates from the first and the second half of each chain, searched from the
        chain estimates as warm starts (the chain's own first, min(C, n_runs) of them).
    half_distance : ndarray (C,)
        Distance between each chain's two half estimates: the estimate's stability.
    reference_draws : ndarray (R, n)
        The reference draws of the mapping, ``references`` per chain, drawn at random.
    reference_chain, reference_draw : ndarray (R,)
        Where each reference comes from (chain, draw within it).
    trace_names : list of str
        ``"n_clusters"``, then ``"<distance> to ref r"`` for each reference.
    traces : ndarray (T, C, N)
        The mapped traces, in the order of :attr:`trace_names`.
    rhat, ess_bulk, ess_tail : ndarray (T,)
        Rank-normalised split R-hat and bulk and tail effective sample sizes of each trace,
        by ``arviz.rhat`` and ``arviz.ess``. NaN for a trace that is constant (every draw
        alike in all chains: no information).
    rhat_threshold : float
        R-hat above this flags a trace (default 1.01, Vehtari et al. 2021).
    ess_threshold : float
        Bulk or tail ESS below this many per chain flags a trace (default 100).
    converged : bool
        Whether no trace is flagged.
    info : dict
        ``seed``, ``n_runs``, ``n_references``, ``seconds`` and ``stage_seconds``: the time of
        each stage (``setup``: ArviZ's import and the checks; ``chain_estimates``,
        ``half_estimates``, ``mapping``, ``arviz``, ``loss_traces``).
    chain_draws : list of Draws
        Each chain's draws (compact, not copied again), for the plots.

    Examples
    --------
    Four consecutive stretches of one Gibbs chain of 200 draws, too short to pass:

    >>> from salsox.datasets import example_draws
    >>> chains = example_draws().draws[:200, :30].reshape(4, 50, 30)
    >>> diag = salsox.diagnose(chains, seed=1, n_runs=2, n_references=1)
    >>> diag.trace_names
    ['n_clusters', 'VI to ref 0', 'VI to ref 1', 'VI to ref 2', 'VI to ref 3']
    >>> diag.rhat.round(3)
    array([1.059, 1.022, 1.004, 1.005, 1.002])
    >>> diag.converged, diag.flagged_rhat
    (False, ['n_clusters', 'VI to ref 0'])
    >>> print(diag.verdict.splitlines()[1])
      R-hat above 1.01 for 2 of 5 traces (largest 1.059, n_clusters): the chains disagree.
    """

    n_chains: int
    n_draws: int
    n_items: int
    chain_ids: List[Any]
    loss: Loss
    distance: str
    chain_estimates: List[Estimate]
    chain_mcse: np.ndarray
    loss_matrix: np.ndarray
    expected_loss: np.ndarray
    mcse: np.ndarray
    loss_traces: np.ndarray = dataclasses.field(repr=False)
    estimate_distance: np.ndarray
    posterior_distance: np.ndarray
    half_estimates: np.ndarray = dataclasses.field(repr=False)
    half_distance: np.ndarray
    reference_draws: np.ndarray = dataclasses.field(repr=False)
    reference_chain: np.ndarray
    reference_draw: np.ndarray
    trace_names: List[str]
    traces: np.ndarray = dataclasses.field(repr=False)
    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    rhat_threshold: float
    ess_threshold: float
    info: Dict[str, Any]
    chain_draws: List[Draws] = dataclasses.field(repr=False)

    @property
    def best_chain(self) -> int:
        """The chain whose estimate has the smallest expected loss over all draws."""
        return int(np.argmin(self.expected_loss))

    @property
    def estimate(self) -> Estimate:
        """The chain estimate of smallest expected loss over all draws."""
        return self.chain_estimates[self.best_chain]

    @property
    def chain_expected_loss(self) -> np.ndarray:
        """(C,) each chain estimate's expected loss over its own chain."""
        return np.array([e.expected_loss for e in self.chain_estimates])

    @property
    def flagged_rhat(self) -> List[str]:
        """Traces whose R-hat exceeds :attr:`rhat_threshold`."""
        return [t for t, r in zip(self.trace_names, self.rhat) if r > self.rhat_threshold]

    @property
    def flagged_ess(self) -> List[str]:
        """Traces whose bulk or tail ESS is below :attr:`ess_threshold` per chain."""
        need = self.ess_threshold * self.n_chains
        return [t for t, b, e in zip(self.trace_names, self.ess_bulk, self.ess_tail) if min(b, e) < need]

    @property
    def converged(self) -> bool:
        return not self.flagged_rhat and not self.flagged_ess

    @property
    def verdict(self) -> str:
        """A plain verdict, with the thresholds used and the figures behind it."""
        c, need = self.n_chains, self.ess_threshold * self.n_chains
        finite = np.isfinite(self.rhat)
        lines: List[str] = []
        if self.converged:
            lines.append(
                f"No sign of non-convergence: every mapped trace has R-hat <= {self.rhat_threshold:g} and "
                f"bulk and tail ESS >= {self.ess_threshold:g} per chain ({need:g} over {c} chains)."
            )
        else:
            lines.append("Not converged (or too few draws):")
            if self.flagged_rhat:
                worst = int(np.nanargmax(self.rhat))
                lines.append(
                    f"  R-hat above {self.rhat_threshold:g} for {len(self.flagged_rhat)} of {int(finite.sum())} traces "
                    f"(largest {_fmt(self.rhat[worst])}, {self.trace_names[worst]}): the chains disagree."
                )
            if self.flagged_ess:
                low = np.fmin(self.ess_bulk, self.ess_tail)
                worst = int(np.nanargmin(low))
                lines.append(
                    f"  bulk or tail ESS below {need:g} ({self.ess_threshold:g} per chain) for "
                    f"{len(self.flagged_ess)} traces (smallest {_fmt(low[worst], '.0f')}, {self.trace_names[worst]}): "
                    "run the chains longer."
                )
        if not finite.all():
            lines.append(f"  {int((~finite).sum())} trace(s) constant in every chain (no information): not counted.")
        off = self.posterior_distance[~np.eye(c, dtype=bool)]
        within = np.diag(self.posterior_distance)
        lines.append(
            f"Expected {self.distance} between chains' draws: {_fmt(off.min())}-{_fmt(off.max())} "
            f"(within a chain {_fmt(within.min())}-{_fmt(within.max())})."
        )
        est = self.estimate_distance[~np.eye(c, dtype=bool)]
        lines.append(
            f"{self.distance} between the chains' estimates: up to {_fmt(est.max())}; between the halves of a "
            f"chain: up to {_fmt(self.half_distance.max())}."
        )
        b = self.best_chain
        lines.append(
            f"Estimate (chain {self.chain_ids[b]}'s, {self.estimate.n_clusters} clusters): expected "
            f"{self.loss.name} loss {_fmt(self.expected_loss[b], '.6g')} over all draws, "
            f"MCSE {_fmt(self.mcse[b], '.2g')}."
        )
        return "\n".join(lines)

    def table(self) -> List[Dict[str, Any]]:
        """One row per trace: ``trace``, ``rhat``, ``ess_bulk``, ``ess_tail``."""
        return [
            {"trace": t, "rhat": float(r), "ess_bulk": float(b), "ess_tail": float(e)}
            for t, r, b, e in zip(self.trace_names, self.rhat, self.ess_bulk, self.ess_tail)
        ]

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict of the figures (NaN as None)."""

        def clean(x: Any) -> Any:
            arr = np.asarray(x, dtype=np.float64)
            out = np.where(np.isfinite(arr), arr, np.nan).tolist()
            return _nan_to_none(out)

        return {
            "converged": self.converged,
            "verdict": self.verdict,
            "n_chains": self.n_chains,
            "n_draws": self.n_draws,
            "n_items": self.n_items,
            "chain_ids": [str(c) for c in self.chain_ids],
            "loss": self.loss.name,
            "loss_params": dict(self.loss.params),
            "distance": self.distance,
            "rhat_threshold": self.rhat_threshold,
            "ess_threshold": self.ess_threshold,
            "traces": [
                {**row, "rhat": _nan_to_none(row["rhat"]), "ess_bulk": _nan_to_none(row["ess_bulk"]),
                 "ess_tail": _nan_to_none(row["ess_tail"])}
                for row in self.table()
            ],
            "chain_estimates": [e.labels.tolist() for e in self.chain_estimates],
            "chain_n_clusters": [e.n_clusters for e in self.chain_estimates],
            "chain_expected_loss": clean(self.chain_expected_loss),
            "chain_mcse": clean(self.chain_mcse),
            "loss_matrix": clean(self.loss_matrix),
            "expected_loss": clean(self.expected_loss),
            "mcse": clean(self.mcse),
            "best_chain": self.best_chain,
            "estimate_distance": clean(self.estimate_distance),
            "posterior_distance": clean(self.posterior_distance),
            "half_distance": clean(self.half_distance),
            "reference_chain": self.reference_chain.tolist(),
            "reference_draw": self.reference_draw.tolist(),
            "seed": self.info.get("seed"),
        }

    def to_text(self) -> str:
        """A printable report: the verdict, the table of traces and the per-chain figures."""
        lines = [self.verdict, "", f"{'trace':<22} {'R-hat':>8} {'ESS bulk':>9} {'ESS tail':>9}"]
        for row in self.table():
            lines.append(
                f"{row['trace']:<22} {_fmt(row['rhat'], '.4f'):>8} {_fmt(row['ess_bulk'], '.0f'):>9} "
                f"{_fmt(row['ess_tail'], '.0f'):>9}"
            )
        lines += ["", f"{'chain':<8} {'clusters':>8} {'own loss':>10} {'MCSE':>9} {'pooled loss':>12} {'halves':>8}"]
        for c, est in enumerate(self.chain_estimates):
            lines.append(
                f"{str(self.chain_ids[c]):<8} {est.n_clusters:>8d} {_fmt(est.expected_loss, '.5g'):>10} "
                f"{_fmt(self.chain_mcse[c], '.2g'):>9} {_fmt(self.expected_loss[c], '.5g'):>12} "
                f"{_fmt(self.half_distance[c], '.3g'):>8}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        top = float(np.nanmax(self.rhat)) if np.isfinite(self.rhat).any() else math.nan
        low = float(np.nanmin(self.ess_bulk)) if np.isfinite(self.ess_bulk).any() else math.nan
        return (
            f"Diagnosis(converged={self.converged}, n_chains={self.n_chains}, n_draws={self.n_draws}, "
            f"max_rhat={_fmt(top)}, min_ess_bulk={_fmt(low, '.0f')})"
        )

    def _repr_html_(self) -> str:
        rows = [
            (r["trace"], _fmt(r["rhat"], ".4f"), _fmt(r["ess_bulk"], ".0f"), _fmt(r["ess_tail"], ".0f"))
            for r in self.table()
        ]
        chains = [
            (str(self.chain_ids[c]), est.n_clusters, _fmt(est.expected_loss, ".5g"), _fmt(self.chain_mcse[c], ".2g"),
             _fmt(self.half_distance[c], ".3g"))
            for c, est in enumerate(self.chain_estimates)
        ]
        verdict = "".join(f"<p>{html.escape(line)}</p>" for line in self.verdict.splitlines())
        return (
            f"<div><p><b>Diagnosis of {self.n_chains} chains x {self.n_draws} draws of {self.n_items} items"
            f"</b></p>{verdict}"
            + html_table(("trace", "R-hat", "ESS bulk", "ESS tail"), rows)
            + html_table(("chain", "clusters", "expected loss", "MCSE", f"halves' {self.distance}"), chains)
            + "</div>"
        )


def _nan_to_none(x: Any) -> Any:
    if isinstance(x, list):
        return [_nan_to_none(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x
