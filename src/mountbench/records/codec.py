"""The one dict codec for runs: what the store keeps in its JSON columns and what the
export document carries are the same dicts, made and read here.

Reading is forgiving about what older versions wrote (a missing field gets its
default; a run config without "version" is version 1, the untyped dict of
mountbench 0.1) and strict about damage: a wrong type raises KeyError, TypeError
or ValueError for the caller to turn into a one-line error.
"""

from __future__ import annotations

from typing import Any

from mountbench.kinds import describe
from mountbench.kinds.base import stored_workload
from mountbench.model import (
    CONFIG_VERSION,
    AppChoice,
    Caveat,
    ClientResult,
    LabFacts,
    RunConfig,
    RunData,
    RunOptions,
    Sample,
    SweepAxis,
    Target,
    TargetInfo,
    TargetRecord,
    TreeChoice,
    Workload,
)

# --- run config -----------------------------------------------------------------------------


def config_to_dict(config: RunConfig) -> dict[str, Any]:
    return {
        "version": CONFIG_VERSION,
        "repeat": config.repeat,
        "seed": config.seed,
        "baseline": config.baseline,
        "warmup": config.warmup,
        "drop_caches": config.drop_caches,
        "keep": config.keep,
        "presets": list(config.presets),
        "job_files": list(config.job_files),
        "only": list(config.only),
        "size": config.size,
        "runtime": config.runtime,
        "tree": config.tree.spec() if config.tree else None,
        "default_targets": config.default_targets,
        "lab": _lab_to_dict(config.lab) if config.lab else None,
        "file_state": config.file_state,
        "until": config.until,
        "max_repeat": config.max_repeat,
        "budget": config.budget,
        "sweeps": [axis.to_dict() for axis in config.sweeps],
        "clients": list(config.clients),
        "client_counts": list(config.client_counts),
        "watch": list(config.watch),
        "app": config.app.spec() if config.app else None,
    }


def config_from_dict(data: dict[str, Any]) -> RunConfig:
    """Any stored or exported config, version 1 (untyped) or 2."""
    if not isinstance(data, dict):
        raise TypeError("config is not an object")
    version = int(data.get("version", 1))
    if version > CONFIG_VERSION:
        raise ValueError(f"run config version {version} is newer than this mountbench reads ({CONFIG_VERSION})")
    lab = data.get("lab")
    return RunConfig(
        repeat=int(data.get("repeat", 1)),
        seed=int(data.get("seed", 0)),
        baseline=str(data.get("baseline") or ""),
        warmup=_lenient_count(data.get("warmup")),
        drop_caches=str(data.get("drop_caches") or "auto"),
        keep=bool(data.get("keep", False)),
        presets=tuple(map(str, data.get("presets") or ())),
        job_files=tuple(map(str, data.get("job_files") or ())),
        only=tuple(map(str, data.get("only") or ())),
        size=None if data.get("size") is None else int(data["size"]),
        runtime=None if data.get("runtime") is None else float(data["runtime"]),
        tree=TreeChoice.from_spec(data.get("tree")),
        default_targets=bool(data.get("default_targets", False)),
        lab=_lab_from_dict(lab) if isinstance(lab, dict) else None,
        file_state=str(data.get("file_state") or "reused"),
        until=_float_or_none(data.get("until")),
        max_repeat=int(data.get("max_repeat") or data.get("repeat", 1)),
        budget=_float_or_none(data.get("budget")),
        sweeps=_sweeps_from_list(data.get("sweeps")),
        clients=tuple(map(str, data.get("clients") or ())),
        client_counts=tuple(int(n) for n in data.get("client_counts") or ()),
        watch=tuple(map(str, data.get("watch") or ())),
        app=AppChoice.from_spec(data.get("app")),
    )


def _sweeps_from_list(data: Any) -> tuple[SweepAxis, ...]:
    """--sweep axes; none for runs from before --sweep."""
    return tuple(SweepAxis.from_dict(axis) for axis in data or ())


def _lenient_count(value: Any) -> int:
    """Warm-up rounds: 0 for runs from before --warmup, or a damaged value in an imported file
    (it only describes the run; nothing is computed from it)."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


_LAB_FIELDS = ("accel", "accel_reason", "emulated", "kernel", "kernel_image", "qemu", "cpus", "memory_mib", "root",
               "root_server")  # fmt: skip


def _lab_to_dict(lab: LabFacts) -> dict[str, Any]:
    data: dict[str, Any] = {name: getattr(lab, name) for name in _LAB_FIELDS}
    data["boot"] = dict(lab.boot)
    data["mounts"] = [dict(m) for m in lab.mounts]
    if lab.probe is not None:
        data["probe"] = lab.probe
    return data


def _lab_from_dict(data: dict[str, Any]) -> LabFacts:
    known = {name: data.get(name) for name in _LAB_FIELDS}
    probe = data.get("probe")
    return LabFacts(
        **known,
        boot=dict(data.get("boot") or {}),
        mounts=tuple(dict(m) for m in data.get("mounts") or ()),
        probe=dict(probe) if isinstance(probe, dict) else None,
    )


# --- targets, workloads, samples --------------------------------------------------------------


def target_to_dict(record: TargetRecord) -> dict[str, Any]:
    return {
        "label": record.target.label,
        "path": record.target.path,
        "info": record.info.to_dict() if record.info else None,
    }


def target_from_dict(data: dict[str, Any]) -> TargetRecord:
    info = data.get("info")
    return TargetRecord(Target(str(data["label"]), str(data["path"])), TargetInfo.from_dict(info) if info else None)


def workload_to_dict(workload: Workload) -> dict[str, Any]:
    return workload.to_dict()


def workload_from_dict(data: dict[str, Any]) -> Workload:
    """A workload without a stored description (older versions) gets one from its kind."""
    return stored_workload(data, describe)


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
    return {
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


def run_from_dict(data: dict[str, Any]) -> RunData:
    return RunData(
        id=str(data["id"]),
        created_at=float(data["created_at"]),
        finished_at=None if data.get("finished_at") is None else float(data["finished_at"]),
        status=str(data["status"]),
        command=str(data.get("command", "")),
        config=config_from_dict(data.get("config", {})),
        host=dict(data.get("host", {})),
        targets=tuple(target_from_dict(t) for t in data["targets"]),
        workloads=tuple(workload_from_dict(w) for w in data["workloads"]),
        samples=tuple(sample_from_dict(s) for s in data["samples"]),
    )


# --- run options (what `lab` hands the guest) --------------------------------------------------


def options_to_dict(options: RunOptions) -> dict[str, Any]:
    return {
        "presets": list(options.presets),
        "job_files": list(options.job_files),
        "only": list(options.only),
        "tree": options.tree.spec() if options.tree else None,
        "repeat": options.repeat,
        "warmup": options.warmup,
        "runtime": options.runtime,
        "size": options.size,
        "seed": options.seed,
        "baseline": options.baseline,
        "drop_caches": options.drop_caches,
        "keep": options.keep,
        "file_state": options.file_state,
        "until": options.until,
        "max_repeat": options.max_repeat,
        "budget": options.budget,
        "sweeps": [axis.to_dict() for axis in options.sweeps],
        "clients": list(options.clients),
        "client_counts": list(options.client_counts),
        "watch": list(options.watch),
        "app": options.app.spec() if options.app else None,
    }


def options_from_dict(data: dict[str, Any]) -> RunOptions:
    return RunOptions(
        presets=tuple(map(str, data.get("presets") or ())),
        job_files=tuple(map(str, data.get("job_files") or ())),
        only=tuple(map(str, data.get("only") or ())),
        tree=TreeChoice.from_spec(data.get("tree")),
        repeat=int(data.get("repeat", 3)),
        warmup=int(data.get("warmup", 0)),
        runtime=None if data.get("runtime") is None else float(data["runtime"]),
        size=None if data.get("size") is None else int(data["size"]),
        seed=None if data.get("seed") is None else int(data["seed"]),
        baseline=data.get("baseline"),
        drop_caches=str(data.get("drop_caches", "auto")),
        keep=bool(data.get("keep", False)),
        file_state=str(data.get("file_state", "steady")),
        until=_float_or_none(data.get("until")),
        max_repeat=int(data.get("max_repeat", 12)),
        budget=_float_or_none(data.get("budget")),
        sweeps=_sweeps_from_list(data.get("sweeps")),
        clients=tuple(map(str, data.get("clients") or ())),
        client_counts=tuple(int(n) for n in data.get("client_counts") or ()),
        watch=tuple(map(str, data.get("watch") or ())),
        app=AppChoice.from_spec(data.get("app")),
    )


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)
