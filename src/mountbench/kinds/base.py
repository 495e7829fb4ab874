"""What every workload kind provides. A kind is one module in this package that knows
everything about its workloads: how presets (and, for fio, job files) define them,
how they are described, how command-line overrides change them, and how they run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from mountbench.fio.binary import FioInfo
from mountbench.kinds.runner import Runner
from mountbench.model import Description, Flag, KindOptions, KindOptionValue, SweepAxis, Workload


@dataclass(frozen=True)
class KindOption:
    """A run option a kind declares: its flags (cli/options.py makes them click options, in
    `run` and every lab), how their values become the option's value, and its stored form (the
    value's to_json under ``name`` in every stored config, read back by ``from_json``)."""

    name: str  # its key in stored configs and in model.KindOptions
    flags: tuple[Flag, ...]
    read: Callable[[Mapping[str, Any]], KindOptionValue | None]  # the flags' values (by click parameter) -> value
    from_json: Callable[[Any], KindOptionValue | None]
    default: KindOptionValue | None = None  # what a run that does not give it does
    before: KindOptionValue | None = None  # what a stored config without it did (a version before the option)
    unused: str = ""  # the refusal when it is given and no selected workload takes it ('': no refusal)


@dataclass(frozen=True)
class Adjustments:
    """Command-line overrides a kind applies to its workloads where they mean something."""

    runtime: float | None = None  # seconds per timed run
    options: KindOptions = field(default_factory=KindOptions)  # the kinds' own options (each kind reads its own)


@dataclass(frozen=True)
class RunnerSetup:
    """What runners are made from: the fio to use, the kinds' options the run uses (each kind
    reads its own, e.g. fio's --file-state) and, on resume, the host facts the run's runners
    recorded (each kind reads back its own, e.g. fio's clock)."""

    fio: FioInfo
    options: KindOptions = field(default_factory=KindOptions)
    resumed_host: Mapping[str, Any] = field(default_factory=dict)  # empty: a new run


class WorkloadKind(Protocol):
    name: str
    takes_runtime: bool  # does --runtime shorten its samples (what --budget adjusts)?
    options: tuple[KindOption, ...]  # the run options it declares (its overrides, its runner's choices)

    def from_preset(self, preset: str, data: Mapping[str, Any], entry: Mapping[str, Any]) -> Workload:
        """One ``[[jobs]]`` entry of a preset file (``data`` is the whole file)."""

    def describe(self, workload: Workload) -> Description:
        """The workload's description, from its spec alone (pure)."""

    def adjust(self, workload: Workload, adjustments: Adjustments) -> Workload:
        """The workload with the overrides that apply to this kind (itself when none do)."""

    def declared_size(self, workload: Workload) -> int | None:
        """Bytes the workload's definition asks for (--size scales suites by it); None: not sized."""

    def with_size(self, workload: Workload, size: int) -> Workload:
        """The workload with a new working-set size."""

    def renamed(self, workload: Workload, name: str, title: str) -> Workload:
        """The same work under another name (two sources with a workload of the same name)."""

    def sweep(self, workload: Workload, axes: Sequence[SweepAxis]) -> list[Workload] | None:
        """One workload per point of the axes' grid (--sweep), each carrying its SweepPoint;
        None when the kind has no such options (the workload then runs once, as defined)."""

    def fsync_variant(self, workload: Workload) -> Workload | None:
        """The workload ending with a flush of what it wrote, counted in its time (run
        --fsync-writes); None when it writes nothing, syncs already or the kind cannot."""

    def preset_alone(self, adjustments: Adjustments) -> str | None:
        """The preset a run without --preset or --job runs when this kind's override is given
        (--tree selects the tree preset); None: the kind has no such override, or it is absent."""

    def make_runner(self, setup: RunnerSetup) -> Runner:
        """The runner that takes this kind's samples."""


def new_workload(kind: WorkloadKind, name: str, title: str, source: str, spec: dict[str, Any]) -> Workload:
    """A workload of ``kind``, described by it once, here, when it is made."""
    draft = Workload(name, kind.name, title, source, spec, Description(summary=""))
    return replace(draft, description=kind.describe(draft))


def stored_workload(data: Mapping[str, Any], describe: Callable[[Workload], Description]) -> Workload:
    """A workload read from a store or an export; one stored by a version that recorded no
    description gets it from ``describe`` (its kind's)."""
    stored = data.get("description")
    if isinstance(stored, dict):
        workload = Workload.from_dict(dict(data))
        missing = [name for name in Description.LATER if name not in stored]
        if not missing:
            return workload
        fresh = describe(workload)  # stored before these fields existed: its kind gives them
        later = {name: getattr(fresh, name) for name in missing}
        return replace(workload, description=replace(workload.description, **later))
    draft = Workload.from_dict({**data, "description": {"summary": ""}})
    return replace(draft, description=describe(draft))


def generic_description(workload: Workload) -> Description:
    """For a workload of a kind this version does not know (a run made by a newer one)."""
    summary = " ".join(f"{key}={_compact(value)}" for key, value in workload.spec.items() if key != "headline")
    return Description(
        summary=summary,
        options=tuple(f"{key}={_compact(value)}" for key, value in workload.spec.items()),
        headline=tuple(workload.spec.get("headline") or ()),
    )


def _compact(value: object) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}:{v}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)
