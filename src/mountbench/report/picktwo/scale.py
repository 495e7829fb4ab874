"""The verdict scale of pick two, shared by the QEMU lab's section and the cloud lab's: what
each verdict is called, marked and coloured, how a factor from the fastest mount is judged,
the worst of several verdicts, and a verdict with what it stands on as one table cell."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from mountbench.probe import render as probe_render
from mountbench.report.tables import CellView, Line

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
