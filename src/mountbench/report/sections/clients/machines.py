"""The client machines of a multi-client run: one row of facts per client, and warnings where
the clients differ in a host fact (labels.HOST_FACTS) or see different filesystems at a
target's path."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mountbench.model import RunData
from mountbench.report.labels import HOST_FACTS
from mountbench.units import format_bytes

CLIENT_FACT_HEADERS = [
    "client", "server", "hostname", "kernel", "CPU", "fio", "clock offset", "filesystem of the target"
]  # fmt: skip


def client_host_warnings(runs: Sequence[RunData]) -> list[str]:
    """Where a run's clients differ in a host fact that affects their figures."""
    warnings = []
    for run in runs:
        facts = run.host.get("clients")
        if not isinstance(facts, dict) or len(facts) < 2:
            continue
        for key, name in HOST_FACTS:
            values = {label: f.get(key) for label, f in facts.items() if isinstance(f, dict)}
            known = {label: v for label, v in values.items() if v not in (None, "", "unknown")}
            if len({str(v) for v in known.values()}) > 1:
                listed = ", ".join(f"{label} {_fact(key, v)}" for label, v in known.items())
                warnings.append(f"the clients of run {run.id} differ in {name}: {listed}")
        warnings += _filesystem_warnings(run.id, facts)
    return warnings


def _filesystem_warnings(run_id: str, facts: Mapping[str, object]) -> list[str]:
    """Clients that see different filesystems at one target path are not sharing one directory."""
    seen: dict[str, dict[str, str]] = {}
    for label, f in facts.items():
        paths = f.get("paths") if isinstance(f, dict) else None
        for path, described in (paths or {}).items():
            fstype = str(described.get("fstype", "unknown")) if isinstance(described, dict) else "unknown"
            if fstype != "unknown":
                seen.setdefault(path, {})[label] = fstype
    return [
        f"the clients of run {run_id} see different filesystems at {path}: "
        + ", ".join(f"{label} {fstype}" for label, fstype in by_client.items())
        + "; they may not share one directory there"
        for path, by_client in seen.items()
        if len(set(by_client.values())) > 1
    ]


def _fact(key: str, value: object) -> str:
    if key == "ram_bytes" and isinstance(value, int | float):
        return format_bytes(float(value))
    return str(value)


def client_facts_rows(runs: Sequence[RunData]) -> list[list[str]]:
    """client, address, server, hostname, kernel, fio, filesystem(s) of the targets."""
    rows = []
    for run in runs:
        facts = run.host.get("clients")
        if not isinstance(facts, dict):
            continue
        for label, f in facts.items():
            paths = f.get("paths") or {}
            fs = ", ".join(sorted({str(p.get("fstype", "unknown")) for p in paths.values()})) or "unknown"
            rows.append(
                [
                    label,
                    str(f.get("server", "?")),
                    str(f.get("hostname", "?")),
                    str(f.get("kernel", "unknown")),
                    _cpu(f),
                    str(f.get("fio_version", "?")),
                    _clock(f),
                    fs,
                ]
            )
    return rows


def _cpu(facts: Mapping[str, object]) -> str:
    model, count = facts.get("cpu_model"), facts.get("cpu_count")
    if model in (None, "", "unknown"):
        return "unknown"
    return f"{count} × {model}" if isinstance(count, int) else str(model)


def _clock(facts: Mapping[str, object]) -> str:
    offset, uncertain = facts.get("clock_offset_ms"), facts.get("clock_uncertainty_ms")
    if not isinstance(offset, int | float):
        return "not measured"
    return f"{offset:+.1f} ms ± {uncertain:.1f}" if isinstance(uncertain, int | float) else f"{offset:+.1f} ms"
