"""Statistics over samples. Pure functions: no store, no printing.

- The median's confidence interval is distribution-free (order statistics of
  the binomial): with few samples the achievable confidence is below 95 %, and
  the interval then says what it really covers (e.g. 75 % for n = 3).
- Ratios to a baseline are ratios of geometric means, with a 95 % interval from
  Welch's t on the logarithms. Three verdicts, never two (Comparison.verdict):
  *differs* when that interval excludes 1 (equivalently Welch's two-sided p < 0.05);
  *same* only when the whole interval lies within ±precision of 1 (an equivalence
  test, two one-sided tests at the interval's level; 5 % unless --until gives one);
  *undecided* otherwise: an interval that contains 1 is no evidence of sameness.
- Outliers: modified z-score on the median absolute deviation (Iglewicz and
  Hoaglin), |z| > 3.5, as hyperfine does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mountbench.model import DEFAULT_PRECISION, RunConfig

CONFIDENCE = 0.95
TOO_WIDE_SPAN = 100.0  # an interval whose ends are more than 100× apart ranks nothing

# Comparison.verdict
DIFFERS, SAME, UNDECIDED, NO_INTERVAL = "differs", "same", "undecided", "no-interval"
OUTLIER_Z = 3.5


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
        return SAME if within(self.low, self.high, self.precision) else UNDECIDED

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
    data = np.asarray(values, dtype=float)
    if len(data) < 3:
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
) -> Comparison | None:
    """Ratio of ``values`` to ``baseline`` with its interval; None when no ratio exists
    (an empty group, or a value that is zero or negative)."""
    if not baseline or not values or min(baseline) <= 0 or min(values) <= 0:
        return None
    log_b = np.log(np.asarray(baseline, dtype=float))
    log_v = np.log(np.asarray(values, dtype=float))
    diff = float(np.mean(log_v) - np.mean(log_b))
    ratio = math.exp(diff)
    n_b, n_v = len(log_b), len(log_v)
    if n_b < 2 or n_v < 2:
        return Comparison(ratio, math.nan, math.nan, math.nan, False, level, precision)
    var_b = float(np.var(log_b, ddof=1))
    var_v = float(np.var(log_v, ddof=1))
    se = math.sqrt(var_b / n_b + var_v / n_v)
    if se == 0:
        exact = diff != 0
        return Comparison(ratio, ratio, ratio, 0.0 if exact else 1.0, exact, level, precision)
    # scipy.special, not scipy.stats: the same Student t functions at a fraction of the import time
    from scipy.special import stdtr, stdtrit

    df = (var_b / n_b + var_v / n_v) ** 2 / ((var_b / n_b) ** 2 / (n_b - 1) + (var_v / n_v) ** 2 / (n_v - 1))
    t_crit = float(stdtrit(df, 0.5 + level / 2))
    p_value = float(2 * stdtr(df, -abs(diff) / se))
    # clamped: a strict level at one or two degrees of freedom can put an end past what a float holds
    # (such an interval is "too wide to rank" either way)
    low, high = math.exp(max(-700.0, diff - t_crit * se)), math.exp(min(700.0, diff + t_crit * se))
    return Comparison(ratio, low, high, p_value, not (low <= 1.0 <= high), level, precision)


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


def look(config: RunConfig, n: int) -> int:
    """Which look at a comparison ``n`` samples per side make (1 for a fixed-size run)."""
    if config.until is None:
        return 1
    return max(1, n - config.repeat + 1)


def precision_of(configs: Sequence[RunConfig]) -> float:
    """The precision "the same" is judged at: --until's (the strictest of the runs), else DEFAULT_PRECISION."""
    given = [config.until for config in configs if config.until is not None]
    return min(given) if given else DEFAULT_PRECISION


def interval_level(config: RunConfig, n: int, family: int = 1) -> float:
    """The level of an interval from ``n`` samples per side, one of ``family`` comparisons that
    make one claim together: CONFIDENCE for a fixed-size run; for an adaptive one, its look's
    share of the error (alpha spending: analysis/sequential.py's note); either way the error
    shared out over the family (Bonferroni: see :func:`family_level`)."""
    if config.until is None:
        return family_level(CONFIDENCE, family)
    k = look(config, n)
    return family_level(1 - (1 - CONFIDENCE) * 6 / (math.pi**2 * k * k), family)


def family_level(level: float, family: int) -> float:
    """Each of ``family`` intervals at this level covers its ratio, all of them at once with
    probability at least ``level`` (Bonferroni). A target's comparisons with the baseline are
    one family, the claim its headline makes ("slower in all 6 workloads"): at 95 % each, an
    A/A run of 6 workloads calls some difference in up to 26 % of runs; at 1 − 0.05/6 each,
    in at most 5 %."""
    return 1 - (1 - level) / max(1, family)
