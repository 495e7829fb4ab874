"""guest-tmpfs: the guest's own RAM, no sharing layer at all; the lab's natural baseline."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import ClassVar

from mountbench.labs.qemu.mounts.guestmount import GuestMount, MountHost, MountSpec, MountType, Option
from mountbench.labs.qemu.qemu import Device


def tmpfs_options(spec: MountSpec) -> str:
    """Guest mount options for a guest-tmpfs spec."""
    size = spec.get("size")
    return "mode=1777" + (f",size={size}" if size else "")


class GuestTmpfs(MountType):
    name = "guest-tmpfs"
    options: ClassVar[Mapping[str, Option]] = {
        "size": Option(type="size", minimum=1 << 20),
    }
    reference = True

    def attach(self, mount: GuestMount, host: MountHost) -> list[Device]:
        mount.tag = "tmpfs"
        mount.served_by = "guest RAM"
        return []

    def mount_command(self, mount: GuestMount) -> str:
        return shlex.join(["mb_mount", mount.slug, "tmpfs", "tmpfs", tmpfs_options(mount.spec)])
