"""The one dict codec for runs: what the store keeps in its JSON columns and what the
export document carries are the same dicts, made and read here.

Every string read is escaped where it could steer a terminal (records/text.py).

Reading is forgiving about what older versions wrote (a missing field gets its
default; a run config without "version" is version 1, the untyped dict of
mountbench 0.1) and strict about damage: a wrong type raises KeyError, TypeError
or ValueError for the caller to turn into a one-line error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, get_type_hints

from mountbench.kinds import describe, options_from_json, options_to_json
from mountbench.kinds.base import stored_workload
from mountbench.labfacts import LAB_FACTS, LabFacts
from mountbench.model import (
    CONFIG_VERSION,
    Caveat,
    ClientResult,
    RunConfig,
    RunData,
    RunOptions,
    Sample,
    SweepAxis,
    Target,
    TargetInfo,
    TargetRecord,
    Workload,
    stored_name,
)
from mountbench.records.text import escaped, escaped_tree

# --- run config and run options -------------------------------------------------------------
# Every field of RunOptions (and so of RunConfig) is written under its stored name and read
# back by its type: a field adds itself to both. A field that is missing (older versions) or
# None gets its default, or in a stored config what the versions before it did (_BEFORE).
# The options the workload kinds declare (``kind_options``) stand beside them, each under its
# own name, written and read by its kind (kinds.options_to_json, kinds.options_from_json).

_BEFORE: dict[str, Any] = {"repeat": 1, "seed": 0, "baseline": ""}

_READERS: dict[Any, Callable[[Any], Any]] = {
    int: int,
    int | None: int,
    float | None: float,
    str: str,
    str | None: str,
    bool: bool,
    tuple[str, ...]: lambda value: tuple(map(str, value)),
    tuple[int, ...]: lambda value: tuple(int(n) for n in value),
    tuple[SweepAxis, ...]: lambda value: tuple(SweepAxis.from_dict(axis) for axis in value),
    LabFacts | None: lambda value: lab_from_dict(value) if isinstance(value, dict) else None,
}


def _to_json(value: Any) -> Any:
    if isinstance(value, tuple):
        return [item.to_dict() if isinstance(item, SweepAxis) else item for item in value]
    if isinstance(value, LabFacts):
        return lab_to_dict(value)
    return value


def _fields_to_dict(record: RunOptions) -> dict[str, Any]:
    general = {stored_name(option): _to_json(getattr(record, option.name)) for option in _general(record)}
    return general | options_to_json(record.kind_options)


def _fields_from_dict(cls: type[RunOptions], data: dict[str, Any], *, stored: bool) -> dict[str, Any]:
    """``stored``: a run's config (what a missing field meant before it existed is in _BEFORE)."""
    types = get_type_hints(cls)
    before = _BEFORE if stored else {}
    values: dict[str, Any] = {"kind_options": options_from_json(data, stored=stored)}
    for option in _general(cls):
        value = data.get(stored_name(option))
        if value is not None or (types[option.name] is int and stored_name(option) in data):
            values[option.name] = _READERS[types[option.name]](value)  # int(None): damage, refused
        elif option.name in before:
            values[option.name] = before[option.name]
    return values


def _general(record: RunOptions | type[RunOptions]) -> list[Any]:
    """The fields of RunOptions (or RunConfig) but the kinds' options."""
    return [option for option in fields(record) if option.name != "kind_options"]


def config_to_dict(config: RunConfig) -> dict[str, Any]:
    return {"version": CONFIG_VERSION, **_fields_to_dict(config)}


def config_from_dict(data: dict[str, Any]) -> RunConfig:
    """Any stored or exported config, version 1 (untyped), 2 or 3 (lab_from_dict reads the lab
    facts of version 2)."""
    if not isinstance(data, dict):
        raise TypeError("config is not an object")
    data = escaped_tree(data)
    version = int(data.get("version", 1))
    if version > CONFIG_VERSION:
        raise ValueError(f"run config version {version} is newer than this mountbench reads ({CONFIG_VERSION})")
    values = _fields_from_dict(RunConfig, {k: v for k, v in data.items() if k != "warmup"}, stored=True)
    values["warmup"] = _lenient_count(data.get("warmup"))
    if data.get("max_repeat") is None:  # before --until: as many rounds as --repeat
        values["max_repeat"] = values["repeat"]
    return RunConfig(**values)


def options_to_dict(options: RunOptions) -> dict[str, Any]:
    """What `lab` hands the guest's `mountbench run --options-json`."""
    return _fields_to_dict(options)


def options_from_dict(data: dict[str, Any]) -> RunOptions:
    return RunOptions(**_fields_from_dict(RunOptions, data, stored=False))


def _lenient_count(value: Any) -> int:
    """Warm-up rounds: 0 for runs from before --warmup, or a damaged value in an imported file
    (it only describes the run; nothing is computed from it)."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def lab_to_dict(lab: LabFacts) -> dict[str, Any]:
    """The lab that made a run, named, with its own facts: {"name": "qemu", "accel": ...}."""
    return {"name": lab.name, **lab.to_dict()}


def lab_from_dict(data: dict[str, Any]) -> LabFacts:
    """Any stored lab facts. Before each lab stored its own record (no "name"), one record held
    both labs' fields: a cloud-lab run's facts were its "cloud" key beside the QEMU lab's
    fields, all None; a QEMU lab run's, the fields alone."""
    if "name" not in data:
        cloud = data.get("cloud")
        return LAB_FACTS["cloud"].from_dict({"probe": cloud}) if cloud else LAB_FACTS["qemu"].from_dict(data)
    name = data["name"]
    if name not in LAB_FACTS:
        raise ValueError(f"lab {name!r} is not one this mountbench knows ({', '.join(LAB_FACTS)})")
    return LAB_FACTS[name].from_dict(data)


# --- targets, workloads, samples --------------------------------------------------------------


def target_to_dict(record: TargetRecord) -> dict[str, Any]:
    return {
        "label": record.target.label,
        "path": record.target.path,
        "info": record.info.to_dict() if record.info else None,
    }


def target_from_dict(data: dict[str, Any]) -> TargetRecord:
    data = escaped_tree(data)
    info = data.get("info")
    return TargetRecord(Target(str(data["label"]), str(data["path"])), TargetInfo.from_dict(info) if info else None)


def workload_to_dict(workload: Workload) -> dict[str, Any]:
    return workload.to_dict()


def workload_from_dict(data: dict[str, Any]) -> Workload:
    """A workload without a stored description (older versions) gets one from its kind."""
    return stored_workload(escaped_tree(data), describe)


def sample_to_dict(sample: Sample, *, with_raw: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {
        "target": sample.target,
        "workload": sample.workload,
        "round": sample.round,
        "ok": sample.ok,
        "metrics": sample.metrics,
        "caveats": [c.to_dict() for c in sample.caveats],
        "error": sample.error,
        "started_at": sample.started_at,
        "wall_s": sample.wall_s,
        "cache_action": sample.cache_action,
    }
    if sample.series:
        data["series"] = sample.series
    if sample.clients:  # only samples taken on several machines (run --client) have parts
        data["clients"] = [c.to_dict() for c in sample.clients]
    if with_raw:
        data["raw"] = sample.raw
    return data


def sample_from_dict(data: dict[str, Any]) -> Sample:
    data = escaped_tree(data)
    metrics = {str(k): float(v) for k, v in data["metrics"].items()}
    return Sample(
        target=str(data["target"]),
        workload=str(data["workload"]),
        round=int(data["round"]),
        ok=bool(data["ok"]),
        metrics=metrics,
        caveats=tuple(Caveat.from_dict(c) for c in data.get("caveats", [])),
        error=str(data.get("error", "")),
        started_at=float(data.get("started_at", 0.0)),
        wall_s=float(data.get("wall_s", 0.0)),
        cache_action=str(data.get("cache_action", "")),
        raw=str(data.get("raw", "")),
        series={str(k): [float(v) for v in values] for k, values in (data.get("series") or {}).items()},
        clients=tuple(ClientResult.from_dict(c) for c in data.get("clients") or ()),
    )


# --- whole runs ----------------------------------------------------------------------------


def run_to_dict(run: RunData, *, with_raw: bool = False) -> dict[str, Any]:
    data = {
        "id": run.id,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
        "status": run.status,
        "command": run.command,
        "config": config_to_dict(run.config),
        "host": run.host,
        "targets": [target_to_dict(r) for r in run.targets],
        "workloads": [workload_to_dict(w) for w in run.workloads],
        "samples": [sample_to_dict(s, with_raw=with_raw) for s in run.samples],
    }
    if run.origin:  # an imported run says so wherever it goes next
        data["origin"] = run.origin
    return data


def run_from_dict(data: dict[str, Any]) -> RunData:
    return RunData(
        id=str(data["id"]),
        created_at=float(data["created_at"]),
        finished_at=None if data.get("finished_at") is None else float(data["finished_at"]),
        status=str(data["status"]),
        command=escaped(str(data.get("command", ""))),
        config=config_from_dict(data.get("config", {})),
        host=escaped_tree(dict(data.get("host", {}))),
        targets=tuple(target_from_dict(t) for t in data["targets"]),
        workloads=tuple(workload_from_dict(w) for w in data["workloads"]),
        samples=tuple(sample_from_dict(s) for s in data["samples"]),
        origin=escaped(str(data.get("origin") or "")),
    )
