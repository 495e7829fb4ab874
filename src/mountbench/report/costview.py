"""Study S1's figure set: for every case whose samples carry host cost (``--watch``, or
the lab's measurement of the processes serving each mount), the throughput it reached
next to the host CPU and host memory it cost, per target; and nginx's requests/s.

Pure: the rows are the report's own summary rows (so every cell keeps the report's
note numbers); renderers lay them out (markdown.py, html.py, costcharts.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mountbench.analysis.metrics import COST_METRICS
from mountbench.analysis.summary import Row
from mountbench.report.cells import format_value
from mountbench.report.content import MetricGroup, Report

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
        return "cost-" + (re.sub(r"[^A-Za-z0-9]+", "-", self.workload).strip("-").lower() or "case")

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


def case_table(report: Report, case: CostCase) -> tuple[list[str], list[list[tuple[str, tuple[int, ...]]]]]:
    """Headers, and per target the text of each column with the cell's note numbers."""
    headers = ["target"]
    for name, row in zip(COLUMNS, case.rows(), strict=True):
        headers.append(f"{name}: {row.metric.label}" if name == "throughput" and row else name)
    body = []
    for target in report.summary.targets:
        cells: list[tuple[str, tuple[int, ...]]] = [(target, ())]
        for row in case.rows():
            cell = row.cells[target] if row else None
            if row is None or cell is None:
                cells.append(("–", ()))
            elif cell.summary is None:
                text = f"failed {cell.failed}/{cell.failed}" if cell.failed else "–"
                cells.append((text, report.cell_marks(row, target)))
            else:
                cells.append((format_value(cell.summary.median, row.metric), report.cell_marks(row, target)))
        body.append(cells)
    return headers, body


def section_intro() -> str:
    return (
        "What each case cost the host, as study S1 measured it: CPU time (user + sys) of the processes "
        "serving the mount while the sample ran, per GiB moved where the workload moves bytes, and their "
        "peak memory (USS, polled every 100 ms). Medians; the results tables above have their spread and ratios."
    )
