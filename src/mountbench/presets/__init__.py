"""Named suites, one TOML file each in this package. Data, not code."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from mountbench.errors import UsageError
from mountbench.fiojob import FioJob
from mountbench.model import Workload

_RESERVED = {"name", "title"}


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    study: str
    workloads: tuple[Workload, ...]


def preset_names() -> list[str]:
    files = resources.files(__name__).iterdir()
    return sorted(f.name.removesuffix(".toml") for f in files if f.name.endswith(".toml"))


def load_preset(name: str) -> Preset:
    names = preset_names()
    if name not in names:
        raise UsageError(f"unknown preset {name!r}; choose one of: {', '.join(names)} (see 'mountbench presets')")
    data = tomllib.loads(resources.files(__name__).joinpath(f"{name}.toml").read_text())
    return Preset(
        name=name,
        description=data["description"],
        study=data.get("study", ""),
        workloads=tuple(_workload(name, data.get("global", {}), job) for job in data["jobs"]),
    )


def _workload(preset: str, global_opts: dict[str, Any], job: dict[str, Any]) -> Workload:
    options = [(k, _text(v)) for k, v in global_opts.items()]
    options += [(k, _text(v)) for k, v in job.items() if k not in _RESERVED]
    fio_job = FioJob(job["name"], tuple(options))
    return Workload(
        name=job["name"],
        kind="fio",
        title=job.get("title", job["name"]),
        source=f"preset:{preset}",
        spec=fio_job.to_spec(),
    )


def _text(value: Any) -> str:
    return str(value)
