"""Did the machine change under the run? Pure functions over samples in time order.

- Trend: the Mann–Kendall test (is a later sample more often higher than an earlier
  one, or lower, than chance allows?), exact for n <= 60 from the distribution of
  inversions of a random order (Mahonian numbers), normal beyond; and, for a step (the
  machine switching state once, as this VM's memory backing does), the Mann–Whitney
  test of the first half against the second, exact from the Gaussian-binomial counts.
  The smaller p of the two, doubled (Bonferroni), is the trend's p-value. Its size is the
  median of the last quarter of the samples against the median of the first quarter
  (at least two samples each), robust to one odd sample at either end.
- Step (change point): the machine switching state once, at any sample. For every split
  of the series into a before and an after of at least MIN_SEGMENT samples, Welch's t
  on the logarithms; the largest |t| over the splits is the statistic, and its p-value
  comes from STEP_PERMUTATIONS seeded permutations of the series (so choosing the best
  split is paid for, and the answer is the same every time). Its size is the median
  after against the median before.
- First round: a first sample far from the rest (modified z-score on the rest's MAD)
  is what hyperfine warns about: a cold first run. From one run it cannot be told from
  a step after the first sample (the machine slowed from sample 2 on): both are said.

A trend needs at least MIN_TREND_SAMPLES samples: with four, even a perfectly
monotone series has p = 0.083, so nothing can be said.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

ALPHA = 0.05
MIN_CHANGE = 0.10  # a trend smaller than this over the whole run does not change a conclusion
MIN_TREND_SAMPLES = 5
MIN_FIRST_SAMPLES = 4  # the first sample and at least three to compare it with
FIRST_Z = 3.5
EXACT_UP_TO = 60
MIN_SEGMENT = 2  # a "step" with one sample on a side is an odd first or last sample
STEP_PERMUTATIONS = 2000


@dataclass(frozen=True)
class Trend:
    n: int
    s: int  # Mann–Kendall S: concordant minus discordant pairs
    p_value: float  # two-sided
    start: float  # median of the first quarter of the samples (at least 2)
    end: float  # median of the last quarter

    @property
    def factor(self) -> float:
        """end / start: 4.9 means the samples rose 4.9x over the run; nan when undefined."""
        return self.end / self.start if self.start > 0 and self.end > 0 else math.nan

    @property
    def change(self) -> float:
        """Relative size of the trend, always >= 0 (0.35 = 35 %)."""
        factor = self.factor
        if math.isnan(factor):
            return math.inf if self.end != self.start else 0.0
        return max(factor, 1 / factor) - 1

    @property
    def drifts(self) -> bool:
        """Significant and large enough to matter."""
        return self.drifts_at(ALPHA)

    def drifts_at(self, threshold: float) -> bool:
        """Significant at ``threshold`` and large enough to matter."""
        return self.p_value <= threshold and self.change >= MIN_CHANGE


def trend(values: Sequence[float]) -> Trend | None:
    """The trend of ``values`` taken in time order; None with fewer than MIN_TREND_SAMPLES."""
    n = len(values)
    if n < MIN_TREND_SAMPLES:
        return None
    s = sum(_sign(values[j] - values[i]) for i in range(n) for j in range(i + 1, n))
    half = n // 2
    p_step = mann_whitney_p(values[:half], values[n - half :])
    p_value = min(1.0, 2 * min(mann_kendall_p(s, n), p_step))
    k = max(2, n // 4)
    return Trend(n, s, p_value, statistics.median(values[:k]), statistics.median(values[-k:]))


def mann_whitney_p(first: Sequence[float], second: Sequence[float]) -> float:
    """Two-sided p-value that ``first`` and ``second`` come from one distribution (ties count
    half), exact for small groups, normal beyond."""
    m, n = len(first), len(second)
    if m == 0 or n == 0:
        return 1.0
    u = sum((a > b) + 0.5 * (a == b) for a in first for b in second)
    low = min(u, m * n - u)
    if m * n <= 900 and m <= 30 and n <= 30:
        counts = _u_counts(m, n)
        tail = sum(counts[: math.floor(low) + 1]) / math.comb(m + n, m)
        return min(1.0, 2 * tail)
    mean = m * n / 2
    sd = math.sqrt(m * n * (m + n + 1) / 12)
    return min(1.0, math.erfc(max(0.0, mean - low - 0.5) / sd / math.sqrt(2)))


@cache
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """counts[u] = arrangements of m and n items with Mann–Whitney U = u (Gaussian binomial)."""
    if m == 0 or n == 0:
        return (1,)
    left = _u_counts(m - 1, n)  # the largest item is in the second group... or the first:
    right = _u_counts(m, n - 1)
    size = m * n + 1
    out = [0] * size
    for u, c in enumerate(left):  # the largest of all belongs to the first group: beats all n
        out[u + n] += c
    for u, c in enumerate(right):
        out[u] += c
    return tuple(out)


def mann_kendall_p(s: int, n: int) -> float:
    """Two-sided p-value of Mann–Kendall's S for n samples without ties."""
    if s == 0:
        return 1.0
    pairs = n * (n - 1) // 2
    if n <= EXACT_UP_TO:
        # S = pairs - 2 * inversions; P(|S| >= |s|) = 2 * P(inversions <= (pairs - |s|) / 2)
        limit = (pairs - abs(s)) // 2
        counts = _mahonian(n)
        tail = sum(counts[: limit + 1]) / math.factorial(n)
        return min(1.0, 2 * tail)
    variance = n * (n - 1) * (2 * n + 5) / 18
    z = (abs(s) - 1) / math.sqrt(variance)  # continuity correction
    return min(1.0, math.erfc(z / math.sqrt(2)))


@cache
def _mahonian(n: int) -> tuple[int, ...]:
    """counts[k] = permutations of n items with k inversions."""
    counts = [1]
    for m in range(2, n + 1):
        new = [0] * (len(counts) + m - 1)
        for k, c in enumerate(counts):
            for extra in range(m):
                new[k + extra] += c
        counts = new
    return tuple(counts)


@dataclass(frozen=True)
class Step:
    """One change of level: samples ``index`` on (0-based) differ from those before."""

    index: int
    n: int
    before: float  # median of the samples before
    after: float  # median of the samples from ``index`` on
    p_value: float

    @property
    def factor(self) -> float:
        return self.after / self.before if self.before > 0 and self.after > 0 else math.nan

    @property
    def change(self) -> float:
        factor = self.factor
        return math.inf if math.isnan(factor) else max(factor, 1 / factor) - 1

    @property
    def found(self) -> bool:
        """Significant and large enough to matter."""
        return self.found_at(ALPHA)

    def found_at(self, threshold: float) -> bool:
        """Significant at ``threshold`` (a false-discovery threshold over the run's cells: quality.py) and large
        enough to matter."""
        return self.p_value <= threshold and self.change >= MIN_CHANGE


def step(values: Sequence[float]) -> Step | None:
    """The most likely single change of level in ``values`` (time order) with its p-value;
    None with fewer than 2 * MIN_SEGMENT samples or a value that is not positive."""
    n = len(values)
    if n < 2 * MIN_SEGMENT or min(values) <= 0:
        return None
    return _step(tuple(float(v) for v in values))


@cache
def _step(values: tuple[float, ...]) -> Step:
    import numpy as np

    logs = np.log(np.asarray(values))
    n = len(logs)
    observed = _split_t(logs[None, :])[0]
    index = int(np.argmax(observed)) + MIN_SEGMENT
    best = float(observed[index - MIN_SEGMENT])
    rng = np.random.default_rng(n * 7919 + 1)  # seeded: the same series gets the same answer
    shuffled = np.tile(logs, (STEP_PERMUTATIONS, 1))
    shuffled = rng.permuted(shuffled, axis=1)
    maxima = _split_t(shuffled).max(axis=1)
    p_value = (1 + int(np.sum(maxima >= best * (1 - 1e-9)))) / (STEP_PERMUTATIONS + 1)
    return Step(index, n, statistics.median(values[:index]), statistics.median(values[index:]), p_value)


def _split_t(rows):
    """|Welch t| of before against after for every split (MIN_SEGMENT on each side), per row."""
    import numpy as np

    n = rows.shape[1]
    ks = np.arange(MIN_SEGMENT, n - MIN_SEGMENT + 1)
    total = rows.sum(axis=1, keepdims=True)
    squares = (rows**2).sum(axis=1, keepdims=True)
    left = np.cumsum(rows, axis=1)[:, ks - 1]
    left_sq = np.cumsum(rows**2, axis=1)[:, ks - 1]
    m, r = ks.astype(float), (n - ks).astype(float)
    mean_l, mean_r = left / m, (total - left) / r
    var_l = np.maximum(left_sq - m * mean_l**2, 0) / (m - 1)
    var_r = np.maximum((squares - left_sq) - r * mean_r**2, 0) / (r - 1)
    spread = np.sqrt(var_l / m + var_r / r) + 1e-9 * (np.abs(mean_l) + np.abs(mean_r) + 1e-12)
    return np.abs(mean_l - mean_r) / spread


@dataclass(frozen=True)
class FirstSample:
    """The first sample against the others: how far (modified z), by how much (ratio), and how surprising
    under one level for all (``p_value``: the first log value against the rest's mean as a new observation,
    Student's t on the rest's spread, two-sided)."""

    z: float
    ratio: float  # first / median of the rest
    p_value: float = math.nan

    @property
    def stands_out(self) -> bool:
        return abs(self.z) > FIRST_Z and abs(self.ratio - 1) >= MIN_CHANGE

    def stands_out_at(self, threshold: float) -> bool:
        """Its p-value at ``threshold`` (a false-discovery threshold over the run's cells) and far enough."""
        return self.p_value <= threshold and abs(self.ratio - 1) >= MIN_CHANGE


def first_sample(values: Sequence[float]) -> FirstSample | None:
    """None with fewer than MIN_FIRST_SAMPLES samples, or when the rest do not vary at all
    and the first equals them."""
    if len(values) < MIN_FIRST_SAMPLES:
        return None
    first, rest = values[0], list(values[1:])
    median = statistics.median(rest)
    mad = statistics.median([abs(v - median) for v in rest])
    if median == 0:
        return None
    if mad == 0:
        z = 0.0 if first == median else math.copysign(math.inf, first - median)
    else:
        z = 0.6745 * (first - median) / mad
    return FirstSample(z, first / median, _first_p(first, rest))


def _first_p(first: float, rest: Sequence[float]) -> float:
    """How surprising the first value is next to the rest (module doc of FirstSample); 1 when it cannot be
    told (a value ≤ 0), 0 when the rest do not vary and the first differs."""
    from scipy.special import stdtr

    if first <= 0 or min(rest) <= 0:
        return 1.0
    logs = [math.log(v) for v in rest]
    mean = statistics.fmean(logs)
    sd = statistics.stdev(logs) if len(logs) > 1 else 0.0
    gap = abs(math.log(first) - mean)
    if sd == 0:
        return 1.0 if gap == 0 else 0.0
    t = gap / (sd * math.sqrt(1 + 1 / len(logs)))
    return float(2 * stdtr(len(logs) - 1, -t))


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)
