"""Which lab made a run (model.RunConfig.lab): each lab of labs/ stores its own record here,
never another lab's fields. A lab's record is one class and one line in LAB_FACTS
(records/codec.py reads stored configs by it).

On the ground floor, so that records/ (the codec) and report/ (the lab sections) read a lab's
facts without importing labs/. Imports nothing of mountbench."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Self


@dataclass(frozen=True)
class QemuLabFacts:
    """How a `mountbench lab` guest was made, and what its probe found (stored with the run it
    produced; labs/qemu)."""

    name: ClassVar[str] = "qemu"
    accel: str | None = None
    accel_reason: str | None = None
    emulated: bool | None = None
    kernel: str | None = None
    kernel_image: str | None = None
    qemu: str | None = None
    cpus: int | None = None
    memory_mib: int | None = None
    root: str | None = None
    root_server: str | None = None
    boot: dict[str, float | None] = field(default_factory=dict)
    mounts: tuple[dict[str, Any], ...] = ()
    probe: dict[str, Any] | None = None  # lab --probe: a probe.model.LabProbe as its dict

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {name: getattr(self, name) for name in _QEMU_SCALARS}
        data["boot"] = dict(self.boot)
        data["mounts"] = [dict(m) for m in self.mounts]
        if self.probe is not None:
            data["probe"] = self.probe
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QemuLabFacts:
        probe = data.get("probe")
        return cls(
            **{name: data.get(name) for name in _QEMU_SCALARS},
            boot=dict(data.get("boot") or {}),
            mounts=tuple(dict(m) for m in data.get("mounts") or ()),
            probe=dict(probe) if isinstance(probe, dict) else None,
        )


_QEMU_SCALARS = ("accel", "accel_reason", "emulated", "kernel", "kernel_image", "qemu", "cpus", "memory_mib", "root",
                 "root_server")  # fmt: skip


class _DictFacts:
    """A lab's facts kept as one dict, stored under the name of the record's one field."""

    def to_dict(self) -> dict[str, Any]:
        (only,) = fields(self)  # type: ignore[arg-type]
        return {only.name: getattr(self, only.name)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        (only,) = fields(cls)  # type: ignore[arg-type]
        value = data.get(only.name)
        return cls(dict(value) if isinstance(value, dict) else {})  # type: ignore[call-arg]


@dataclass(frozen=True)
class CloudLabFacts(_DictFacts):
    """What `mountbench cloudlab` made and probed (stored with the run before its first sample;
    labs/cloud): a probe.remotesync.CloudProbe as its dict: the targets (cache mode, RTT,
    bandwidth), the tools, and what the probe found (nothing with --no-probe)."""

    name: ClassVar[str] = "cloud"
    probe: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ContainerLabFacts(_DictFacts):
    """What `mountbench containers` made and probed (labs/containers): the engine, runtime and
    storage driver, rootless or not, the image (its ID and digest), each mount as the
    container's mount table showed it, the other engines and why they were not measured,
    and what the probe found on each mount."""

    name: ClassVar[str] = "containers"
    facts: dict[str, Any] = field(default_factory=dict)


LabFacts = QemuLabFacts | CloudLabFacts | ContainerLabFacts
LAB_FACTS: dict[str, type[QemuLabFacts] | type[CloudLabFacts] | type[ContainerLabFacts]] = {
    facts.name: facts for facts in (QemuLabFacts, CloudLabFacts, ContainerLabFacts)
}
