"""Latency percentiles (study S4): for workloads that ask for the percentile view (a long
percentile_list), or for every workload when --metric names a percentile, a table per
workload and direction (percentiles down, targets across) and a chart of latency on a
'nines' axis per target. The curves are content.percentile_curves'."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from mountbench.blocks.parts import Block, Chapter, Figure, Heading, Table
from mountbench.blocks.table import CellView, TableView, note_links
from mountbench.report.chartkeys import Chart, slug
from mountbench.report.model import PercentileCurve, Report, column_heading
from mountbench.report.sections.section import Options, nothing
from mountbench.units import format_seconds

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TITLE = "Latency percentiles"


def key(curve: PercentileCurve) -> str:
    return f"percentiles-{slug(curve.workload)}-{curve.direction}"


def chart_title(curve: PercentileCurve) -> str:
    return f"{curve.title}: {curve.direction} latency percentiles per target (lower is better)"


def tables(report: Report) -> list[TableView]:
    targets = report.summary.targets
    views = []
    for index, curve in enumerate(report.percentiles):
        headers = ["percentile", *(column_heading(report, t) for t in targets)]
        header_links = [[]] + [note_links(report.notes, report.column_marks(curve.rows, t)) for t in targets]
        rows = []
        for percentile, row in zip(curve.percentiles, curve.rows, strict=True):
            cells = [CellView(f"p{percentile:g}", repr(percentile))]
            for t in targets:
                summary = row.cells[t].summary
                cells.append(
                    CellView(format_seconds(summary.median), repr(summary.median)) if summary else CellView("–")
                )
            rows.append(cells)
        heading = f"{curve.title}: {curve.direction} latency (lower is better)"
        views.append(TableView(f"percentiles-{index + 1}", heading, headers, rows, header_links=header_links))
    return views


def chapters(report: Report, options: Options) -> list[Chapter]:
    """Per workload and direction: percentiles down, targets across, and the curve."""
    if not report.percentiles:
        return []
    blocks: list[Block] = []
    for curve, view in zip(report.percentiles, tables(report), strict=True):
        alt = f"{curve.title}: {curve.direction} latency percentiles"
        blocks += [Heading(view.heading), Table(view), Figure(key(curve), alt)]
    return [Chapter("percentiles", TITLE, tuple(blocks))]


def charts(report: Report) -> list[Chart]:
    return [
        Chart(key(curve), "percentiles", chart_title(curve), lambda curve=curve: percentile_figure(report, curve))
        for curve in report.percentiles
    ]


def _nines(percentile: float) -> float:
    """Position of a percentile on a 'nines' axis: p90 → 1, p99 → 2, p99.9 → 3."""
    return -math.log10(1 - min(percentile, 99.9999) / 100)


def percentile_figure(report: Report, curve: PercentileCurve) -> Figure:
    from matplotlib.ticker import FixedLocator, FuncFormatter

    from mountbench.report.chartkit import (
        COLOURS,
        LINESTYLES,
        MARKERS,
        axis_unit,
        fit_titles,
        interval_phrase,
        legend_label,
        legend_outside,
        new_figure,
        notes_footer,
        value_axis,
    )  # fmt: skip

    targets = report.summary.targets
    values = [r.cells[t].summary.median for r in curve.rows for t in targets if r.cells[t].summary]
    divisor, unit = axis_unit(curve.rows[0].metric, values)
    figure, ax = new_figure(7.2, 4.6)
    xs = [_nines(p) for p in curve.percentiles]
    used: set[int] = set()
    for i, label in enumerate(targets):
        points = [(x, r.cells[label].summary) for x, r in zip(xs, curve.rows, strict=True) if r.cells[label].summary]
        if not points:
            continue
        px = [x for x, _ in points]
        ax.plot(
            px,
            [s.median / divisor for _, s in points],
            label=legend_label(report, label),
            color=COLOURS[i % len(COLOURS)],
            marker=MARKERS[i % len(MARKERS)],
            markersize=4,
            linestyle=LINESTYLES[i % len(LINESTYLES)],
            linewidth=1.4,
        )
        ax.fill_between(
            px,
            [s.ci_low / divisor for _, s in points],
            [s.ci_high / divisor for _, s in points],
            color=COLOURS[i % len(COLOURS)],
            alpha=0.15,
            linewidth=0,
        )
        for row in curve.rows:
            used |= set(report.measurement_marks(row.cells[label]))
    lowest, highest = min(curve.percentiles), max(curve.percentiles)
    ticks = [p for p in (1, 50, 90, 99, 99.9, 99.99, 99.999) if lowest <= p <= highest]
    ax.xaxis.set_major_locator(FixedLocator([_nines(p) for p in ticks]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _percentile_label(v)))
    ax.set_xlabel("percentile (nines scale: each step right is ten times rarer)")
    value_axis(ax.yaxis, ax.set_yscale, curve.rows[0].metric, unit, True)
    ax.set_ylabel(f"{curve.direction} latency ({unit}, log scale)")
    ax.grid(alpha=0.3, which="both")
    legend_outside(figure, ax, len(targets))
    levels = sorted({r.cells[t].summary.ci_level for r in curve.rows for t in targets if r.cells[t].summary})
    fit_titles(
        figure,
        ax,
        chart_title(curve),
        f"line: median over samples at each percentile; band: {interval_phrase(levels)}",
    )
    notes_footer(figure, report, used)
    return figure


def _percentile_label(position: float) -> str:
    percentile = 100 * (1 - 10 ** (-position))
    return f"p{percentile:.4g}"


screen = exports = nothing  # parts this section does not have
page_charts = nothing  # the page draws no chart of its own here
