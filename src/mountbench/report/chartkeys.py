"""Chart names and axis labels the documents need without drawing anything: Markdown
links to chart files by these keys, so it must not pay for importing matplotlib."""

from __future__ import annotations

import re

from mountbench.report.content import MetricGroup, PercentileCurve, Sweep, SweepGrid


def bars_key(group: MetricGroup) -> str:
    return f"bars-{_slug(group.metric.name)}"


def percentile_key(curve: PercentileCurve) -> str:
    return f"percentiles-{_slug(curve.workload)}-{curve.direction}"


def sweep_key(index: int, sweep: Sweep) -> str:
    """``index`` counts sweeps from 1, in report order."""
    return f"sweep-{index}-{_slug(sweep.metric.name)}"


def grid_key(index: int, grid: SweepGrid) -> str:
    """``index`` counts grids from 1, in report order."""
    return f"grid-{index}-{_slug(grid.metric.name)}"


def block_label(size: float) -> str:
    """4096 → 4k, 1048576 → 1M (fio's binary suffixes)."""
    for power, suffix in ((3, "G"), (2, "M"), (1, "k")):
        if size >= 1024**power:
            return f"{size / 1024**power:g}{suffix}"
    return f"{size:g}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "chart"
