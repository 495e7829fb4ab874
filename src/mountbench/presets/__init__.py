"""Named suites, one TOML file each in this package. Data, not code."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from mountbench.errors import UsageError
from mountbench.fiojob import FioJob
from mountbench.model import Workload

_RESERVED = {"name", "title", "headline"}


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
        workloads=tuple(_workload(name, data, job) for job in data["jobs"]),
    )


def _workload(preset: str, data: dict[str, Any], job: dict[str, Any]) -> Workload:
    if job.get("kind") == "tree":
        from mountbench.runners.tree import tree_workload

        return tree_workload(job["action"], dict(data["tree"]), f"preset:{preset}")
    options = [(k, _text(v)) for k, v in data.get("global", {}).items()]
    options += [(k, _text(v)) for k, v in job.items() if k not in _RESERVED]
    spec: dict[str, Any] = FioJob(job["name"], tuple(options)).to_spec()
    if "headline" in job:
        spec["headline"] = list(job["headline"])
    return Workload(
        name=job["name"],
        kind="fio",
        title=job.get("title", job["name"]),
        source=f"preset:{preset}",
        spec=spec,
    )


def _text(value: Any) -> str:
    return str(value)
