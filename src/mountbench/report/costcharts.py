"""S1's charts (report/costview.py): for each case, three panels side by side, one bar
per target: the throughput reached, the host CPU it cost (per GiB moved where the case
moves bytes, else CPU time) and the host memory (peak USS). Drawn like the other bar
charts (colours, hatches, the median's interval, note numbers on the bars)."""

from __future__ import annotations

import math

from matplotlib.figure import Figure

from mountbench.analysis.summary import Row
from mountbench.report.charts import (
    COLOURS,
    HATCHES,
    Chart,
    _axis_label,
    _legend,
    _notes_footer,
    _value_axis,
    _wrap,
    axis_unit,
    spans_orders,
)
from mountbench.report.content import Report
from mountbench.report.costview import CostCase, cost_cases


def cost_charts(report: Report) -> list[Chart]:
    """One chart per case with host cost; nginx's requests/s is the report's own bar chart."""
    return [
        Chart(case.key, "cost", cost_title(case), lambda case=case: cost_figure(report, case))
        for case in cost_cases(report)
        if any(row is not None and any(c.summary for c in row.cells.values()) for row in case.rows())
    ]


def cost_title(case: CostCase) -> str:
    return f"{case.title}: throughput, host CPU and host memory per target (study S1)"


def cost_figure(report: Report, case: CostCase) -> Figure:
    panels = [row for row in (case.throughput, case.cpu_per_gib or case.cpu, case.memory) if row is not None]
    targets = report.summary.targets
    figure = Figure(figsize=(max(7.5, 2.2 + 1.1 * len(targets) * len(panels)), 4.4), layout="constrained")
    axes = figure.subplots(1, len(panels), squeeze=False)[0]
    used: set[int] = set()
    for ax, row in zip(axes, panels, strict=True):
        used |= _panel(ax, report, row)
    figure.suptitle(_wrap(cost_title(case), int(figure.get_figwidth() * 11)), fontsize=11, fontweight="bold")
    _notes_footer(figure, report, used)
    return figure


def _panel(ax, report: Report, row: Row) -> set[int]:
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
    ax.set_xticks(range(len(targets)), [_wrap(_legend(report, t), 14) for t in targets], fontsize=7)
    ax.set_xlim(-0.6, len(targets) - 0.4)  # a target without a bar keeps its place
    _value_axis(ax.yaxis, ax.set_yscale, row.metric, unit, log)
    better = "higher is better" if row.metric.higher_is_better else "lower is better"
    ax.set_title(_wrap(f"{row.metric.label} ({better})", 34), fontsize=9)
    ax.set_ylabel(_axis_label(row.metric, unit, log), fontsize=8)
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.set_axisbelow(True)
    return used
