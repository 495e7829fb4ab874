"""The plan of every chart a document has, drawn from a Report: the report's own (bar_charts.py:
bars per metric, and every workload as small multiples for the page; ratio_chart.py: each
target against the baseline) and each section's (sections/), and each chart rendered for a
file next to a Markdown document.

Every chart is matplotlib (Agg; PNG and SVG). Legends sit outside the plot, never over data;
titles wrap to the figure; nothing is clipped (tests render every chart and check every
text's bounding box against the figure and the others). Figures are built with the object
API (matplotlib.figure.Figure) and the chart kit (chartkit.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from matplotlib.figure import Figure

from mountbench.report.bar_charts import bars_figure, bars_title, panels_figure
from mountbench.report.chartkeys import Chart, bars_key
from mountbench.report.chartkit import NARROW_IN, render_all
from mountbench.report.model import Report
from mountbench.report.ratio_chart import ratio_figure, ratio_title
from mountbench.report.sections import SECTIONS


def plan_charts(report: Report) -> list[Chart]:
    """Every chart the report has, in the order the documents show them: the report's own
    (bars per metric for Markdown's tables, all of them as one chart of small multiples for
    the page, each target against the baseline), then each section's."""
    groups = [group for group in report.groups if any(c.summary for row in group.rows for c in row.cells.values())]
    charts = [
        Chart(
            bars_key(group),
            "bars",
            bars_title(group),
            _bind(bars_figure, report, group),
            _bind(bars_figure, report, group, NARROW_IN),
        )
        for group in groups
    ]
    if len(groups) > 1:
        rows = [row for group in groups for row in group.rows]
        charts.append(
            Chart(
                OVERVIEW,
                "overview",
                OVERVIEW_TITLE,
                _bind(panels_figure, report, rows, OVERVIEW_TITLE),
                _bind(panels_figure, report, rows, OVERVIEW_TITLE, NARROW_IN),
            )
        )
    if any(c.comparison for row in report.summary.rows for c in row.cells.values()):
        charts.append(
            Chart(
                "ratio",
                "ratio",
                ratio_title(report),
                _bind(ratio_figure, report),
                _bind(ratio_figure, report, NARROW_IN),
            )
        )
    return charts + [chart for section in SECTIONS for chart in section.charts(report)]


OVERVIEW = "bars-all"
OVERVIEW_TITLE = "Every workload and target (median; each panel its own linear scale from 0)"


def _bind(function: Callable[..., Figure], *args: object) -> Callable[[], Figure]:
    return lambda: function(*args)


@dataclass(frozen=True)
class ChartFile:
    """One chart rendered for a file next to a document: ``name`` is ``<stem>-<key>.<fmt>``."""

    chart: Chart
    name: str
    data: bytes


def chart_files(report: Report, stem: str, fmt: str = "png") -> list[ChartFile]:
    """Every chart Markdown shows, rendered as ``<stem>-<key>.<fmt>``; not the page's chart of
    every workload (Markdown shows each metric's under its table). The caller writes them
    (cli/report.py, through host/outputs.py)."""
    charts = [chart for chart in plan_charts(report) if chart.kind != "overview"]
    rendered = render_all([(chart, fmt, False) for chart in charts])
    return [ChartFile(chart, f"{stem}-{chart.key}.{fmt}", data) for chart, data in zip(charts, rendered, strict=True)]


def every_chart_file(report: Report, formats: tuple[str, ...] = ("png", "svg")) -> list[ChartFile]:
    """Every chart the report has (the page's small multiples too), each in every format, named
    ``<key>.<fmt>``: what ``report --charts DIR`` writes, for any report format (issue 37: like
    fio-plot, each chart as an image of its own)."""
    jobs = [(chart, fmt, False) for chart in plan_charts(report) for fmt in formats]
    return [
        ChartFile(chart, f"{chart.key}.{fmt}", data)
        for (chart, fmt, _), data in zip(jobs, render_all(jobs), strict=True)
    ]
