"""The versioned JSON document that carries runs between machines and tools.

Format history (``version``; a reader refuses a newer major):
  1.0  runs (meta, host, targets with info, workloads, samples) + summary rows
  1.1  summary rows name the host each target was measured on ("host")
  1.2  summary rows carry the baseline's caveats, which their ratio inherits ("baseline_caveats")
  1.3  run config typed and versioned ("config": {"version": 2, ...}, no "targets" copy); workloads carry
       their "description" (summary, headline metrics, directions, block size, sweep point, ...)
  1.4  the run config carries "sweeps" (the --sweep axes); a workload's sweep point may carry "grid" (the
       further options of a grid); `report --format json` adds "sweeps" when the runs hold any: one row
       per sweep point and target (report.csvexport.sweep_records), with each target's optimum and knee
  1.5  samples may carry "series" (values over the sample's time: fio's per-interval IOPS and
       bandwidth); run config: "until", "max_repeat", "budget" (adaptive repetitions), "file_state"
  1.6  samples taken on several machines at once (run --client) carry their per-client results
       ("clients": [{"client", "metrics", "error"}]); run configs name the clients ("clients", "client_counts")
  1.7  summary rows say the comparison as people read it next to the raw ratio: "comparison"
       ("6.20× slower (5.10–7.40×)"), "verdict" (better | worse | same | unknown | baseline | none),
       "factor", "factor_low", "factor_high" (≥ 1, the way the verdict goes)
  1.8  summary rows say why each cell got the rounds it got ("stopped": fixed, ranked, same,
       precise, max-repeat, budget, interrupted, failed, baseline)
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mountbench.analysis.sequential import Stop
from mountbench.analysis.summary import RunSummary
from mountbench.errors import UsageError
from mountbench.model import QUALITY_CODES, Caveat, RunData
from mountbench.records.codec import run_from_dict, run_to_dict
from mountbench.report.phrasing import readable

FORMAT_NAME = "mountbench-runs"
FORMAT_VERSION = "1.8"


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


def make_document(runs: list[RunData], *, with_raw: bool = False, summary: RunSummary | None = None) -> dict[str, Any]:
    """The export document: the runs, and the summary every report shows (run_summary's, unless
    the caller already built it from these very runs, as `report` does)."""
    summary = summary or run_summary(runs)
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": time.time(),
        "runs": [run_to_dict(run, with_raw=with_raw) for run in runs],
        "summary": summary_rows(summary, _target_hosts(runs), _stops(runs)) if summary else [],
    }


def run_summary(runs: list[RunData]) -> RunSummary | None:
    """The comparison table of these runs as reports build it (columns named label@host when
    hosts differ); None when there is nothing to summarise yet (no targets, a bad baseline)."""
    from mountbench.analysis.summary import summarize_runs
    from mountbench.report.content import label_columns, unique_runs  # reports import this module's readers

    try:
        labelled, _columns = label_columns(unique_runs(runs))
        return summarize_runs(labelled)
    except UsageError:
        return None


def _stops(runs: list[RunData]) -> dict[tuple[str, str], Stop]:
    """Why each cell got its rounds, with the columns named as in run_summary."""
    from mountbench.report.content import label_columns, stop_reasons, unique_runs

    try:
        unique = unique_runs(runs)
        _labelled, columns = label_columns(unique)
        return stop_reasons(unique, columns)
    except UsageError:
        return {}


def _target_hosts(runs: list[RunData]) -> dict[str, str]:
    """Target label -> hostname; merged reports pass runs already relabelled label@host."""
    return {r.target.label: str(run.host.get("hostname", "")) for run in runs for r in run.targets}


def write_document(path: Path, document: dict[str, Any]) -> None:
    """Write atomically (temp file + rename) so a reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(document, indent=1, sort_keys=False))
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True) if tmp.parent.is_dir() else None
        raise UsageError(f"cannot write {path} ({exc.strerror}); choose a writable path") from None


def read_document(path: Path) -> list[RunData]:
    """Load runs from an exported file; refuse foreign, corrupt or newer-major files."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"{path} does not exist; check the path") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(
            f"{path} is not a readable JSON file ({exc}); give a file made by 'mountbench export'"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise UsageError(
            f'{path} is not a mountbench export (no "format": "{FORMAT_NAME}"); '
            "give a file made by 'mountbench export'"
        )
    major = str(data.get("version", "0")).split(".")[0]
    if not major.isdigit() or int(major) > int(FORMAT_VERSION.split(".")[0]):
        raise UsageError(
            f"{path} uses export format {data.get('version')}, newer than this mountbench reads ({FORMAT_VERSION}); "
            "upgrade mountbench"
        )
    try:
        runs = [run_from_dict(run) for run in data["runs"]]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UsageError(f"{path} is a damaged mountbench export (bad field {exc}); export it again") from None
    for run in runs:
        problem = _damage(run)
        if problem:
            raise UsageError(f"{path} is a damaged mountbench export: {problem}; export it again")
    return runs


def _damage(run: RunData) -> str:
    """What no export written by mountbench contains: a metric that is not a finite number,
    or one sample twice."""
    seen: set[tuple[str, str, int]] = set()
    for sample in run.samples:
        where = f"run {run.id}, {sample.target} · {sample.workload} round {sample.round + 1}"
        for name, value in sample.metrics.items():
            if not math.isfinite(value):
                return f"{where}: metric {name} is {value}, not a finite number"
        key = (sample.target, sample.workload, sample.round)
        if key in seen:
            return f"{where} appears twice"
        seen.add(key)
    return ""
