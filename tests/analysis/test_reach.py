"""What an undecided comparison showed (a symmetric bound) and what ±precision would take
(rounds from the spread it measured), with known spreads."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mountbench.analysis.reach import MAX_ROUNDS, half_width, reach
from mountbench.analysis.stats import Comparison, paired_compare

MARGIN = math.log1p(0.05)


def _measured(spread: float, n: int = 3, level: float = 0.95, paired: bool = True) -> Comparison:
    """An undecided comparison around 1 whose one-round log ratio has standard deviation ``spread``."""
    half = half_width(spread, n, level)
    return Comparison(
        1.0, math.exp(-half), math.exp(half), 0.5, False, level, 0.05, paired, n, spread / n**0.5, n - 1, spread
    )


def test_the_bound_folds_the_interval_to_the_wider_side():
    shown = reach(Comparison(1.0, 0.75, 1.2, 0.5, False, spread=0.1, n=3), 0.05, 12)
    assert shown.bound == pytest.approx(1 / 0.75) and shown.low == pytest.approx(0.75)  # within 0.75–1.33×
    upper = reach(Comparison(1.1, 0.9, 1.5, 0.5, False, spread=0.1, n=3), 0.05, 12)
    assert upper.bound == pytest.approx(1.5)


def test_rounds_are_the_fewest_whose_interval_fits_the_precision():
    for spread in (0.02, 0.05, 0.1, 0.2):
        found = reach(_measured(spread), 0.05, 12)
        n = found.rounds
        assert half_width(spread, n, 0.95) <= MARGIN < half_width(spread, n - 1, 0.95)
        assert found.more == n - 3 and found.paired and found.level == 0.95


def test_known_spreads_give_known_counts():
    # a 10 % spread per round: t(n-1)·0.1/√n ≤ 0.0488 first at n = 19 (the normal quantile alone says 17)
    assert reach(_measured(0.10), 0.05, 12).rounds == 19
    # 2 %: a few rounds already (t(2)·0.02/√3 = 0.050 > 0.0488, t(3)·0.02/2 = 0.032)
    assert reach(_measured(0.02), 0.05, 12).rounds == 4
    assert reach(_measured(0.02, n=6), 0.05, 12).more == 0  # it has enough already


def test_whether_max_repeat_would_do():
    assert reach(_measured(0.02), 0.05, 12).within_max_repeat
    far = reach(_measured(0.10), 0.05, 12)
    assert far.rounds == 19 and not far.within_max_repeat
    assert reach(_measured(0.10), 0.05, 20).within_max_repeat


def test_a_stricter_level_needs_more_rounds_and_out_of_reach_is_none():
    loose = reach(_measured(0.1), 0.05, 12).rounds
    strict = reach(_measured(0.1, level=0.995), 0.05, 12).rounds
    assert strict > loose
    # later looks of an adaptive run spend less: level_at counts at each n's own level
    spending = reach(_measured(0.1), 0.05, 12, level_at=lambda n: 1 - 0.05 * 6 / (math.pi**2 * max(1, n - 2) ** 2))
    assert spending.rounds > loose and spending.level > 0.999
    hopeless = reach(_measured(20.0), 0.05, 12)
    assert hopeless.rounds is None and hopeless.more is None and not hopeless.within_max_repeat


def test_rounds_from_simulated_rounds_match_the_spread_they_were_drawn_with():
    """Rounds drawn with a 10 % spread: the measured spread, and so the count, is close to the known one."""
    rng = np.random.default_rng(4)
    base = 100 * np.exp(rng.normal(0, 0.1, 200))
    values = 100 * np.exp(rng.normal(0, 0.1, 200))
    found = paired_compare(list(zip(base, values, strict=True)))
    assert found.spread == pytest.approx(0.1 * math.sqrt(2), rel=0.1)
    expected = reach(_measured(0.1 * math.sqrt(2)), 0.05, 12).rounds
    assert reach(found, 0.05, 12, level_at=lambda n: 0.95).rounds == pytest.approx(expected, rel=0.25)


def test_no_interval_no_reach():
    assert reach(Comparison(2.0, math.nan, math.nan, math.nan, False, n=1), 0.05, 12) is None


def test_max_rounds_is_the_search_limit():
    assert reach(_measured(MARGIN * math.sqrt(MAX_ROUNDS) / 1.5), 0.05, 12).rounds is None
