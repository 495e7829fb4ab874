"""Study S1's host cost section: for every case whose samples carry host cost (``--watch``,
or the lab's measurement of the processes serving each mount), the throughput it reached
next to the host CPU and host memory it cost, per target; and nginx's requests/s.

The rows are the report's own summary rows (so every cell keeps the report's note
numbers). One table per case (Markdown and HTML), one chart per case: three panels side
by side, one bar per target (throughput; host CPU per GiB moved where the case moves
bytes, else CPU time; host memory, peak USS), drawn like the other bar charts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mountbench.analysis.metrics import COST_METRICS
from mountbench.analysis.summary import Row
from mountbench.blocks.parts import Block, Chapter, Figure, Heading, Paragraph, Table
from mountbench.blocks.table import TableView, noted
from mountbench.report.cells import format_value
from mountbench.report.chartkeys import Chart, bars_key, slug
from mountbench.report.model import MetricGroup, Report
from mountbench.report.sections.section import Options, nothing

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TITLE = "Host cost per case (study S1)"


CPU = "host.cpu_s"
CPU_PER_GIB = "host.cpu_s_per_gib"
MEMORY = "host.uss_peak"
REQUESTS = "http.requests_per_s"
COLUMNS = ("throughput", "host CPU", "host CPU per GiB", "host memory (peak USS)")


@dataclass(frozen=True)
class CostCase:
    """One case (workload): what it reached and what it cost, each a row of the report."""

    workload: str
    title: str
    throughput: Row | None  # the workload's first headline metric that is not a cost
    cpu: Row | None
    cpu_per_gib: Row | None
    memory: Row | None

    @property
    def key(self) -> str:
        """The chart's key (file-name safe)."""
        return "cost-" + slug(self.workload, "case")

    def rows(self) -> tuple[Row | None, ...]:
        """In COLUMNS order."""
        return (self.throughput, self.cpu, self.cpu_per_gib, self.memory)


def cost_cases(report: Report) -> tuple[CostCase, ...]:
    """The cases with host cost, in table order."""
    by_workload: dict[str, dict[str, Row]] = {}
    for row in report.summary.rows:
        by_workload.setdefault(row.workload, {})[row.metric.name] = row
    cases = []
    for workload, rows in by_workload.items():
        if CPU not in rows and MEMORY not in rows:
            continue
        reached = [r for name, r in rows.items() if name not in COST_METRICS and not name.startswith("nginx.")]
        first = next(iter(rows.values()))
        cases.append(
            CostCase(
                workload, first.title, reached[0] if reached else None, rows.get(CPU), rows.get(CPU_PER_GIB),
                rows.get(MEMORY),
            )
        )  # fmt: skip
    return tuple(cases)


def requests_group(report: Report) -> MetricGroup | None:
    """nginx's requests/s (every http case), whose bar chart S1 showed beside the cost."""
    return next((g for g in report.groups if g.metric.name == REQUESTS), None)


def case_table(report: Report, index: int, case: CostCase) -> TableView:
    """Per target, the text of each column with the cell's notes."""
    headers = ["target"]
    for name, row in zip(COLUMNS, case.rows(), strict=True):
        headers.append(f"{name}: {row.metric.label}" if name == "throughput" and row else name)
    body = []
    for target in report.summary.targets:
        cells = [noted(target, report.notes, ())]
        for row in case.rows():
            cell = row.cells[target] if row else None
            if row is None or cell is None:
                cells.append(noted("–", report.notes, ()))
            elif cell.summary is None:
                text = f"failed {cell.failed}/{cell.failed}" if cell.failed else "–"
                cells.append(noted(text, report.notes, report.cell_marks(row, target)))
            else:
                cells.append(
                    noted(format_value(cell.summary.median, row.metric), report.notes, report.cell_marks(row, target))
                )
        body.append(cells)
    return TableView(f"cost-{index}", case.title, headers, body)


def intro() -> str:
    return (
        "What each case cost the host, as study S1 measured it: CPU time (user + sys) of the processes "
        "serving the mount while the sample ran, per GiB moved where the workload moves bytes, and their "
        "peak memory (USS, polled every 100 ms). Medians; the results tables above have their spread and ratios."
    )


# --- the section's parts -------------------------------------------------------------------------


def chapters(report: Report, options: Options) -> list[Chapter]:
    """Per case, a table (per target, what it reached and what it cost, with the cells' notes) and its
    chart; nginx's requests/s after them."""
    cases = cost_cases(report)
    if not cases:
        return []
    blocks: list[Block] = [Paragraph(intro())]
    for index, case in enumerate(cases, 1):
        view = case_table(report, index, case)
        alt = f"{case.title}: throughput, host CPU and memory per target"
        blocks += [Heading(view.heading), Table(view), Figure(case.key, alt)]
    requests = requests_group(report)
    if requests is not None:
        blocks.append(Figure(bars_key(requests), "nginx requests/s per target"))
    return [Chapter("host-cost", TITLE, tuple(blocks))]


# --- the chart ------------------------------------------------------------------------------------


def charts(report: Report) -> list[Chart]:
    """One chart per case with host cost; nginx's requests/s is the report's own bar chart."""
    return [
        Chart(case.key, "cost", cost_title(case), lambda case=case: cost_figure(report, case))
        for case in cost_cases(report)
        if any(row is not None and any(c.summary for c in row.cells.values()) for row in case.rows())
    ]


def cost_title(case: CostCase) -> str:
    return f"{case.title}: throughput, host CPU and host memory per target (study S1)"


def cost_figure(report: Report, case: CostCase) -> Figure:
    from matplotlib.figure import Figure

    from mountbench.report.chartkit import notes_footer, wrap

    panels = [row for row in (case.throughput, case.cpu_per_gib or case.cpu, case.memory) if row is not None]
    targets = report.summary.targets
    figure = Figure(figsize=(max(7.5, 2.2 + 1.1 * len(targets) * len(panels)), 4.4), layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    used: set[int] = set()
    for ax, row in zip(axes, panels, strict=True):
        used |= _panel(ax, report, row)
    figure.suptitle(wrap(cost_title(case), int(figure.get_figwidth() * 11)), fontsize=11, fontweight="bold")
    notes_footer(figure, report, used)
    return figure


def _panel(ax, report: Report, row: Row) -> set[int]:
    from mountbench.report.chartkit import (
        COLOURS,
        HATCHES,
        axis_label,
        axis_unit,
        legend_label,
        spans_orders,
        value_axis,
        wrap,
    )

    targets = report.summary.targets
    cells = [row.cells[t] for t in targets]
    medians = [c.summary.median for c in cells if c.summary]
    divisor, unit = axis_unit(row.metric, medians)
    log = spans_orders(medians)
    used: set[int] = set()
    for i, cell in enumerate(cells):
        height = cell.summary.median / divisor if cell.summary else math.nan
        errors = (
            [
                [(cell.summary.median - cell.summary.ci_low) / divisor],
                [(cell.summary.ci_high - cell.summary.median) / divisor],
            ]
            if cell.summary
            else None
        )
        ax.bar(
            [i],
            [height],
            0.8,
            yerr=errors,
            color=COLOURS[i % len(COLOURS)],
            hatch=HATCHES[i % len(HATCHES)],
            edgecolor="black",
            linewidth=0.6,
            error_kw={"ecolor": "black", "capsize": 2.5, "elinewidth": 0.9},
        )
        marks = report.measurement_marks(cell)
        if cell.summary is None:
            ax.annotate("failed" if cell.failed else "not measured", (i, 0), xytext=(0, 4), textcoords="offset points",
                        ha="center", va="bottom", rotation=90, fontsize=7, color="#B00020")  # fmt: skip
        elif marks:
            ax.annotate("[" + ",".join(map(str, marks)) + "]", (i, cell.summary.ci_high / divisor), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=7)  # fmt: skip
            used |= set(marks)
    # the targets are named under their bars (no legend needed), the baseline marked
    ax.set_xticks(range(len(targets)), [wrap(legend_label(report, t), 14) for t in targets], fontsize=7)
    ax.set_xlim(-0.6, len(targets) - 0.4)  # a target without a bar keeps its place
    value_axis(ax.yaxis, ax.set_yscale, row.metric, unit, log)
    better = "higher is better" if row.metric.higher_is_better else "lower is better"
    ax.set_title(wrap(f"{row.metric.label} ({better})", 34), fontsize=9)
    ax.set_ylabel(axis_label(row.metric, unit, log), fontsize=8)
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.set_axisbelow(True)
    return used


screen = exports = nothing  # parts this section does not have
page_charts = nothing  # the page draws no chart of its own here
