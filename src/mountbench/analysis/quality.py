"""Flags that change what a reader concludes from a cell, worked out from its samples.

Pure functions from a cell's values (in time order) to caveats:
- drift: the samples trend over the run (drift.trend); on the baseline it is the
  machine that drifted;
- a first sample far from the rest (a cold start, what --warmup is for);
- outliers, with the command that lists every sample;
- for a ratio: an undecided verdict (the interval contains 1 but is not within the
  precision) with what would decide it, and whether
  interleaving kept the ratio fair while the machine drifted (the per-round ratios
  show no trend) or the drift was too large for that.

A large coefficient of variation alone is not flagged: on a shared or virtual
machine nearly every cell has one, and the ± figure and the interval already show it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mountbench import model
from mountbench.analysis import drift, stats
from mountbench.analysis.metrics import MetricInfo
from mountbench.analysis.reach import Reach
from mountbench.analysis.stats import Comparison, Summary
from mountbench.model import Caveat
from mountbench.units import format_seconds, sig3


@dataclass(frozen=True)
class DriftTests:
    """A series' tests for a change over the run (analysis/drift.py): the first sample against the rest, a
    step at any sample, a trend; and the step and trend of the series without its first sample (what is
    said when the first is a cold start). Their p-values join the run's other cells' in one false-discovery
    control (:func:`discovery_threshold`), so that a run of many cells does not call drift by chance."""

    first: drift.FirstSample | None
    step: drift.Step | None
    trend: drift.Trend | None
    later_step: drift.Step | None = None
    later_trend: drift.Trend | None = None

    @property
    def p_values(self) -> list[float]:
        """The p-values that enter the run's false-discovery control."""
        found = [t.p_value for t in (self.first, self.step, self.trend) if t is not None]
        return [p for p in found if not math.isnan(p)]


def drift_tests(values: Sequence[float]) -> DriftTests:
    """``values`` in time order."""
    first = drift.first_sample(values)
    later = values[1:]
    return DriftTests(
        first, drift.step(values), drift.trend(values), drift.step(later) if first else None,
        drift.trend(later) if first else None,
    )  # fmt: skip


FDR = 0.05  # the false-discovery rate of the run's drift, step and cold-start flags


def discovery_threshold(p_values: Sequence[float], rate: float = FDR) -> float:
    """Benjamini and Hochberg (1995): the largest p-value p_(k) with p_(k) ≤ k/m · rate over the run's m tests
    (0 when none qualifies): flags at or below it keep the expected share of false ones among them at
    ``rate`` (under independence or positive dependence), where testing each at 5 % flagged drift in 28 % and
    a cold start in 29 % of a stationary run's cells (CV 10 %)."""
    ordered = sorted(p for p in p_values if not math.isnan(p))
    m = len(ordered)
    threshold = 0.0
    for k, p in enumerate(ordered, start=1):
        if p <= k / m * rate:
            threshold = p
    return threshold


def cell_caveats(
    summary: Summary,
    values: Sequence[float],
    metric: MetricInfo,
    *,
    baseline: bool,
    show_command: str,
    rounds: Sequence[int] = (),
    tests: DriftTests | None = None,
    threshold: float = drift.ALPHA,
) -> tuple[Caveat, ...]:
    """``values`` in time order (``rounds``: the round of each); ``show_command`` lists the run's samples;
    ``tests``: the cell's drift tests (made here when None); ``threshold``: the run's false-discovery threshold
    (discovery_threshold) the tests are judged at.

    A step anywhere (drift.step) is named with when and how big; otherwise a trend. A first
    sample that stands out is "a cold start, or a step from sample 2 on": one run cannot tell
    them apart, and a trend that only the first sample makes is not called drift."""
    found = []
    if summary.n < 3:
        found.append(
            Caveat(
                model.FEW_SAMPLES,
                "fewer than 3 samples: no useful interval; use --repeat 3 or more (or a larger --budget)",
            )
        )
    tests = tests or drift_tests(values)
    change = tests.step
    # a first sample that stands out because the level changed later belongs to the level before
    cold = (
        tests.first is not None
        and tests.first.stands_out_at(threshold)
        and not (change is not None and change.found_at(threshold))
    )
    trend, offset = tests.trend, 0
    if cold:  # a cold start is no trend and no step
        change, trend, offset = tests.later_step, tests.later_trend, 1
    if change is not None and change.found_at(threshold):
        found.append(_step_caveat(change, offset, rounds, metric, baseline, show_command))
    elif trend is not None and trend.drifts_at(threshold):
        found.append(_drift_caveat(trend, metric, baseline))
    if cold:
        assert tests.first is not None
        found.append(_first_caveat(tests.first, metric, show_command))
    if summary.outliers:
        found.append(
            Caveat(
                model.OUTLIERS,
                f"outlier samples (modified z-score > 3.5): '{show_command}' lists every sample with its time",
            )
        )
    return tuple(found)


def ratio_tests(target: Sequence[tuple[int, float]], base: Sequence[tuple[int, float]]) -> DriftTests:
    """The drift tests of a comparison's per-round ratios (rounds where both sides have a value)."""
    by_round = dict(base)
    paired = [value / by_round[r] for r, value in sorted(target) if by_round.get(r)]
    return DriftTests(None, drift.step(paired) if drift.trend(paired) else None, drift.trend(paired))


def ratio_caveats(
    comparison: Comparison | None,
    target: Sequence[tuple[int, float]],
    base: Sequence[tuple[int, float]],
    *,
    drifted: bool,
    baseline: str,
    shown: Shown | None = None,
    tests: DriftTests | None = None,
    threshold: float = drift.ALPHA,
) -> tuple[Caveat, ...]:
    """``target`` and ``base`` are (round, value) pairs; ``drifted``: either side drifts; ``tests``: the
    per-round ratios' drift tests (ratio_tests; made here when None), judged at ``threshold``."""
    found = []
    if comparison is not None and comparison.verdict == stats.UNDECIDED:
        found.append(undecided_caveat(comparison, shown))
    tests = tests or ratio_tests(target, base)
    trend, change = tests.trend, tests.step
    if trend is None:
        return tuple(found)
    if change is not None and change.found_at(threshold):
        found.append(
            Caveat(
                model.RATIO_DRIFT,
                f"drift too large for interleaving to cancel: the per-round ratio to {baseline} "
                f"{_moved(change.factor)} at a step from its round {change.index + 1} of {change.n} (change point "
                f"{_p(change.p_value)})",
            )
        )
    elif trend.drifts_at(threshold):
        found.append(
            Caveat(
                model.RATIO_DRIFT,
                f"drift too large for interleaving to cancel: the per-round ratio to {baseline} "
                f"{_moved(trend.factor)} over the run (trend {_p(trend.p_value)})",
            )
        )
    elif drifted:
        found.append(
            Caveat(
                model.RATIO_STEADY,
                f"the machine drifted during the run, but the per-round ratio to {baseline} shows no trend: "
                "interleaved rounds kept this comparison fair",
            )
        )
    return tuple(found)


@dataclass(frozen=True)
class Shown:
    """What an undecided comparison did show, and what deciding it would take (analysis/reach.py),
    with the names and costs its note speaks of."""

    reach: Reach | None
    target: str
    baseline: str
    per_round_s: float | None  # what one more round of the comparison costs (both sides' samples)
    adaptive: bool  # the run already added rounds (--until, a budget): advising --until again helps nothing
    higher_is_better: bool = True  # the metric's direction: the note's interval is said as the tables say it


def level_text(level: float) -> str:
    """A confidence level as every format writes it: '95%', '99.2%', '99.98%' (never '100%')."""
    for digits in range(3, 8):
        text = f"{level * 100:.{digits}g}"
        if float(text) < 100:
            return f"{text}%"
    return f"{level * 100:.8g}%"


def _what_it_would_take(shown: Shown, precision: float, too_wide: bool = False) -> str:
    """'what it shows: b is within 0.75–1.33× of a (no difference beyond 1.33× either way); ±5% would take
    about 9–14 rounds at the spread measured (11 more, about 2m40s), beyond --max-repeat 12: …'. The rounds
    are a range: at the spread measured, and at its upper 80 % bound (enough in about 80 % of runs); the
    command it names is counted at the level that command would test at (analysis/reach.py)."""
    found = shown.reach
    if found is None:
        return "more rounds decide it (one round a side measures no spread)"
    if too_wide or found.bound > stats.TOO_WIDE_SPAN:  # too wide to rank: no digits, as every format says it
        said = "what it shows: nothing yet"
    else:
        bound = sig3(found.bound)
        said = (
            f"what it shows: {shown.target} is within {sig3(found.low)}–{bound}× of {shown.baseline} (no "
            f"difference beyond {bound}× either way)"
        )
    wanted = f"±{precision * 100:g}%"
    if found.run_level_bound:
        return (
            f"{said}; {wanted} is out of reach in any number of rounds: what a run's results move by between "
            "runs (its run level, in the run facts) is wider than that alone; 'mountbench calibrate' measures it "
            "on this storage"
        )
    if found.rounds is None:
        return f"{said}; at the spread measured, {wanted} is out of reach in any number of rounds here"
    sure = found.sure_rounds if found.sure_rounds is not None else found.rounds
    cost = ""
    if shown.per_round_s and found.more:
        cost = f", about {format_seconds(found.more * shown.per_round_s)}"
    more = f" ({found.more} more{cost})" if found.more is not None else ""
    need = f"{wanted} would take about {found.range_text} at the spread measured{more}"
    if not found.within_max_repeat:
        # with no upper bound of the spread (too few degrees of freedom), the rounds are its estimate's alone
        odds = "in about 80 % of runs" if found.sure_rounds is not None else "about half the time"
        return (
            f"{said}; {need}, beyond --max-repeat {found.max_repeat}: out of reach in this run "
            f"(--until {precision * 100:g}% --max-repeat {sure} would get there {odds})"
        )
    if shown.adaptive:
        return f"{said}; {need}, within --max-repeat {found.max_repeat}: a larger --budget gives them time"
    return f"{said}; {need}: --until {precision * 100:g}% adds them"


def undecided_caveat(comparison: Comparison, shown: Shown | None = None) -> Caveat:
    """Neither a difference (the interval contains 1) nor the same (it reaches beyond ±precision);
    a precise one (no wider than ±precision: Comparison.precise) is said to be known to it, since
    --until at that precision stops there and advising it would send the reader in a circle. With
    ``shown``, the note says the bound the interval did establish and what ±precision would take."""
    precision = f"{comparison.precision * 100:g}%"
    # the level is the family's, stated once in every format's legend (analysis/family.py): never per note
    low, high = comparison.low, comparison.high
    if shown is None:
        direction = "target ÷ baseline"
    elif shown.higher_is_better:
        direction = f"{shown.target} ÷ {shown.baseline}"
    else:  # lower is better (time, latency): said as speed, the way the tables say it
        low, high = (1 / high if high > 0 else math.inf), (1 / low if low > 0 else math.inf)
        direction = f"{shown.target}'s speed ÷ {shown.baseline}'s"
    shown_text = f"its CI ({sig3(low)}–{sig3(high)}×, {direction})"
    if comparison.precise:
        return Caveat(
            model.WIDE_RATIO,
            f"known to ±{precision}: {shown_text} is no wider than ±{precision} but contains 1 and reaches beyond "
            f"±{precision} on one side, so neither a difference nor sameness within ±{precision} is shown; a finer "
            f"precision (--until {comparison.precision * 50:g}%) adds the rounds that would narrow it",
        )
    if comparison.too_wide:
        how = f"its CI spans more than {stats.TOO_WIDE_SPAN:g}×: too wide to rank"
    else:
        how = f"{shown_text} contains 1 but reaches beyond ±{precision}"
    if shown is None:
        then = (
            f"more rounds decide it (--until {precision} adds rounds until it is decided, up to --max-repeat, and "
            "--budget gives them time; or --repeat N)"
        )
    else:
        then = _what_it_would_take(shown, comparison.precision, comparison.too_wide)
    return Caveat(model.WIDE_RATIO, f"undecided: {how}, so neither a difference nor sameness is shown; {then}")


def _drift_caveat(trend: drift.Trend, metric: MetricInfo, baseline: bool) -> Caveat:
    later_better = (trend.end > trend.start) == metric.higher_is_better
    how = f"samples {_moved(trend.factor)} over the run ({'better' if later_better else 'worse'} later; trend "
    how += f"{_p(trend.p_value)})"
    if baseline:
        return Caveat(model.MACHINE_DRIFT, f"the machine drifted: the baseline's {how}")
    return Caveat(model.DRIFT, f"drift: {how}; its median depends on when it was measured")


def _step_caveat(
    change: drift.Step, offset: int, rounds: Sequence[int], metric: MetricInfo, baseline: bool, show: str
) -> Caveat:
    """'drift: samples fell 6.00× at a step from sample 5 of 10 (round 5; ...)'."""
    index = change.index + offset  # in the cell's own samples
    n = change.n + offset
    at = f"sample {index + 1} of {n}" + (f", round {rounds[index] + 1}" if len(rounds) == n else "")
    later_better = (change.after > change.before) == metric.higher_is_better
    how = (
        f"samples {_moved(change.factor)} at a step from {at} ({'better' if later_better else 'worse'} later; "
        f"change point {_p(change.p_value)}; '{show}' shows the timeline)"
    )
    if baseline:
        return Caveat(model.MACHINE_DRIFT, f"the machine drifted: the baseline's {how}")
    return Caveat(model.DRIFT, f"drift: {how}; its median depends on when it was measured")


def _first_caveat(first: drift.FirstSample, metric: MetricInfo, show: str) -> Caveat:
    higher = first.ratio > 1
    better = higher == metric.higher_is_better
    percent = abs(first.ratio - 1) * 100
    return Caveat(
        model.FIRST_SAMPLE,
        f"the first sample was {percent:.0f}% {'higher' if higher else 'lower'} ({'better' if better else 'worse'}) "
        f"than the rest: a cold start, or a step from sample 2 on (one run cannot tell them apart; '{show}' "
        "shows the timeline, and the other cells' first samples too); --warmup 1 runs a round first and throws "
        "it away",
    )


def _moved(factor: float) -> str:
    """'rose 3.90×' or 'fell 2.10×'; 'changed' when the size cannot be stated."""
    if math.isnan(factor) or factor <= 0:
        return "changed"
    if factor >= 1:
        return f"rose {sig3(factor)}×"
    return f"fell {sig3(1 / factor)}×"


def _p(p_value: float) -> str:
    """'p = 0.012', 'p < 0.001': never scientific notation."""
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.2g}"
