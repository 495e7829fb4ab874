"""The one performance judge of pick two, for every lab: each workload's headline figure of a row
(a mount) against a reference (the fastest of the lab's mounts, or the run's baseline), judged from
the run's intervals (scale.slower_than and scale.interval_verdict: good when the interval shows it
within 2×, poor when it shows it beyond 10×, fair otherwise). A row's performance is the worst of
its workloads'."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from mountbench.analysis.summary import Row
from mountbench.report.cells import format_value
from mountbench.report.model import Report
from mountbench.report.picktwo.rows import Measured
from mountbench.report.picktwo.scale import interval_verdict, slower_than


def headline_rows(report: Report) -> list[Row]:
    """Each workload's first (headline) summary row."""
    seen: dict[str, Row] = {}
    for row in report.summary.rows:
        seen.setdefault(row.workload, row)
    return list(seen.values())


def medians(row: Row, labels: Sequence[str]) -> dict[str, float]:
    """The rows' labels that have a figure on ``row``, with it."""
    return {label: c.summary.median for label in labels
            if (c := row.cells.get(label)) is not None and c.summary is not None and c.summary.median > 0}  # fmt: skip


def fastest(row: Row, figures: Mapping[str, float]) -> str:
    return (max if row.metric.higher_is_better else min)(figures, key=lambda label: figures[label])


def span(factor: float, near: float, far: float) -> str:
    """' (1.80×, 1.60–2.10×)': how many times slower, with its interval; '' when it is no slower."""
    if far <= 1.0:
        return ""
    return f" ({factor:.3g}×, {max(near, 0):.3g}–{far:.3g}×)"


def judge_row(
    report: Report,
    row: Row,
    labels: Sequence[str],
    reference: str | None,
    phase: str = "",
    beside: Callable[[str], str] = lambda _label: "",
) -> dict[str, Measured]:
    """Each label's figure on ``row`` against ``reference`` (None: the run's baseline), judged from the
    run's intervals: 'random-read: cold 120 IOPS (8.1×, 6.2–10.5×)' and its verdict; a label with no
    figure failed (poor) or was not measured. ``phase`` says which figure it is; ``beside`` adds what
    is shown next to it, unjudged (a warm figure)."""
    figures = medians(row, labels)
    found = {}
    for label in labels:
        if label not in figures:
            verdict = "poor" if label in row.cells else "not measured"
            found[label] = Measured(row.workload, f"{row.workload}: failed", verdict)
            continue
        shown = format_value(figures[label], row.metric)
        cell = row.cells[label]
        against = slower_than(row, label, report.summary.baseline, reference)
        if against is None:
            text = f"{row.workload}: {phase}{shown} (no interval){beside(label)}"  # a warm figure even so
            found[label] = Measured(row.workload, text, "not measured", figures[label], row.metric.unit,
                                    report.measurement_marks(cell))  # fmt: skip
            continue
        factor, near, far = against
        text = f"{row.workload}: {phase}{shown}{span(factor, near, far)}{beside(label)}"
        found[label] = Measured(row.workload, text, interval_verdict(near, far), figures[label], row.metric.unit,
                                report.measurement_marks(cell))  # fmt: skip
    return found
