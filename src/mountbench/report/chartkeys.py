"""A chart as the documents know it, without drawing anything: its key, kind, title and
how to draw it. Markdown links to chart files by key, so it must not pay for importing
matplotlib; the drawing (chartkit.py, charts.py, the sections' charts) happens only when
``draw`` is called."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from mountbench.report.model import MetricGroup


@dataclass(frozen=True)
class Chart:
    key: str  # unique, file-name safe
    kind: str  # bars | overview | ratio | percentiles | sweep | grid | cost | scaling | pick-two | series
    title: str  # what was measured, also the alt text
    draw: Callable[[], Figure]
    narrow: Callable[[], Figure] | None = None  # drawn for a phone's width (the page shows it there), if any


def bars_key(group: MetricGroup) -> str:
    return f"bars-{slug(group.metric.name)}"


def slug(text: str, empty: str = "chart") -> str:
    """File-name safe: 'read.lat_p99' -> 'read-lat-p99' (``empty`` when nothing is left)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or empty
