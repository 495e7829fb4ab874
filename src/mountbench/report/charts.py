"""Charts for the reports (matplotlib, Agg, PNG and SVG), drawn from a Report.

- bars: one chart per metric, a horizontal bar per workload and target with its value
  written at its end, one colour and hatch per target (readable in black and white),
  error bars = the median's interval (the subtitle says which), a log axis when the
  values span more than 10×;
- ratio: every comparison with the baseline oriented so that right is always better
  ("6.20× slower" reaches left whatever the metric's direction), 95% CI, faded and
  "≈ same" where within noise;
- percentiles: latency p1 … p99.99 per target on a log scale (study S4);
- sweep: one metric against a swept option (block size, ...), one line per target,
  from zero, with each target's optimum and knee (study S3);
- grid: a heat map per target over two swept options, one colour scale.

Legends sit outside the plot, never over data; titles wrap to the figure; nothing is
clipped (tests render every chart and check every text's bounding box against the
figure and the others). Measurement caveats ([n], same numbers as the tables) sit on
the bars they affect and are spelled out under the chart. Figures are built with the
object API (matplotlib.figure.Figure), so no global pyplot state and no display is involved.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import matplotlib.colors
import matplotlib.patches
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

from mountbench.analysis.metrics import MetricInfo
from mountbench.analysis.stats import KNEE_FRACTION
from mountbench.analysis.summary import Cell, Row
from mountbench.errors import UsageError
from mountbench.report import sweeptext
from mountbench.report.cells import format_value
from mountbench.report.chartkeys import bars_key, grid_key, percentile_key, sweep_key
from mountbench.report.content import MetricGroup, PercentileCurve, Report, Sweep, SweepGrid
from mountbench.report.phrasing import SAME, UNKNOWN, cell_standing, sig3, words
from mountbench.units import format_count

matplotlib.use("Agg")  # never a display, even when pyplot is imported elsewhere

# Okabe-Ito: distinguishable with colour-vision deficiencies; hatches and markers for print.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")
HATCHES = ("", "///", "\\\\\\", "xxx", "---", "|||", "+++", "//", "\\\\", "x")  # lines only: dots bloat SVG
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":")
LOG_SPAN = 100.0  # largest / smallest value at or above which an axis goes logarithmic (sweeps)
BAR_LOG_SPAN = 10.0  # bar charts: a log axis when the values span more than this
FORMATS = ("png", "svg")
_RC = {"svg.fonttype": "none", "svg.hashsalt": "mountbench", "font.size": 9, "hatch.linewidth": 0.6}


@dataclass(frozen=True)
class Chart:
    key: str  # unique, file-name safe
    kind: str  # bars | ratio | percentiles | sweep | grid | cost | scaling | pick-two
    title: str  # what was measured, also the alt text
    draw: Callable[[], Figure]


def plan_charts(report: Report) -> list[Chart]:
    """Every chart the report has, in the order the documents show them."""
    charts = [
        Chart(bars_key(group), "bars", _bars_title(group), _bind(bars_figure, report, group))
        for group in report.groups
        if any(c.summary for row in group.rows for c in row.cells.values())
    ]
    if any(c.comparison for row in report.summary.rows for c in row.cells.values()):
        charts.append(Chart("ratio", "ratio", _ratio_title(report), _bind(ratio_figure, report)))
    for curve in report.percentiles:
        charts.append(
            Chart(
                percentile_key(curve), "percentiles", _percentile_title(curve), _bind(percentile_figure, report, curve)
            )
        )
    for i, sweep in enumerate(report.sweeps, 1):
        charts.append(Chart(sweep_key(i, sweep), "sweep", sweep_chart_title(sweep), _bind(sweep_figure, report, sweep)))
    for i, grid in enumerate(report.grids, 1):
        charts.append(Chart(grid_key(i, grid), "grid", grid_chart_title(grid), _bind(grid_figure, report, grid)))
    from mountbench.report import picktwochart  # lab --probe: the pick-two section (report/picktwo.py)
    from mountbench.report.clients_chart import scaling_charts  # they draw with this module's helpers
    from mountbench.report.costcharts import cost_charts

    return charts + cost_charts(report) + scaling_charts(report.runs) + picktwochart.charts(report)


def _bind(function: Callable[..., Figure], *args: object) -> Callable[[], Figure]:
    return lambda: function(*args)


def render(chart: Chart, fmt: str) -> bytes:
    """The chart as PNG or SVG bytes."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown chart format {fmt!r}; use png or svg")
    with matplotlib.rc_context(_RC):
        figure = chart.draw()
        buffer = io.BytesIO()
        metadata = {"Date": None} if fmt == "svg" else {"Software": "mountbench"}
        figure.savefig(buffer, format=fmt, dpi=110, metadata=metadata)
    return buffer.getvalue()


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


def inline_svg(chart: Chart) -> str:
    """The chart as an <svg> element for embedding in HTML, ids prefixed so that
    several charts in one page never share one."""
    text = render(chart, "svg").decode()
    text = re.sub(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*", "", text)
    prefix = f"{chart.key}-"
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", text)
    text = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', text)
    return text.replace("<svg ", f'<svg role="img" aria-label="{_attr(chart.title)}" ', 1)


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


# --- titles -----------------------------------------------------------------------------


def _better(metric: MetricInfo) -> str:
    return "higher is better" if metric.higher_is_better else "lower is better"


def _bars_title(group: MetricGroup) -> str:
    return f"{group.metric.label} by workload and target (median, {_better(group.metric)})"


def _ratio_title(report: Report) -> str:
    return f"Each target against {report.summary.baseline} (the baseline): right is better"


def _percentile_title(curve: PercentileCurve) -> str:
    return f"{curve.title}: {curve.direction} latency percentiles per target (lower is better)"


def sweep_chart_title(sweep: Sweep) -> str:
    return sweeptext.heading(sweep)


def grid_chart_title(grid: SweepGrid) -> str:
    return sweeptext.grid_heading(grid)


# --- bars ---------------------------------------------------------------------------------


def bars_figure(report: Report, group: MetricGroup) -> Figure:
    """Horizontal bars, one per (workload, target), the value written at each bar's end."""
    targets = report.summary.targets
    rows = group.rows
    cells = [c for row in rows for c in row.cells.values() if c.summary]
    values = [c.summary.median for c in cells] + [c.summary.ci_low for c in cells] + [c.summary.ci_high for c in cells]
    divisor, unit = axis_unit(group.metric, values)
    log = spans_more_than(values, BAR_LOG_SPAN)
    height = 0.8 / len(targets)
    figure, ax = _figure(8.0, _bar_height(len(rows) * len(targets)))
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
            label=_legend(report, label),
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
    ax.set_yticks(range(len(rows)), [_wrap(row.title, 24) for row in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)  # every slot, also of a bar that failed; the first workload on top
    _bar_value_axis(ax.xaxis, ax.set_xscale, group.metric, log)
    ax.set_xlabel(_bar_axis_label(group.metric, unit, log))
    if not log:
        ax.set_xlim(left=0)
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.set_axisbelow(True)
    _legend_outside(figure, ax, len(targets))
    levels = sorted({c.summary.ci_level for c in cells})
    _notes_footer(figure, report, used_notes)
    _fit_titles(
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


def interval_phrase(levels: Sequence[float]) -> str:
    """What the error bars are: '75% confidence interval of the median (the most 3 samples allow)'."""
    shown = sorted({level for level in levels if level > 0})
    if not shown:
        return "none (one sample: no interval)"
    text = "/".join(f"{level:.0%}" for level in shown)
    if max(shown) < 0.95:
        return f"{text} confidence interval of the median (the most a few samples allow; 95% needs 6 or more)"
    return f"{text} confidence interval of the median"


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


def spans_more_than(values: Sequence[float], span: float) -> bool:
    positive = [v for v in values if v > 0]
    return len(positive) >= 2 and max(positive) / min(positive) > span


# --- against the baseline -------------------------------------------------------------------------


def ratio_figure(report: Report) -> Figure:
    """Every comparison with the baseline as 'times better', on a log axis: right is better."""
    summary = report.summary
    others = [t for t in summary.targets if t != summary.baseline]
    rows = [row for row in summary.rows if any(row.cells[t].comparison for t in others)]
    speed_only = all(words(row.metric) == ("faster", "slower") for row in rows)
    good, bad = ("faster", "slower") if speed_only else ("better", "worse")
    bar_height = 0.8 / max(1, len(others))
    figure, ax = _figure(8.0, _bar_height(len(rows) * len(others)))
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
            color=[colour if said.kind not in (SAME, UNKNOWN) else (*colour[:3], 0.35) for _, said, _ in bars],
            hatch=HATCHES[index % len(HATCHES)],
            edgecolor="black",
            linewidth=0.6,
            label=_legend(report, label),
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
    ax.set_yticks(range(len(rows)), [_wrap(f"{row.title} · {row.metric.label}", 40) for row in rows], fontsize=8)
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.set_axisbelow(True)
    _legend_outside(figure, ax, len(others))
    _fit_titles(
        figure,
        ax,
        _ratio_title(report),
        "bars: ratio of geometric means, turned so that right is better; error bars: 95% confidence interval; "
        "faded and ≈ same: within noise (the interval contains 1); ?: too few samples for an interval",
        labels,
        log=True,
        both_sides=True,
    )
    return figure


def _better_x(said, row: Row) -> tuple[float, float, float]:
    """(point, low, high) on the 'times better' axis: above 1 better, below 1 worse."""
    if said.kind == SAME:
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


# --- layout that keeps every text inside the figure ----------------------------------------------------


def _legend_outside(figure: Figure, ax, entries: int) -> None:
    """The legend outside the plot, at its right: it never covers a bar or an error bar."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8, frameon=False)


def _renderer(figure: Figure):
    """A renderer to measure text with (figures built without pyplot have no canvas of their own)."""
    if not hasattr(figure.canvas, "get_renderer"):
        FigureCanvasAgg(figure)
    figure.draw_without_rendering()
    return figure.canvas.get_renderer()


def _fit_titles(figure: Figure, ax, title: str, subtitle: str, labels: Sequence = (), *, log: bool = False,
                both_sides: bool = False) -> None:  # fmt: skip
    """The title over the figure and the subtitle over the plot, each wrapped until it fits
    (a subtitle centred over a narrow plot was clipped before); then the value axis widened
    until every bar's ``labels`` fit inside the plot. A few layout passes at most."""
    title_chars = int(figure.get_figwidth() * 72 / (11 * 0.62))
    figure.suptitle(_wrap(title, title_chars), fontsize=11, fontweight="bold")
    chars = int(figure.get_figwidth() * 72 / (8 * 0.55))
    shown = ax.set_title(_wrap(subtitle, chars), fontsize=8, color="#333333", loc="left")
    for _ in range(6):
        renderer = _renderer(figure)
        plot = ax.get_window_extent(renderer)
        settled = True
        right = min(figure.bbox.x1, plot.x1) - 2  # the legend is right of the plot
        box = shown.get_window_extent(renderer)
        if box.x1 > right:
            chars = int(chars * min(0.9, (right - box.x0) / max(1.0, box.width)))
            shown = ax.set_title(_wrap(subtitle, chars), fontsize=8, color="#333333", loc="left")
            settled = False
        if labels and _widen_for(ax, plot, renderer, labels, log, both_sides):
            settled = False
        if settled:
            return


def _widen_for(ax, plot, renderer, labels: Sequence, log: bool, both_sides: bool) -> bool:
    """Widen the value axis so that every label fits inside the plot; True when it did."""
    gap = 6  # pixels between a label and the plot's frame
    over_right = max(t.get_window_extent(renderer).x1 for t in labels) + gap - plot.x1
    over_left = plot.x0 - min(t.get_window_extent(renderer).x0 for t in labels) + gap
    if over_right <= 0 and over_left <= 0:
        return False
    low, high = ax.get_xlim()
    if log:
        per_px = math.log10(high / low) / plot.width
        high *= 10 ** (max(0.0, over_right + 2) * per_px)
        if both_sides:
            low /= 10 ** (max(0.0, over_left + 2) * per_px)
    else:
        high += (max(0.0, over_right) + 2) * (high - low) / plot.width
    ax.set_xlim(low, high)
    return True


# --- latency percentiles (S4) -------------------------------------------------------------------


def _nines(percentile: float) -> float:
    """Position of a percentile on a 'nines' axis: p90 → 1, p99 → 2, p99.9 → 3."""
    return -math.log10(1 - min(percentile, 99.9999) / 100)


def percentile_figure(report: Report, curve: PercentileCurve) -> Figure:
    targets = report.summary.targets
    values = [r.cells[t].summary.median for r in curve.rows for t in targets if r.cells[t].summary]
    divisor, unit = axis_unit(curve.rows[0].metric, values)
    figure, ax = _figure(7.2, 4.6)
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
            label=_legend(report, label),
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
    _value_axis(ax.yaxis, ax.set_yscale, curve.rows[0].metric, unit, True)
    ax.set_ylabel(f"{curve.direction} latency ({unit}, log scale)")
    ax.grid(alpha=0.3, which="both")
    _legend_outside(figure, ax, len(targets))
    levels = sorted({r.cells[t].summary.ci_level for r in curve.rows for t in targets if r.cells[t].summary})
    _fit_titles(
        figure,
        ax,
        _percentile_title(curve),
        f"line: median over samples at each percentile; band: {interval_phrase(levels)}",
    )
    _notes_footer(figure, report, used)
    return figure


def _percentile_label(position: float) -> str:
    percentile = 100 * (1 - 10 ** (-position))
    return f"p{percentile:.4g}"


# --- sweeps (S3) -----------------------------------------------------------------------------------


def sweep_figure(report: Report, sweep: Sweep) -> Figure:
    """One curve per target, the value axis from zero in the sweep's one unit; each target's
    optimum (★) and knee (◆) marked on its curve and named in the legend, which sits
    beside the plot so that no label covers a point."""
    targets = report.summary.targets
    divisor, unit = sweep.unit
    figure, ax = _figure(8.6, 4.8)
    used: set[int] = set()
    tops = [0.0]
    for i, label in enumerate(targets):
        points = [
            (x, row.cells[label].summary, k)
            for k, (x, row) in enumerate(zip(sweep.numbers, sweep.rows, strict=True))
            if row.cells[label].summary
        ]
        for row in sweep.rows:
            used |= set(report.measurement_marks(row.cells[label]))
        if not points:
            continue
        colour = COLOURS[i % len(COLOURS)]
        xs = [x for x, _, _ in points]
        ys = [s.median / divisor for _, s, _ in points]
        tops += [s.ci_high / divisor for _, s, _ in points]
        ax.errorbar(
            xs,
            ys,
            yerr=[
                [max(0.0, (s.median - s.ci_low) / divisor) for _, s, _ in points],
                [max(0.0, (s.ci_high - s.median) / divisor) for _, s, _ in points],
            ],
            label=_sweep_legend(report, sweep, label),
            color=colour,
            marker=MARKERS[i % len(MARKERS)],
            markersize=4.5,
            linestyle=LINESTYLES[i % len(LINESTYLES)],
            linewidth=1.4,
            capsize=2.5,
            elinewidth=0.9,
        )
        optimum = sweep.optima.get(label)
        if optimum is not None:
            peak = sweep.rows[optimum.peak].cells[label].summary
            knee = sweep.rows[optimum.knee].cells[label].summary
            ax.plot(
                [sweep.numbers[optimum.knee]],
                [knee.median / divisor],
                linestyle="none",
                marker="D",
                markersize=8,
                color=colour,
                markeredgecolor="black",
                markeredgewidth=0.7,
                zorder=4,
            )
            ax.plot(
                [sweep.numbers[optimum.peak]],
                [peak.median / divisor],
                linestyle="none",
                marker="*",
                markersize=15,
                color=colour,
                markeredgecolor="black",
                markeredgewidth=0.7,
                zorder=5,
            )
    _swept_axis(ax, sweep.option, sweep.numbers, sweep.values)
    ax.set_ylim(0, max(tops) * 1.08 or 1.0)  # from zero: heights compare honestly
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_ylabel(f"{sweep.metric.label} ({unit})")
    ax.grid(alpha=0.3, which="major")
    ax.set_axisbelow(True)
    # beside the plot, never over a point; constrained layout makes room for it
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8,
              title="★ optimum · ◆ knee", title_fontsize=8)  # fmt: skip
    levels = sorted({r.cells[t].summary.ci_level for r in sweep.rows for t in targets if r.cells[t].summary})
    _titles(
        figure,
        ax,
        sweep_chart_title(sweep),
        f"points: median; error bars: {interval_phrase(levels)}; ★ optimum: best median, "
        f"(≈) when only within noise; ◆ knee: smallest {_option_name(sweep.option)} reaching "
        f"{KNEE_FRACTION:.0%} of the optimum",
    )
    _notes_footer(figure, report, used)
    return figure


def _sweep_legend(report: Report, sweep: Sweep, label: str) -> str:
    optimum = sweep.optima.get(label)
    name = _legend(report, label)
    if optimum is None:
        return name
    noise = "" if optimum.clear else " (≈)"
    return f"{name}\n★ {sweep.values[optimum.peak]}{noise}  ◆ {sweep.values[optimum.knee]}"


def _option_name(option: str) -> str:
    return sweeptext.option_label(option)


def _swept_axis(ax, option: str, numbers: Sequence[float], values: Sequence[str]) -> None:
    """Ticks at the swept values, labelled as given; base-2 log when they span 4x or more."""
    if min(numbers) > 0 and max(numbers) / min(numbers) >= 4:
        ax.set_xscale("log", base=2)
        scale = ", log scale"
    else:
        scale = ""
    ax.xaxis.set_major_locator(FixedLocator(list(numbers)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: dict(zip(numbers, values, strict=True)).get(v, "")))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.set_xlabel(f"{_option_name(option)} ({option}{scale})")
    if len(numbers) > 10:
        ax.tick_params(axis="x", labelsize=7)


def grid_figure(report: Report, grid: SweepGrid) -> Figure:
    """A heat map per target on one colour scale from zero; the value in every cell when
    it fits, each target's best point outlined and starred."""
    targets = [t for t in report.summary.targets]
    divisor, unit = grid.unit
    n_rows, n_columns = len(grid.row_values), len(grid.column_values)
    panels_across = min(3, len(targets))
    panels_down = math.ceil(len(targets) / panels_across)
    panel_w = max(2.6, 0.62 * n_columns + 1.0)
    panel_h = max(2.2, 0.3 * n_rows + 1.0)
    figure = Figure(figsize=(panel_w * panels_across + 1.6, panel_h * panels_down + 1.6), layout="constrained")
    axes = figure.subplots(panels_down, panels_across, squeeze=False)
    values = [
        row.cells[t].summary.median / divisor for row in grid.cells.values() for t in targets if row.cells[t].summary
    ]
    norm = matplotlib.colors.Normalize(vmin=0, vmax=max(values, default=1.0) or 1.0)
    cmap = matplotlib.colormaps["viridis"]
    image = None
    used: set[int] = set()
    for k, target in enumerate(targets):
        ax = axes[k // panels_across][k % panels_across]
        matrix = [[math.nan] * n_columns for _ in range(n_rows)]
        for (i, j), row in grid.cells.items():
            summary = row.cells[target].summary
            if summary is not None:
                matrix[i][j] = summary.median / divisor
            used |= set(report.measurement_marks(row.cells[target]))
        image = ax.imshow(matrix, cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
        ax.set_xticks(range(n_columns), list(grid.column_values), fontsize=7)
        ax.set_yticks(range(n_rows), list(grid.row_values), fontsize=7)
        ax.set_xlabel(f"{_option_name(grid.column_option)} ({grid.column_option})", fontsize=8)
        ax.set_ylabel(f"{_option_name(grid.row_option)} ({grid.row_option})", fontsize=8)
        ax.set_title(_legend(report, target), fontsize=9)
        best = grid.best.get(target)
        _annotate_cells(figure, ax, matrix, best, cmap, norm, divisor=1.0)
        if best is not None:
            ax.add_patch(
                matplotlib.patches.Rectangle(
                    (best[1] - 0.5, best[0] - 0.5), 1, 1, fill=False, edgecolor="#D55E00", linewidth=2.2
                )
            )
    for k in range(len(targets), panels_down * panels_across):
        axes[k // panels_across][k % panels_across].set_visible(False)
    if image is not None:
        figure.colorbar(image, ax=axes, label=f"{grid.metric.label} ({unit})", shrink=0.9)
    subtitle = "cell: median; ★ and outline: each target's best point; one colour scale from zero for every target"
    figure.suptitle(_wrap(grid_chart_title(grid), int(figure.get_figwidth() * 11)), fontsize=11, fontweight="bold")
    width = int(figure.get_figwidth() * 15)
    lines = [textwrap.fill(subtitle, width)]
    lines += [textwrap.fill(f"[{n}] {report.notes[n - 1]}", width, subsequent_indent="     ") for n in sorted(used)]
    figure.supxlabel("\n".join(lines), x=0.01, ha="left", fontsize=7, color="#333333")  # laid out, never overlapping
    return figure


def _annotate_cells(figure: Figure, ax, matrix, best, cmap, norm, divisor: float) -> None:
    """Write each cell's value when the cell is wide and tall enough for it at 5 pt or more."""
    number = sweeptext.number
    n_rows, n_columns = len(matrix), len(matrix[0])
    box = ax.get_position()
    cell_w = box.width * figure.get_figwidth() * 72 / n_columns  # points
    cell_h = box.height * figure.get_figheight() * 72 / n_rows
    texts = {
        (i, j): number(matrix[i][j], divisor) + (" ★" if best == (i, j) else "")
        for i in range(n_rows)
        for j in range(n_columns)
        if not math.isnan(matrix[i][j])
    }
    if not texts:
        return
    longest = max(len(t) for t in texts.values())
    size = min(8.0, cell_h * 0.55, cell_w * 0.8 / (0.62 * longest))
    if size < 5:
        return  # the tables carry the numbers
    for (i, j), text in texts.items():
        r, g, b, _ = cmap(norm(matrix[i][j]))
        dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
        ax.text(j, i, text, ha="center", va="center", fontsize=size, color="white" if dark else "black")


# --- axes, units and layout ---------------------------------------------------------------------------


def spans_orders(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return len(positive) >= 2 and max(positive) / min(positive) >= LOG_SPAN


def axis_unit(metric: MetricInfo, values: Sequence[float]) -> tuple[float, str]:
    """(divisor, unit name) that keeps axis numbers readable; the unit is always named."""
    peak = max((abs(v) for v in values), default=0.0)
    scales: dict[str, tuple[tuple[float, str], ...]] = {
        "B/s": ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1, "B/s")),
        "B": ((1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB"), (1, "bytes")),
        "s": ((1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")),
    }
    if metric.unit in scales:
        for divisor, name in scales[metric.unit]:
            if peak >= divisor:
                return divisor, name
        return scales[metric.unit][-1]
    names = {"IOPS": "IOPS", "%": "% of one CPU", "1/s": "per second"}
    return 1.0, names.get(metric.unit, metric.unit or "value")


def _axis_label(metric: MetricInfo, unit: str, log: bool) -> str:
    return f"{metric.label} ({unit}{', log scale' if log else ''})"


def _value_axis(axis, set_scale, metric: MetricInfo, unit: str, log: bool) -> None:
    counting = metric.unit in ("IOPS", "1/s", "")
    if log:
        set_scale("log")
        axis.set_minor_formatter(NullFormatter())
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_count(v) if counting else f"{v:g}"))


def _figure(width: float, height: float) -> tuple[Figure, object]:
    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.add_subplot()


def _titles(figure: Figure, ax, title: str, subtitle: str) -> None:
    figure.suptitle(_wrap(title, int(figure.get_figwidth() * 11)), fontsize=11, fontweight="bold")
    ax.set_title(_wrap(subtitle, int(figure.get_figwidth() * 14)), fontsize=8, color="#333333")


def _notes_footer(figure: Figure, report: Report, numbers: set[int]) -> None:
    if not numbers:
        return
    width = int(figure.get_figwidth() * 15)
    lines = [textwrap.fill(f"[{n}] {report.notes[n - 1]}", width, subsequent_indent="     ") for n in sorted(numbers)]
    figure.supxlabel("\n".join(lines), x=0.01, ha="left", fontsize=7, color="#7A4B00")


def _legend(report: Report, label: str) -> str:
    return f"{label} (baseline)" if label == report.summary.baseline else label


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, max(8, width))) or text
