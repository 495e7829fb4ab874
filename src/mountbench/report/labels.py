"""Columns and hosts: one column per target, named so that it always says where it was measured.

When the runs come from more than one host every column is named ``label@host``; the same
label, host and path in several runs is one column (samples pooled); two different machines
sharing a hostname get -2, -3 suffixes.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Sequence

from mountbench import model
from mountbench.errors import UsageError
from mountbench.model import RunData
from mountbench.report.model import (
    Column,
    Report,
)

# Host facts whose difference makes numbers from two hosts hard to compare.
HOST_FACTS = (
    ("fio_version", "fio version"),
    ("kernel", "kernel"),
    ("cpu_model", "CPU"),
    ("cpu_count", "CPU count"),
    ("ram_bytes", "RAM"),
    ("os", "OS"),
)


def unique_runs(runs: Sequence[RunData]) -> list[RunData]:
    """The same run named twice (a store id and an exported file) counts once."""
    seen: dict[str, RunData] = {}
    for run in runs:
        seen.setdefault(run.id, run)
    return list(seen.values())


# --- columns and hosts ----------------------------------------------------------------


def host_names(runs: Sequence[RunData]) -> dict[str, str]:
    """Run id -> host name; two different machines sharing a hostname get -2, -3 suffixes."""
    prints: dict[str, tuple] = {run.id: _host_fingerprint(run) for run in runs}
    by_name: dict[str, list[tuple]] = defaultdict(list)
    for run in runs:
        name = str(run.host.get("hostname") or "?")
        if prints[run.id] not in by_name[name]:
            by_name[name].append(prints[run.id])
    names = {}
    for run in runs:
        name = str(run.host.get("hostname") or "?")
        index = by_name[name].index(prints[run.id])
        names[run.id] = name if index == 0 else f"{name}-{index + 1}"
    return names


def _host_fingerprint(run: RunData) -> tuple:
    return (str(run.host.get("hostname", "")), *(str(run.host.get(key, "")) for key, _ in HOST_FACTS))


def label_columns(runs: Sequence[RunData]) -> tuple[list[RunData], list[Column]]:
    """Relabel targets so that each column is one (label, host, path); see the module doc."""
    hosts = host_names(runs)
    multi_host = len(set(hosts.values())) > 1
    keys: dict[tuple[str, str, str], list[str]] = {}
    for run in runs:
        for record in run.targets:
            keys.setdefault((record.target.label, hosts[run.id], record.target.path), []).append(run.id)
    display = _display_labels(keys, multi_host)
    columns = []
    for key, run_ids in keys.items():
        label, host, path = key
        info = next(r.info for run in runs if run.id == run_ids[0] for r in run.targets if r.target.label == label)
        columns.append(Column(display[key], label, host, tuple(run_ids), path, info))
    relabelled = [
        _relabel(run, {r.target.label: display[(r.target.label, hosts[run.id], r.target.path)] for r in run.targets})
        for run in runs
    ]
    return relabelled, columns


def _display_labels(keys: dict[tuple[str, str, str], list[str]], multi_host: bool) -> dict[tuple[str, str, str], str]:
    display = {key: f"{key[0]}@{key[1]}" if multi_host else key[0] for key in keys}
    counts = Counter(display.values())
    for key, run_ids in keys.items():
        if counts[display[key]] > 1:  # same label and host, different paths: name the run
            display[key] = f"{display[key]}@{run_ids[0]}"
    return display


def _relabel(run: RunData, names: dict[str, str]) -> RunData:
    if all(old == new for old, new in names.items()):
        return run
    targets = tuple(
        dataclasses.replace(r, target=dataclasses.replace(r.target, label=names[r.target.label])) for r in run.targets
    )
    samples = tuple(dataclasses.replace(s, target=names.get(s.target, s.target)) for s in run.samples)
    config = run.config
    if config.baseline in names:
        config = dataclasses.replace(config, baseline=names[config.baseline])
    return dataclasses.replace(run, targets=targets, samples=samples, config=config)


def resolve_baseline(baseline: str | None, columns: Sequence[Column]) -> str | None:
    """Accept a column label, or a run's own label when it names one column only."""
    if baseline is None or any(c.label == baseline for c in columns):
        return baseline
    matches = [c.label for c in columns if c.original == baseline]
    if len(matches) > 1:
        raise UsageError(f"--baseline {baseline!r} names several columns; choose one of: {', '.join(matches)}")
    return matches[0] if matches else baseline


def all_workloads(report: Report) -> list[model.Workload]:
    seen: dict[str, model.Workload] = {}
    for run in report.runs:
        for workload in run.workloads:
            seen.setdefault(workload.name, workload)
    return list(seen.values())


def run_hosts(report: Report) -> dict[str, dict]:
    """Host name -> host facts, in run order."""
    names = host_names(report.runs)
    return {names[run.id]: run.host for run in report.runs}


def host_of_run(report: Report, run_id: str) -> str:
    return host_names(report.runs)[run_id]
