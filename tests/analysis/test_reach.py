"""What an undecided comparison showed (a symmetric bound) and what ±precision would take: rounds from
the spread it measured, with the run level that no rounds shrink, as a range with 80 % assurance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mountbench.analysis.reach import MAX_ROUNDS, half_width, reach
from mountbench.analysis.stats import Comparison, paired_compare

MARGIN = math.log1p(0.05)


def _measured(
    spread: float, n: int = 3, level: float = 0.95, paired: bool = True, run_var: float = 0.0, df: float | None = None
) -> Comparison:
    """An undecided comparison around 1 whose one-round log ratio has standard deviation ``spread``
    (``df``: its degrees of freedom, n − 1 unless a prior lent more)."""
    df = n - 1 if df is None else df
    half = half_width(spread**2, n, level, df - (n - 1), (run_var, math.inf))
    se = math.sqrt(spread**2 / n + run_var)
    return Comparison(
        1.0, math.exp(-half), math.exp(half), 0.5, False, level, 0.05, paired, n, se, df, spread,
        run_var=run_var, within_df=df,
    )  # fmt: skip


def test_the_bound_folds_the_interval_to_the_wider_side():
    shown = reach(Comparison(1.0, 0.75, 1.2, 0.5, False, spread=0.1, n=3, within_df=2), 0.05, 12)
    assert shown.bound == pytest.approx(1 / 0.75) and shown.low == pytest.approx(0.75)  # within 0.75–1.33×
    upper = reach(Comparison(1.1, 0.9, 1.5, 0.5, False, spread=0.1, n=3, within_df=2), 0.05, 12)
    assert upper.bound == pytest.approx(1.5)


def test_rounds_are_the_fewest_whose_interval_fits_the_precision():
    for spread in (0.02, 0.05, 0.1, 0.2):
        found = reach(_measured(spread, df=20), 0.05, 12)
        n = found.rounds
        prior = 20 - 2
        assert half_width(spread**2, n, 0.95, prior) <= MARGIN
        assert n == 2 or half_width(spread**2, n - 1, 0.95, prior) > MARGIN
        assert found.paired and found.level == 0.95
        assert found.sure_rounds >= n and found.more == max(0, found.sure_rounds - 3)  # with assurance


def test_known_spreads_give_known_counts():
    # a 10 % spread per round known well (a prior's 200 degrees of freedom): z·0.1/√n ≤ 0.0488 at n = 17
    assert reach(_measured(0.10, df=200), 0.05, 12).rounds == 17
    # with its own two degrees of freedom alone, t(n-1) counts more
    own = reach(_measured(0.10), 0.05, 12)
    assert own.rounds == 19 and own.sure_rounds > 40  # the upper 80 % bound of a spread from two df is far
    assert reach(_measured(0.02, n=6, df=50), 0.05, 12).more == 0  # it has enough already


def test_the_run_level_puts_a_floor_under_every_count():
    """τ² does not shrink with rounds: ±5 % is out of reach when t·τ alone is wider, and said as such."""
    found = reach(_measured(0.05, df=30, run_var=0.03**2), 0.05, 12)
    assert found.rounds is None and found.run_level_bound and not found.within_max_repeat
    near = reach(_measured(0.05, df=30, run_var=0.01**2), 0.05, 12)
    assert near.rounds is not None and near.rounds > reach(_measured(0.05, df=30), 0.05, 12).rounds


def test_whether_max_repeat_would_do():
    assert reach(_measured(0.02, df=30), 0.05, 12).within_max_repeat
    far = reach(_measured(0.10, df=30), 0.05, 12)
    assert not far.within_max_repeat
    assert reach(_measured(0.10, df=30), 0.05, 40).within_max_repeat
    assert far.range_text == f"{far.rounds}–{far.sure_rounds} rounds"


def test_a_stricter_level_needs_more_rounds_and_out_of_reach_is_none():
    loose = reach(_measured(0.1, df=30), 0.05, 12).rounds
    strict = reach(_measured(0.1, level=0.995, df=30), 0.05, 12).rounds
    assert strict > loose
    # the advised command's last look at n rounds tests at its own level (level_last)
    advised = reach(_measured(0.1, df=30), 0.05, 12, level_last=lambda n: 1 - 0.05 / (1 + math.log(n)))
    assert advised.rounds > loose and advised.level > 0.95
    hopeless = reach(_measured(20.0), 0.05, 12)
    assert hopeless.rounds is None and hopeless.more is None and not hopeless.within_max_repeat


def test_rounds_from_simulated_rounds_match_the_spread_they_were_drawn_with():
    """Rounds drawn with a 10 % spread: the measured spread, and so the count, is close to the known one."""
    rng = np.random.default_rng(4)
    base = 100 * np.exp(rng.normal(0, 0.1, 200))
    values = 100 * np.exp(rng.normal(0, 0.1, 200))
    found = paired_compare(list(zip(base, values, strict=True)))
    assert found.spread == pytest.approx(0.1 * math.sqrt(2), rel=0.1)
    expected = reach(_measured(0.1 * math.sqrt(2), df=199), 0.05, 12).rounds
    assert reach(found, 0.05, 12, level_last=lambda n: 0.95).rounds == pytest.approx(expected, rel=0.25)


def test_no_interval_no_reach():
    assert reach(Comparison(2.0, math.nan, math.nan, math.nan, False, n=1), 0.05, 12) is None


def test_max_rounds_is_the_search_limit():
    assert reach(_measured(MARGIN * math.sqrt(MAX_ROUNDS) / 1.5, df=1000), 0.05, 12).rounds is None
