"""Verdict sentences, stated as the studies did:
"virtiofs is 5.8x faster than 9p at extracting the tree, 95% CI 5.1–6.4x".

The ratio in a Comparison is target / baseline of the metric itself; whether a
ratio above 1 is good depends on the metric (IOPS: yes; latency: no), so the
factor is turned around when needed and always reads as "N x faster/slower".
When the interval contains 1 the sentence says the two are the same within noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mountbench.metrics import MetricInfo
from mountbench.stats import Comparison
from mountbench.summary import Row, RunSummary

# Speed-like units read as faster/slower; the rest (CPU %, bytes) as better/worse.
_SPEED_UNITS = {"IOPS", "B/s", "s", "1/s"}
# What measured processes spent (watch.py): "uses 3.1x more host CPU than"
_COST_NOUNS = {"cpu_s": "CPU", "cpu_user_s": "CPU", "cpu_sys_s": "CPU", "cpu_s_per_gib": "CPU per GiB",
               "uss_peak": "memory"}  # fmt: skip


@dataclass(frozen=True)
class Verdict:
    target: str
    baseline: str
    workload: str
    metric: str
    text: str
    significant: bool
    better: bool | None  # None when within noise


def verdicts(summary: RunSummary) -> list[Verdict]:
    """One verdict per (row, non-baseline target) that has a ratio."""
    found = []
    for row in summary.rows:
        for label in summary.targets:
            comparison = row.cells[label].comparison
            if label == summary.baseline or comparison is None:
                continue
            found.append(verdict(row, label, summary.baseline, comparison))
    return found


def verdict(row: Row, target: str, baseline: str, comparison: Comparison) -> Verdict:
    subject = f"{target}"
    what = f"at {row.title} ({row.metric.label})"
    has_ci = not math.isnan(comparison.low)
    if has_ci and not comparison.significant:
        text = (
            f"{subject} ≈ {baseline} {what}: the same within noise "
            f"(×{_factor(comparison.ratio)}, 95% CI {_factor(comparison.low)}–{_factor(comparison.high)}x)"
        )
        return Verdict(target, baseline, row.workload, row.metric.name, text, False, None)
    better, factor, low, high = oriented(comparison, row.metric)
    interval = f"95% CI {_factor(low)}–{_factor(high)}x" if has_ci else "no confidence interval (too few samples)"
    text = f"{subject} {_phrase(row.metric, better, _factor(factor))} {baseline} {what}, {interval}"
    return Verdict(target, baseline, row.workload, row.metric.name, text, has_ci, better)


def oriented(comparison: Comparison, metric: MetricInfo) -> tuple[bool, float, float, float]:
    """(target is better, factor ≥ 1, its interval) for a ratio target/baseline."""
    ratio, low, high = comparison.ratio, comparison.low, comparison.high
    better = ratio >= 1 if metric.higher_is_better else ratio <= 1
    if ratio >= 1:
        return better, ratio, low, high
    return better, 1 / ratio, _inverse(high), _inverse(low)


def _inverse(value: float) -> float:
    return math.nan if math.isnan(value) or value == 0 else 1 / value


def _phrase(metric: MetricInfo, better: bool, factor: str) -> str:
    cost = _COST_NOUNS.get(metric.name.partition(".")[2])
    if cost:  # host.cpu_s, nginx.uss_peak, ...: what a sample cost, not how fast it went
        return f"uses {factor}x {'less' if better else 'more'} {cost} than"
    if metric.unit in _SPEED_UNITS:
        return f"is {factor}x {'faster' if better else 'slower'} than"
    if metric.unit == "%":
        return f"uses {factor}x {'less' if better else 'more'} CPU than"
    return f"is {factor}x {'better' if better else 'worse'} than"


def _factor(value: float) -> str:
    """5.8, 1.28, 23: two decimals under 2, one under 10, none above."""
    if math.isnan(value) or math.isinf(value):
        return "?"
    if value < 2:
        return f"{value:.2f}"
    if value < 10:
        return f"{value:.1f}"
    return f"{value:.0f}"
