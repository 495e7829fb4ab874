"""The export document (`mountbench export`, `report --format json`, `run --json`): the runs
as records/codec writes them, plus the summary every report shows, one flat row per
(workload, metric, target) with the comparison as people read it. records/export.py
names the format and reads it back."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

from mountbench.analysis.sequential import Stop
from mountbench.analysis.summary import RunSummary, summarize_runs
from mountbench.errors import UsageError
from mountbench.model import QUALITY_CODES, Caveat, RunData
from mountbench.records.codec import run_to_dict
from mountbench.records.export import FORMAT_NAME, FORMAT_VERSION
from mountbench.report.labels import label_columns, unique_runs
from mountbench.report.phrasing import readable
from mountbench.report.rounds import stop_reasons


def summary_rows(
    summary: RunSummary, hosts: dict[str, str] | None = None, stops: Mapping[tuple[str, str], Stop] | None = None
) -> list[dict[str, Any]]:
    """One flat record per (workload, metric, target): what the table shows.
    ``hosts`` maps a target label to the hostname it was measured on; ``stops`` says why
    each cell got the rounds it got (sequential.stop_reasons)."""
    hosts = hosts or {}
    stops = stops or {}
    rows = []
    for row in summary.rows:
        base = row.cells.get(summary.baseline)
        for label in summary.targets:
            cell = row.cells[label]
            s, c = cell.summary, cell.comparison
            rows.append(
                {
                    "workload": row.workload,
                    "metric": row.metric.name,
                    "unit": row.metric.unit,
                    "higher_is_better": row.metric.higher_is_better,
                    "target": label,
                    "host": hosts.get(label),
                    "baseline": summary.baseline,
                    "n": s.n if s else 0,
                    "stopped": stops[(row.workload, label)].reason if (row.workload, label) in stops else None,
                    "failed": cell.failed,
                    "median": s.median if s else None,
                    "mean": s.mean if s else None,
                    "stdev": s.stdev if s else None,
                    "min": s.min if s else None,
                    "max": s.max if s else None,
                    "ci_low": s.ci_low if s else None,
                    "ci_high": s.ci_high if s else None,
                    "ci_level": s.ci_level if s else None,
                    "ratio": _finite(c.ratio) if c else None,
                    "ratio_low": _finite(c.low) if c else None,
                    "ratio_high": _finite(c.high) if c else None,
                    "significant": c.significant if c else None,
                    **_finite_values(readable(row, label, summary.baseline)),
                    "caveats": [caveat.text for caveat in cell.caveats],
                    "baseline_caveats": [x.text for x in _measurement(base.caveats)] if c and base else [],
                    "errors": list(cell.errors),
                }
            )
    return rows


def _measurement(caveats: tuple[Caveat, ...]) -> list[Caveat]:
    """Caveats about how samples were measured; a ratio inherits these from its baseline
    (the baseline's spread is already in the ratio's interval)."""
    return [c for c in caveats if c.code not in QUALITY_CODES]


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _finite_values(record: dict[str, Any]) -> dict[str, Any]:
    return {k: _finite(v) if isinstance(v, float) else v for k, v in record.items()}


def make_document(
    runs: list[RunData],
    *,
    with_raw: bool = False,
    summary: RunSummary | None = None,
    stops: Mapping[tuple[str, str], Stop] | None = None,
) -> dict[str, Any]:
    """The export document: the runs, and the summary every report shows (run_summary's, unless
    the caller already built it from these very runs, as `report` does, with its ``stops``). The runs
    are summarised once: `run --json` writes this after every sample."""
    if summary is None:
        summary = run_summary(runs)
        stops = None
    if stops is None:
        stops = _stops(runs, summary)
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": time.time(),
        "runs": [run_to_dict(run, with_raw=with_raw) for run in runs],
        "summary": summary_rows(summary, _target_hosts(runs), stops) if summary else [],
    }


def run_summary(runs: list[RunData]) -> RunSummary | None:
    """The comparison table of these runs as reports build it (columns named label@host when
    hosts differ); None when there is nothing to summarise yet (no targets, a bad baseline)."""
    try:
        labelled, _columns = label_columns(unique_runs(runs))
        return summarize_runs(labelled)
    except UsageError:
        return None


def _stops(runs: list[RunData], summary: RunSummary | None = None) -> dict[tuple[str, str], Stop]:
    """Why each cell got its rounds, with the columns named as in run_summary (``summary``: that summary,
    reused where it is the run's own)."""
    try:
        unique = unique_runs(runs)
        _labelled, columns = label_columns(unique)
        return stop_reasons(unique, columns, summary)
    except UsageError:
        return {}


def _target_hosts(runs: list[RunData]) -> dict[str, str]:
    """Target label -> hostname; merged reports pass runs already relabelled label@host."""
    return {r.target.label: str(run.host.get("hostname", "")) for run in runs for r in run.targets}
