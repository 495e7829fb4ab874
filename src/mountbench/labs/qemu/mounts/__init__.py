"""The lab's mount kinds: one module each, one registry.

To add a kind: write lab/mounts/<kind>.py with a MountKind subclass (see
lab/mounts/base.py for what it declares) and add one line to KINDS below. Spec
parsing, labels, the guest's kernel modules, host wiring, the guest's mount
lines, serving processes and caveats all go through this registry.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from mountbench.labs.qemu.mounts.base import HOST_FROM_GUEST, HostService, LabHost, MountKind, Option, Problem
from mountbench.labs.qemu.mounts.disk import VirtualDisk
from mountbench.labs.qemu.mounts.guest_tmpfs import GuestTmpfs
from mountbench.labs.qemu.mounts.nfs import Nfs
from mountbench.labs.qemu.mounts.ninep import NineP
from mountbench.labs.qemu.mounts.sshfs import Sshfs
from mountbench.labs.qemu.mounts.virtiofs import Virtiofs

# Registry order is the order `--mount` help and errors list the kinds in.
KINDS: Final[dict[str, MountKind]] = {
    kind.name: kind
    for kind in (
        NineP(),
        Virtiofs(),
        Sshfs(),
        Nfs(),
        VirtualDisk(),
        GuestTmpfs(),
    )
}


def guest_modules(kinds: Iterable[MountKind] | None = None) -> tuple[str, ...]:
    """Kernel modules the guest needs for these kinds (default: every kind), each once, in order."""
    names: dict[str, None] = {}
    for kind in KINDS.values() if kinds is None else kinds:
        names.update(dict.fromkeys(kind.guest_modules))
    return tuple(names)


def kind_prerequisites(names: Iterable[str] | None = None) -> list[Problem]:
    """The missing host pieces of these kinds (default: every kind), in registry order,
    each problem once."""
    wanted = set(KINDS) if names is None else set(names)
    problems: dict[Problem, None] = {}
    for kind in KINDS.values():
        if kind.name in wanted:
            problems.update(dict.fromkeys(kind.prerequisites()))
    return list(problems)


__all__ = [
    "HOST_FROM_GUEST",
    "KINDS",
    "HostService",
    "LabHost",
    "MountKind",
    "Option",
    "Problem",
    "guest_modules",
    "kind_prerequisites",
]
