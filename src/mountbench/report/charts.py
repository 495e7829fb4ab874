"""Charts for the reports (matplotlib, Agg, PNG and SVG), drawn from a Report.

- bars: one chart per metric, grouped bars per workload, one colour and hatch per
  target (readable in black and white), error bars = the median's interval, log
  scale when values span orders of magnitude;
- ratio: every target as "x times the baseline", 95% CI, faded where within noise;
- percentiles: latency p1 … p99.99 per target on a log scale (study S4);
- sweep: bandwidth against block size, one line per target (study S3).

Measurement caveats ([n], same numbers as the tables) sit on the bars they affect
and are spelled out under the chart. Figures are built with the object API
(matplotlib.figure.Figure), so no global pyplot state and no display is involved.
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
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from mountbench.errors import UsageError
from mountbench.metrics import MetricInfo
from mountbench.report.chartkeys import bars_key, block_label, percentile_key, sweep_key
from mountbench.report.content import MetricGroup, PercentileCurve, Report, Sweep
from mountbench.summary import Cell
from mountbench.units import format_count

matplotlib.use("Agg")  # never a display, even when pyplot is imported elsewhere

# Okabe-Ito: distinguishable with colour-vision deficiencies; hatches and markers for print.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")
HATCHES = ("", "///", "\\\\\\", "xxx", "---", "|||", "+++", "//", "\\\\", "x")  # lines only: dots bloat SVG
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":")
LOG_SPAN = 100.0  # largest / smallest value at or above which an axis goes logarithmic
FORMATS = ("png", "svg")
_RC = {"svg.fonttype": "none", "svg.hashsalt": "mountbench", "font.size": 9, "hatch.linewidth": 0.6}


@dataclass(frozen=True)
class Chart:
    key: str  # unique, file-name safe
    kind: str  # bars | ratio | percentiles | sweep | cost
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
        charts.append(Chart(sweep_key(i, sweep), "sweep", _sweep_title(sweep), _bind(sweep_figure, report, sweep)))
    from mountbench.report.costcharts import cost_charts  # it draws with this module's helpers

    return charts + cost_charts(report)


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
    return f"Each target as x times {report.summary.baseline} (the baseline), with 95% CI"


def _percentile_title(curve: PercentileCurve) -> str:
    return f"{curve.title}: {curve.direction} latency percentiles per target (lower is better)"


def _sweep_title(sweep: Sweep) -> str:
    return f"{sweep.metric.label} against block size per target ({sweep.settings})"


# --- bars ---------------------------------------------------------------------------------


def bars_figure(report: Report, group: MetricGroup) -> Figure:
    targets = report.summary.targets
    rows = group.rows
    medians = [c.summary.median for row in rows for c in row.cells.values() if c.summary]
    divisor, unit = axis_unit(group.metric, medians)
    log = spans_orders(medians)
    width = 0.8 / len(targets)
    figure, ax = _figure(max(6.4, min(22.0, 1.2 + 0.28 * len(rows) * len(targets) + 0.4 * len(rows))), 4.8)
    used_notes: set[int] = set()
    for i, label in enumerate(targets):
        xs = [j + (i - (len(targets) - 1) / 2) * width for j in range(len(rows))]
        cells = [row.cells[label] for row in rows]
        heights = [c.summary.median / divisor if c.summary else math.nan for c in cells]
        below = [(c.summary.median - c.summary.ci_low) / divisor if c.summary else 0 for c in cells]
        above = [(c.summary.ci_high - c.summary.median) / divisor if c.summary else 0 for c in cells]
        ax.bar(
            xs,
            heights,
            width * 0.95,
            yerr=[below, above],
            label=_legend(report, label),
            color=COLOURS[i % len(COLOURS)],
            hatch=HATCHES[i % len(HATCHES)],
            edgecolor="black",
            linewidth=0.6,
            error_kw={"ecolor": "black", "capsize": 2.5, "elinewidth": 0.9},
        )
        for x, cell in zip(xs, cells, strict=True):
            used_notes |= _mark_bar(ax, report, x, cell, divisor)
    ax.set_xticks(range(len(rows)), [_wrap(row.title, 16) for row in rows], fontsize=8)
    ax.set_xlabel("workload")
    _value_axis(ax.yaxis, ax.set_yscale, group.metric, unit, log)
    ax.set_ylabel(_axis_label(group.metric, unit, log))
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.set_axisbelow(True)
    ax.legend(fontsize=8, loc="best")
    levels = sorted({c.summary.ci_level for row in rows for c in row.cells.values() if c.summary})
    _titles(
        figure,
        ax,
        _bars_title(group),
        f"bars: median of each target's samples; error bars: {_levels(levels)} confidence interval of the median",
    )
    _notes_footer(figure, report, used_notes)
    return figure


def _mark_bar(ax, report: Report, x: float, cell: Cell, divisor: float) -> set[int]:
    """Note numbers over a bar; 'failed' where no sample succeeded."""
    if cell.summary is None:
        if cell.failed:
            ax.annotate(
                "failed",
                (x, 0),
                xytext=(0, 4),
                textcoords="offset points",
                rotation=90,
                ha="center",
                va="bottom",
                fontsize=7,
                color="#B00020",
            )
        return set()
    marks = report.measurement_marks(cell)
    if marks:
        ax.annotate(
            "[" + ",".join(map(str, marks)) + "]",
            (x, cell.summary.ci_high / divisor),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
        )
    return set(marks)


# --- ratio to baseline -------------------------------------------------------------------------


def ratio_figure(report: Report) -> Figure:
    summary = report.summary
    others = [t for t in summary.targets if t != summary.baseline]
    rows = [row for row in summary.rows if any(row.cells[t].comparison for t in others)]
    bar_height = 0.8 / max(1, len(others))
    figure, ax = _figure(8.0, max(2.6, min(30.0, 1.6 + 0.22 * len(rows) * len(others))))
    extremes = [1.0]
    for i, label in enumerate(others):
        index = summary.targets.index(label)
        bars = [
            (j + (i - (len(others) - 1) / 2) * bar_height, row.cells[label].comparison)
            for j, row in enumerate(rows)
            if row.cells[label].comparison is not None
        ]
        if not bars:
            continue
        ys = [y for y, _ in bars]
        ratios = [c.ratio for _, c in bars]
        lows = [_finite_or(c.low, c.ratio) for _, c in bars]
        highs = [_finite_or(c.high, c.ratio) for _, c in bars]
        extremes += lows + highs + ratios
        colour = matplotlib.colors.to_rgba(COLOURS[index % len(COLOURS)])
        ax.barh(  # one call per target: a single artist group keeps big charts fast
            ys,
            [r - 1 for r in ratios],
            bar_height * 0.9,
            left=1,
            xerr=[
                [r - lo for r, lo in zip(ratios, lows, strict=True)],
                [h - r for r, h in zip(ratios, highs, strict=True)],
            ],
            color=[colour if c.significant else (*colour[:3], 0.35) for _, c in bars],
            hatch=HATCHES[index % len(HATCHES)],
            edgecolor="black",
            linewidth=0.6,
            label=_legend(report, label),
            error_kw={"ecolor": "black", "capsize": 2, "elinewidth": 0.9},
        )
        for y, (_, c), low, high in zip(ys, bars, lows, highs, strict=True):
            right = c.ratio >= 1
            mark = "" if c.significant else ("? " if math.isnan(c.low) else "≈ ")  # ?: no interval (n < 2)
            ax.annotate(
                mark + f"×{c.ratio:.3g}",
                (high if right else low, y),
                xytext=(4 if right else -4, 0),
                textcoords="offset points",
                ha="left" if right else "right",
                va="center",
                fontsize=7,
            )
    ax.set_xscale("log")
    lowest, highest = min(extremes), max(extremes)
    ax.set_xlim(lowest / 2.2, highest * 2.2)
    ax.axvline(1, color="black", linewidth=1)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"×{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"times {summary.baseline} (the baseline; ratio of geometric means, log scale)")
    arrows = ["↑" if row.metric.higher_is_better else "↓" for row in rows]
    ax.set_yticks(
        range(len(rows)),
        [_wrap(f"{row.title} · {row.metric.label} {a}", 44) for row, a in zip(rows, arrows, strict=True)],
        fontsize=8,
    )
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.set_axisbelow(True)
    ax.legend(fontsize=8, loc="best")
    _titles(
        figure,
        ax,
        _ratio_title(report),
        "↑ higher is better, ↓ lower is better; faded bars and ≈: within noise (95% CI contains ×1); "
        "?: too few samples for an interval",
    )
    return figure


def _finite_or(value: float, fallback: float) -> float:
    return value if math.isfinite(value) else fallback


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
    ax.legend(fontsize=8, loc="upper left")
    _titles(
        figure,
        ax,
        _percentile_title(curve),
        "line: median over samples at each percentile; band: confidence interval of that median",
    )
    _notes_footer(figure, report, used)
    return figure


def _percentile_label(position: float) -> str:
    percentile = 100 * (1 - 10 ** (-position))
    return f"p{percentile:.4g}"


# --- block-size sweep (S3) -------------------------------------------------------------------------


def sweep_figure(report: Report, sweep: Sweep) -> Figure:
    targets = report.summary.targets
    values = [r.cells[t].summary.median for r in sweep.rows for t in targets if r.cells[t].summary]
    divisor, unit = axis_unit(sweep.metric, values)
    log = spans_orders(values)
    figure, ax = _figure(7.2, 4.6)
    used: set[int] = set()
    for i, label in enumerate(targets):
        points = [
            (bs, r.cells[label]) for bs, r in zip(sweep.block_sizes, sweep.rows, strict=True) if r.cells[label].summary
        ]
        if not points:
            continue
        xs = [bs for bs, _ in points]
        ys = [c.summary.median / divisor for _, c in points]
        errors = [
            [(c.summary.median - c.summary.ci_low) / divisor for _, c in points],
            [(c.summary.ci_high - c.summary.median) / divisor for _, c in points],
        ]
        colour = COLOURS[i % len(COLOURS)]
        ax.errorbar(
            xs,
            ys,
            yerr=errors,
            label=_legend(report, label),
            color=colour,
            marker=MARKERS[i % len(MARKERS)],
            markersize=5,
            linestyle=LINESTYLES[i % len(LINESTYLES)],
            linewidth=1.4,
            capsize=2.5,
        )
        peak = max(range(len(ys)), key=ys.__getitem__)
        ax.annotate(
            f"peak {block_label(xs[peak])}",
            (xs[peak], ys[peak]),
            xytext=(0, 8),
            textcoords="offset points",
            ha="center",
            fontsize=7,
            color=colour,
            fontweight="bold",
        )
        for _, cell in points:
            used |= set(report.measurement_marks(cell))
    ax.margins(y=0.12)  # room for the peak labels
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(list(sweep.block_sizes)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: block_label(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("block size (bytes, log scale)")
    _value_axis(ax.yaxis, ax.set_yscale, sweep.metric, unit, log)
    ax.set_ylabel(_axis_label(sweep.metric, unit, log))
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="best")
    _titles(
        figure,
        ax,
        _sweep_title(sweep),
        "points: median; error bars: confidence interval of the median; "
        "higher is better; the peak is each target's best block size",
    )
    _notes_footer(figure, report, used)
    return figure


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


def _levels(levels: Sequence[float]) -> str:
    if not levels or max(levels) == 0:
        return "no"
    shown = sorted({f"{level:.0%}" for level in levels if level > 0})
    return "/".join(shown)
