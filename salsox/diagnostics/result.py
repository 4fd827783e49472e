"""The result of :func:`salsox.diagnose`: :class:`Diagnosis`."""

from __future__ import annotations

import dataclasses
import html
import math
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ..io import Draws, labels_series, pandas_index
from ..losses import Loss
from ..search import Estimate
from ..summaries.display import html_table

__all__ = ["Diagnosis", "STATUSES"]


def _fmt(x: float, spec: str = ".4g") -> str:
    if math.isnan(x):
        return "nan"
    return ("inf" if x > 0 else "-inf") if math.isinf(x) else format(x, spec)


def _p(x: float) -> str:
    """A p-value: 3 significant digits, which the smallest permutation p-value (0.001) needs."""
    return _fmt(x, ".3g")


# The verdict's statuses, in :attr:`Diagnosis.status`.
STATUSES = ("converged", "not converged", "too few draws", "cannot assess")

# Draws per chain below this multiple of ess_threshold are too few for a low ESS to say more
# than "run longer": even independent draws then miss the threshold often.
TOO_FEW_FACTOR = 2


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
        ``P_ij``: the mean distance between a draw of chain i and a draw of chain j, over every
        pair of draws (:attr:`gap_exact`) or every pair of :attr:`gap_draws` evenly spaced
        draws of each chain. The diagonal is the mean over pairs of distinct draws of one chain.
    gap : ndarray (C, C)
        The gap between chains, ``G_ij = P_ij - (P_ii + P_jj) / 2``: half the energy distance
        between the chains' distributions (Székely and Rizzo 2004), about 0 when they agree,
        positive when chain i's draws are farther from chain j's than from each other.
    gap_pvalue : float
        Permutation p-value of the largest gap over the pairs of chains: the share of
        :attr:`n_permutations` random relabellings of blocks of draws between the chains
        (and of the chains as given) whose largest gap is at least as large.
    gap_draws : int
        Draws per chain behind :attr:`posterior_distance` and :attr:`gap`.
    gap_exact : bool
        Whether those are every draw (the exact all-pairs values).
    gap_null : ndarray (n_permutations,)
        The largest gap of each random relabelling: the null distribution of the largest gap.
    ts_trace : ndarray (C, gap_draws) or None
        With ``ts=True``: genMCMCDiag's travelling-salesman map, each of the gap's draws mapped
        to its position in a nearest-neighbour tour through them (in chain order, the draws
        evenly spaced as in :attr:`gap_draws`).
    ts_rhat, ts_ess_bulk, ts_ess_tail : float
        Its rank-normalised split R-hat and bulk and tail ESS (NaN without ``ts``).
    half_estimates : ndarray (C, 2, n)
        The estimates from the first and the second half of each chain, searched from the
        chain estimates as warm starts (the chain's own first, min(C, n_runs) of them).
    half_distance : ndarray (C,)
        Distance between each chain's two half estimates: the estimate's stability.
    half_expected_loss : ndarray (C, 2)
        Each half estimate's expected loss over its half: the first N // 2 draws of the chain,
        and the last N - N // 2.
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
        The least R-hat that flags a trace (default 1.01, Vehtari et al. 2021).
    rhat_limit : float
        R-hat above this flags a trace: the larger of :attr:`rhat_threshold` and the
        ``1 - alpha`` quantile of the largest R-hat over the traces when blocks of draws are
        relabelled between the chains at random, so that taking the largest of many traces
        does not raise false alarms.
    rhat_pvalue : float
        The share of those relabellings whose largest R-hat reaches the largest here.
    rhat_null : ndarray (n_permutations,)
        The largest R-hat over the traces of each relabelling (NaN where every trace is constant).
    alpha : float
        False-alarm rate of the R-hat limit and of the gap's test (default 0.01).
    n_permutations : int
        Relabellings behind :attr:`rhat_limit` and :attr:`gap_pvalue`.
    blocks : int
        Blocks per chain that are relabelled (each about ten autocorrelation times long, by the
        chains' own ESS; 4 to 64).
    ess_threshold : float
        Bulk or tail ESS below this many per chain flags a trace (default 100).
    info : dict
        ``seed``, ``n_runs``, ``n_references``, ``seconds`` and ``stage_seconds``: the time of
        each stage (``setup``: ArviZ's import and the checks; ``chain_estimates``,
        ``half_estimates``, ``mapping``, ``arviz``, ``rhat_calibration``: the R-hat limit's
        relabellings, ``gap``: the distances between the gap's draws and their relabellings,
        ``loss_traces``).
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
    >>> diag.status, diag.converged
    ('too few draws', False)
    >>> print(diag.verdict.splitlines()[0][:60])
    Too few draws to judge: 4 chains x 50 draws; no sign of disa
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
    gap: np.ndarray
    gap_pvalue: float
    gap_draws: int
    gap_exact: bool
    gap_null: np.ndarray = dataclasses.field(repr=False)
    ts_trace: Optional[np.ndarray] = dataclasses.field(repr=False)
    ts_rhat: float
    ts_ess_bulk: float
    ts_ess_tail: float
    half_estimates: np.ndarray = dataclasses.field(repr=False)
    half_distance: np.ndarray
    half_expected_loss: np.ndarray
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
    rhat_limit: float
    rhat_pvalue: float
    rhat_null: np.ndarray = dataclasses.field(repr=False)
    alpha: float
    n_permutations: int
    blocks: int
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
    def item_names(self) -> Optional[np.ndarray]:
        """The items' names, matched across the chains (None when no chain named them)."""
        return self.chain_draws[0].item_names if self.chain_draws else None

    def to_series(self, name: str = "cluster") -> Any:
        """The best chain's estimate (:attr:`estimate`) as a ``pandas.Series`` indexed by item
        name (by position when unknown). Needs pandas."""
        return labels_series(self.estimate.labels, self.item_names, name)

    def to_dataframe(self) -> Any:
        """One row per item (indexed as :meth:`to_series`), one column per chain's estimate
        (named by the chain id). Needs pandas."""
        import pandas as pd

        columns = {f"chain {cid}": e.labels for cid, e in zip(self.chain_ids, self.chain_estimates)}
        return pd.DataFrame(columns, index=pandas_index(self.item_names, self.n_items))

    @property
    def chain_expected_loss(self) -> np.ndarray:
        """(C,) each chain estimate's expected loss over its own chain."""
        return np.array([e.expected_loss for e in self.chain_estimates])

    @property
    def flagged_rhat(self) -> List[str]:
        """Traces whose R-hat exceeds :attr:`rhat_limit`, or is infinite (every half-chain constant,
        not all alike: relabelling such blocks can give inf too, but no sampler that moves does)."""
        return [t for t, r in zip(self.trace_names, self.rhat) if r > self.rhat_limit or r == math.inf]

    @property
    def flagged_ess(self) -> List[str]:
        """Traces whose bulk or tail ESS is below :attr:`ess_threshold` per chain."""
        need = self.ess_threshold * self.n_chains
        return [t for t, b, e in zip(self.trace_names, self.ess_bulk, self.ess_tail) if min(b, e) < need]

    @property
    def gap_pair(self) -> Tuple[int, int]:
        """The pair of chains (i < j, positions) with the largest :attr:`gap`."""
        upper = np.triu_indices(self.n_chains, 1)
        k = int(np.argmax(self.gap[upper]))
        return int(upper[0][k]), int(upper[1][k])

    @property
    def gap_flagged(self) -> bool:
        """Whether the largest gap between chains is significant: :attr:`gap_pvalue` < alpha."""
        return bool(self.gap_pvalue < self.alpha)

    @property
    def stuck_chains(self) -> List[int]:
        """Positions of the chains whose every mapped value is constant (a chain that never
        leaves one partition), when some other draw differs."""
        if self.all_constant:
            return []
        return [k for k in range(self.n_chains) if np.all(self.traces[:, k] == self.traces[:, k, :1])]

    @property
    def all_constant(self) -> bool:
        """Whether every mapped trace is constant: every draw of every chain is one partition."""
        return bool(np.all(self.traces == self.traces[:, :1, :1]))

    @property
    def too_few_draws(self) -> bool:
        """Whether each chain has fewer than twice :attr:`ess_threshold` draws: independent
        draws would then miss the ESS threshold often."""
        return self.n_draws < TOO_FEW_FACTOR * self.ess_threshold

    @property
    def reference_ess(self) -> Tuple[float, float, float]:
        """Lanfear, Hua and Warren's (2016) summary of the ESS over references: the median,
        2.5% and 97.5% quantiles of the bulk ESS of the reference-distance traces (NaN
        where every trace is constant)."""
        ess = self.ess_bulk[1:]
        ess = ess[np.isfinite(ess)]
        if not ess.size:
            return (math.nan, math.nan, math.nan)
        low, mid, high = np.quantile(ess, [0.025, 0.5, 0.975])
        return (float(mid), float(low), float(high))

    @property
    def status(self) -> str:
        """What :attr:`verdict` says first: ``"converged"``, ``"not converged"``, ``"too few
        draws"`` (only the ESS is short, and the chains have fewer than twice ``ess_threshold``
        draws each) or ``"cannot assess"`` (every draw of every chain is the same partition)."""
        if self.all_constant:
            return "cannot assess"
        if self.flagged_rhat or self.gap_flagged or self.stuck_chains:
            return "not converged"
        if self.flagged_ess:
            return "too few draws" if self.too_few_draws else "not converged"
        return "converged"

    @property
    def converged(self) -> bool:
        """Whether :attr:`status` is ``"converged"``: no sign of non-convergence, from enough
        draws, on chains that move."""
        return self.status == "converged"

    def _ess_line(self) -> str:
        need = self.ess_threshold * self.n_chains
        low = np.fmin(self.ess_bulk, self.ess_tail)
        worst = int(np.nanargmin(low))
        return (
            f"bulk or tail ESS below {need:g} ({self.ess_threshold:g} per chain) for {len(self.flagged_ess)} "
            f"trace{'' if len(self.flagged_ess) == 1 else 's'} "
            f"(smallest {_fmt(low[worst], '.0f')}, {self.trace_names[worst]})"
        )

    @property
    def verdict(self) -> str:
        """A plain verdict, with the thresholds used and the figures behind it."""
        c, need = self.n_chains, self.ess_threshold * self.n_chains
        finite = ~np.isnan(self.rhat)
        status = self.status
        lines: List[str] = []
        if status == "cannot assess":
            lines.append(
                "Cannot assess: every draw of every chain is the same partition (every mapped trace is "
                "constant), so R-hat and ESS are undefined. A sampler that never moves looks like this, and so "
                "does a posterior on one partition: start the chains from other partitions."
            )
        elif status == "converged":
            lines.append(
                f"No sign of non-convergence: no trace has R-hat above {_fmt(self.rhat_limit)}, no gap between "
                f"chains at p < {self.alpha:g}, and bulk and tail ESS >= {self.ess_threshold:g} per chain "
                f"({need:g} over {c} chains)."
            )
        elif status == "too few draws":
            lines.append(
                f"Too few draws to judge: {c} chains x {self.n_draws} draws; no sign of disagreement between the "
                f"chains, but {self._ess_line()}. Run the chains longer."
            )
        else:
            lines.append("Not converged:")
            if self.flagged_rhat:
                worst = int(np.nanargmax(self.rhat))
                lines.append(
                    f"  R-hat above {_fmt(self.rhat_limit)} for {len(self.flagged_rhat)} of {int(finite.sum())} "
                    f"traces (largest {_fmt(self.rhat[worst])}, {self.trace_names[worst]}): the chains disagree."
                )
            if self.gap_flagged:
                i, j = self.gap_pair
                lines.append(
                    f"  gap between chains {self.chain_ids[i]} and {self.chain_ids[j]}: their draws are "
                    f"{_fmt(self.gap[i, j])} farther apart ({self.distance}) than draws of one chain "
                    f"(p = {_p(self.gap_pvalue)}): the chains disagree."
                )
            if self.stuck_chains:
                ids = ", ".join(str(self.chain_ids[k]) for k in self.stuck_chains)
                lines.append(f"  chain(s) {ids} never move: every draw the same partition.")
            if self.flagged_ess:
                lines.append(f"  {self._ess_line()}: run the chains longer.")
        if status != "cannot assess" and not finite.all():
            lines.append(f"  {int((~finite).sum())} trace(s) constant in every chain (no information): not counted.")
        if status != "cannot assess":
            lines.append(
                f"R-hat limit {_fmt(self.rhat_limit)}: the larger of {self.rhat_threshold:g} and the "
                f"{1 - self.alpha:.0%} quantile of the largest R-hat over the traces with blocks of "
                f"{self.n_draws // self.blocks} draws relabelled between chains (largest here "
                f"{_fmt(float(np.nanmax(self.rhat)))}, p = {_p(self.rhat_pvalue)})."
            )
        i, j = self.gap_pair
        within = np.diag(self.posterior_distance)
        source = "every pair of draws" if self.gap_exact else f"{self.gap_draws} evenly spaced draws a chain"
        lines.append(
            f"Gap between chains: largest {_fmt(self.gap[i, j])} ({self.chain_ids[i]} vs {self.chain_ids[j]}, "
            f"p = {_p(self.gap_pvalue)}); expected {self.distance} within a chain "
            f"{_fmt(within.min())}-{_fmt(within.max())} ({source})."
        )
        if self.ts_trace is not None:
            lines.append(
                f"Travelling-salesman map (ts) of {c} x {self.gap_draws} draws: R-hat {_fmt(self.ts_rhat)}, bulk ESS "
                f"{_fmt(self.ts_ess_bulk, '.0f')}, tail ESS {_fmt(self.ts_ess_tail, '.0f')} (not in the R-hat limit)."
            )
        mid, low, high = self.reference_ess
        lines.append(
            f"Bulk ESS over the {len(self.trace_names) - 1} reference traces: median {_fmt(mid, '.0f')}, "
            f"95% interval {_fmt(low, '.0f')}-{_fmt(high, '.0f')}."
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
            "status": self.status,
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
            "rhat_limit": _nan_to_none(self.rhat_limit),
            "rhat_pvalue": _nan_to_none(self.rhat_pvalue),
            "alpha": self.alpha,
            "n_permutations": self.n_permutations,
            "blocks": self.blocks,
            "ess_threshold": self.ess_threshold,
            "traces": [
                # JSON has no infinity: an R-hat of chains each stuck on its own partition is "inf".
                {**row, "rhat": "inf" if row["rhat"] == math.inf else _nan_to_none(row["rhat"]),
                 "ess_bulk": _nan_to_none(row["ess_bulk"]), "ess_tail": _nan_to_none(row["ess_tail"])}
                for row in self.table()
            ],
            "reference_ess": clean(self.reference_ess),
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
            "gap": clean(self.gap),
            "gap_pvalue": self.gap_pvalue,
            "gap_draws": self.gap_draws,
            "gap_exact": self.gap_exact,
            "half_distance": clean(self.half_distance),
            "half_expected_loss": clean(self.half_expected_loss),
            "ts_rhat": "inf" if self.ts_rhat == math.inf else _nan_to_none(self.ts_rhat),
            "ts_ess_bulk": _nan_to_none(self.ts_ess_bulk),
            "ts_ess_tail": _nan_to_none(self.ts_ess_tail),
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
        top = float(np.nanmax(self.rhat)) if (~np.isnan(self.rhat)).any() else math.nan
        low = float(np.nanmin(self.ess_bulk)) if np.isfinite(self.ess_bulk).any() else math.nan
        return (
            f"Diagnosis(status={self.status!r}, converged={self.converged}, n_chains={self.n_chains}, "
            f"n_draws={self.n_draws}, "
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
