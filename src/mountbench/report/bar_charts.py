"""The bar charts: one per metric, a horizontal bar per workload and target with its value
written at its end, one colour and hatch per target (readable in black and white), error
bars = the median's interval at the confidence its samples allow; one too wide to rank (ends
over 100× apart) is not drawn but marked
‡, one past twice the panel's largest median is cut there (▸): each axis spans the medians
people compare, never an interval the samples do not pin down. The page draws every
workload as one chart of small multiples (panels_figure). Measurement caveats ([n], the
tables' numbers) sit on the bars they affect and are spelled out under the chart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator

from mountbench.analysis.metrics import MetricInfo
from mountbench.analysis.stats import TOO_WIDE_SPAN
from mountbench.analysis.summary import Cell, Row
from mountbench.report.cells import format_value
from mountbench.report.chartkit import (
    COLOURS,
    HATCHES,
    WIDE_IN,
    axis_unit,
    interval_phrase,
    legend_label,
    renderer_for,
    set_title,
    widen_for,
    wrap,
)
from mountbench.report.model import MetricGroup, Report
from mountbench.units import format_count


def _better(metric: MetricInfo) -> str:
    return "higher is better" if metric.higher_is_better else "lower is better"


def bars_title(group: MetricGroup) -> str:
    return f"{group.metric.label} by workload and target (median, {_better(group.metric)})"


def bars_figure(report: Report, group: MetricGroup, width: float = WIDE_IN) -> Figure:
    """One metric's workloads as small multiples: a panel per workload, a bar per target."""
    return panels_figure(report, list(group.rows), bars_title(group), width)


def panels_figure(report: Report, rows: Sequence[Row], title: str, width: float = WIDE_IN) -> Figure:
    """Small multiples: one panel per (workload, metric), a horizontal bar per target with its
    value written as the tables write it, error bars = the median's own interval (analysis/stats.py). Each
    panel has its own linear axis from 0, so that bars compare as their numbers do (16.0k
    against 455k is 28× shorter) and no workload squeezes another: never a log scale on bars."""
    targets = report.summary.targets
    shown = [row for row in rows if any(c.summary for c in row.cells.values())] or list(rows)
    columns = 1 if width < 6 or len(shown) == 1 else 2
    lines = math.ceil(len(shown) / columns)
    name_lines = max(wrap(legend_label(report, t), NAME_CHARS).count("\n") + 1 for t in targets)
    panel_in = 0.62 + (0.27 + 0.14 * (name_lines - 1)) * len(targets)  # a name on two lines: room for both
    figure = Figure(figsize=(width, 1.3 + lines * panel_in), layout="constrained")  # its height set below
    figure.get_layout_engine().set(w_pad=MARGIN_IN)  # the targets' names off the figure's left edge
    axes = figure.subplots(lines, columns, squeeze=False)
    used_notes: set[int] = set()
    marks: dict[str, set[int]] = {TOO_WIDE_MARK: set(), CUT_MARK: set()}  # mark -> the n of the cells it is on
    labels_by_ax = []
    chars = int((width / columns) * 72 / (8 * 0.55))
    for index, ax in enumerate(axes.flat):
        if index >= len(shown):
            ax.set_visible(False)
            continue
        row = shown[index]
        labels_by_ax.append((ax, _panel(report, ax, row, chars, used_notes, width / columns * 72, marks)))
    handles = [
        Patch(facecolor=COLOURS[i % len(COLOURS)], hatch=HATCHES[i % len(HATCHES)], edgecolor="black", linewidth=0.6,
              label=legend_label(report, label))
        for i, label in enumerate(targets)
    ]  # fmt: skip
    # the title heads the legend: a suptitle and an outside legend would share the top and overlap
    entry_pt = 30 + 8 * 0.6 * max(len(legend_label(report, t)) for t in targets)  # a handle, its gap and name
    legend_columns = max(1, min(len(targets), 2 if width < 6 else 4, int((width - 2 * MARGIN_IN) * 72 / entry_pt)))
    heading = wrap(title, int((width - 2 * MARGIN_IN) * 72 / (10.5 * 0.68)))  # bold: wider than 0.6 em a character
    figure.legend(
        handles=handles,
        loc="outside upper center",
        ncols=legend_columns,
        fontsize=8,
        frameon=False,
        title=heading,
        title_fontproperties={"weight": "bold", "size": 10.5},
    )
    levels = {cell_interval(row.cells[t])[2] for row in shown for t in targets if row.cells[t].summary}
    footer = [f"bars: median of each target's samples; error bars: {_interval_words(levels)}"]
    footer += [_mark_words(mark, counts) for mark, counts in marks.items() if counts]
    footer += [f"[{n}] {report.notes[n - 1]}" for n in sorted(used_notes)]
    text_chars = int(width * 72 / (7.5 * 0.55))
    under = "\n".join(wrap(line, text_chars) for line in footer)
    figure.supxlabel(under, x=MARGIN_IN / width, ha="left", fontsize=7.5)
    # the title, legend and notes take their own height, not the panels' (a phone's chart with eleven notes
    # squeezed its panels until the targets' names overlapped)
    legend_rows = math.ceil(len(targets) / legend_columns)
    above = (heading.count("\n") + 1) * 10.5 * 1.3 + legend_rows * 8 * 1.5
    figure.set_size_inches(width, 0.45 + (above + (under.count("\n") + 1) * 7.5 * 1.25) / 72 + lines * panel_in)
    for _, texts in labels_by_ax:  # kept inside their panel by widening its axis: the layout need not measure them
        for text in texts:
            text.set_in_layout(False)
    renderer = renderer_for(figure)  # one layout (each costs much): widening an axis moves no panel
    for _ in range(2):  # widen a panel's axis where its labels still overrun it
        if not any([widen_for(ax, ax.get_window_extent(renderer), renderer, texts) for ax, texts in labels_by_ax]):
            break
    figure.set_layout_engine("none")  # laid out above: saving it need not lay it out again
    return figure


def _panel(report: Report, ax, row: Row, chars: int, used_notes: set[int], panel_pt: float,
           marks: dict[str, set[int]]) -> list:  # fmt: skip
    """One panel's bars and value labels; its axis already wide enough for the labels, as far as
    their length tells (drawing the figure to measure them is what panels_figure checks after).
    The axis spans what people compare, the medians: an interval too wide to rank (ends more than
    TOO_WIDE_SPAN apart) is not drawn (its bar says so, ``marks``), and an interval reaching past
    CUT_AT times the largest median is cut there, its end an arrowhead: neither stretches the axis."""
    targets = report.summary.targets
    cells = [row.cells[t] for t in targets]
    medians = [c.summary.median for c in cells if c.summary and math.isfinite(c.summary.median)]
    cut = CUT_AT * max(medians, default=0.0)
    intervals = {t: cell_interval(c) for t, c in zip(targets, cells, strict=True) if c.summary}
    reach = [min(high, cut) for low, high, level in intervals.values() if level and not _too_wide(low, high)]
    divisor, unit = axis_unit(row.metric, [v for v in medians + reach if math.isfinite(v)])
    labels = []
    bars: list[tuple[int, float]] = []  # (position, median / divisor): drawn in one call, as are the error bars
    errors: list[tuple[int, float, float, float]] = []  # (position, median, below, above) / divisor
    cuts: list[tuple[int, float, float]] = []  # (position, low, cut) / divisor: an interval cut at the panel's scale
    for i, (label, cell) in enumerate(zip(targets, cells, strict=True)):
        text, notes = _bar_label(report, row, label, cell)
        used_notes |= notes
        if cell.summary is None:
            where = {"xycoords": ("axes fraction", "data"), "xytext": (4, 0), "textcoords": "offset points"}
            labels.append(ax.annotate(text, (0.0, i), **where, va="center", fontsize=7.5, color="#B00020"))
            continue
        low, high, level = intervals[label]
        median = cell.summary.median
        bars.append((i, median / divisor))
        reaches = median  # where the drawing of this target ends: its bar or its whisker
        if level and _too_wide(low, high):  # drawn, it would claim a range the samples do not pin down
            text += f" {TOO_WIDE_MARK}"
            marks[TOO_WIDE_MARK].add(cell.summary.n)
        elif level and high > cut:  # no cap at its end: an arrowhead, drawn below
            cuts.append((i, low / divisor, cut / divisor))
            marks[CUT_MARK].add(cell.summary.n)
            reaches = max(median, cut)
        elif level:
            errors.append((i, median / divisor, max(0.0, median - low) / divisor, max(0.0, high - median) / divisor))
            reaches = max(median, high)
        end = reaches / divisor
        labels.append(ax.annotate(text, (end, i), xytext=(4, 0), textcoords="offset points", va="center",
                                  fontsize=7.5, color="black"))  # fmt: skip
    if bars:  # one artist call per panel, not per bar: a chart of 100 bars is drawn in a fraction of the time
        ax.barh([i for i, _ in bars], [v for _, v in bars], 0.7, color=[COLOURS[i % len(COLOURS)] for i, _ in bars],
                hatch=[HATCHES[i % len(HATCHES)] for i, _ in bars], edgecolor="black", linewidth=0.6)  # fmt: skip
    if errors:
        ax.errorbar([m for _, m, _, _ in errors], [i for i, _, _, _ in errors],
                    xerr=[[b for _, _, b, _ in errors], [a for _, _, _, a in errors]], fmt="none", ecolor="black",
                    capsize=2.5, elinewidth=0.9)  # fmt: skip
    if cuts:  # a cut interval: a cap at its low end, an arrowhead where it goes on past the scale
        ax.hlines([i for i, _, _ in cuts], [lo for _, lo, _ in cuts], [c for _, _, c in cuts], color="black",
                  linewidth=0.9)  # fmt: skip
        ax.plot([lo for _, lo, _ in cuts], [i for i, _, _ in cuts], linestyle="none", marker="|", markersize=5,
                color="black", markeredgewidth=0.9)  # fmt: skip
        # near-black, not black: an SVG leaves a black fill unsaid, and dark mode (chartkit.themed) could not turn it
        ax.plot([c for _, _, c in cuts], [i for i, _, _ in cuts], linestyle="none", marker=">", markersize=4.5,
                color="#111111")  # fmt: skip
    ax.set_yticks(range(len(targets)), [wrap(legend_label(report, t), NAME_CHARS) for t in targets], fontsize=7.5)
    ax.set_ylim(len(targets) - 0.5, -0.5)
    names_pt = max(len(line) for t in targets for line in wrap(legend_label(report, t), NAME_CHARS).split("\n")) * 4.6
    # the title starts over the plot, right of the targets' names: it wraps within what is left of the panel
    # (wrapped to the whole panel's width it ran past a phone's figure and the layout cut the names off)
    chars = min(chars, int((panel_pt - names_pt) / (8 * 0.55)))
    set_title(ax, wrap(f"{row.title} · {row.metric.label} ({_better(row.metric)})", chars), fontsize=8, loc="left")
    counting = row.metric.unit in ("IOPS", "1/s", "")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_count(v) if counting else f"{v:g}"))
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.tick_params(axis="x", labelsize=7.5)
    ax.set_xlabel(unit, fontsize=7.5)
    ends = [label.xy[0] for label in labels if label.xycoords == "data"]
    if ends:
        plot_pt = max(60.0, panel_pt - names_pt - 24)
        need_pt = max(len(label.get_text()) for label in labels) * 4.6 + 10  # 7.5 pt characters, about
        ax.set_xlim(0, max(ends) * plot_pt / max(20.0, plot_pt - need_pt))
    else:
        ax.set_xlim(left=0)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    return labels


NAME_CHARS = 24  # a target's name wraps past this: "c2x (tmpfs) (baseline)" stays on one line
MARGIN_IN = 8 / 72  # between a panel's text and the figure's edge (the layout's 3 pt left names 1 px off it)
CUT_AT = 2.0  # an interval reaching further than this many times the panel's largest median is cut there
TOO_WIDE_MARK, CUT_MARK = "‡", "▸"


def _too_wide(low: float, high: float) -> bool:
    """Ends more than TOO_WIDE_SPAN apart: the tables' "too wide to rank" (analysis/stats.py)."""
    return low <= 0 or high / low > TOO_WIDE_SPAN


def _mark_words(mark: str, counts: set[int]) -> str:
    """The footer's line for a mark on the bars, with the sample counts of the cells it is on."""
    n = f"n={min(counts)}" if len(counts) == 1 else f"n={min(counts)}–{max(counts)}"
    if mark == TOO_WIDE_MARK:
        return (f"{mark} interval too wide to draw ({n}): its ends are more than {TOO_WIDE_SPAN:g}× apart, too wide "
                "to rank; more samples narrow it")  # fmt: skip
    return f"{mark} interval cut at {CUT_AT:g}× the panel's largest median ({n}): it reaches further"


def cell_interval(cell: Cell) -> tuple[float, float, float]:
    """(low, high, level): the cell's own interval as the tables compute it (analysis/stats.py:
    the median's distribution-free interval, at the confidence it really has); level 0 without one."""
    summary = cell.summary
    if summary is None or summary.ci_level <= 0:
        centre = summary.median if summary is not None else math.nan
        return centre, centre, 0.0
    return summary.ci_low, summary.ci_high, summary.ci_level


def _interval_words(levels: set[float]) -> str:
    return interval_phrase(sorted(levels))


def _bar_label(report: Report, row: Row, target: str, cell: Cell) -> tuple[str, set[int]]:
    """'2.28 GB/s [1]', 'failed' where no sample succeeded; and the notes it names."""
    if cell.summary is None:
        return ("failed" if cell.failed else "no data"), set()
    marks = report.measurement_marks(cell)
    text = format_value(cell.summary.median, row.metric)
    return text + (" [" + ",".join(map(str, marks)) + "]" if marks else ""), set(marks)
