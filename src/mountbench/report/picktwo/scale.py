"""The verdict scale of pick two, shared by the QEMU lab's section and the cloud lab's: what
each verdict is called, marked and coloured, how a factor from the fastest mount is judged,
the worst of several verdicts, and a verdict with what it stands on as one table cell."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from mountbench.analysis.summary import Row
from mountbench.blocks.table import CellView, Line
from mountbench.probe import render as probe_render

Verdict = Literal["good", "fair", "poor", "data loss", "not shared", "not measured"]
MARK: dict[str, str] = {
    "good": "✓",
    "fair": "⚠",
    "poor": "✗",
    "data loss": "‼",
    "not shared": "–",
    "not measured": "?",
}
STYLE: dict[str, str] = {  # the terminal's
    "good": "green",
    "fair": "yellow",
    "poor": "red",
    "data loss": "bold white on red",
    "not shared": "dim",
    "not measured": "magenta",
}
RANK: dict[str, int] = {"data loss": 0, "poor": 1, "fair": 2, "good": 3}
GOOD_WITHIN = 2.0  # performance: within this factor of the fastest mount is good
FAIR_WITHIN = 10.0  # ... within this factor fair; further off poor
PROMPT_MS = probe_render.PROMPT_MS  # coherence: every change shown within this is good
LEGEND = "✓ good · ⚠ fair · ✗ poor · ‼ data loss"


def factor_verdict(factor: float) -> Verdict:
    """How far from the fastest mount (a factor ≥ 1)."""
    if factor <= GOOD_WITHIN:
        return "good"
    if factor <= FAIR_WITHIN:
        return "fair"
    return "poor"


def worst(*verdicts: str) -> Verdict:
    """The worst measured verdict; without one, 'not shared' when a part is not shared, else
    'not measured'."""
    measured = [v for v in verdicts if v in RANK]
    if not measured:
        return "not shared" if "not shared" in verdicts else "not measured"
    return min(measured, key=lambda v: RANK[v])  # type: ignore[return-value]


def marked(verdict: str) -> str:
    """'✓ good'; a word off the scale ('–', 'the baseline') as it is."""
    return f"{MARK[verdict]} {verdict}" if verdict in MARK else verdict


def verdict_cell(verdict: str, lines: Sequence[Line] = ()) -> CellView:
    """A property's cell: its verdict, bold and coloured, and what it stands on under it
    (dim; bold red under data loss). A word off the scale ('–') stays plain."""
    style = "dim" if verdict != "data loss" else "bold red"
    return CellView(
        marked(verdict),
        classes=f"v-{verdict.replace(' ', '-')}",
        style=STYLE.get(verdict, "dim"),
        lines=[Line(line.text, line.links, style) for line in lines],
        strong=verdict in MARK,
    )


def interval_verdict(near: float, far: float) -> Verdict:
    """How far from the reference, judged from the interval of the factor (≥ 1 means that many times slower;
    ``near`` its better end, ``far`` its worse one): good only when the interval shows it within GOOD_WITHIN,
    poor only when it shows it beyond FAIR_WITHIN, fair otherwise. Point medians flipped a mount between
    'performance' and 'none of the three' from one identical run to the next (issue 46); an interval that
    straddles a boundary says fair, run after run."""
    if far <= GOOD_WITHIN:
        return "good"
    if near > FAIR_WITHIN:
        return "poor"
    return "fair"


def slower_than(row: Row, label: str, baseline: str, reference: str | None = None) -> tuple[float, float, float] | None:
    """(factor, near end, far end) of how many times slower ``label`` is than ``reference`` on ``row`` (the
    baseline when None), from the run's one family of comparisons (analysis/family.py): the cells' intervals
    against the baseline, the reference's own estimate taken as it is. None without a comparison."""
    speed = _speed(row, label, baseline)
    ref = _speed(row, reference, baseline) if reference is not None else (1.0, 1.0, 1.0)
    if speed is None or ref is None:
        return None
    point, low, high = speed
    return ref[0] / point, ref[0] / high, ref[0] / low


def _speed(row: Row, label: str, baseline: str) -> tuple[float, float, float] | None:
    """(speed ratio, low, high) of ``label`` against the baseline on ``row`` (above 1: faster); (1, 1, 1) for
    the baseline itself."""
    cell = row.cells.get(label)
    if cell is None or cell.summary is None:
        return None
    if label == baseline:
        return 1.0, 1.0, 1.0
    comparison = cell.comparison
    if comparison is None or not comparison.has_interval or comparison.low <= 0:
        return None
    if row.metric.higher_is_better:
        return comparison.ratio, comparison.low, comparison.high
    return 1 / comparison.ratio, 1 / comparison.high, 1 / comparison.low
