"""What a comparison did show, and what it would take to know it to ±precision.

An undecided comparison is not empty-handed: its interval bounds the ratio. Folded to a
symmetric bound B = max(high, 1/low), it says "b is within 1/B–B× of a" (0.75–1.33×: no
difference larger than 1.33× either way), covered at the family's level (family.py: for the
comparisons not called different the family's intervals are simultaneous).

And the spread it measured says what deciding would cost: the interval is no wider than
±precision once t(n − 1, level) · spread / √n ≤ log(1 + precision), where spread is the
standard deviation of one round's log ratio (Comparison.spread: of the per-round log ratios
when paired, both sides' variances added when not, for n samples a side). n − 1 degrees of
freedom are exact when paired and Welch's fewest for n a side when not, so the count errs
long. The level is the family's (the comparison's own by default); under --until a later
look spends a smaller share of the error, which a caller says with ``level_at``. The spread
is an estimate from few rounds: the count is what this run's noise predicts, not a promise.

Pure: a Comparison in, a Reach out.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from mountbench.analysis.stats import Comparison, t_quantile

MAX_ROUNDS = 10_000  # beyond this a count means nothing: "out of reach"


@dataclass(frozen=True)
class Reach:
    bound: float  # ≥ 1: the interval shows the ratio within 1/bound … bound
    rounds: int | None  # rounds (pairs, or samples a side) for an interval no wider than ±precision; None: > MAX_ROUNDS
    more: int | None  # of those, beyond the rounds it has (0 when it has enough)
    max_repeat: int  # the most rounds the run may give a cell
    paired: bool  # planned with the paired spread (Comparison.paired)
    level: float  # the level the rounds were counted at (at ``rounds``, or at MAX_ROUNDS when out of reach)

    @property
    def within_max_repeat(self) -> bool:
        """Would --max-repeat rounds do?"""
        return self.rounds is not None and self.rounds <= self.max_repeat

    @property
    def low(self) -> float:
        """The bound's lower end, 1/bound."""
        return 1 / self.bound


def reach(
    comparison: Comparison,
    precision: float,
    max_repeat: int,
    level_at: Callable[[int], float] | None = None,
) -> Reach | None:
    """The bound ``comparison``'s interval establishes and the rounds its measured spread needs for
    an interval no wider than ±``precision``. ``level_at(n)``: the level an interval from n rounds
    would be computed at (default: the comparison's own level, whatever n). None without an
    interval (one round a side: no spread measured)."""
    if not comparison.has_interval or math.isnan(comparison.spread) or comparison.low <= 0:
        return None
    bound = max(comparison.high, 1 / comparison.low)
    level_of = level_at or (lambda n: comparison.level)
    margin = math.log1p(precision)
    rounds = _rounds_needed(comparison.spread, margin, level_of)
    more = None if rounds is None else max(0, rounds - comparison.n)
    level = level_of(rounds if rounds is not None else MAX_ROUNDS)
    return Reach(bound, rounds, more, max_repeat, comparison.paired, level)


def half_width(spread: float, n: int, level: float) -> float:
    """The log half-width of an interval from ``n`` rounds of this spread at ``level`` (n − 1 df)."""
    return t_quantile(n - 1, level) * spread / math.sqrt(n)


def _rounds_needed(spread: float, margin: float, level_at: Callable[[int], float]) -> int | None:
    """The fewest rounds n ≥ 2 whose half-width at level_at(n) is within ``margin``; None past MAX_ROUNDS.
    The search starts where the normal quantile (below every t) at the loosest level would put it."""
    from scipy.special import ndtri

    loosest = min(level_at(2), level_at(MAX_ROUNDS))
    start = max(2, math.floor((float(ndtri(0.5 + loosest / 2)) * spread / margin) ** 2))
    for n in range(start, MAX_ROUNDS + 1):
        if half_width(spread, n, level_at(n)) <= margin:
            return n
    return None
