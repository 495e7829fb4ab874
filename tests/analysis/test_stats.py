import dataclasses
import math

import numpy as np
import pytest

from mountbench.analysis.stats import (
    Comparison,
    at_level,
    compare,
    geomean_interval,
    median_ci,
    outlier_indices,
    paired_compare,
    summarize,
)


def test_median_ci_reports_the_confidence_it_really_has():
    low, high, level = median_ci([3.0, 1.0, 2.0])
    assert (low, high) == (1.0, 3.0)
    assert level == pytest.approx(0.75)  # 1 - 2 * 0.5**3
    low, high, level = median_ci(list(range(1, 21)))
    assert level >= 0.95
    assert 1 < low < 10.5 < high < 20  # narrower than min..max with 20 samples


def test_median_ci_single_value_has_no_confidence():
    assert median_ci([5.0]) == (5.0, 5.0, 0.0)


def test_summarize():
    s = summarize([10.0, 12.0, 11.0, 50.0, 10.5, 11.5])
    assert s.n == 6
    assert s.median == 11.25
    assert s.min == 10.0 and s.max == 50.0
    assert s.mean == pytest.approx(17.5)
    assert s.outliers == (3,)
    assert s.cv > 0.5
    assert summarize([10.0, 12.0, 11.0, 50.0, 10.5]).outliers == ()  # five: too few to call one an outlier


def test_outliers_need_spread_and_three_values():
    assert outlier_indices([1.0, 1.0, 1.0, 9.0]) == ()  # MAD 0
    assert outlier_indices([1.0, 100.0]) == ()


def test_clear_difference_is_significant_with_interval_excluding_one():
    c = compare([100.0, 102.0, 98.0], [50.0, 51.0, 49.0])
    assert c.ratio == pytest.approx(0.5, rel=0.01)
    assert c.low < 0.5 < c.high < 1
    assert c.significant
    assert c.p_value < 0.05


def test_noise_is_not_a_winner():
    c = compare([100.0, 130.0, 80.0], [105.0, 90.0, 125.0])
    assert not c.significant
    assert c.low < 1 < c.high


def test_identical_constant_groups():
    same = compare([5.0, 5.0], [5.0, 5.0])
    assert same.ratio == 1 and not same.significant
    assert same.low < 1 < same.high  # an interval, not a point: zero spread is not certainty
    differ = compare([5.0, 5.0], [10.0, 10.0])
    assert differ.ratio == pytest.approx(2) and differ.significant


def test_no_ratio_for_zero_or_empty():
    assert compare([], [1.0]) is None
    assert compare([0.0, 1.0], [1.0, 2.0]) is None


def test_single_samples_have_a_ratio_but_no_interval():
    c = compare([2.0], [4.0])
    assert c.ratio == pytest.approx(2.0)
    assert math.isnan(c.low) and not c.significant


def test_peak_and_knee_along_a_sweep():
    from mountbench.analysis.stats import peak_and_knee

    # a curve that rises, plateaus and dips: optimum at its best median, knee where it first reaches 90 %
    assert peak_and_knee([10.0, 50.0, 91.0, 100.0, 95.0]) == (3, 2)
    assert peak_and_knee([10.0, 50.0, 90.0, 100.0]) == (3, 2)  # exactly 90 % counts
    assert peak_and_knee([100.0, 40.0, 100.0]) == (0, 0)  # a tie: the smaller value
    assert peak_and_knee([None, 5.5, None, 6.0]) == (3, 1)  # failed points are skipped, indices kept
    assert peak_and_knee([None, None]) is None and peak_and_knee([]) is None
    # lower is better (a latency sweep): the knee is the first value within best / 0.9
    assert peak_and_knee([9.0, 2.1, 2.0, 3.0], higher_is_better=False) == (2, 1)
    assert peak_and_knee([1.0, 2.0, 4.0], fraction=0.5) == (2, 1)


def test_clearly_best_needs_intervals_apart():
    from mountbench.analysis.stats import clearly_best

    assert clearly_best([(1.0, 2.0), (3.0, 4.0), (1.5, 2.9)], 1)
    assert not clearly_best([(1.0, 3.1), (3.0, 4.0)], 1)  # the other reaches into it
    assert clearly_best([(1.0, 3.1), None, (3.2, 4.0)], 2)  # a point without data does not count
    assert clearly_best([(1.0, 2.0), (3.0, 4.0)], 0, higher_is_better=False)
    assert not clearly_best([None, (3.0, 4.0)], 0)


# --- three verdicts (issue 23) -------------------------------------------------------------


def test_repeat_2_on_a_6x_gap_is_undecided_not_the_same():
    # two samples a side, 69k against 408k IOPS: the interval contains 1, which shows nothing
    found = compare([408e3 * 0.5, 408e3 * 1.5], [69e3, 69e3 * 1.3])
    assert found is not None and not found.significant
    assert found.verdict == "undecided"
    assert found.too_wide  # its ends are more than 100× apart


def test_an_interval_inside_the_precision_is_the_same():
    found = compare([1.0, 1.01, 0.99, 1.0], [1.0, 1.005, 0.995, 1.0])
    assert found is not None and found.verdict == "same" and not found.too_wide


def test_sameness_is_judged_at_the_given_precision():
    baseline, values = [1.0, 1.02, 0.98, 1.0], [1.03, 1.06, 1.0, 1.04]
    assert compare(baseline, values, precision=0.05).verdict == "undecided"
    assert compare(baseline, values, precision=0.10).verdict == "same"


def test_an_a_a_pair_with_noise_is_never_called_different_at_more_than_the_level():
    # A/A: the same distribution on both sides; three rounds each, many runs: at most ~5 % differ
    import random

    rng = random.Random(7)
    differ = 0
    runs = 2000
    for _ in range(runs):
        a = [rng.lognormvariate(0, 0.1) for _ in range(3)]
        b = [rng.lognormvariate(0, 0.1) for _ in range(3)]
        differ += compare(a, b).verdict == "differs"
    assert differ / runs <= 0.07


def test_one_sample_a_side_has_no_interval_verdict():
    assert compare([1.0], [2.0]).verdict == "no-interval"


def test_a_strict_level_on_few_noisy_samples_gives_a_finite_too_wide_interval():
    """Bonferroni over many comparisons at 1-2 degrees of freedom: the t quantile is huge; the
    interval's ends are clamped, never an OverflowError (show --metric lat-p99 crashed)."""
    from mountbench.analysis.stats import compare, family_level

    found = compare([1.0, 1e6], [2.0, 3e5], level=family_level(0.95, 40))
    assert found is not None and found.too_wide and math.isfinite(found.high) and found.low > 0


# --- zero spread is not certainty (issue 31) ---------------------------------------------------

BIN = 1 + 1 / 64  # one bin of fio's latency histogram, at its widest


@pytest.mark.parametrize("n", [2, 3])
def test_identical_samples_one_bin_apart_are_not_called_different(n):
    """Binned percentiles with two or three samples: each side identical, the sides one bin apart.
    The spread is below the resolution, not zero: no difference at 95 %, paired or not."""
    base, values = [100e-6] * n, [100e-6 * BIN] * n
    for found in (compare(base, values), paired_compare(list(zip(base, values, strict=True)))):
        assert found.verdict != "differs" and found.low < 1 < found.high
        assert found.high / found.low > 1.02  # a few per cent wide, never a point


def test_identical_samples_far_apart_still_differ():
    found = paired_compare([(100.0, 200.0)] * 3)
    assert found.verdict == "differs" and found.low > 1.8 and found.high < 2.2


def test_the_floor_is_continuous_and_leaves_real_spread_alone():
    exact = compare([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    almost = compare([1.0, 1.0, 1.0 + 1e-9], [1.0, 1.0, 1.0])
    assert almost.low == pytest.approx(exact.low) and almost.high == pytest.approx(exact.high)
    noisy = compare([100.0, 130.0, 80.0], [105.0, 90.0, 125.0])
    unfloored = compare([100.0, 130.0, 80.0], [105.0, 90.0, 125.0], min_spread=1e-12)
    assert (noisy.low, noisy.high) == (unfloored.low, unfloored.high)
    with pytest.raises(ValueError, match="zero spread is not certainty"):
        compare([1.0, 2.0], [1.0, 2.0], min_spread=0)


def test_identical_samples_are_the_same_with_an_interval_that_is_not_zero_wide():
    """The defect of the third wave: both sides' three samples identical gave a zero-width interval. The
    floor keeps it open (a few per cent); the fourth wave's fault was the opposite, that --repeat 3 could
    not call bit-identical samples the same. With the run's six comparisons moderated together (their
    spreads alike) and the run level added, they are shown within ±5 % at the first look."""
    from support.factories import make_run

    from mountbench.analysis.sequential import SAME, decide
    from mountbench.analysis.summary import summarize_runs

    run = make_run({(t, f"w{i}"): [100.0] * 3 for i in range(6) for t in ("a", "b")})
    run = dataclasses.replace(run, config=dataclasses.replace(run.config, until=0.05))
    assert {d.state for d in decide(run, 0.05)} == {SAME}
    comparison = summarize_runs([run]).rows[0].cells["b"].comparison
    assert comparison.verdict == "same" and 1.005 < comparison.high < 1.05


# --- paired: per-round ratios -------------------------------------------------------------------


def test_paired_ratio_is_the_geometric_mean_of_the_per_round_ratios():
    pairs = [(100.0, 110.0), (200.0, 240.0), (50.0, 52.0)]
    found = paired_compare(pairs)
    expected = math.exp(sum(math.log(v / b) for b, v in pairs) / 3)
    assert found.paired and found.n == 3 and found.df == 2
    assert found.ratio == pytest.approx(expected)
    logs = np.log([v / b for b, v in pairs])
    assert found.spread == pytest.approx(np.std(logs, ddof=1))
    assert found.se == pytest.approx(found.spread / math.sqrt(3))
    assert found.low < found.ratio < found.high
    assert not compare([b for b, _ in pairs], [v for _, v in pairs]).paired


def test_pairing_removes_what_hits_a_round():
    """The rounds differ 2× (a busy machine, a layout), the ratio within a round by 1 %: paired
    sees a 1.2× difference that the unpaired interval is far too wide to rank."""
    rng = np.random.default_rng(3)
    rounds = np.exp(rng.normal(0, 0.5, 5))
    base = 100 * rounds * np.exp(rng.normal(0, 0.01, 5))
    values = 120 * rounds * np.exp(rng.normal(0, 0.01, 5))
    paired = paired_compare(list(zip(base, values, strict=True)))
    unpaired = compare(list(base), list(values))
    assert paired.verdict == "differs" and 1.15 < paired.low < paired.high < 1.25
    assert unpaired.verdict == "undecided"


def test_paired_needs_two_rounds_and_positive_values():
    assert paired_compare([(1.0, 2.0)]).verdict == "no-interval"
    assert paired_compare([]) is None and paired_compare([(0.0, 1.0), (1.0, 1.0)]) is None


def test_at_level_recomputes_the_interval_from_the_estimate():
    found = paired_compare([(100.0, 104.0), (100.0, 99.0), (100.0, 103.0), (100.0, 101.0)])
    strict = at_level(found, 0.999)
    assert strict.ratio == found.ratio and strict.p_value == found.p_value and strict.level == 0.999
    assert strict.low < found.low and strict.high > found.high
    assert at_level(found, found.level) == found


def test_a_precise_comparison_is_undecided_but_known_to_the_precision():
    found = Comparison(1.03, 0.99, 1.07, 0.2, False, precision=0.05)
    assert found.verdict == "undecided" and found.precise
    assert not Comparison(1.0, 0.9, 1.1, 0.9, False, precision=0.05).precise  # wider than ±5 %
    assert not Comparison(1.0, 0.97, 1.03, 0.9, False, precision=0.05).precise  # the same, not precise
    assert not Comparison(1.2, 1.1, 1.3, 0.001, True).precise  # ranked


def test_a_single_target_interval_is_t_on_the_logs_with_the_floor():
    center, low, high = geomean_interval([100.0, 110.0, 90.0, 105.0], level=0.95)
    logs = np.log([100.0, 110.0, 90.0, 105.0])
    assert center == pytest.approx(math.exp(logs.mean()))
    half = 3.182446305284263 * np.std(logs, ddof=1) / 2  # t(3, 0.975)
    assert math.log(high / center) == pytest.approx(half) and math.log(center / low) == pytest.approx(half)
    flat = geomean_interval([5.0, 5.0, 5.0])
    assert flat[1] < 5.0 < flat[2]
    assert geomean_interval([5.0]) is None
