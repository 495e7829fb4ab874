"""Text for one table cell and the footnotes it carries; shared by every format.

One formatter per unit, and one unit per metric: CPU per GiB moved is always seconds of CPU per
GiB ("3310 s/GiB", "0.800 s/GiB"), in the tables of every format, in the charts' labels and as the
summary grid's section unit (grid.py shows the same digits under "s/GiB"), as the CSV headers
name it (``[s/GiB]``); never a duration such as "55m07s/GiB" next to "3310" elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mountbench.analysis.metrics import MetricInfo
from mountbench.analysis.summary import Cell
from mountbench.units import format_bytes, format_count, format_rate, format_seconds, sig3

PER_GIB = "s/GiB"


def format_value(value: float, info: MetricInfo) -> str:
    if info.unit == "IOPS":
        return f"{format_count(value)} IOPS"
    if info.unit == "B/s":
        return format_rate(value)
    if info.unit == "B":
        return format_bytes(value)
    if info.unit == PER_GIB:
        return f"{sig3(value)} {PER_GIB}"
    if info.unit == "s":
        return format_seconds(value)
    if info.unit == "%":
        return f"{value:.1f}%"
    if info.unit == "1/s":
        return f"{format_count(value)}/s"
    return format_count(value)


def format_spread(cell: Cell) -> str:
    if cell.summary is None or cell.summary.n < 2:
        return ""
    return f"±{cell.summary.cv:.0%}"


@dataclass
class Footnotes:
    """Caveats and errors numbered in order of first appearance."""

    texts: list[str]

    @classmethod
    def empty(cls) -> Footnotes:
        return cls([])

    def mark(self, text: str) -> int:
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text) + 1

    def marks(self, cell: Cell, skip: Sequence[str] = ()) -> list[int]:
        numbers = [self.mark(c.text) for c in cell.caveats if c.text not in skip]
        numbers += [self.mark(f"failed on {cell.target}: {error}") for error in cell.errors]
        return sorted(set(numbers))
