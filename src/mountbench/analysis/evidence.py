"""From a comparison's samples to its ratio, standard error and degrees of freedom, at the levels
where the variance arises (Kalibera and Jones, ISMM 2013).

A comparison's evidence (:class:`Evidence`) is what its own samples say:
- *paired* (one run whose plan ran the two targets back to back in every round): the mean of the
  per-round log ratios over the rounds where both sides have a sample (a failed sample on either
  side leaves that round out, not the pairing), and the variance of one round's log ratio with
  n − 1 degrees of freedom; what hits both sides of a round cancels in the ratio;
- *across runs* (merged or imported runs in which both targets ran): each run's paired mean, the
  runs weighted alike, the run as a level of its own (its variance from the spread of the runs'
  means when three or more runs say more than the prior does);
- *unpaired* (the two sides never ran in one run): Welch on the two sides' logs, with each side's
  run-to-run level added (analysis/runlevel.py).

:func:`decide` turns the run's evidence into comparisons: the variances of one round's log ratio
are moderated across the run's comparisons of one kind of metric (analysis/moderate.py: an
empirical-Bayes prior, so three rounds get tens of degrees of freedom instead of two), and the
run-level variance (analysis/runlevel.py) is added, since it does not shrink with rounds:

    se² = s̃²/n + τ²,    df by Welch–Satterthwaite over the two parts.

Pure: samples in, comparisons out.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from mountbench.analysis.moderate import design_for, fit_prior
from mountbench.analysis.runlevel import satterthwaite
from mountbench.analysis.stats import CONFIDENCE, MIN_LOG_SD, Comparison, t_comparison

K = TypeVar("K", bound=Hashable)

PAIRED_FLOOR = (
    2 * MIN_LOG_SD**2
)  # the least variance one round's log ratio is taken to have (stats.py's floor, both sides)
FINGERPRINT_DIGITS = 9  # per-round log ratios equal to this many digits are one measurement (bw and IOPS of one job)


@dataclass(frozen=True)
class Evidence:
    """One comparison's own evidence, before the run's other comparisons are consulted."""

    estimate: float  # the log ratio (target over baseline)
    variance: float  # of one round's log ratio (paired); of the Welch difference times n (unpaired)
    df: float  # the variance's degrees of freedom
    n: float  # rounds behind it (paired: pairs; across runs: the effective count; unpaired: the smaller side)
    run_var: float  # τ²: the run level's variance of the estimate (does not shrink with rounds)
    run_df: float  # its degrees of freedom
    paired: bool
    moderate: bool  # may borrow strength from the run's other comparisons (paired evidence)
    group: str = ""  # comparisons of one group share a prior (one kind of metric)
    labels: tuple[str, ...] = ()  # what the prior's mean may depend on (target, access class)
    fingerprint: tuple[float, ...] = ()  # the per-round log ratios, rounded: equal ones are one measurement
    # what the samples' own intervals predict one round's log-ratio variance to be (log; nan: no series):
    # the prior's covariate (decide), independent of the rounds' spread
    within: float = math.nan


def paired(pairs: Sequence[tuple[float, float]], run_var: float, run_df: float, **tags: object) -> Evidence | None:
    """(baseline, value) per round; None without a pair, or with a value ≤ 0."""
    if not pairs or min(min(pair) for pair in pairs) <= 0:
        return None
    logs = np.log([value for _, value in pairs]) - np.log([base for base, _ in pairs])
    n = len(logs)
    variance = max(float(np.var(logs, ddof=1)), PAIRED_FLOOR) if n > 1 else math.nan
    return Evidence(
        float(np.mean(logs)), variance, n - 1.0, float(n), run_var, run_df, True, n > 1,
        fingerprint=tuple(round(float(v), FINGERPRINT_DIGITS) for v in logs), **tags,  # type: ignore[arg-type]
    )  # fmt: skip


def across_runs(
    runs: Sequence[Sequence[tuple[float, float]]], run_var: float, run_df: float, **tags: object
) -> Evidence | None:
    """Paired rounds of several runs (one list of (baseline, value) per run): each run's mean log ratio
    weighted alike. The rounds' variance is pooled over the runs; the run level's is the prior's τ² or,
    with three runs or more, what the runs' means show beyond their rounds (DerSimonian–Laird), if that is
    larger; both divided by the number of runs."""
    means, within, dfs, counts = [], 0.0, 0.0, []
    for pairs in runs:
        if not pairs or min(min(pair) for pair in pairs) <= 0:
            continue
        logs = np.log([value for _, value in pairs]) - np.log([base for base, _ in pairs])
        means.append(float(np.mean(logs)))
        counts.append(len(logs))
        if len(logs) > 1:
            within += float(np.sum((logs - np.mean(logs)) ** 2))
            dfs += len(logs) - 1
    if not means:
        return None
    if len(means) == 1:
        return paired(runs[0], run_var, run_df, **tags)
    k = len(means)
    variance = max(within / dfs, PAIRED_FLOOR) if dfs else math.nan
    inverse_n = float(np.mean([1 / c for c in counts]))
    between, between_df = run_var, run_df
    if k >= 3 and dfs:
        shown = float(np.var(means, ddof=1)) - variance * inverse_n
        if shown > between:
            between, between_df = shown, k - 1.0
    return Evidence(
        float(np.mean(means)),
        variance,
        dfs,
        k / inverse_n,
        between / k,
        between_df,
        True,
        dfs > 0,
        **tags,  # type: ignore[arg-type]
    )


def unpaired(
    baseline: Sequence[float], values: Sequence[float], run_var: float, run_df: float, **tags: object
) -> Evidence | None:
    """Welch on the logs, each side's variance at least the floor; None with an empty side or a value ≤ 0."""
    if not baseline or not values or min(baseline) <= 0 or min(values) <= 0:
        return None
    log_b, log_v = np.log(baseline), np.log(values)
    estimate = float(np.mean(log_v) - np.mean(log_b))
    n_b, n_v = len(log_b), len(log_v)
    n = float(min(n_b, n_v))
    if n_b < 2 or n_v < 2:
        return Evidence(estimate, math.nan, 0.0, n, run_var, run_df, False, False, **tags)  # type: ignore[arg-type]
    floor = MIN_LOG_SD**2
    var_b = max(float(np.var(log_b, ddof=1)), floor) / n_b
    var_v = max(float(np.var(log_v, ddof=1)), floor) / n_v
    df = (var_b + var_v) ** 2 / (var_b**2 / (n_b - 1) + var_v**2 / (n_v - 1))
    return Evidence(estimate, (var_b + var_v) * n, df, n, run_var, run_df, False, False, **tags)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Moderation:
    """What borrowing did for one group of comparisons: the prior's degrees of freedom (0: none borrowed),
    how many comparisons it was fitted on and how many kept their own variance (outliers)."""

    group: str
    prior_df: float
    cells: int
    outliers: int
    lent: float = 0.0  # the degrees of freedom the prior lent a comparison, on average (capped by the others')


def decide(
    evidence: Mapping[K, Evidence], precision: float, level: float = CONFIDENCE
) -> tuple[dict[K, Comparison], tuple[Moderation, ...]]:
    """Every comparison at ``level`` (its family re-levels it: analysis/family.py), the rounds' variance
    moderated within each group, the run level added; and what the moderation did per group."""
    posterior: dict[K, tuple[float, float]] = {}
    moderations = []
    groups: dict[str, list[K]] = defaultdict(list)
    for key, found in evidence.items():
        if found.moderate:
            groups[found.group].append(key)
    for group, keys in groups.items():
        variances = [evidence[k].variance for k in keys]
        dfs = [evidence[k].df for k in keys]
        labels = (
            list(zip(*(evidence[k].labels for k in keys), strict=True)) if keys and evidence[keys[0]].labels else []
        )
        within = [evidence[k].within for k in keys]
        covariate = within if all(math.isfinite(v) for v in within) else None
        design = design_for(labels, variances, dfs, covariate)
        prior = fit_prior(variances, dfs, design)
        for index, key in enumerate(keys):
            posterior[key] = prior.posterior(index, variances[index], dfs[index])
        lent = [w for w, out in zip(prior.weights, prior.outliers, strict=True) if not out] if prior.weights else []
        moderations.append(Moderation(group, prior.d0, len(keys), sum(prior.outliers), sum(lent) / max(1, len(lent))))
    out: dict[K, Comparison] = {}
    for key, found in evidence.items():
        variance, df = posterior.get(key, (found.variance, found.df))
        out[key] = comparison_of(found, variance, df, precision, level)
    return out, tuple(moderations)


def comparison_of(found: Evidence, variance: float, df: float, precision: float, level: float) -> Comparison:
    """The comparison of ``found`` with the rounds' variance ``variance`` (df ``df``: moderated or its own)."""
    ratio = math.exp(found.estimate)
    if math.isnan(variance) or df <= 0:
        return Comparison(ratio, math.nan, math.nan, math.nan, False, level, precision, found.paired, int(found.n))
    within = variance / found.n
    se = math.sqrt(within + found.run_var)
    total_df = satterthwaite([(within, df), (found.run_var, found.run_df)])
    return t_comparison(
        found.estimate, se, total_df, level, precision, paired=found.paired, n=int(found.n),
        spread=math.sqrt(variance), run_var=found.run_var, run_df=found.run_df, within_df=df,
    )  # fmt: skip
