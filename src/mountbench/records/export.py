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
       ("6.20× slower (5.10–7.40×)"), "verdict" (better | worse | same | undecided | unknown | baseline | none),
       "factor", "factor_low", "factor_high" (≥ 1, the way the verdict goes)
  1.8  summary rows say why each cell got the rounds it got ("stopped": fixed, ranked, same,
       precise, max-repeat, budget, interrupted, failed, baseline)
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from mountbench.errors import UsageError
from mountbench.model import RunData
from mountbench.records.codec import run_from_dict

FORMAT_NAME = "mountbench-runs"
FORMAT_VERSION = "1.8"


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
