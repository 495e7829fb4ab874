"""The QEMU lab's mount types: one module each, one registry.

To add a mount type: write labs/qemu/mounts/<type>.py with a MountType subclass (see
labs/qemu/mounts/base.py for what it declares) and add one line to MOUNT_TYPES below. Spec
parsing, labels, the guest's kernel modules, host wiring, the guest's mount
lines, serving processes and caveats all go through this registry.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from mountbench.labs.frame import registry
from mountbench.labs.qemu.mounts.disk import VirtualDisk
from mountbench.labs.qemu.mounts.guest_tmpfs import GuestTmpfs
from mountbench.labs.qemu.mounts.guestmount import HOST_FROM_GUEST, HostService, MountHost, MountType, Option, Problem
from mountbench.labs.qemu.mounts.nfs import Nfs
from mountbench.labs.qemu.mounts.ninep import NineP
from mountbench.labs.qemu.mounts.sshfs import Sshfs
from mountbench.labs.qemu.mounts.virtiofs import Virtiofs

# Registry order is the order `--mount` help and errors list the mount types in.
MOUNT_TYPES: Final[dict[str, MountType]] = registry(
    NineP(),
    Virtiofs(),
    Sshfs(),
    Nfs(),
    VirtualDisk(),
    GuestTmpfs(),
)


def guest_modules(types: Iterable[MountType] | None = None) -> tuple[str, ...]:
    """Kernel modules the guest needs for these mount types (default: every one), each once, in order."""
    names: dict[str, None] = {}
    for mount_type in MOUNT_TYPES.values() if types is None else types:
        names.update(dict.fromkeys(mount_type.guest_modules))
    return tuple(names)


__all__ = [
    "HOST_FROM_GUEST",
    "MOUNT_TYPES",
    "HostService",
    "MountHost",
    "MountType",
    "Option",
    "Problem",
    "guest_modules",
]
