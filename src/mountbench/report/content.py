"""What every report format says, worked out once from the runs: build_report assembles the
Report (model.py) from its parts:

- columns, one per target (labels.py);
- the comparison table (summary.summarize_runs) grouped per metric, the summary grid
  (grid.py) and one headline per compared target (phrasing.headlines);
- latency percentile curves (percentile_curves.py) and sweeps (sweep_discovery.py);
- warnings and numbered notes (notes.py); rounds per cell (rounds.py);
- pick two, measured, for each lab the runs are of (picktwo/).

Statistics come from analysis/; nothing here computes any. Pure: RunData in, Report out;
renderers only format a Report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from mountbench.analysis.metrics import MetricInfo
from mountbench.analysis.summary import Row, RunSummary, summarize_runs
from mountbench.errors import UsageError
from mountbench.model import RunData
from mountbench.report.grid import build_grid
from mountbench.report.labels import label_columns, resolve_baseline, unique_runs
from mountbench.report.model import MetricGroup, Report
from mountbench.report.notes import (
    host_warnings,
    noted_rows,
    number_notes,
    shared_caveats,
    status_warnings,
    workload_warnings,
)
from mountbench.report.percentile_curves import percentile_curves
from mountbench.report.picktwo import pick_twos
from mountbench.report.rounds import stop_reasons
from mountbench.report.sweep_discovery import find_sweeps


def build_report(
    runs: Sequence[RunData], *, baseline: str | None = None, metrics: Sequence[str] = (), unit: str = "auto"
) -> Report:
    """Everything a report shows. Raises UsageError for a bad baseline or a metric no run has.
    ``unit`` chooses the summary grid's family (grid.UNIT_CHOICES)."""
    if not runs:
        raise UsageError("no runs to report; give a run id or --from FILE.json")
    runs = unique_runs(runs)
    labelled, columns = label_columns(runs)
    summary = summarize_runs(labelled, baseline=resolve_baseline(baseline, columns), metrics=metrics)
    grid = build_grid(labelled, summary, unit)  # --metric drives the summary at a glance and the headline
    groups = group_by_metric(summary)
    curves = percentile_curves(labelled, summary.baseline, metrics)
    found = find_sweeps(labelled, summary.baseline)
    sweeps = (*found.sweeps, *found.grids)
    shared = shared_caveats(noted_rows(groups, curves, sweeps, grid.rows()), summary.targets)
    notes, marks = number_notes(groups, curves, sweeps, summary.targets, first=grid.rows(), shared=shared)
    report = Report(
        runs=tuple(labelled),
        summary=summary,
        columns=tuple(columns),
        groups=groups,
        percentiles=curves,
        sweeps=found.sweeps,
        warnings=tuple(
            host_warnings(runs)
            + workload_warnings(runs)
            + status_warnings(runs)
            + list(found.warnings)
            + [f"every value: {text}" for text in shared]
        ),
        notes=tuple(notes),
        marks=marks,
        grids=found.grids,
        grid=grid,
        stops=stop_reasons(runs, columns, None if metrics else summary),  # its rule reads the headline metrics
    )
    return dataclasses.replace(report, pick_two=pick_twos(report))  # it reads the notes and sweeps above


def group_by_metric(summary: RunSummary) -> tuple[MetricGroup, ...]:
    """Rows grouped per metric, metrics in order of first appearance."""
    grouped: dict[str, list[Row]] = {}
    infos: dict[str, MetricInfo] = {}
    for row in summary.rows:
        grouped.setdefault(row.metric.name, []).append(row)
        infos[row.metric.name] = row.metric
    return tuple(MetricGroup(infos[name], tuple(rows)) for name, rows in grouped.items())
