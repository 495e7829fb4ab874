"""Drift detection: Mann–Kendall against known values, Theil–Sen sizes, first-sample outliers."""

from __future__ import annotations

import math
import random

import pytest

from mountbench.analysis.drift import first_sample, mann_kendall_p, trend


def test_exact_p_values_match_the_permutation_distribution():
    # n = 5, a perfectly increasing series: only 1 of 120 orders gives S = 10 (and 1 gives -10)
    assert mann_kendall_p(10, 5) == pytest.approx(2 / 120)
    # n = 4 can never reach 5 %: the best is 2/24
    assert mann_kendall_p(6, 4) == pytest.approx(2 / 24)
    assert mann_kendall_p(0, 8) == 1.0
    # symmetric in the sign of S
    assert mann_kendall_p(-8, 6) == mann_kendall_p(8, 6)


def test_normal_approximation_agrees_with_the_exact_distribution_where_they_meet():
    from mountbench.analysis import drift

    n = 60
    s = 300
    exact = mann_kendall_p(s, n)
    variance = n * (n - 1) * (2 * n + 5) / 18
    approx = math.erfc((s - 1) / math.sqrt(variance) / math.sqrt(2))
    assert exact == pytest.approx(approx, rel=0.05)
    assert drift.EXACT_UP_TO == 60


def test_the_issue_series_drifts_and_says_by_how_much():
    """A tree extract in round order on this VM, as issue 12 reports it (ms)."""
    series = [88, 85, 88, 87, 89, 88, 244, 237, 241, 333, 331, 336, 339, 335, 435]
    found = trend(series)
    assert found is not None and found.drifts
    assert found.p_value < 0.001
    assert found.factor == pytest.approx(339 / 88)  # last three against first three; 4.9x first to last sample


def test_a_steady_noisy_series_does_not_drift():
    rng = random.Random(4)
    flagged = 0
    for _ in range(200):
        series = [100 * rng.lognormvariate(0, 0.1) for _ in range(8)]
        found = trend(series)
        flagged += bool(found and found.drifts)
    assert flagged <= 200 * 0.05  # at most the false-alarm rate the test allows


def test_too_few_samples_say_nothing():
    assert trend([1, 2, 3, 4]) is None
    assert first_sample([5, 1, 1]) is None


def test_a_cold_first_sample_stands_out_and_a_normal_one_does_not():
    cold = first_sample([3.08, 2.62, 2.60, 2.65, 2.61])
    assert cold is not None and cold.stands_out and cold.ratio == pytest.approx(3.08 / 2.615, rel=1e-3)
    normal = first_sample([2.63, 2.62, 2.60, 2.65, 2.61])
    assert normal is not None and not normal.stands_out


def test_a_falling_trend_has_a_factor_below_one():
    found = trend([400, 380, 300, 250, 200, 150, 100])
    assert found is not None and found.drifts and found.factor < 0.5
    assert found.change > 1.0


def test_mann_whitney_exact_values():
    from mountbench.analysis.drift import mann_whitney_p

    # 5 against 5, completely separated: 2 of the C(10, 5) = 252 arrangements are that extreme
    assert mann_whitney_p([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]) == pytest.approx(2 / 252)
    assert mann_whitney_p([1, 2], [1, 2]) == 1.0


def test_a_step_with_a_noisy_first_half_is_found():
    """Seen on this VM: a throttle halfway through, a noisy first half, a flat second one."""
    found = trend([10867, 29721, 17507, 28661, 32482, 667, 500, 500, 500, 500])
    assert found is not None and found.drifts and found.p_value < 0.02


# --- steps at any sample (issue 23) ------------------------------------------------------------


def _slowed_from(sample: int, n: int = 10, seed: int = 5) -> list[float]:
    """A machine slowed 6× from ``sample`` (1-based) on, with 5 % noise."""
    rng = random.Random(seed)
    return [(600.0 if i + 1 < sample else 100.0) * rng.lognormvariate(0, 0.05) for i in range(n)]


@pytest.mark.parametrize("sample", [5, 8])
def test_a_step_in_the_middle_or_late_is_found_where_it_is(sample):
    from mountbench.analysis.drift import step

    found = step(_slowed_from(sample))
    assert found is not None and found.found
    assert found.index == sample - 1 and found.factor == pytest.approx(1 / 6, rel=0.15)


def test_a_step_after_the_first_sample_is_no_step_of_its_own_but_the_first_sample_stands_out():
    from mountbench.analysis.drift import step

    series = _slowed_from(2)
    assert not step(series).found  # one sample before it: an odd first sample as much as a step
    assert first_sample(series).stands_out


def test_steady_noise_rarely_makes_a_step():
    from mountbench.analysis.drift import step

    rng = random.Random(11)
    found = sum(step([100 * rng.lognormvariate(0, 0.1) for _ in range(10)]).found for _ in range(200))
    assert found <= 200 * 0.07
