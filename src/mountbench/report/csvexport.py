"""CSV: one row per sample (raw) and one row per summary cell, with stable column
names and the units in the header (documented in the README, "CSV columns").

- samples: fixed columns, then one column per metric named ``<metric> [<unit>]``
  (``read.iops [IOPS]``, ``read.bw [B/s]``, ``read.lat_p99 [s]``, ``cpu.sys [%]``),
  empty where a sample has no such metric;
- summary: one row per (workload, metric, target); the statistics are in the
  metric's own unit, given per row in ``unit``: the header says ``median [unit]``.
  Next to the raw ratio (target ÷ baseline of the metric) each row says the comparison
  as people read it: ``comparison`` ("6.20× slower (5.10–7.40×)"), ``verdict`` and the
  factor (≥ 1) with its interval.

Pure: a Report in, text out. Floats are written in full precision (repr).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mountbench.analysis.metrics import describe
from mountbench.report.labels import all_workloads, host_of_run
from mountbench.report.model import QUALITY_CODES, Report
from mountbench.report.phrasing import readable

SAMPLE_COLUMNS = (
    "run_id",
    "host",
    "target",
    "target_path",
    "workload",
    "workload_title",
    "round",
    "ok",
    "error",
    "cache_action",
    "caveats",
    "caveat_codes",
    "started_at [unix s]",
    "wall_s [s]",
)

SUMMARY_COLUMNS = (
    "run_id",
    "workload",
    "workload_title",
    "metric",
    "metric_label",
    "unit",
    "higher_is_better",
    "target",
    "host",
    "baseline",
    "n",
    "stopped",
    "failed",
    "median [unit]",
    "mean [unit]",
    "stdev [unit]",
    "min [unit]",
    "max [unit]",
    "ci_low [unit]",
    "ci_high [unit]",
    "ci_level [fraction]",
    "cv [fraction]",
    "ratio [x baseline]",
    "ratio_low [x baseline]",
    "ratio_high [x baseline]",
    "significant",
    "comparison",
    "verdict",
    "factor [x]",
    "factor_low [x]",
    "factor_high [x]",
    "caveats",
    "caveat_codes",
    "errors",
    "baseline_caveats",
)


def samples_csv(report: Report) -> str:
    """Every stored sample of the report's runs, successful or not."""
    metrics = sorted({m for run in report.runs for s in run.samples for m in s.metrics}, key=metric_order)
    header = list(SAMPLE_COLUMNS) + [f"{m} [{describe(m).unit or 'value'}]" for m in metrics]
    paths = {c.label: c.path for c in report.columns}
    titles = {w.name: w.title for w in all_workloads(report)}
    rows = []
    for run in report.runs:
        host = host_of_run(report, run.id)
        for s in run.samples:
            fixed = [
                run.id,
                host,
                s.target,
                paths.get(s.target, ""),
                s.workload,
                titles.get(s.workload, ""),
                s.round,
                csv_bool(s.ok),
                s.error,
                s.cache_action,
                "; ".join(c.text for c in s.caveats),
                " ".join(c.code for c in s.caveats),
                csv_number(s.started_at),
                csv_number(s.wall_s),
            ]
            rows.append(fixed + [csv_number(s.metrics.get(m)) for m in metrics])
    return write_csv(header, rows)


def summary_csv(report: Report) -> str:
    """One row per cell of the comparison table."""
    rows = []
    summary = report.summary
    for row in summary.rows:
        base = row.cells.get(summary.baseline)
        for label in summary.targets:
            cell = row.cells[label]
            s, c = cell.summary, cell.comparison
            # a ratio inherits how its baseline was measured (its spread is in the interval already)
            inherited = [x for x in base.caveats if x.code not in QUALITY_CODES] if c and base else []
            stats = (
                [s.median, s.mean, s.stdev, s.min, s.max, s.ci_low, s.ci_high, s.ci_level, s.cv] if s else [None] * 9
            )
            # the baseline against itself: no ratio, and no significant difference
            ratio = [c.ratio, c.low, c.high, csv_bool(c.significant)] if c else [None, None, None, "false"]
            said = readable(row, label, summary.baseline)
            column = report.column(label)
            rows.append(
                [
                    " ".join(column.run_ids),
                    row.workload,
                    row.title,
                    row.metric.name,
                    row.metric.label,
                    row.metric.unit,
                    csv_bool(row.metric.higher_is_better),
                    label,
                    column.host,
                    summary.baseline,
                    s.n if s else 0,
                    _stopped(report, row.workload, label),
                    cell.failed,
                    *(csv_number(v) for v in stats),
                    *(csv_number(v) if not isinstance(v, str) else v for v in ratio),
                    said["comparison"],
                    said["verdict"],
                    *(csv_number(said[k]) for k in ("factor", "factor_low", "factor_high")),  # type: ignore[arg-type]
                    "; ".join(caveat.text for caveat in cell.caveats),
                    " ".join(caveat.code for caveat in cell.caveats),
                    "; ".join(cell.errors),
                    "; ".join(caveat.text for caveat in inherited),
                ]
            )
    return write_csv(SUMMARY_COLUMNS, rows)


def _stopped(report: Report, workload: str, target: str) -> str:
    """Why the cell got no more rounds (sequential.STOP_WORDS), '' when unknown."""
    stop = report.stops.get((workload, target))
    return stop.reason if stop else ""


def metric_order(metric: str) -> tuple:
    """read.iops, read.bw, …, read.lat_p1 < read.lat_p5 < read.lat_p99.9; then write., trim., cpu., others."""
    direction, _, name = metric.partition(".") if "." in metric else ("~", "", metric)
    directions = {"read": 0, "write": 1, "trim": 2, "cpu": 3}
    kinds = {"iops": 0, "bw": 1, "bytes": 2, "lat_mean": 3}
    if name.startswith("lat_p"):
        try:
            return (directions.get(direction, 4), direction, 4, float(name[len("lat_p") :]), name)
        except ValueError:
            pass
    return (directions.get(direction, 4), direction, kinds.get(name, 5), 0.0, name)


def csv_number(value: float | int | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return repr(float(value)) if isinstance(value, float) else str(value)


def csv_bool(value: bool) -> str:
    return "true" if value else "false"


def write_csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def records_csv(records: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """A section's export records as CSV: one column per key in ``columns`` (default: the first
    record's keys; others are left out), a list written as its items joined by '; '."""
    header = list(records[0] if records else ()) if columns is None else list(columns)
    rows = [["; ".join(v) if isinstance(v := record.get(key), list) else v for key in header] for record in records]
    return write_csv(header, rows)
