"""Named suites, one TOML file each in this package. Data, not code: each ``[[jobs]]`` entry is
read by its workload kind (kinds.from_preset), a ``[sweep]`` table by fio's sweep parser.

May import: the ground floor (model, labfacts, errors, units), fio/ and kinds/. Imported by engine/ and cli/.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from mountbench.errors import UsageError
from mountbench.fio.sweeps import parse_sweep
from mountbench.model import SweepAxis, Workload


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    study: str
    workloads: tuple[Workload, ...]
    sweeps: tuple[SweepAxis, ...] = ()  # a [sweep] table: its fio workloads run at every point
    budget: float | None = None  # seconds: `run` without --repeat/--until/--budget/--runtime fits in it


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
        sweeps=tuple(parse_sweep(f"{option}={values}") for option, values in data.get("sweep", {}).items()),
        budget=float(data["budget"]) if "budget" in data else None,
    )


def _workload(preset: str, data: dict[str, Any], job: dict[str, Any]) -> Workload:
    """Each [[jobs]] entry belongs to a kind, which reads it (kinds.from_preset)."""
    from mountbench.kinds import from_preset  # the kinds import model, which this package's users import

    return from_preset(preset, data, job)
