"""Within each sample (HTML only): a fio workload's bandwidth or IOPS over the sample's
time, from the per-interval logs stored with every sample.

One chart per workload whose samples carry a series for its headline metric: every
sample of every target as a thin line in the target's colour, so a warm-up ramp, a
cliff when a cache fills or throttling shows as a shape rather than hiding in a median.
Workloads with a sample flagged 'not steady' come first; at most MAX_CHARTS are drawn
(the JSON export holds every series)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

from markupsafe import Markup

from mountbench.analysis.summary import Row
from mountbench.model import UNSTEADY, RunData, Sample
from mountbench.report.chartkeys import Chart
from mountbench.report.content import Report
from mountbench.report.sections.base import Options, no_text, nothing

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
    """Drawn into the HTML page only (Markdown does not link them; the JSON export has the series)."""
    cases, _more = series_cases(report)
    return [
        Chart(case.key, "series", series_title(case), lambda case=case: series_figure(report, case)) for case in cases
    ]


def series_title(case: SeriesCase) -> str:
    return f"{case.row.title}: {case.row.metric.label} within each sample"


def series_figure(report: Report, case: SeriesCase) -> Figure:
    from matplotlib.figure import Figure

    from mountbench.report.chartkit import COLOURS, LINESTYLES, axis_unit, legend_label, titles

    name = case.row.metric.name
    values = [v for samples in case.samples.values() for s in samples for v in s.series[name]]
    divisor, unit = axis_unit(case.row.metric, values)
    figure = Figure(figsize=(8.6, 3.6), layout="constrained")
    ax = figure.add_subplot()
    for i, target in enumerate(report.summary.targets):
        samples = case.samples.get(target, [])
        colour = COLOURS[i % len(COLOURS)]
        for j, sample in enumerate(samples):
            step = (sample.series.get("interval_s") or [1.0])[0]
            points = sample.series[name]
            steady = not any(c.code == UNSTEADY for c in sample.caveats)
            ax.plot(
                [step * (k + 1) for k in range(len(points))],
                [v / divisor for v in points],
                color=colour,
                linestyle=LINESTYLES[i % len(LINESTYLES)] if steady else ":",
                linewidth=1.0 if steady else 1.6,
                alpha=0.75,
                label=legend_label(report, target) + f" ({len(samples)} samples)" if j == 0 else None,
            )
    ax.set_xlabel("time within the sample (s)")
    ax.set_ylabel(f"{case.row.metric.label} ({unit})")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8)
    titles(
        figure,
        ax,
        series_title(case),
        "one line per sample, from fio's per-interval log (the first interval holds fio's ramp-up); "
        "dotted: a sample flagged as not steady",
    )
    return figure


# --- the section's parts -------------------------------------------------------------------------


def html(report: Report, svgs: Mapping[str, tuple[Chart, Markup]], options: Options) -> Markup:
    if not options.draw:
        return Markup("")
    from mountbench.report.chartkit import inline_svg

    drawn = figures(report)
    if not drawn:
        return Markup("")
    more = series_cases(report)[1]
    more_text = f" {more} more workloads have\n  these series in the JSON export." if more else ""
    out = [
        '<section id="within-samples">',
        "  <h2>Within each sample</h2>",
        "  <p class=\"muted\">Bandwidth or IOPS over each sample's time, from fio's per-interval logs: a ramp, a cliff",
        f"  or throttling shows here as a shape.{more_text}</p>",
    ]
    for chart in drawn:
        caption = f"    <figcaption>{escape(chart.title)}</figcaption>"
        out += ['  <figure class="chart">', f"    {inline_svg(chart)}", caption, "  </figure>"]
    out.append("</section>")
    return Markup("\n".join(out))


terminal = charts = exports = nothing  # parts this section does not have
markdown = no_text
