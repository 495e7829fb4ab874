"""virtiofs: a host directory served by a virtiofsd (the Rust one or QEMU's C one)
over a vhost-user socket; the guest mounts it with its FUSE-based virtiofs driver."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import ClassVar

from mountbench.errors import ToolMissing
from mountbench.host import facts as hostinfo
from mountbench.labs.qemu.mounts.guestmount import GuestMount, MountHost, MountSpec, MountType, Option, Problem
from mountbench.labs.qemu.qemu import Device, VhostUserFs
from mountbench.labs.qemu.virtiofsd import find_virtiofsd


class Virtiofs(MountType):
    name = "virtiofs"
    shared = True
    guest_caching_values = frozenset(("auto", "always"))
    options: ClassVar[Mapping[str, Option]] = {
        "cache": Option(("never", "auto", "always"), default="auto", core=True),
        "thread_pool_size": Option(type="int", minimum=0, maximum=1024),
        "direct_io": Option(("off", "on"), default="off"),
        "daemon": Option(("auto", "qemu", "rust"), default="auto"),
    }
    guest_modules = ("fuse", "virtiofs")

    def prerequisites(self) -> list[Problem]:
        if find_virtiofsd("auto") is not None:
            return []
        return [
            Problem("no virtiofsd (virtiofs mounts)", "apt-get install qemu-system-x86 (ships /usr/lib/qemu/virtiofsd)")
        ]

    def attach(self, mount: GuestMount, host: MountHost) -> list[Device]:
        mount.host_path = host.mount_dir()
        choice = mount.spec.get("daemon") or "auto"
        daemon = find_virtiofsd(host.virtiofsd if choice == "auto" else choice)
        if daemon is None:
            raise ToolMissing(
                f"no virtiofsd for mount {mount.label!r}; run: apt-get install qemu-system-x86 "
                "(ships /usr/lib/qemu/virtiofsd) or cargo install virtiofsd"
            )
        sock = host.socket_path(f"virtiofs-{mount.tag}.sock")
        pool = mount.spec.get("thread_pool_size")
        argv = daemon.argv(
            sock,
            mount.host_path,
            cache=mount.spec.get("cache") or "auto",
            thread_pool_size=int(pool) if pool is not None else None,
            direct_io=mount.spec.get("direct_io") == "on",
            sandbox=None if hostinfo.is_root() else ("none" if daemon.flavour == "rust" else "chroot"),
        )
        host.start_daemon(
            "virtiofsd",
            argv,
            host.logs_dir / f"virtiofsd-{mount.slug}.log",
            ready=sock.exists,
            failure=f"virtiofsd for {mount.slug} did not create its socket",
        )
        mount.served_by = daemon.description
        mount.extra["virtiofsd"] = daemon.flavour
        mount.extra["virtiofsd_argv"] = " ".join(argv[1:])
        return [VhostUserFs(mount.tag, sock)]

    def mount_command(self, mount: GuestMount) -> str:
        return shlex.join(["mb_mount", mount.slug, "virtiofs", mount.tag, "rw"])

    def host_cache(self, spec: MountSpec) -> str | None:
        if spec.get("direct_io", "off") == "on":
            return None
        return "virtiofsd ignores the guest's O_DIRECT unless direct_io=on"
