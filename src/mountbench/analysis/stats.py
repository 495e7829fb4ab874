"""Statistics over samples. Pure functions: no store, no printing.

- The median's confidence interval is distribution-free (order statistics of
  the binomial): with few samples the achievable confidence is below 95 %, and
  the interval then says what it really covers (e.g. 75 % for n = 3).
- Ratios to a baseline are geometric-mean ratios with a Student t interval on the
  logarithms, in one of two designs (Comparison.paired):
  *paired* (:func:`paired_compare`) when the targets ran back to back in each round:
  the unit is the round, the ratio the geometric mean of the per-round ratios. What
  hits a round (a burst of load, a warm cache, drift) hits both of its samples and
  cancels in their ratio, so the interval narrows by as much as the rounds differ;
  the design decides it before any value is seen (analysis/summary.py);
  *unpaired* (:func:`compare`, Welch on the logs) where nothing pairs the samples
  (merged runs, a target whose rounds have no baseline sample).
  Three verdicts, never two (Comparison.verdict): *differs* when the interval
  excludes 1; *same* only when the ratio is shown within ±precision of 1 (5 % unless
  --until gives one) by two one-sided tests (:func:`equivalence_p`; a run decides them
  as a family of their own, analysis/family.py), the interval shown then being the one
  they decide with, at 1 − 2α, which lies within ±precision; *undecided* otherwise: an
  interval that contains 1 is no evidence of sameness. An undecided interval no wider than ±precision is *precise*
  (Comparison.precise): known to the precision, though neither of the other two.
- Zero spread is not certainty: identical values (two or three binned latency
  percentiles, a coarse timer) say the spread is below the values' resolution, not
  that it is zero. Each side's standard deviation on the log scale is taken as at
  least MIN_LOG_SD (0.8 %; the per-round log ratio of a pair: √2 × that). fio's latency
  percentiles are histogram bins 1/64 of a power of two wide (0.8–1.6 %); a value
  confined to one bin has a standard deviation of at most half its width, 0.8 %. With
  that floor, two or three identical samples a side one bin apart are not called
  different even at 95 % (unpaired or paired), and a ratio of identical samples gets an
  interval a few per cent wide, never zero width (in a default run's family of six it is
  still undecided at --until's first look). Rounds that keep repeating the same values
  narrow it, as evidence should. The floor is continuous (a spread just above zero is no more certain
  than zero) and small next to what storage runs show (2–10 %).
- Outliers: modified z-score on the median absolute deviation (Iglewicz and
  Hoaglin), |z| > 3.5, as hyperfine does.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mountbench.model import DEFAULT_PRECISION, RunConfig

CONFIDENCE = 0.95
TOO_WIDE_SPAN = 100.0  # an interval whose ends are more than 100× apart ranks nothing
MIN_LOG_SD = 0.008  # the least spread a side's log values are taken to have (the module doc: zero spread)

# Comparison.verdict
DIFFERS, SAME, UNDECIDED, NO_INTERVAL = "differs", "same", "undecided", "no-interval"
OUTLIER_Z = 3.5
OUTLIER_MIN_N = 6  # outliers are looked for from this many samples on
MAX_DF = 1e6  # degrees of freedom past this are the normal distribution's (a known variance)


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    min: float
    max: float
    mean: float
    stdev: float  # sample standard deviation (n-1); 0 for n = 1
    ci_low: float
    ci_high: float
    ci_level: float  # the confidence the interval really has (0 when n = 1)
    cv: float  # stdev / mean, 0 when mean is 0
    outliers: tuple[int, ...]  # indices into the input values


@dataclass(frozen=True)
class Comparison:
    ratio: float  # geometric mean of values / geometric mean of baseline
    low: float
    high: float
    p_value: float
    significant: bool
    level: float = CONFIDENCE  # the level the interval was computed at (higher for adaptive runs)
    precision: float = DEFAULT_PRECISION  # how close to 1 the interval must lie to call the two the same
    paired: bool = False  # per-round ratios (paired_compare), not Welch on the two groups (compare)
    n: int = 0  # rounds behind it: pairs when paired, else the smaller side's samples
    se: float = math.nan  # standard error of the log ratio (after the spread floor); nan without an interval
    df: float = math.nan  # its degrees of freedom (paired: n − 1; unpaired: Welch's)
    spread: float = math.nan  # standard deviation of one round's log ratio (moderated): se² = spread²/n + run_var
    run_var: float = 0.0  # the run level's variance of the log ratio (analysis/runlevel.py): no rounds shrink it
    run_df: float = math.inf  # its degrees of freedom
    within_df: float = math.nan  # the degrees of freedom of ``spread`` (n − 1, or more where the run's prior lent some)
    # the run's family decided sameness (analysis/family.py: its own Holm over two one-sided tests); None: a
    # comparison no family decided, judged by its interval alone (SAME when it lies within ±precision)
    same: bool | None = None

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))

    @property
    def verdict(self) -> str:
        """DIFFERS (the interval excludes 1), SAME (it lies within ±precision of 1),
        UNDECIDED (neither), NO_INTERVAL (one sample a side)."""
        if not self.has_interval:
            return NO_INTERVAL
        if self.significant:
            return DIFFERS
        if self.same is not None:
            return SAME if self.same else UNDECIDED
        return SAME if within(self.low, self.high, self.precision) else UNDECIDED

    @property
    def precise(self) -> bool:
        """Undecided, yet known to the precision: the interval contains 1 and reaches beyond
        ±precision on one side, but is no wider than ±precision (e.g. 0.99–1.07× at ±5 %). More
        rounds would narrow it further; --until stops there (sequential.PRECISE)."""
        if self.verdict != UNDECIDED or self.low <= 0:
            return False
        return math.log(self.high / self.low) / 2 <= math.log1p(self.precision)

    @property
    def too_wide(self) -> bool:
        """Undecided with ends more than TOO_WIDE_SPAN apart: no digits are worth showing."""
        if self.verdict != UNDECIDED:
            return False
        return self.low <= 0 or self.high / self.low > TOO_WIDE_SPAN


def within(low: float, high: float, precision: float) -> bool:
    """Does [low, high] lie within ±precision of 1 (on the log scale: 1/(1+p) … 1+p)?"""
    margin = math.log1p(precision)
    return low > 0 and -margin <= math.log(low) and math.log(high) <= margin


def median_ci(values: Sequence[float], level: float = CONFIDENCE) -> tuple[float, float, float]:
    """Order-statistic interval for the median: (low, high, achieved confidence)."""
    data = sorted(values)
    n = len(data)
    if n == 0:
        raise ValueError("no values")
    if n == 1:
        return data[0], data[0], 0.0
    best_k, best_cov = 1, 1 - 2 * _binom_half_cdf(0, n)
    for k in range(2, n // 2 + 1):
        coverage = 1 - 2 * _binom_half_cdf(k - 1, n)
        if coverage < level:
            break
        best_k, best_cov = k, coverage
    return data[best_k - 1], data[n - best_k], float(best_cov)


def _binom_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), exactly."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def outlier_indices(values: Sequence[float], threshold: float = OUTLIER_Z) -> tuple[int, ...]:
    """Samples whose modified z-score (Iglewicz and Hoaglin: on the median absolute deviation) exceeds
    ``threshold``; none below OUTLIER_MIN_N samples: with three, one of them is "an outlier" in 29 % of clean
    cells (the MAD of three is one gap), which says nothing a reader can use."""
    data = np.asarray(values, dtype=float)
    if len(data) < OUTLIER_MIN_N:
        return ()
    median = np.median(data)
    mad = np.median(np.abs(data - median))
    if mad == 0:
        return ()
    z = 0.6745 * (data - median) / mad
    return tuple(int(i) for i in np.flatnonzero(np.abs(z) > threshold))


def summarize(values: Sequence[float]) -> Summary:
    if not values:
        raise ValueError("no values")
    data = np.asarray(values, dtype=float)
    n = len(data)
    mean = float(np.mean(data))
    stdev = float(np.std(data, ddof=1)) if n > 1 else 0.0
    low, high, level = median_ci(list(data))
    return Summary(
        n=n,
        median=float(np.median(data)),
        min=float(np.min(data)),
        max=float(np.max(data)),
        mean=mean,
        stdev=stdev,
        ci_low=low,
        ci_high=high,
        ci_level=level,
        cv=stdev / abs(mean) if mean else 0.0,
        outliers=outlier_indices(list(data)),
    )


def compare(
    baseline: Sequence[float],
    values: Sequence[float],
    level: float = CONFIDENCE,
    precision: float = DEFAULT_PRECISION,
    min_spread: float = MIN_LOG_SD,
) -> Comparison | None:
    """Unpaired: the ratio of the geometric means of ``values`` and ``baseline`` with Welch's t
    interval on the logs; None when no ratio exists (an empty group, or a value that is zero or
    negative). Each side's log standard deviation is taken as at least ``min_spread`` (> 0; the
    module doc: zero spread is not certainty)."""
    if not baseline or not values or min(baseline) <= 0 or min(values) <= 0:
        return None
    log_b = np.log(np.asarray(baseline, dtype=float))
    log_v = np.log(np.asarray(values, dtype=float))
    diff = float(np.mean(log_v) - np.mean(log_b))
    n_b, n_v = len(log_b), len(log_v)
    if n_b < 2 or n_v < 2:
        return Comparison(math.exp(diff), math.nan, math.nan, math.nan, False, level, precision, n=min(n_b, n_v))
    floor = _checked_floor(min_spread) ** 2
    var_b = max(float(np.var(log_b, ddof=1)), floor)
    var_v = max(float(np.var(log_v, ddof=1)), floor)
    se = math.sqrt(var_b / n_b + var_v / n_v)
    df = (var_b / n_b + var_v / n_v) ** 2 / ((var_b / n_b) ** 2 / (n_b - 1) + (var_v / n_v) ** 2 / (n_v - 1))
    spread = math.sqrt(var_b + var_v)
    return t_comparison(diff, se, df, level, precision, paired=False, n=min(n_b, n_v), spread=spread)


def paired_compare(
    pairs: Sequence[tuple[float, float]],
    level: float = CONFIDENCE,
    precision: float = DEFAULT_PRECISION,
    min_spread: float = MIN_LOG_SD,
) -> Comparison | None:
    """Paired: ``pairs`` are (baseline, value) of one round each; the ratio is the geometric mean
    of the per-round ratios, its interval Student's t on their logs (n − 1 degrees of freedom).
    The per-round log ratio's standard deviation is taken as at least √2 × ``min_spread`` (the
    difference of two sides at the floor). None when no ratio exists (no pair, or a value that
    is zero or negative)."""
    if not pairs or min(min(pair) for pair in pairs) <= 0:
        return None
    logs = np.log(np.asarray([value for _, value in pairs], dtype=float)) - np.log(
        np.asarray([base for base, _ in pairs], dtype=float)
    )
    diff = float(np.mean(logs))
    n = len(logs)
    if n < 2:
        return Comparison(math.exp(diff), math.nan, math.nan, math.nan, False, level, precision, paired=True, n=n)
    spread = max(float(np.std(logs, ddof=1)), math.sqrt(2) * _checked_floor(min_spread))
    return t_comparison(diff, spread / math.sqrt(n), n - 1, level, precision, paired=True, n=n, spread=spread)


def at_level(comparison: Comparison, level: float) -> Comparison:
    """The same comparison with its interval at another level (its p-value is the level's
    business no more than the estimate is); one without an interval only takes the level."""
    if math.isnan(comparison.se):
        return dataclasses.replace(comparison, level=level)
    low, high = _t_interval(math.log(comparison.ratio), comparison.se, comparison.df, level)
    return dataclasses.replace(comparison, low=low, high=high, significant=not (low <= 1.0 <= high), level=level)


def equivalence_p(comparison: Comparison) -> float:
    """The p-value of "the ratio lies beyond ±precision" by two one-sided t tests on the log ratio
    (Schuirmann 1987): the larger of the two one-sided p-values. Below alpha exactly when the
    interval at 1 − 2·alpha lies within ±precision. nan without an interval."""
    if math.isnan(comparison.se):
        return math.nan
    from scipy.special import stdtr

    margin = math.log1p(comparison.precision)
    center = math.log(comparison.ratio)
    below = float(stdtr(comparison.df, -(center + margin) / comparison.se))
    above = float(stdtr(comparison.df, (center - margin) / comparison.se))
    return max(below, above)


def as_same(comparison: Comparison, alpha: float) -> Comparison:
    """``comparison`` called the same by a test at ``alpha``: its interval at 1 − 2·alpha, the one two
    one-sided tests at alpha decide with (it lies within ±precision), and the family's decision."""
    shown = at_level(comparison, 1 - 2 * alpha)
    return dataclasses.replace(shown, significant=False, same=True)


def geomean_interval(
    values: Sequence[float], level: float = CONFIDENCE, min_spread: float = MIN_LOG_SD
) -> tuple[float, float, float] | None:
    """(geometric mean, low, high): Student's t interval of the mean log, with the log standard
    deviation taken as at least ``min_spread``: the statistic ratios use, for one target alone
    (sequential.py: a single target's --until). None under two values or with one ≤ 0."""
    if len(values) < 2 or min(values) <= 0:
        return None
    logs = np.log(np.asarray(values, dtype=float))
    center = float(np.mean(logs))
    se = max(float(np.std(logs, ddof=1)), _checked_floor(min_spread)) / math.sqrt(len(logs))
    low, high = _t_interval(center, se, len(logs) - 1, level)
    return math.exp(center), low, high


def t_quantile(df: float, level: float) -> float:
    """The two-sided Student t quantile of an interval at ``level`` with ``df`` degrees of freedom."""
    # scipy.special, not scipy.stats: the same Student t functions at a fraction of the import time
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + level / 2))


def t_comparison(
    diff: float,
    se: float,
    df: float,
    level: float,
    precision: float,
    *,
    paired: bool,
    n: int,
    spread: float,
    run_var: float = 0.0,
    run_df: float = math.inf,
    within_df: float = math.nan,
) -> Comparison:
    """The comparison of a log ratio ``diff`` with standard error ``se`` on ``df`` degrees of freedom."""
    from scipy.special import stdtr

    df = min(df, MAX_DF)
    p_value = float(2 * stdtr(df, -abs(diff) / se))
    low, high = _t_interval(diff, se, df, level)
    within_df = df if math.isnan(within_df) else within_df
    return Comparison(
        math.exp(diff), low, high, p_value, not (low <= 1.0 <= high), level, precision, paired, n, se, df, spread,
        run_var=run_var, run_df=run_df, within_df=within_df,
    )  # fmt: skip


def _t_interval(center: float, se: float, df: float, level: float) -> tuple[float, float]:
    """exp(center ± t·se), clamped: a strict level at one or two degrees of freedom can put an end
    past what a float holds (such an interval is "too wide to rank" either way)."""
    half = t_quantile(df, level) * se
    return math.exp(max(-700.0, center - half)), math.exp(min(700.0, center + half))


def _checked_floor(min_spread: float) -> float:
    if not min_spread > 0:
        raise ValueError(f"min_spread must be above 0 (zero spread is not certainty), not {min_spread}")
    return min_spread


KNEE_FRACTION = 0.90  # the knee of a sweep: the first value reaching 90 % of the peak


def peak_and_knee(
    medians: Sequence[float | None], *, higher_is_better: bool = True, fraction: float = KNEE_FRACTION
) -> tuple[int, int] | None:
    """Along a sweep (``medians`` in increasing order of the swept value; None where a point
    has no value): the index of the best median (the optimum; the smallest value on a tie)
    and of the knee, the smallest value whose median reaches ``fraction`` of the best
    (for a lower-is-better metric: stays within best / fraction). None without any median."""
    present = [(i, m) for i, m in enumerate(medians) if m is not None and math.isfinite(m)]
    if not present:
        return None
    if higher_is_better:
        peak, best = max(present, key=lambda p: (p[1], -p[0]))
        knee = next(i for i, m in present if m >= fraction * best * (1 - 1e-12))  # exactly 90 % counts
    else:
        peak, best = min(present, key=lambda p: (p[1], p[0]))
        knee = next(i for i, m in present if m * fraction <= best * (1 + 1e-12))
    return peak, knee


def clearly_best(intervals: Sequence[tuple[float, float] | None], best: int, *, higher_is_better: bool = True) -> bool:
    """Is point ``best`` better than every other beyond noise: does no other point's
    interval of the median reach into its interval? (With 3 samples an interval is the
    range of the samples.) False when any other point may be as good."""
    own = intervals[best]
    if own is None:
        return False
    for index, other in enumerate(intervals):
        if index == best or other is None:
            continue
        if (other[1] >= own[0]) if higher_is_better else (other[0] <= own[1]):
            return False
    return True


# The level of an interval under optional stopping (--until); why: analysis/sequential.py


LOOK_GROWTH = 1.5  # each look of --until comes after half as many rounds again as the last (3, 5, 8, 12, ...)
SPENDING_RHO = 1.5  # the error spent by information fraction t: t**SPENDING_RHO (spending_share)


def look_points(repeat: int, last: int) -> tuple[int, ...]:
    """The rounds at which --until may stop a comparison: --repeat (at least 2: an interval needs
    two rounds), then each ×LOOK_GROWTH (rounded up, one round at least) up to ``last``, the last
    look (--max-repeat, or the rounds the budget fits: RunConfig.looks). Few looks, each after a
    sizeable share of new rounds (group-sequential design: analysis/sequential.py)."""
    points = [max(2, repeat)]
    while points[-1] < last:
        points.append(min(last, max(points[-1] + 1, math.ceil(points[-1] * LOOK_GROWTH))))
    return tuple(points)


def planned_looks(config: RunConfig) -> tuple[int, ...]:
    """The run's looks: those its plan recorded (the budget's, engine/session.py), else --repeat's
    growing to --max-repeat."""
    return tuple(config.looks) or look_points(config.repeat, config.max_repeat)


def _points_for(config: RunConfig, n: int) -> tuple[int, ...]:
    """The run's looks, extended to ``n`` when a merged or resumed run holds more rounds than its last."""
    points = planned_looks(config)
    if n > points[-1]:
        return look_points(config.repeat, n)
    return points


def look(config: RunConfig, n: int) -> int:
    """Which look at a comparison ``n`` rounds make: j when n lies after look j − 1's rounds and
    up to look j's (a run that stopped between two looks, out of budget or interrupted, makes
    its last look there); 1 for a fixed-size run."""
    if config.until is None:
        return 1
    return 1 + sum(1 for point in _points_for(config, n) if point < n)


def is_look(config: RunConfig, n: int) -> bool:
    """May --until stop a comparison at ``n`` rounds? (Only at its looks: look_points.)"""
    return config.until is None or n in _points_for(config, n)


def precision_of(configs: Sequence[RunConfig]) -> float:
    """The precision "the same" is judged at: --until's (the strictest of the runs), else DEFAULT_PRECISION."""
    given = [config.until for config in configs if config.until is not None]
    return min(given) if given else DEFAULT_PRECISION


def interval_level(config: RunConfig | None, n: int, family: int = 1) -> float:
    """The level of an interval from ``n`` samples per side (or of one target's alone), one of
    ``family`` comparisons or cells that make one claim together: CONFIDENCE for a fixed-size run
    (also when ``config`` is None); for an adaptive one, its look's share of the error (alpha
    spending: analysis/sequential.py's note); either way the error shared out over the family
    (Bonferroni: see :func:`family_level`)."""
    share = 1.0 if config is None else look_share(config, n)
    return family_level(1 - (1 - CONFIDENCE) * share, family)


def spent_by(fraction: float, rho: float | None = None) -> float:
    """The share of the error spent once ``fraction`` of the planned rounds are in (Kim and DeMets' power
    family of spending functions, 1987: t**rho; rho = 1 spends evenly, 3 like O'Brien and Fleming)."""
    return min(1.0, max(0.0, fraction)) ** (SPENDING_RHO if rho is None else rho)


def look_share(config: RunConfig, n: int) -> float:
    """The share of the error an interval from ``n`` rounds may spend: 1 for a fixed-size run; at look j
    of an adaptive one, what the spending function adds between look j − 1 and look j, by the share of the
    last look's rounds each has (:func:`spent_by`). The last look spends what is left; a run that ends
    between two looks (its budget ran short, Ctrl-C) makes its last look there with the share of the look
    it was heading for. The shares of all looks add up to 1, for differences and sameness alike."""
    if config.until is None:
        return 1.0
    points = _points_for(config, n)
    j = look(config, n)
    last = points[-1]
    before = spent_by(points[j - 2] / last) if j > 1 else 0.0
    return spent_by(points[j - 1] / last) - before


def last_look_share(repeat: int, last: int) -> float:
    """The share of the error the last look of a plan whose looks run from ``repeat`` to ``last`` rounds
    spends (what an advised `--until P% --max-repeat LAST` would test at when it gets there)."""
    points = look_points(repeat, last)
    return 1.0 - (spent_by(points[-2] / points[-1]) if len(points) > 1 else 0.0)


def same_share(config: RunConfig, n: int) -> float:
    """The share of the sameness error a look from ``n`` rounds may spend: the same spending as
    differences (:func:`look_share`), from the first look on (each kind of claim's shares add up to 1)."""
    return look_share(config, n)


def family_level(level: float, family: int) -> float:
    """Each of ``family`` intervals at this level covers its ratio, all of them at once with
    probability at least ``level`` (Bonferroni). A target's comparisons with the baseline are
    one family, the claim its headline makes ("slower in all 6 workloads"): at 95 % each, an
    A/A run of 6 workloads calls some difference in up to 26 % of runs; at 1 − 0.05/6 each,
    in at most 5 %."""
    return 1 - (1 - level) / max(1, family)
