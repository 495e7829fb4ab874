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
  1.9  run config version 3: "lab" names the lab that made the run ("name": "qemu" | "cloud") and holds
       that lab's facts alone (the cloud lab's CloudProbe is its "probe", was "cloud" beside the QEMU
       lab's fields, all null); configs of version 2 are read as before
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from mountbench.errors import UsageError
from mountbench.host import outputs
from mountbench.host.inputs import DOCUMENT_LIMIT, load_json, read_bounded
from mountbench.host.outputs import Output
from mountbench.model import RunData
from mountbench.records.codec import run_from_dict
from mountbench.records.validate import run_problem

FORMAT_NAME = "mountbench-runs"
FORMAT_VERSION = "1.9"


def write_document(path: Path | Output, document: dict[str, Any]) -> None:
    """Write the document to a checked output (host/outputs.py: never over a device, a
    directory, the results database or a symlink itself; atomically)."""
    output = path if isinstance(path, Output) else outputs.check(path, "--out")
    output.write_text(json.dumps(document, indent=1, sort_keys=False) + ("\n" if output.is_stdout else ""))


def read_document(path: Path) -> list[RunData]:
    """Load runs from an exported file; refuse foreign, corrupt, damaged or newer-major files,
    the whole file at the first problem (records/validate.py checks every field's type)."""
    fix = "give a file made by 'mountbench export'"
    data = load_json(read_bounded(path, DOCUMENT_LIMIT, "export file", fix), str(path), fix)
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise UsageError(
            f'{path} is not a mountbench export (no "format": "{FORMAT_NAME}"); '
            "give a file made by 'mountbench export'"
        )
    major = str(data.get("version", "0")).split(".")[0]
    if not major.isdigit() or int(major) > int(FORMAT_VERSION.split(".")[0]):
        raise UsageError(
            f"{path} uses export format {str(data.get('version'))[:20]}, newer than this mountbench reads "
            f"({FORMAT_VERSION}); upgrade mountbench"
        )
    raw_runs = data.get("runs")
    if not isinstance(raw_runs, list):
        raise UsageError(f"{path} is a damaged mountbench export (runs is not a list); export it again")
    for index, raw in enumerate(raw_runs):
        problem = run_problem(raw, f"runs[{index}]")
        if problem:
            raise UsageError(f"{path} is a damaged mountbench export: {problem}; nothing was read from it")
    try:
        runs = [run_from_dict(run) for run in raw_runs]
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
