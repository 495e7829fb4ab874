"""A sweep's records for the machine-readable formats: one per (point, target), shared by CSV and JSON."""

from __future__ import annotations

from mountbench.report.csvexport import csv_bool, csv_number, write_csv
from mountbench.report.model import Report
from mountbench.report.sections.sweeps.words import grid_heading, heading

# --- records: CSV and JSON -----------------------------------------------------------------------

SWEEP_COLUMNS = (
    "sweep",
    "kind",
    "heading",
    "metric",
    "metric_label",
    "unit",
    "higher_is_better",
    "generated",
    "option",
    "value",
    "number",
    "option2",
    "value2",
    "number2",
    "fixed",
    "workload",
    "target",
    "n",
    "median [unit]",
    "ci_low [unit]",
    "ci_high [unit]",
    "cv [fraction]",
    "optimum",
    "optimum_clear",
    "knee",
)


def sweep_records(report: Report) -> list[dict[str, object]]:
    """One record per (sweep point, target), sweeps first, then grids: the swept value(s),
    the median and its interval in the metric's own unit, and whether the point is the
    target's optimum or knee (a grid has an optimum only). Shared by CSV and JSON."""
    records: list[dict[str, object]] = []
    for index, sweep in enumerate(report.sweeps, 1):
        for k, (value, number, row) in enumerate(zip(sweep.values, sweep.numbers, sweep.rows, strict=True)):
            for target in report.summary.targets:
                optimum = sweep.optima.get(target)
                records.append(
                    _sweep_record(f"sweep-{index}", "sweep", heading(sweep), row, target, sweep.generated)
                    | {"option": sweep.option, "value": value, "number": number, "fixed": sweep.fixed}
                    | {
                        "optimum": bool(optimum and optimum.peak == k),
                        "optimum_clear": optimum.clear if optimum and optimum.peak == k else None,
                        "knee": bool(optimum and optimum.knee == k),
                    }
                )
    for index, grid in enumerate(report.grids, 1):
        for (i, j), row in sorted(grid.cells.items()):
            for target in report.summary.targets:
                records.append(
                    _sweep_record(f"grid-{index}", "grid", grid_heading(grid), row, target, True)
                    | {"option": grid.row_option, "value": grid.row_values[i], "number": grid.row_numbers[i]}
                    | {"option2": grid.column_option, "value2": grid.column_values[j]}
                    | {"number2": grid.column_numbers[j], "fixed": grid.fixed}
                    | {"optimum": grid.best.get(target) == (i, j), "knee": None}
                    | {"optimum_clear": grid.clear.get(target) if grid.best.get(target) == (i, j) else None}
                )
    return records


def _sweep_record(key: str, kind: str, heading: str, row, target: str, generated: bool) -> dict[str, object]:
    summary = row.cells[target].summary
    return {
        "sweep": key,
        "kind": kind,
        "heading": heading,
        "metric": row.metric.name,
        "metric_label": row.metric.label,
        "unit": row.metric.unit,
        "higher_is_better": row.metric.higher_is_better,
        "generated": generated,
        "option2": None,
        "value2": None,
        "number2": None,
        "workload": row.workload,
        "target": target,
        "n": summary.n if summary else 0,
        "median": summary.median if summary else None,
        "ci_low": summary.ci_low if summary else None,
        "ci_high": summary.ci_high if summary else None,
        "cv": summary.cv if summary else None,
    }


def sweeps_csv(report: Report) -> str:
    """sweep_records as CSV (README, "CSV columns"); numbers in full precision."""
    names = {"median [unit]": "median", "ci_low [unit]": "ci_low", "ci_high [unit]": "ci_high", "cv [fraction]": "cv"}
    rows = []
    for record in sweep_records(report):
        row = []
        for column in SWEEP_COLUMNS:
            value = record.get(names.get(column, column))
            if isinstance(value, bool):
                row.append(csv_bool(value))
            elif isinstance(value, float):
                row.append(csv_number(value))
            else:
                row.append("" if value is None else value)
        rows.append(row)
    return write_csv(SWEEP_COLUMNS, rows)
