"""What a comparison did show, and what it would take to know it to ±precision.

An undecided comparison is not empty-handed: its interval bounds the ratio. Folded to a
symmetric bound B = max(high, 1/low), it says "b is within 1/B–B× of a" (0.75–1.33×: no
difference larger than 1.33× either way), covered at the family's level.

And the spread it measured says what deciding would cost: the interval is no wider than
±precision once

    t(df(n), level(n)) · √(s̃²/n + τ²) ≤ log(1 + precision),

with s̃ the moderated spread of one round's log ratio (Comparison.spread), τ² the run level's
variance (Comparison.run_var: no number of rounds shrinks it, so when t·τ alone exceeds the
margin, ±precision is out of reach in any number of rounds, and that is said) and df(n) by
Welch–Satterthwaite over the two parts (the rounds' part with the prior's degrees of freedom
and n − 1 of its own). The level is the one the advised command would test at: its last look
(``level_last(n)``: the share of the error the last look of a plan ending at n rounds spends).

The spread is an estimate from few rounds, and the rounds a projection names are met only as
often as the future spread is no larger than it. So a projection is a range: the rounds at the
spread measured (enough about half the time) to the rounds at its upper 80 % bound (assurance:
d̃·s̃²/χ²(0.2; d̃), d̃ its degrees of freedom), enough in about 80 % of runs.

Pure: a Comparison in, a Reach out.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from mountbench.analysis.runlevel import satterthwaite
from mountbench.analysis.stats import MAX_DF, Comparison, t_quantile

MAX_ROUNDS = 10_000  # beyond this a count means nothing: "out of reach"
ASSURANCE = 0.80  # how often the upper projection's rounds are enough


@dataclass(frozen=True)
class Reach:
    bound: float  # ≥ 1: the interval shows the ratio within 1/bound … bound
    rounds: int | None  # rounds for an interval no wider than ±precision at the spread measured; None: out of reach
    more: int | None  # beyond the rounds it has, with ASSURANCE (0 when it has enough); None: out of reach
    max_repeat: int  # the most rounds the run may give a cell
    paired: bool  # planned with the paired spread (Comparison.paired)
    level: float  # the level the rounds were counted at (at ``rounds``, or at MAX_ROUNDS when out of reach)
    sure_rounds: int | None = None  # the rounds with ASSURANCE (the spread's upper bound); None: out of reach
    run_level_bound: bool = False  # out of reach because of the run level alone (τ), whatever the rounds

    @property
    def within_max_repeat(self) -> bool:
        """Would --max-repeat rounds do (with assurance)?"""
        rounds = self.sure_rounds if self.sure_rounds is not None else self.rounds
        return rounds is not None and rounds <= self.max_repeat

    @property
    def low(self) -> float:
        """The bound's lower end, 1/bound."""
        return 1 / self.bound

    @property
    def range_text(self) -> str:
        """'9–14 rounds', '9 rounds' when the two ends meet; '' out of reach."""
        if self.rounds is None:
            return ""
        sure = self.sure_rounds if self.sure_rounds is not None else self.rounds
        return f"{self.rounds} rounds" if sure == self.rounds else f"{self.rounds}–{sure} rounds"


def reach(
    comparison: Comparison,
    precision: float,
    max_repeat: int,
    level_last: Callable[[int], float] | None = None,
) -> Reach | None:
    """The bound ``comparison``'s interval establishes and the rounds its measured spread needs for an
    interval no wider than ±``precision``. ``level_last(n)``: the level the last look of a plan ending at n
    rounds tests at (default: the comparison's own level, whatever n). None without an interval."""
    if not comparison.has_interval or math.isnan(comparison.spread) or comparison.low <= 0:
        return None
    bound = max(comparison.high, 1 / comparison.low)
    level_of = level_last or (lambda n: comparison.level)
    margin = math.log1p(precision)
    prior_df = _prior_df(comparison)
    run = (comparison.run_var, comparison.run_df)
    if _t(MAX_DF, level_of(MAX_ROUNDS)) * math.sqrt(comparison.run_var) >= margin:
        return Reach(bound, None, None, max_repeat, comparison.paired, level_of(MAX_ROUNDS), None, True)
    rounds = _rounds_needed(comparison.spread**2, prior_df, run, margin, level_of)
    sure_variance = _upper_variance(comparison.spread**2, comparison.within_df)
    sure = _rounds_needed(sure_variance, prior_df, run, margin, level_of)
    more = None if sure is None else max(0, sure - comparison.n)
    level = level_of(rounds if rounds is not None else MAX_ROUNDS)
    return Reach(bound, rounds, more, max_repeat, comparison.paired, level, sure, False)


def half_width(
    variance: float, n: int, level: float, prior_df: float = 0.0, run: tuple[float, float] = (0.0, math.inf)
) -> float:
    """The log half-width of an interval from ``n`` rounds of this per-round variance at ``level``, with the
    run level's (variance, df) ``run`` added and ``prior_df`` degrees of freedom lent to the rounds' part."""
    within = variance / n
    df = satterthwaite([(within, prior_df + n - 1), run])
    return _t(df, level) * math.sqrt(within + run[0])


def _t(df: float, level: float) -> float:
    return t_quantile(min(df, MAX_DF), level)


def _prior_df(comparison: Comparison) -> float:
    """What the run's prior lent the comparison's spread: its degrees of freedom beyond its own n − 1."""
    if math.isnan(comparison.within_df):
        return 0.0
    return max(0.0, comparison.within_df - (comparison.n - 1))


def _upper_variance(variance: float, df: float) -> float:
    """The variance's upper ASSURANCE bound from its estimate on ``df`` degrees of freedom."""
    from scipy.special import chdtri

    if math.isnan(df) or df <= 0:
        return math.inf
    return df * variance / float(chdtri(min(df, MAX_DF), ASSURANCE))


def _rounds_needed(
    variance: float, prior_df: float, run: tuple[float, float], margin: float, level_at: Callable[[int], float]
) -> int | None:
    """The fewest rounds n ≥ 2 whose half-width is within ``margin``; None past MAX_ROUNDS or out of reach."""
    if not math.isfinite(variance):
        return None
    if half_width(variance, MAX_ROUNDS, level_at(MAX_ROUNDS), prior_df, run) > margin:
        return None
    low, high = 2, MAX_ROUNDS
    if half_width(variance, low, level_at(low), prior_df, run) <= margin:
        return low
    while high - low > 1:  # the half-width falls with n (level_at grows slowly): bisect
        middle = (low + high) // 2
        if half_width(variance, middle, level_at(middle), prior_df, run) <= margin:
            high = middle
        else:
            low = middle
    return high
