"""The chart against the baseline: every comparison oriented so that right is always better
("6.20× slower" reaches left whatever the metric's direction), 95% CI, faded for "≈ same"
and "undecided"; on a phone, the legend over the plot and labels wrapped shorter.
"""

from __future__ import annotations

import math
import re

import matplotlib.colors
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

from mountbench.analysis.quality import level_text
from mountbench.analysis.summary import Row
from mountbench.report.chartkit import (
    COLOURS,
    HATCHES,
    WIDE_IN,
    fit_titles,
    legend_label,
    legend_outside,
    new_figure,
    renderer_for,
    widen_for,
    wrap,
)
from mountbench.report.model import Report
from mountbench.report.phrasing import SAME, UNDECIDED, UNKNOWN, cell_standing, sig3, words


def ratio_title(report: Report) -> str:
    return f"Each target against {report.summary.baseline} (the baseline): right is better"


def ratio_figure(report: Report, width: float = WIDE_IN) -> Figure:
    """Every comparison with the baseline as 'times better', on a log axis: right is better.
    Narrower than 6 inches (a phone's): the legend over the plot, labels wrapped shorter."""
    summary = report.summary
    others = [t for t in summary.targets if t != summary.baseline]
    rows = [row for row in summary.rows if any(row.cells[t].comparison for t in others)]
    speed_only = all(words(row.metric) == ("faster", "slower") for row in rows)
    good, bad = ("faster", "slower") if speed_only else ("better", "worse")
    bar_height = 0.8 / max(1, len(others))
    narrow = width < 6
    figure, ax = new_figure(
        width, _figure_height(len(rows) * len(others)) * (1.3 if narrow else 1) + (1.6 if narrow else 0)
    )
    if narrow:  # room above each group of bars for its workload's name
        bar_height = 0.5 / max(1, len(others))
    extremes = [1.0]
    labels = []
    for i, label in enumerate(others):
        index = summary.targets.index(label)
        bars = []
        for j, row in enumerate(rows):
            said = cell_standing(row, label)
            if said is not None:
                shift = 0.2 if narrow else 0.0  # a phone's chart: under the workload's name
                bars.append((j + shift + (i - (len(others) - 1) / 2) * bar_height, said, _better_x(said, row)))
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
                ha="left" if right else "right", va="center", fontsize=7.5, color=colour_text,
            ))  # fmt: skip
    ax.set_xscale("log")
    lowest, highest = min(extremes), max(extremes)
    span = max(highest, 1 / lowest, 2.0)
    ax.set_xlim(1 / (span * 1.6), span * 1.6)  # symmetric: 'same' in the middle
    ax.axvline(1, color="black", linewidth=1)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.set_axisbelow(True)
    subtitle = (
        "bars: ratio of geometric means, turned so that right is better; error bars: "
        f"{level_text(report.summary.family.level)} confidence interval (all the run's comparisons together); "
        f"faded: ≈ same (the interval lies within ±5%{_same_level(report)}) or undecided (it contains 1 but "
        "reaches further; too wide to rank: no error bar for an interval over 100× wide); at least N×: a "
        "difference whose interval is over 100× wide, its bar to the interval's near end; ?: too few samples for an "
        "interval"
    )
    if narrow:
        _narrow_ratio_layout(figure, ax, report, rows, subtitle, (good, bad), labels)
        return figure
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _times(v, good, bad)))
    ax.set_xlabel(f"← {bad} than {summary.baseline} · {good} →  (log scale)")
    ax.set_yticks(range(len(rows)), [wrap(f"{row.title} · {row.metric.label}", 40) for row in rows], fontsize=8)
    legend_outside(figure, ax, len(others))
    fit_titles(figure, ax, ratio_title(report), subtitle, labels, log=True, both_sides=True)
    _decade_ticks(figure, ax, (good, bad), 9.0)  # RC's font size
    figure.set_layout_engine("none")  # laid out by fit_titles: saving it need not lay it out again
    return figure


def _narrow_ratio_layout(figure: Figure, ax, report: Report, rows, subtitle: str, words: tuple[str, str],
                         labels: list) -> None:  # fmt: skip
    """A phone's ratio chart: each workload's name over its bars (not beside them, where it
    took half the width), decade ticks in two short lines, the title over the legend and the
    key under the plot."""
    good, bad = words
    ax.set_yticks(range(len(rows)), [""] * len(rows))
    ax.tick_params(axis="y", length=0)
    for j, row in enumerate(rows):
        ax.annotate(wrap(f"{row.title} · {row.metric.label}", 44), (0.01, j - 0.07), xycoords=("axes fraction", "data"),
                    xytext=(0, 1), textcoords="offset points", va="bottom", ha="left", fontsize=7.5)  # fmt: skip
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _times(v, good, bad).replace(" ", "\n")))
    ax.tick_params(axis="x", labelsize=7.5)
    ax.set_xlabel(f"← {bad} · {good} →  (log scale)", fontsize=8)
    heading = {"title": wrap(ratio_title(report), 44), "title_fontproperties": {"weight": "bold", "size": 10}}
    figure.legend(loc="outside upper center", ncols=2, fontsize=8, frameon=False, **heading)
    figure.supxlabel(wrap(subtitle, 62), x=0.01, ha="left", fontsize=7.5)
    for label in labels:  # kept inside the plot by widening its axis, so the layout need not measure them
        label.set_in_layout(False)
    renderer = renderer_for(figure)  # once: widening the axis for the labels moves nothing the layout placed
    for _ in range(6):
        if not widen_for(ax, ax.get_window_extent(renderer), renderer, labels, log=True, both_sides=True):
            break
    _decade_ticks(figure, ax, (good, bad), 7.5, lines=2)
    figure.set_layout_engine("none")  # laid out by the draws above


def _decade_ticks(figure: Figure, ax, words: tuple[str, str], size: float, lines: int = 1) -> None:
    """Label every decade of the ratio axis, or every second, third...: as many as fit side by side
    ('10000× slower1000× slower' ran together on a wide range). From the plot's width once laid out
    and the labels' lengths; 'same' (1) is always labelled. The decades between stay as grid lines."""
    low, high = ax.get_xlim()
    plot_pt = ax.get_position().width * figure.get_figwidth() * 72
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    per_decade = plot_pt / max(1e-9, math.log10(high / low))
    longest = max(
        len(part) for power in range(first, last + 1) for part in _times(10.0**power, *words).split(" ", lines - 1)
    )
    step = max(1, math.ceil((longest * size * 0.62 + 8) / per_decade))  # 0.62 em a character, 8 pt between
    # a label centred on its tick must not run past the figure's edge (a phone's '1000× slower' did)
    half = longest * size * 0.62 / 2
    left_pt = ax.get_position().x0 * figure.get_figwidth() * 72
    width_pt = figure.get_figwidth() * 72

    def fits(power: int) -> bool:
        at = left_pt + (power - math.log10(low)) * per_decade
        return power == 0 or (at - half >= 0 and at + half <= width_pt)

    ticks = [10.0**power for power in range(first, last + 1) if power % step == 0 and fits(power)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(LogLocator(base=10, subs=tuple(range(1, 10)), numticks=100))


def _better_x(said, row: Row) -> tuple[float, float, float]:
    """(point, low, high) on the 'times better' axis: above 1 better, below 1 worse."""
    if said.too_wide:
        return said.factor, math.nan, math.nan  # no error bar: it would span the whole axis
    if said.bounded:  # 'at least 4.07× slower': the bar to its near end, what it shows; no far end, no estimate
        near = said.low if said.word == words(row.metric)[0] else 1 / said.low
        return near, near, near
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
    text = sig3(factor)
    if re.fullmatch(r"\d+\.\d*", text):  # 2.50 → 2.5 on an axis; 1.00M stays as sig3 says it
        text = text.rstrip("0").rstrip(".")
    return f"{text}× {good if value > 1 else bad}"  # 100× slower, 2.5× faster


def _finite_or(value: float, fallback: float) -> float:
    return value if math.isfinite(value) else fallback


def _figure_height(bars: int) -> float:
    """How tall (inches) the chart of this many bars is drawn."""
    return max(3.2, min(30.0, 2.0 + 0.3 * bars))


def _same_level(report: Report) -> str:
    """'; two one-sided tests, together at 95%' when the run called any comparison the same (their
    intervals are the sameness tests': analysis/family.py)."""
    family = report.summary.family
    if not family.same:
        return ""
    return f"; two one-sided tests, the run's sameness claims together at {level_text(family.level)}"
