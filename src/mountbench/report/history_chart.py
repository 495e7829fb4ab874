"""The chart of a storage's history (analysis/overtime.py): a panel per workload, one point per run (its
median, its interval as a bar), a line through the runs of one comparable segment only (a cut between
segments is a grey band, and no line crosses it), the level between two steps as a dashed line and
each step the data support as a vertical line with its factor. Drawn with the report's chart kit.
"""

from __future__ import annotations

import datetime
import itertools
import math

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from mountbench.analysis.metrics import describe
from mountbench.analysis.overtime import History, Series
from mountbench.report.chartkeys import Chart, slug
from mountbench.report.chartkit import COLOURS, axis_unit, wrap
from mountbench.report.phrasing import factor_text
from mountbench.units import format_count

CUT = "#999999"
STEP = "#a3261b"  # the page's "worse" ink; a step is news whichever way it goes
LEVEL = "#555555"


def chart_title(history: History) -> str:
    return f"History of {history.storage.text}: each run's median and interval, steps between runs"


def history_chart(history: History) -> Chart:
    return Chart(
        f"history-{slug(history.storage.path)}",
        "history",
        chart_title(history),
        lambda: history_figure(history),
        lambda: history_figure(history, width=3.7),
    )


def history_figure(history: History, width: float = 8.0) -> Figure:
    series = list(history.series)
    figure = Figure(figsize=(width, 1.2 + 2.2 * max(1, len(series))), layout="constrained")
    axes = figure.subplots(max(1, len(series)), 1, squeeze=False)[:, 0]
    positions = {run_id: index for index, (run_id, _, _) in enumerate(history.runs)}
    for ax, one in zip(axes, series, strict=False):
        _panel(ax, one, positions, history, width)
    ticks = list(range(len(history.runs)))
    days = {datetime.datetime.fromtimestamp(created).date() for _, created, _ in history.runs}
    shown = "%H:%M" if len(days) == 1 else "%m-%d"  # runs of one day: their times
    labels = [f"{index + 1}\n{datetime.datetime.fromtimestamp(created):{shown}}"
              for index, (_, created, _) in enumerate(history.runs)]  # fmt: skip
    every = max(1, math.ceil(len(ticks) / (6 if width < 6 else 14)))
    for ax in axes:
        ax.set_xticks(ticks[::every], labels[::every], fontsize=7)
        ax.set_xlim(-0.6, len(ticks) - 0.4)
    axes[-1].set_xlabel(f"runs, oldest first (run number, {'time' if len(days) == 1 else 'date'})", fontsize=7.5)
    figure.suptitle(wrap(chart_title(history), int(width * 72 / (10.5 * 0.6))), fontsize=10.5, fontweight="bold")
    note = ("bars: each run's median and its distribution-free interval; dashed: the level between steps; "
            "red line: a step the data support (5 % for all of this storage's workloads together); grey band: "
            "the runs on either side were measured otherwise (not comparable)")  # fmt: skip
    figure.supxlabel(wrap(note, int(width * 72 / (7 * 0.55))), x=0.01, ha="left", fontsize=7)
    return figure


def _panel(ax, series: Series, positions: dict[str, int], history: History, width: float) -> None:
    info = describe(series.metric)
    divisor, unit = axis_unit(info, [p.high for p in series.points])
    colour = COLOURS[0]
    for start, end in series.segments():
        points = series.points[start:end]
        xs = [positions[p.run_id] for p in points]
        ys = [p.median / divisor for p in points]
        below = [(p.median - p.low) / divisor for p in points]
        above = [(p.high - p.median) / divisor for p in points]
        ax.errorbar(xs, ys, yerr=[below, above], color=colour, marker="o", markersize=3.5, linewidth=1.2,
                    capsize=2.5, elinewidth=0.9)  # fmt: skip
        _levels(ax, series, start, end, positions, divisor)
    for cut in history.cuts:
        ax.axvspan(cut.index - 0.55, cut.index - 0.45, color=CUT, alpha=0.5, linewidth=0)
    top = max((p.high / divisor for p in series.points), default=1.0)
    for step in series.steps:
        x = positions[series.points[step.index].run_id] - 0.5
        ax.axvline(x, color=STEP, linewidth=1.2)
        ax.annotate(step_words(step.factor), (x, top), xytext=(3, -2),
                    textcoords="offset points", fontsize=7, color=STEP, va="top")  # fmt: skip
    ax.set_ylim(bottom=0, top=top * 1.18)
    counting = info.unit in ("IOPS", "1/s", "")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_count(v) if counting else f"{v:g}"))
    ax.set_ylabel(unit, fontsize=7.5)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    chars = int(width * 72 / (8 * 0.55))
    ax.set_title(wrap(f"{series.title}: {info.label}", chars), fontsize=8, loc="left")


def _levels(ax, series: Series, start: int, end: int, positions: dict[str, int], divisor: float) -> None:
    """The level (geometric mean of the runs' means) of each stretch between steps, dashed."""
    cuts = sorted({start, end, *(s.index for s in series.steps if start < s.index < end)})
    for left, right in itertools.pairwise(cuts):
        points = series.points[left:right]
        level = math.exp(sum(p.mean_log for p in points) / len(points)) / divisor
        xs = [positions[points[0].run_id] - 0.3, positions[points[-1].run_id] + 0.3]
        ax.plot(xs, [level, level], color=LEVEL, linestyle="--", linewidth=0.9)


def step_words(factor: float) -> str:
    """'2.01× lower', '1.50× higher': the level after a step against the level before."""
    up = factor >= 1
    return f"{factor_text(factor if up else 1 / factor)} {'higher' if up else 'lower'}"
