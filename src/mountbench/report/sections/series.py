"""Within each sample (HTML only): a fio workload's bandwidth or IOPS over the sample's
time, from the per-interval logs stored with every sample.

One chart, a panel per workload whose samples carry a series for its headline metric: every
sample of every target as a thin line in the target's colour and marker (solid; dotted only
for a sample flagged 'not steady'), so a warm-up ramp, a cliff when a cache fills or
throttling shows as a shape rather than hiding in a median.
Workloads with a sample flagged 'not steady' come first; at most MAX_CHARTS are drawn
(the JSON export holds every series)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mountbench.analysis.summary import Row
from mountbench.blocks.parts import Chapter, Figure, Paragraph
from mountbench.model import UNSTEADY, RunData, Sample
from mountbench.report.chartkeys import Chart
from mountbench.report.model import Report
from mountbench.report.sections.section import Options, nothing

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_CHARTS = 12


@dataclass(frozen=True)
class SeriesCase:
    row: Row  # the workload's headline row (its metric names the series)
    samples: dict[str, list[Sample]]  # target -> its samples with that series, in round order

    @property
    def key(self) -> str:
        return f"series-{self.row.workload}-{self.row.metric.name}"

    @property
    def unsteady(self) -> bool:
        return any(c.code == UNSTEADY for samples in self.samples.values() for s in samples for c in s.caveats)


def series_cases(report: Report) -> tuple[list[SeriesCase], int]:
    """(the cases to draw, how many more workloads have series but are not drawn)."""
    cases = []
    seen: set[str] = set()
    for row in report.summary.rows:
        if row.workload in seen or row.metric.name not in _SERIES_METRICS:
            continue
        found = _samples(report.runs, row)
        if found:
            seen.add(row.workload)
            cases.append(SeriesCase(row, found))
    cases.sort(key=lambda case: not case.unsteady)  # stable: report order within each kind
    return cases[:MAX_CHARTS], max(0, len(cases) - MAX_CHARTS)


_SERIES_METRICS = {f"{d}.{k}" for d in ("read", "write", "trim") for k in ("bw", "iops")}


def _samples(runs: Sequence[RunData], row: Row) -> dict[str, list[Sample]]:
    found: dict[str, list[Sample]] = {}
    for run in runs:
        for sample in sorted(run.samples, key=lambda s: s.round):
            if sample.workload == row.workload and sample.ok and len(sample.series.get(row.metric.name, [])) >= 2:
                found.setdefault(sample.target, []).append(sample)
    return found


def figures(report: Report) -> list[Chart]:
    """Drawn into the HTML page only (Markdown does not link them; the JSON export has the series):
    one chart, a panel per workload (small multiples), also drawn for a phone's width."""
    cases, _more = series_cases(report)
    if not cases:
        return []
    return [
        Chart(
            "series",
            "series",
            SERIES_TITLE,
            lambda: series_figure(report, cases),
            lambda: series_figure(report, cases, width=3.7),
        )
    ]


SERIES_TITLE = "Within each sample: bandwidth or IOPS over the sample's time"


def series_title(case: SeriesCase) -> str:
    return f"{case.row.title}: {case.row.metric.label}"


def series_figure(report: Report, cases: Sequence[SeriesCase], width: float = 8.0) -> Figure:
    """A panel per workload; in each, one line per sample in its target's colour and marker. Line
    styles mean one thing only: solid a steady sample, dotted a sample flagged 'not steady' (the
    legend says so, and a target's style never changes otherwise)."""
    import math

    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    from mountbench.report.chartkit import COLOURS, MARKERS, axis_unit, legend_label, wrap
    from mountbench.units import format_count

    columns = 1 if width < 6 or len(cases) == 1 else 2
    lines = math.ceil(len(cases) / columns)
    figure = Figure(figsize=(width, 1.4 + 2.1 * lines), layout="constrained")
    axes = figure.subplots(lines, columns, squeeze=False)
    unsteady_seen = False
    for index, ax in enumerate(axes.flat):
        if index >= len(cases):
            ax.set_visible(False)
            continue
        case = cases[index]
        name = case.row.metric.name
        values = [v for samples in case.samples.values() for s in samples for v in s.series[name]]
        divisor, unit = axis_unit(case.row.metric, values)
        for i, target in enumerate(report.summary.targets):
            for sample in case.samples.get(target, []):
                step = (sample.series.get("interval_s") or [1.0])[0]
                points = sample.series[name]
                steady = not any(c.code == UNSTEADY for c in sample.caveats)
                unsteady_seen |= not steady
                ax.plot(
                    [step * (k + 1) for k in range(len(points))],
                    [v / divisor for v in points],
                    color=COLOURS[i % len(COLOURS)],
                    linestyle="-" if steady else ":",
                    linewidth=1.0 if steady else 1.6,
                    marker=MARKERS[i % len(MARKERS)],
                    markersize=2.5,
                    markevery=max(1, len(points) // 5),
                    alpha=0.8,
                )
        counting = case.row.metric.unit in ("IOPS", "1/s", "")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _, c=counting: format_count(v) if c else f"{v:g}"))
        ax.yaxis.set_major_locator(MaxNLocator(4))
        ax.tick_params(labelsize=7.5)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.set_title(wrap(series_title(case), int(width / columns * 72 / (8 * 0.55))), fontsize=8, loc="left")
        ax.set_ylabel(unit, fontsize=7.5)
        ax.set_xlabel("time within the sample (s)", fontsize=7.5)
    handles = [
        Line2D([], [], color=COLOURS[i % len(COLOURS)], marker=MARKERS[i % len(MARKERS)], markersize=3,
               label=legend_label(report, target))
        for i, target in enumerate(report.summary.targets)
    ]  # fmt: skip
    if unsteady_seen:
        handles.append(Line2D([], [], color="black", linestyle=":", linewidth=1.6, label="dotted: not steady"))
    figure.legend(
        handles=handles,
        loc="outside upper center",
        ncols=2 if width < 6 else 4,
        fontsize=8,
        frameon=False,
        title=wrap(SERIES_TITLE, int(width * 72 / (10.5 * 0.6))),
        title_fontproperties={"weight": "bold", "size": 10.5},
    )
    note = (
        "one line per sample, from fio's per-interval log (the first interval holds fio's ramp-up); "
        "solid: a steady sample; dotted: a sample flagged as not steady"
    )
    figure.supxlabel(wrap(note, int(width * 72 / (7.5 * 0.55))), x=0.01, ha="left", fontsize=7.5)
    return figure


# --- the section's parts -------------------------------------------------------------------------


def chapters(report: Report, options: Options) -> list[Chapter]:
    """The page's chart of every sample's series (left out where it is not drawn: Markdown, a page
    without charts)."""
    cases, more = series_cases(report)
    if not cases:
        return []
    more_text = f" {more} more workloads have these series in the JSON export." if more else ""
    said = (
        "Bandwidth or IOPS over each sample's time, from fio's per-interval logs: a ramp, a cliff or throttling "
        f"shows here as a shape.{more_text}"
    )  # the title is in the chart: no caption repeating it
    blocks = (Paragraph(said, "caption"), Figure("series", SERIES_TITLE))
    return [Chapter("within-samples", "Within each sample", blocks, figures_only=True)]


screen = charts = exports = nothing  # parts this section does not have
page_charts = figures  # drawn into the page alone
