"""Borrowing strength across a run's comparisons: an empirical-Bayes moderated variance.

A comparison of three rounds has two degrees of freedom for its spread: at the strict level a
family of thirty comparisons is tested at, Student's t for 2 degrees of freedom is in the tens,
and nothing but a vast difference is ever decided. A run measures many comparisons on one
machine at one time, and their spreads are alike in kind: genomics met the same problem (a few
replicates, thousands of genes) and solved it with an empirical-Bayes prior for the variances
(Smyth 2004, "Linear models and empirical Bayes methods for assessing differential expression in
microarray experiments": limma's moderated t). Each comparison's variance s² with d degrees of
freedom is taken as a draw from a scaled inverse χ² prior with d0 degrees of freedom and scale
s0²; the posterior variance

    s̃² = (d0·s0² + d·s²) / (d0 + d)

has d0 + d degrees of freedom. d0 and s0² are estimated from the run's own comparisons by
Smyth's method of moments on log s² (what the spread of the log variances is beyond what their
own sampling explains): a run whose comparisons have alike spreads gets a strong prior (tens of
degrees of freedom from three rounds), one whose spreads differ widely gets a weak one (little
borrowed). Here s0² may differ by a known structure, as limma's trend lets it follow intensity:
- an offset, what the samples' own intervals predict (fio logs each sample's rate every 100 ms; the
  spread of those intervals over their number is the variance of the sample's mean, and under
  normal noise it is independent of the sample means the rounds' spread is made of): a 1 MiB Q8
  read that wanders ±24 % and a 4 KiB Q1 read that holds ±3 % get priors of their own size, without
  a parameter spent;
- a linear model of the comparison's target and workload class (large or small blocks) on the log
  scale, each term entering only when it explains the spreads beyond their sampling noise: a tmpfs
  against a disk is noisier than a tmpfs against a tmpfs by design, not by chance.

Three guards keep the borrowing honest with few comparisons (limma has thousands):
- the prior can lend a comparison no more information than the other comparisons of its fit hold
  (mean(d)·(1/h − 1), h its leverage in the prior's design: with an intercept alone, the other N − 1
  comparisons' degrees of freedom, as pooling all of them would give);
- a comparison whose spread is far above the prior's (its own s²/s0² beyond the F(d, d0)
  distribution's upper 1 %) is an outlier of the run (a burst of load on one cell): it keeps its
  own variance and degrees of freedom, unborrowed (robust in the spirit of Phipson et al. 2016).
  The prior is not fitted again without it: left in, its spread only widens the others' intervals,
  while leaving the largest spreads out would bias every other comparison's prior low (simulated:
  5.7 % of A/A runs wrongly called different with the refit, 5.1 % without);
- each comparison's prior scale is fitted on the others (left out one at a time), so its own spread
  enters its posterior once, with its own degrees of freedom.

Pure: arrays in, a Prior and the moderated variances out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

OUTLIER_P = 0.01  # a spread whose upper tail probability under the prior is below this keeps its own variance
MIN_CELLS = 3  # fewer comparisons than this estimate no prior: nothing is borrowed
TERM_P = 0.05  # a grouping enters the prior's design when it explains the log variances at this level


@dataclass(frozen=True)
class Prior:
    """The run's prior for the variances: d0 degrees of freedom as the spreads show it (0: none borrowed)
    and, per comparison, the scale (the design's fitted value), the weight the prior may have for it
    (``weights``: d0, capped by what the other comparisons of its fit hold) and whether it was an
    outlier (not moderated)."""

    d0: float
    scales: tuple[float, ...]
    outliers: tuple[bool, ...]
    terms: int  # parameters of the prior's design (1: one scale for all)
    weights: tuple[float, ...] = ()

    def posterior(self, index: int, s2: float, df: float) -> tuple[float, float]:
        """(moderated variance, its degrees of freedom) of comparison ``index``."""
        if self.d0 <= 0 or self.outliers[index]:
            return s2, df
        d0 = self.weights[index] if self.weights else self.d0
        return (d0 * self.scales[index] + df * s2) / (d0 + df), d0 + df


NO_PRIOR = Prior(0.0, (), (), 0)


def trigamma_inverse(x: float) -> float:
    """y with trigamma(y) = x (Smyth's Newton iteration, as limma's trigammaInverse)."""
    from scipy.special import polygamma

    if x > 1e7:
        return 1 / math.sqrt(x)
    if x < 1e-6:
        return 1 / x
    y = 0.5 + 1 / x
    for _ in range(50):
        tri = float(polygamma(1, y))
        step = tri * (1 - tri / x) / float(polygamma(2, y))
        y += step
        if -step / y < 1e-8:
            break
    return y


@dataclass(frozen=True)
class Design:
    """The prior's log-scale mean: ``matrix`` (N×p, an intercept first) plus ``offset`` (N, zeros: none)."""

    matrix: np.ndarray
    offset: np.ndarray

    @classmethod
    def intercept(cls, cells: int) -> Design:
        return cls(np.ones((cells, 1)), np.zeros(cells))


def fit_prior(variances: Sequence[float], dfs: Sequence[float], design: Design | None = None) -> Prior:
    """The prior of ``variances`` (each > 0, with ``dfs`` ≥ 1 degrees of freedom) by Smyth's method of
    moments; ``design``: the log scale's mean (None: an intercept). Each comparison's scale is the fit of
    the others (leave one out: its own variance enters its posterior once, with its own degrees of
    freedom). Robust: outliers (module doc) are not moderated."""
    n = len(variances)
    if n < MIN_CELLS:
        return Prior(0.0, tuple(variances), (False,) * n, 0)
    s2 = np.asarray(variances, dtype=float)
    d = np.asarray(dfs, dtype=float)
    design = design or Design.intercept(n)
    x = _full_rank(design.matrix)
    fitted = _fit(s2, d, x, design.offset)
    if fitted is None:
        return Prior(0.0, tuple(variances), (False,) * n, x.shape[1])
    d0, scales, held = fitted
    outliers = _upper_outliers(s2, d, d0, scales)
    return Prior(
        d0, tuple(float(v) for v in scales), tuple(bool(v) for v in outliers), x.shape[1],
        tuple(float(w) for w in np.minimum(d0, held)),
    )  # fmt: skip


def _fit(
    s2: np.ndarray, d: np.ndarray, x: np.ndarray, offset: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray] | None:
    """(d0, each comparison's prior scale from the others, the degrees of freedom the others hold for it).
    d0 by Smyth's moments of the log variances (their spread beyond what sampling explains). The scale by
    the maximum-likelihood fit of the variances themselves (a gamma model with a log link; with an
    intercept alone, the pooled variance), which the few comparisons of a run estimate without the low
    tail a mean of logarithms has; left out one at a time (the weighted least-squares identity on the
    fit's working scale). The mean, not the smaller scale a finite d0 implies (the mean of a scaled
    inverse χ² is its scale times d0/(d0 − 2)): d0 from a run's few comparisons is too rough to shrink by,
    and erring there would make intervals too narrow (simulated: tests/analysis/test_simulation.py)."""
    from scipy.special import polygamma

    residual_cells = len(s2) - np.linalg.matrix_rank(x)
    if residual_cells < 1:
        return None
    e = _log_variances(s2, d) - offset
    beta, *_ = np.linalg.lstsq(x, e, rcond=None)
    resid = e - x @ beta
    evar = float(np.sum(resid**2) / residual_cells - np.mean(polygamma(1, d / 2)))
    d0 = math.inf if evar <= 0 else 2 * trigamma_inverse(evar)
    others, held = _gamma_left_out(s2, d, x, offset, start=beta)
    return d0, others, held


def _log_variances(s2: np.ndarray, d: np.ndarray) -> np.ndarray:
    """log s², less its expected bias under sampling (Smyth: digamma(d/2) − log(d/2))."""
    from scipy.special import digamma

    return np.log(s2) - digamma(d / 2) + np.log(d / 2)


def _gamma_left_out(
    y: np.ndarray, d: np.ndarray, x: np.ndarray, offset: np.ndarray, start: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For every row: the fitted mean variance without that row, and the degrees of freedom the other rows
    hold at it (d·(1/h − 1), h its weighted leverage). A gamma GLM with log link, ``offset`` and weights d
    (iteratively reweighted least squares)."""
    beta = start.copy()
    root = np.sqrt(d)
    for _ in range(100):
        eta = offset + x @ beta
        z = eta - offset + (y - np.exp(eta)) / np.exp(eta)
        new, *_ = np.linalg.lstsq(x * root[:, None], z * root, rcond=None)
        done = np.max(np.abs(new - beta)) < 1e-12
        beta = new
        if done:
            break
    inverse = np.linalg.pinv((x * d[:, None]).T @ x)
    linear = x @ beta
    leverage = np.clip(d * np.einsum("ij,jk,ik->i", x, inverse, x), 1e-12, 1.0 - 1e-12)
    z = linear + (y - np.exp(offset + linear)) / np.exp(offset + linear)
    left_out = (linear - leverage * z) / (1 - leverage)
    return np.exp(offset + left_out), d * (1 / leverage - 1)


def _upper_outliers(s2: np.ndarray, d: np.ndarray, d0: float, scales: np.ndarray) -> np.ndarray:
    """Spreads far above the prior: P(F(d, d0) ≥ s²/s0²) below OUTLIER_P."""
    from scipy.special import chdtrc, fdtrc

    if math.isinf(d0):  # F(d, inf) is χ²(d)/d
        return np.asarray(chdtrc(d, d * s2 / scales) < OUTLIER_P)
    return np.asarray(fdtrc(d, d0, s2 / scales) < OUTLIER_P)


def _full_rank(design: np.ndarray) -> np.ndarray:
    """The design's columns that add rank, in order (a target column that repeats another is dropped)."""
    kept: list[int] = []
    for column in range(design.shape[1]):
        trial = design[:, [*kept, column]]
        if np.linalg.matrix_rank(trial) > len(kept):
            kept.append(column)
    return design[:, kept]


def design_for(
    groups: Sequence[Sequence[str]],
    variances: Sequence[float],
    dfs: Sequence[float],
    offset: Sequence[float] | None = None,
    max_share: float = 0.5,
) -> Design:
    """An intercept; ``offset`` (per comparison, the log variance its samples' own intervals predict: the
    prior's mean is a multiple of it, the multiple fitted), always when there is one, since choosing it by
    how well it fits would fit the spreads' own noise (simulated: 4.4 % of A/A runs wrongly called
    different with it always, 4.8 % when chosen, 12 % without it on workloads of unlike noise); then for
    each grouping in ``groups`` (a label per comparison) one indicator column per level but the first, each
    added when it
    explains the log variances beyond their own sampling noise (a χ² test at 5 % on the drop in the
    residual sum of squares, in units of the log variance's sampling variance trigamma(d/2)) while the
    design keeps at most ``max_share`` of the comparisons as parameters. A term that explains nothing would
    only cost the prior its degrees of freedom: with six comparisons of like spread, a term for two
    classes halves what each can borrow."""
    from scipy.special import chdtrc, polygamma

    cells = len(variances)
    d = np.asarray(dfs, dtype=float)
    e = _log_variances(np.asarray(variances, dtype=float), d)
    noise = float(np.mean(polygamma(1, d / 2)))
    columns = [np.ones(cells)]
    shift = np.zeros(cells) if offset is None else np.asarray(offset, dtype=float)
    for labels in groups:
        levels = list(dict.fromkeys(labels))
        extra = [np.array([1.0 if label == level else 0.0 for label in labels]) for level in levels[1:]]
        if not extra or len(columns) + len(extra) > max_share * cells:
            continue
        before = _rss(np.column_stack(columns), e - shift)
        after = _rss(np.column_stack(columns + extra), e - shift)
        if float(chdtrc(len(extra), (before - after) / noise)) < TERM_P:
            columns.extend(extra)
    return Design(np.column_stack(columns), shift)


def _rss(x: np.ndarray, y: np.ndarray) -> float:
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    return float(np.sum((y - x @ beta) ** 2))
