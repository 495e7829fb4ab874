"""Which lab made a run (model.RunConfig.lab): each lab of labs/ stores its own record here,
never another lab's fields. A lab's record is one typed class and one line in LAB_FACTS
(records/codec.py reads stored configs by it); what its probe found is probefacts.py's records.

On the ground floor, so that records/ (the codec) and report/ (the pick-two judges) read a lab's
facts without importing labs/. Imports plain.py and probefacts.py only."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Self

from mountbench.plain import PlainRecord, to_plain
from mountbench.probefacts import CloudProbe, FsInfo, LabProbe, MountProbe, ProbeResult, TargetProbe


@dataclass(frozen=True)
class GuestMountFacts(PlainRecord):
    """One mount of a QEMU-lab guest as its run recorded it (stored flat: what its mount type
    added, ``extra``, beside the rest)."""

    label: str = ""
    spec: str = ""  # as given: "9p:cache=loose"
    slug: str = ""
    guest_path: str = ""
    host_path: str | None = None
    served_by: str = ""
    proc_mounts: str = ""
    extra: dict[str, str] = field(default_factory=dict)  # virtiofsd's argv, the NFS export, ...

    def to_dict(self) -> dict[str, Any]:
        data = to_plain(self)
        return {**data, **data.pop("extra")}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        own = {f.name for f in fields(cls)} - {"extra"}
        extra = {key: str(value) for key, value in data.items() if key not in own}
        return super().from_dict({key: value for key, value in data.items() if key in own} | {"extra": extra})


@dataclass(frozen=True)
class QemuLabFacts(PlainRecord):
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
    mounts: tuple[GuestMountFacts, ...] = ()
    probe: LabProbe | None = None  # lab --probe

    def to_dict(self) -> dict[str, Any]:
        data = to_plain(self)
        return data if self.probe is not None else {k: v for k, v in data.items() if k != "probe"}


@dataclass(frozen=True)
class CloudLabFacts(PlainRecord):
    """What `mountbench cloudlab` made and probed (stored with the run before its first sample;
    labs/cloud): the targets (cache mode, RTT, bandwidth), the tools, the read workloads' phases,
    and what the probe found (nothing with --no-probe)."""

    name: ClassVar[str] = "cloud"
    probe: CloudProbe = field(default_factory=lambda: CloudProbe((), (), 0, 0.0))


HOST_TARGET = "host"  # the container lab's baseline: the bind mount's directory, measured from the host

# what the host sees of a container mount (ContainerMount.shares), as each mount type says it
# (labs/containers/mounts) and pick two reads it (report/picktwo/containermounts.py)
SHARED_BOTH_WAYS = "both ways"  # the host's directory itself: the probe measures how coherent, each such mount
SHARED_HOST_TO_CONTAINER = "host to container"  # the host's directory below; the container's writes stay inside
NOT_SHARED = "no"


@dataclass(frozen=True)
class ContainerMount(PlainRecord):
    """One mount of the container lab as the run recorded it: what its mount type says it is and
    what the container's mount table showed (the host's own directory, the baseline, too)."""

    name: str = ""  # the target's label
    path: str = ""  # where it appears inside the container (the host's: its path on the host)
    meaning: str = ""
    outlives: str = ""  # "yes (...)" or "no: ..."
    shares: str = ""  # what the host sees of it (labs/containers/mounts: SHARED_*); "" for the host's
    fstype: str = ""
    source: str = ""
    options: str = ""


@dataclass(frozen=True)
class ContainerImage(PlainRecord):
    name: str = ""
    id: str = ""
    digest: str = ""
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class ContainerLabFacts(PlainRecord):
    """What `mountbench containers` made and probed (labs/containers): the engine, runtime and
    storage driver, rootless or not, the image (its ID and digest), each mount as the container's
    mount table showed it, the other engines and why they were not measured, and what the probe
    found on each mount from inside (a LabProbe: the container is the lab's inside, its "guest")."""

    name: ClassVar[str] = "containers"
    engine: str = ""
    runtime: str = ""
    storage_driver: str = ""
    rootless: bool = False
    cgroup_manager: str = ""
    cgroups: str = ""
    network: str = ""
    image: ContainerImage = field(default_factory=ContainerImage)
    mounts: tuple[ContainerMount, ...] = ()
    engines: dict[str, str] = field(default_factory=dict)  # engine -> "measured" or why not
    probe: LabProbe | None = None

    def mount(self, name: str) -> ContainerMount | None:
        return next((m for m in self.mounts if m.name == name), None)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Also what the lab stored before issue 52: one dict under "facts", the mounts by name, the
        probe its own (what each mount's in-container checks found; the bind mount's coherence, which
        has no counterpart in a LabProbe and is left out)."""
        old = data.get("facts")
        if not isinstance(old, dict):
            return super().from_dict(data)
        mounts = [{"name": name, **mount} for name, mount in (old.get("mounts") or {}).items()]
        probe = old.get("probe")
        found = _early_probe(probe, {m["name"]: m for m in mounts}) if isinstance(probe, dict) else None
        return super().from_dict({**old, "mounts": mounts, "probe": found})


# what the container lab's own in-container checks were called before it ran probe/'s capability probe
_EARLY_CHECKS = {"rename_lower_dir": ("lower_dir_rename", "rename a directory from an overlay's lower layer"),
                 "rename_new_dir": ("rename_dir", "rename a directory"), "chown": ("chown_uid", "chown to another uid"),
                 "xattr": ("user_xattr", "user xattrs"), "o_direct": ("o_direct", "O_DIRECT")}  # fmt: skip


def _early_probe(probe: dict[str, Any], mounts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    found = []
    for name, checks in (probe.get("capabilities") or {}).items():
        results = [ProbeResult(_EARLY_CHECKS[key][0], _EARLY_CHECKS[key][1], "yes" if seen.get("ok") else "no",
                               seen.get("errno"), str(seen.get("detail") or ""))
                   for key, seen in checks.items() if key in _EARLY_CHECKS]  # fmt: skip
        path = str(mounts.get(name, {}).get("path", ""))
        shared = mounts.get(name, {}).get("shares") == SHARED_BOTH_WAYS
        found.append(MountProbe(name, path, shared, TargetProbe(path, FsInfo(), tuple(results))))
    errors = ("the coherence through the bind mount was stored in an earlier form, not shown here",)
    return LabProbe(tuple(found), 0, 0.0, errors=errors if probe.get("coherence") else ()).to_dict()


LabFacts = QemuLabFacts | CloudLabFacts | ContainerLabFacts
LAB_FACTS: dict[str, type[QemuLabFacts] | type[CloudLabFacts] | type[ContainerLabFacts]] = {
    facts.name: facts for facts in (QemuLabFacts, CloudLabFacts, ContainerLabFacts)
}
