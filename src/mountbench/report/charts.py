"""The report's own charts (matplotlib, Agg, PNG and SVG), drawn from a Report, and the
plan of every chart a document has (these and each section's, sections/).

- bars: one chart per metric, a horizontal bar per workload and target with its value
  written at its end, one colour and hatch per target (readable in black and white),
  error bars = the median's interval (the subtitle says which), a log axis when the
  values span more than 10×;
- ratio: every comparison with the baseline oriented so that right is always better
  ("6.20× slower" reaches left whatever the metric's direction), 95% CI, faded for
  "≈ same" and "undecided".

Legends sit outside the plot, never over data; titles wrap to the figure; nothing is
clipped (tests render every chart and check every text's bounding box against the
figure and the others). Measurement caveats ([n], same numbers as the tables) sit on
the bars they affect and are spelled out under the chart. Figures are built with the
object API (matplotlib.figure.Figure) and the chart kit (chartkit.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import matplotlib.colors
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from mountbench.analysis.metrics import MetricInfo
from mountbench.analysis.summary import Cell, Row
from mountbench.errors import UsageError
from mountbench.report.cells import format_value
from mountbench.report.chartkeys import Chart, bars_key
from mountbench.report.chartkit import (
    COLOURS,
    HATCHES,
    axis_unit,
    fit_titles,
    interval_phrase,
    legend_label,
    legend_outside,
    new_figure,
    notes_footer,
    render,
    spans_more_than,
    wrap,
)
from mountbench.report.content import MetricGroup, Report
from mountbench.report.phrasing import SAME, UNDECIDED, UNKNOWN, cell_standing, sig3, words
from mountbench.report.sections import SECTIONS
from mountbench.units import format_count

BAR_LOG_SPAN = 10.0  # bar charts: a log axis when the values span more than this


def plan_charts(report: Report) -> list[Chart]:
    """Every chart the report has, in the order the documents show them: the report's own
    (bars per metric, each target against the baseline), then each section's."""
    charts = [
        Chart(bars_key(group), "bars", _bars_title(group), _bind(bars_figure, report, group))
        for group in report.groups
        if any(c.summary for row in group.rows for c in row.cells.values())
    ]
    if any(c.comparison for row in report.summary.rows for c in row.cells.values()):
        charts.append(Chart("ratio", "ratio", _ratio_title(report), _bind(ratio_figure, report)))
    return charts + [chart for section in SECTIONS for chart in section.charts(report)]


def _bind(function: Callable[..., Figure], *args: object) -> Callable[[], Figure]:
    return lambda: function(*args)


def write_charts(report: Report, directory: Path, stem: str, fmt: str = "png") -> list[tuple[Chart, Path]]:
    """Write every chart as ``<stem>-<key>.<fmt>`` in ``directory``."""
    written = []
    for chart in plan_charts(report):
        path = directory / f"{stem}-{chart.key}.{fmt}"
        try:
            path.write_bytes(render(chart, fmt))
        except OSError as exc:
            raise UsageError(f"cannot write chart {path} ({exc.strerror}); choose a writable --out directory") from None
        written.append((chart, path))
    return written


# --- titles -----------------------------------------------------------------------------


def _better(metric: MetricInfo) -> str:
    return "higher is better" if metric.higher_is_better else "lower is better"


def _bars_title(group: MetricGroup) -> str:
    return f"{group.metric.label} by workload and target (median, {_better(group.metric)})"


def _ratio_title(report: Report) -> str:
    return f"Each target against {report.summary.baseline} (the baseline): right is better"


def bars_figure(report: Report, group: MetricGroup) -> Figure:
    """Horizontal bars, one per (workload, target), the value written at each bar's end."""
    targets = report.summary.targets
    rows = group.rows
    cells = [c for row in rows for c in row.cells.values() if c.summary]
    values = [c.summary.median for c in cells] + [c.summary.ci_low for c in cells] + [c.summary.ci_high for c in cells]
    divisor, unit = axis_unit(group.metric, values)
    log = spans_more_than(values, BAR_LOG_SPAN)
    height = 0.8 / len(targets)
    figure, ax = new_figure(8.0, _bar_height(len(rows) * len(targets)))
    used_notes: set[int] = set()
    labels = []
    for i, label in enumerate(targets):
        ys = [j + (i - (len(targets) - 1) / 2) * height for j in range(len(rows))]
        row_cells = [row.cells[label] for row in rows]
        widths = [c.summary.median / divisor if c.summary else math.nan for c in row_cells]
        below = [(c.summary.median - c.summary.ci_low) / divisor if c.summary else 0 for c in row_cells]
        above = [(c.summary.ci_high - c.summary.median) / divisor if c.summary else 0 for c in row_cells]
        ax.barh(
            ys,
            widths,
            height * 0.9,
            xerr=[below, above],
            label=legend_label(report, label),
            color=COLOURS[i % len(COLOURS)],
            hatch=HATCHES[i % len(HATCHES)],
            edgecolor="black",
            linewidth=0.6,
            error_kw={"ecolor": "black", "capsize": 2.5, "elinewidth": 0.9},
        )
        for y, row, cell in zip(ys, rows, row_cells, strict=True):
            text, notes = _bar_label(report, row, label, cell)
            used_notes |= notes
            if cell.summary is None:  # no bar: the word stands at the start of the axis
                where, coords = (0.0, y), ("axes fraction", "data")
            else:
                where, coords = (max(cell.summary.ci_high, cell.summary.median) / divisor, y), "data"
            labels.append(ax.annotate(text, where, xycoords=coords, xytext=(4, 0), textcoords="offset points",
                                      va="center", fontsize=7,
                                      color="#B00020" if cell.summary is None else "black"))  # fmt: skip
    ax.set_yticks(range(len(rows)), [wrap(row.title, 24) for row in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)  # every slot, also of a bar that failed; the first workload on top
    _bar_value_axis(ax.xaxis, ax.set_xscale, group.metric, log)
    ax.set_xlabel(_bar_axis_label(group.metric, unit, log))
    if not log:
        ax.set_xlim(left=0)
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.set_axisbelow(True)
    legend_outside(figure, ax, len(targets))
    levels = sorted({c.summary.ci_level for c in cells})
    notes_footer(figure, report, used_notes)
    fit_titles(
        figure,
        ax,
        _bars_title(group),
        f"bars: median of each target's samples; error bars: {interval_phrase(levels)}",
        labels,
        log=log,
    )
    return figure


def _bar_height(bars: int) -> float:
    return max(3.2, min(30.0, 2.0 + 0.3 * bars))


def _bar_label(report: Report, row: Row, target: str, cell: Cell) -> tuple[str, set[int]]:
    """'2.28 GB/s [1]', 'failed' where no sample succeeded; and the notes it names."""
    if cell.summary is None:
        return ("failed" if cell.failed else "no data"), set()
    marks = report.measurement_marks(cell)
    text = format_value(cell.summary.median, row.metric)
    return text + (" [" + ",".join(map(str, marks)) + "]" if marks else ""), set(marks)


def _bar_value_axis(axis, set_scale, metric: MetricInfo, log: bool) -> None:
    """Numbers on every major tick; on a log axis at 1, 2 and 5 of each decade, so that even
    a span of 15× has several labelled ticks."""
    counting = metric.unit in ("IOPS", "1/s", "")
    if log:
        set_scale("log")
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_minor_formatter(NullFormatter())
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_count(v) if counting else f"{v:g}"))


def _bar_axis_label(metric: MetricInfo, unit: str, log: bool) -> str:
    """'read bandwidth (MB/s)', 'write IOPS' (never 'write IOPS (IOPS)'), ', log scale' when log."""
    scale = ", log scale" if log else ""
    if unit and unit.lower() in metric.label.lower():
        return f"{metric.label}{' (log scale)' if log else ''}"
    return f"{metric.label} ({unit}{scale})"


# --- against the baseline -------------------------------------------------------------------------


def ratio_figure(report: Report) -> Figure:
    """Every comparison with the baseline as 'times better', on a log axis: right is better."""
    summary = report.summary
    others = [t for t in summary.targets if t != summary.baseline]
    rows = [row for row in summary.rows if any(row.cells[t].comparison for t in others)]
    speed_only = all(words(row.metric) == ("faster", "slower") for row in rows)
    good, bad = ("faster", "slower") if speed_only else ("better", "worse")
    bar_height = 0.8 / max(1, len(others))
    figure, ax = new_figure(8.0, _bar_height(len(rows) * len(others)))
    extremes = [1.0]
    labels = []
    for i, label in enumerate(others):
        index = summary.targets.index(label)
        bars = []
        for j, row in enumerate(rows):
            said = cell_standing(row, label)
            if said is not None:
                bars.append((j + (i - (len(others) - 1) / 2) * bar_height, said, _better_x(said, row)))
        if not bars:
            continue
        xs = [x for _, _, x in bars]
        lows = [_finite_or(x[1], x[0]) for _, _, x in bars]
        highs = [_finite_or(x[2], x[0]) for _, _, x in bars]
        points = [x[0] for x in xs]
        extremes += lows + highs
        colour = matplotlib.colors.to_rgba(COLOURS[index % len(COLOURS)])
        ax.barh(  # one call per target: a single artist group keeps big charts fast
            [y for y, _, _ in bars],
            [x - 1 for x in points],
            bar_height * 0.9,
            left=1,
            xerr=[
                [x - lo for x, lo in zip(points, lows, strict=True)],
                [hi - x for x, hi in zip(points, highs, strict=True)],
            ],
            color=[
                colour if said.kind not in (SAME, UNDECIDED, UNKNOWN) else (*colour[:3], 0.35) for _, said, _ in bars
            ],
            hatch=HATCHES[index % len(HATCHES)],
            edgecolor="black",
            linewidth=0.6,
            label=legend_label(report, label),
            error_kw={"ecolor": "black", "capsize": 2, "elinewidth": 0.9},
        )
        for (y, said, _), x, low, high in zip(bars, points, lows, highs, strict=True):
            right = x >= 1
            colour_text = {"better": "#0B6E3B", "worse": "#A3261B"}.get(said.kind, "#555555")
            labels.append(ax.annotate(
                said.short, (high if right else low, y), xytext=(4 if right else -4, 0), textcoords="offset points",
                ha="left" if right else "right", va="center", fontsize=7, color=colour_text,
            ))  # fmt: skip
    ax.set_xscale("log")
    lowest, highest = min(extremes), max(extremes)
    span = max(highest, 1 / lowest, 2.0)
    ax.set_xlim(1 / (span * 1.6), span * 1.6)  # symmetric: 'same' in the middle
    ax.axvline(1, color="black", linewidth=1)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _times(v, good, bad)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"← {bad} than {summary.baseline} · {good} →  (log scale)")
    ax.set_yticks(range(len(rows)), [wrap(f"{row.title} · {row.metric.label}", 40) for row in rows], fontsize=8)
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.set_axisbelow(True)
    legend_outside(figure, ax, len(others))
    fit_titles(
        figure,
        ax,
        _ratio_title(report),
        "bars: ratio of geometric means, turned so that right is better; error bars: 95% confidence interval; "
        "faded: ≈ same (the interval lies within ±5%) or undecided (it contains 1 but reaches further; too wide "
        "to rank: no bar for an interval over 100× wide); ?: too few samples for an interval",
        labels,
        log=True,
        both_sides=True,
    )
    return figure


def _better_x(said, row: Row) -> tuple[float, float, float]:
    """(point, low, high) on the 'times better' axis: above 1 better, below 1 worse."""
    if said.too_wide:
        return said.factor, math.nan, math.nan  # no error bar: it would span the whole axis
    if said.kind in (SAME, UNDECIDED):
        return said.factor, said.low, said.high  # the speed ratio itself
    good = words(row.metric)[0]
    if said.word == good:
        return said.factor, said.low, said.high
    return 1 / said.factor, _inverse(said.high), _inverse(said.low)


def _inverse(value: float) -> float:
    return math.nan if not math.isfinite(value) or value == 0 else 1 / value


def _times(value: float, good: str, bad: str) -> str:
    if abs(value - 1) < 1e-9:
        return "same"
    factor = value if value > 1 else 1 / value
    return f"{float(sig3(factor)):g}× {good if value > 1 else bad}"  # 100× slower, 2.5× faster


def _finite_or(value: float, fallback: float) -> float:
    return value if math.isfinite(value) else fallback
