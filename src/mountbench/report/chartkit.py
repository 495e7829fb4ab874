"""The chart kit every report chart draws with (matplotlib, Agg, PNG and SVG): colours,
hatches and markers readable in black and white, units that keep axis numbers readable,
titles wrapped to the figure, legends outside the plot, the notes under it, and the
rendering to PNG, SVG and inline SVG.

Public so that charts.py and every section's chart (report/sections/) draw alike; it
imports nothing of the report but its types, and no chart module.
"""

from __future__ import annotations

import io
import math
import multiprocessing
import os
import re
import textwrap
import threading
from collections.abc import Sequence

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from mountbench.analysis.metrics import MetricInfo
from mountbench.errors import UsageError
from mountbench.report.chartkeys import Chart
from mountbench.report.model import Report
from mountbench.units import format_count

matplotlib.use("Agg")  # never a display, even when pyplot is imported elsewhere

WIDE_IN = 8.0  # inches: the page's and the files' charts
NARROW_IN = 3.7  # inches (355 CSS px): drawn for a phone, shown at its own size there so no text shrinks

# Okabe-Ito: distinguishable with colour-vision deficiencies; hatches and markers for print.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")
HATCHES = ("", "///", "\\\\\\", "xxx", "---", "|||", "+++", "//", "\\\\", "x")  # lines only: dots bloat SVG
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":")
LOG_SPAN = 100.0  # largest / smallest value at or above which an axis goes logarithmic (sweeps)
FORMATS = ("png", "svg")
RC = {"svg.fonttype": "none", "svg.hashsalt": "mountbench", "font.size": 9, "hatch.linewidth": 0.6}


def render(chart: Chart, fmt: str, *, narrow: bool = False) -> bytes:
    """The chart as PNG or SVG bytes; ``narrow``: its drawing for a phone's width (Chart.narrow)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown chart format {fmt!r}; use png or svg")
    draw = chart.narrow if narrow else chart.draw
    if draw is None:
        raise ValueError(f"chart {chart.key} has no drawing for a narrow screen")
    with matplotlib.rc_context(RC):
        figure = draw()
        buffer = io.BytesIO()
        metadata = {"Date": None} if fmt == "svg" else {"Software": "mountbench"}
        figure.savefig(buffer, format=fmt, dpi=110, metadata=metadata)
    return buffer.getvalue()


# --- rendering several charts at once ----------------------------------------------------------------
# A document's charts are independent drawings, each all CPU: on a machine with a second CPU free they are
# drawn in forked worker processes, two or more at a time (a default run's page: most of its time is its
# charts). Forked, so that the workers inherit the charts' drawing functions (closures, which cannot be
# pickled) and the modules already imported; never from a process running other threads (a thread holding
# a lock at the fork would leave it held in the child), nor where fork does not exist: there, one by one.
# Each chart's bytes are the same either way (svg.hashsalt is fixed).

Job = tuple[Chart, str, bool]  # (chart, "png" | "svg", narrow)
_JOBS: list[Job] = []  # what the forked workers render, by index (set only while a pool runs)


def render_all(jobs: Sequence[Job], *, workers: int | None = None) -> list[bytes]:
    """Each (chart, format, narrow) rendered, in order; in parallel where that is safe (above),
    in as many processes as CPUs are free (``workers``: that many, where it is safe)."""
    jobs = list(jobs)
    for _, fmt, _narrow in jobs:
        if fmt not in FORMATS:
            raise UsageError(f"unknown chart format {fmt!r}; use png or svg")
    workers = min(len(jobs), workers or _free_cpus())
    if workers < 2 or threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [render(chart, fmt, narrow=narrow) for chart, fmt, narrow in jobs]
    global _JOBS
    _JOBS = jobs
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            return pool.map(_render_job, range(len(jobs)), chunksize=1)
    finally:
        _JOBS = []


def _render_job(index: int) -> bytes:
    chart, fmt, narrow = _JOBS[index]
    return render(chart, fmt, narrow=narrow)


def _free_cpus() -> int:
    """The CPUs this process may run on, less those others' recent load takes (the load average
    counts this process too: one CPU of it is ours). A busy machine draws one chart at a time."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    others = max(0.0, os.getloadavg()[0] - 1)
    return max(1, min(MAX_WORKERS, round(cpus - others)))


MAX_WORKERS = 4  # past this, forking and collecting cost more than the charts left to share


# Dark mode without a second drawing: a chart is drawn once, for white paper, and its inline SVG
# names its neutral ink (text, axes, frames, error bars, the white background) as CSS custom
# properties, --cRRGGBB, whose light value is the colour drawn and whose dark value (page_css,
# under prefers-color-scheme: dark) is that grey turned over onto the page's dark background.
# The targets' colours (COLOURS) stay as drawn in both schemes, the verdicts' colours follow the
# page's (--better, --worse), and what sits on a coloured cell keeps its ink: a hatch (inside its
# <pattern>) and a text drawn with on_cell().
PAGE_INK = {
    "#0b6e3b": "var(--better)",
    "#a3261b": "var(--worse)",
    "#b00020": "var(--worse)",
    "#555555": "var(--muted)",
    "#7a4b00": "var(--mark)",
}
DARK_PAGE, DARK_INK = 0x16, 0xE6  # the page's dark background and text (report.html.j2), as greys
ON_CELL = "on-cell"
_KEPT = re.compile(r'(<pattern\b.*?</pattern>|<g id="on-cell">.*?</g>)', re.S)
_INK = re.compile(r"(fill|stroke): (#[0-9a-fA-F]{6})")
_DEFAULT_TEXT = re.compile(r'<text style="(?![^"]*fill:)')
_VARIABLE = re.compile(r"var\(--c([0-9a-f]{6})\)")


def on_cell(text):
    """Mark a text drawn on a coloured cell: its ink stays as drawn in dark mode, as the cell does."""
    text.set_gid(ON_CELL)
    return text


def dark_grey(colour: str) -> str | None:
    """The dark-mode colour of a neutral grey ('#333333' -> '#bcbcbc': dark ink turns light, white
    turns into the page's dark background); None for a colour that is not a grey or is a target's."""
    colour = colour.lower()
    if colour in {c.lower() for c in COLOURS}:
        return None
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    if max(red, green, blue) - min(red, green, blue) > 16:
        return None
    level = round(DARK_PAGE + (255 - (red + green + blue) / 3) * (DARK_INK - DARK_PAGE) / 255)
    return f"#{level:02x}{level:02x}{level:02x}"


def _theme(part: str) -> str:
    def ink(match: re.Match) -> str:
        colour = match.group(2).lower()
        if colour in PAGE_INK:
            return f"{match.group(1)}: {PAGE_INK[colour]}"
        if dark_grey(colour) is None:
            return match.group(0)
        return f"{match.group(1)}: var(--c{colour[1:]})"

    return _INK.sub(ink, _DEFAULT_TEXT.sub('<text style="fill: var(--c000000); ', part))


def themed(svg: str) -> str:
    """The SVG's neutral ink as CSS custom properties (see PAGE_INK): one drawing for both schemes.
    Only style properties are rewritten (var() is no presentation attribute value)."""
    parts = _KEPT.split(svg)
    parts[::2] = [_theme(part) for part in parts[::2]]
    return "".join(parts).replace(f'<g id="{ON_CELL}">', f'<g class="{ON_CELL}">')


def page_css(html: str) -> str:
    """The custom properties a page's charts use: each grey as drawn, and turned over in dark mode
    (screen only: a printed page is white)."""
    used = sorted(set(_VARIABLE.findall(html)))
    if not used:
        return ""
    light = "".join(f"--c{c}:#{c};" for c in used)
    dark = "".join(f"--c{c}:{dark_grey('#' + c)};" for c in used)
    return f":root{{{light}}}\n@media screen and (prefers-color-scheme: dark){{:root{{{dark}}}}}\n"


def inline_svg(chart: Chart, *, narrow: bool = False, svg: bytes | None = None) -> str:
    """The chart as an <svg> element for embedding in HTML, ids prefixed so that several charts
    in one page never share one, its ink themed (themed(); page_css() defines the colours).
    ``narrow``: the drawing made for a phone's width (Chart.narrow); ``svg``: that drawing
    already rendered (render_all)."""
    text = (svg if svg is not None else render(chart, "svg", narrow=narrow)).decode()
    text = themed(re.sub(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*", "", text))
    prefix = f"{chart.key}{'-narrow' if narrow else ''}-"
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", text)
    text = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', text)
    return text.replace("<svg ", f'<svg role="img" class="themed" aria-label="{_attr(chart.title)}" ', 1)


WIDER_ONLY = "This chart is drawn for wider screens; the table above holds its numbers."


def page_chart(chart: Chart, *, note: str = WIDER_ONLY, svgs: Sequence[bytes] = ()) -> str:
    """A chart as the page shows it, inside its <figure>: the drawing for wide screens and, for
    a phone (the page's CSS shows one or the other), the drawing made for its width or, for a
    chart that has none, ``note`` (its numbers are in a table, whose text a phone can read).
    ``svgs``: those drawings already rendered (page_jobs, render_all)."""
    wide = f'<div class="chart-wide">{inline_svg(chart, svg=svgs[0] if svgs else None)}</div>'
    if chart.narrow is not None:
        narrow = inline_svg(chart, narrow=True, svg=svgs[1] if svgs else None)
        return wide + f'<div class="chart-narrow">{narrow}</div>'
    return wide + f'<p class="chart-narrow muted">{_attr(note)}</p>' if note else wide


def page_jobs(chart: Chart) -> list[Job]:
    """What page_chart draws of a chart, for render_all: its wide drawing, and its narrow one if any."""
    return [(chart, "svg", False)] + ([(chart, "svg", True)] if chart.narrow is not None else [])


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def interval_phrase(levels: Sequence[float]) -> str:
    """What the error bars are: '75% confidence interval of the median (the most 3 samples allow)'."""
    shown = sorted({level for level in levels if level > 0})
    if not shown:
        return "none (one sample: no interval)"
    text = "/".join(f"{level:.0%}" for level in shown)
    if max(shown) < 0.95:
        return f"{text} confidence interval of the median (the most a few samples allow; 95% needs 6 or more)"
    return f"{text} confidence interval of the median"


# --- layout that keeps every text inside the figure ----------------------------------------------------


def legend_outside(figure: Figure, ax, entries: int) -> None:
    """The legend outside the plot, at its right: it never covers a bar or an error bar."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8, frameon=False)


def renderer_for(figure: Figure):
    """A renderer to measure text with (figures built without pyplot have no canvas of their own),
    the figure laid out by its layout engine first. Laying out places every axes, title, legend
    and tick label; a draw (without output) would place nothing more and cost as much again."""
    if not hasattr(figure.canvas, "get_renderer"):
        FigureCanvasAgg(figure)
    renderer = figure.canvas.get_renderer()
    engine = figure.get_layout_engine()
    if engine is not None:
        engine.execute(figure)
    return renderer


def fit_titles(figure: Figure, ax, title: str, subtitle: str, labels: Sequence = (), *, log: bool = False,
                both_sides: bool = False) -> None:  # fmt: skip
    """The title over the figure and the subtitle over the plot, each wrapped until it fits
    (a subtitle centred over a narrow plot was clipped before); then the value axis widened
    until every bar's ``labels`` fit inside the plot. Two layouts at most (each costs much):
    the subtitle is wrapped by measuring it (its width does not move the plot), the figure laid
    out again only when it wrapped anew (its height does), and the labels, left out of the
    layout, are kept inside by widening the axis, which moves no panel."""
    for label in labels:  # kept inside the plot by widening its axis, so the layout need not measure them
        label.set_in_layout(False)
    title_chars = int(figure.get_figwidth() * 72 / (11 * 0.62))
    figure.suptitle(wrap(title, title_chars), fontsize=11, fontweight="bold")
    chars = int(figure.get_figwidth() * 72 / (8 * 0.55))
    shown = set_title(ax, wrap(subtitle, chars), fontsize=8, color="#333333", loc="left")
    renderer = renderer_for(figure)
    plot = ax.get_window_extent(renderer)
    right = min(figure.bbox.x1, plot.x1) - 2  # the legend is right of the plot
    wrapped = False
    for _ in range(6):
        box = shown.get_window_extent(renderer)
        if box.x1 <= right:
            break
        chars = int(chars * min(0.9, (right - box.x0) / max(1.0, box.width)))
        shown.set_text(wrap(subtitle, chars))
        wrapped = True
    if wrapped:  # taller: the plot moves down
        renderer = renderer_for(figure)
    for _ in range(4):
        if not labels or not widen_for(ax, ax.get_window_extent(renderer), renderer, labels, log, both_sides):
            return


def set_title(ax, text: str, **style):
    """An axes' title at its top (y=1), not moved over ticks and labels above the plot, which no
    chart has: matplotlib's placement measures every y tick label at each layout and draw."""
    return ax.set_title(text, y=1.0, **style)


def widen_for(ax, plot, renderer, labels: Sequence, log: bool = False, both_sides: bool = False) -> bool:
    """Widen the value axis so that every label fits inside the plot; True when it did."""
    gap = 6  # pixels between a label and the plot's frame
    boxes = [t.get_window_extent(renderer) for t in labels]  # once each: an annotation's extent costs much
    over_right = max(box.x1 for box in boxes) + gap - plot.x1
    over_left = plot.x0 - min(box.x0 for box in boxes) + gap
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


# --- axes, units and layout ---------------------------------------------------------------------------


def spans_orders(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return len(positive) >= 2 and max(positive) / min(positive) >= LOG_SPAN


def axis_unit(metric: MetricInfo, values: Sequence[float]) -> tuple[float, str]:
    """(divisor, unit name) that keeps axis numbers readable; the unit is always named."""
    peak = max((abs(v) for v in values), default=0.0)
    scales: dict[str, tuple[tuple[float, str], ...]] = {
        "B/s": ((1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1, "B/s")),
        "B": ((1024**4, "TiB"), (1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB"), (1, "bytes")),
        "s": ((1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")),
    }
    if metric.unit in scales:
        for divisor, name in scales[metric.unit]:
            if peak >= divisor:
                return divisor, name
        return scales[metric.unit][-1]
    names = {"IOPS": "IOPS", "%": "% of one CPU", "1/s": "per second"}
    return 1.0, names.get(metric.unit, metric.unit or "value")


def axis_label(metric: MetricInfo, unit: str, log: bool) -> str:
    return f"{metric.label} ({unit}{', log scale' if log else ''})"


def value_axis(axis, set_scale, metric: MetricInfo, unit: str, log: bool) -> None:
    counting = metric.unit in ("IOPS", "1/s", "")
    if log:
        set_scale("log")
        axis.set_minor_formatter(NullFormatter())
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_count(v) if counting else f"{v:g}"))


def new_figure(width: float, height: float) -> tuple[Figure, object]:
    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.add_subplot()


def titles(figure: Figure, ax, title: str, subtitle: str) -> None:
    figure.suptitle(wrap(title, int(figure.get_figwidth() * 11)), fontsize=11, fontweight="bold")
    set_title(ax, wrap(subtitle, int(figure.get_figwidth() * 14)), fontsize=8, color="#333333")


def notes_footer(figure: Figure, report: Report, numbers: set[int]) -> None:
    if not numbers:
        return
    width = int(figure.get_figwidth() * 15)
    lines = [textwrap.fill(f"[{n}] {report.notes[n - 1]}", width, subsequent_indent="     ") for n in sorted(numbers)]
    figure.supxlabel("\n".join(lines), x=0.01, ha="left", fontsize=7, color="#7A4B00")


def legend_label(report: Report, label: str) -> str:
    return f"{label} (baseline)" if label == report.summary.baseline else label


def wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, max(8, width))) or text
