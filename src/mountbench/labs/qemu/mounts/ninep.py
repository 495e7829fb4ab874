"""9p: a host directory served by QEMU's own virtio-9p device (no daemon of its own)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import ClassVar

from mountbench.labs.qemu.mounts.guestmount import GuestMount, MountHost, MountSpec, MountType, Option
from mountbench.labs.qemu.qemu import Device, Share9p


def ninep_options(spec: MountSpec) -> str:
    """Guest mount options for a 9p spec."""
    return f"trans=virtio,version=9p2000.L,cache={spec.get('cache')},msize={spec.get('msize')}"


class NineP(MountType):
    name = "9p"
    shared = True
    guest_caching_values = frozenset(("loose", "mmap", "fscache"))
    options: ClassVar[Mapping[str, Option]] = {
        "cache": Option(("none", "loose", "mmap", "fscache"), default="none", core=True),
        "msize": Option(type="int", default="512000", core=True, minimum=4096, maximum=4 << 20),
        "security_model": Option(("mapped-xattr", "mapped-file", "passthrough", "none"), default="mapped-xattr"),
    }
    guest_modules = ("9pnet_virtio", "9p")

    def attach(self, mount: GuestMount, host: MountHost) -> list[Device]:
        mount.host_path = host.mount_dir()
        model = mount.spec.get("security_model") or "mapped-xattr"
        mount.served_by = f"qemu 9p (security_model={model})"
        return [Share9p(mount.tag, mount.host_path, model)]

    def mount_command(self, mount: GuestMount) -> str:
        return shlex.join(["mb_mount", mount.slug, "9p", mount.tag, ninep_options(mount.spec)])

    def host_cache(self, spec: MountSpec) -> str | None:
        return "QEMU's 9p server opens host files without O_DIRECT"
