"""QEMU command lines for the lab guest: a pure function of a description.

Nothing here starts processes, so the exact command line can be unit-tested.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

QEMU: Final = "qemu-system-x86_64"


@dataclass(frozen=True)
class Share9p:
    """A host directory exported over virtio-9p under `tag`."""

    tag: str
    path: Path
    security_model: str = "mapped-xattr"
    readonly: bool = False
    multidevs_remap: bool = False

    def args(self, index: int) -> list[str]:
        fsdev = f"local,id=fs{index},path={_esc(self.path)},security_model={self.security_model}"
        if self.readonly:
            fsdev += ",readonly=on"
        if self.multidevs_remap:
            fsdev += ",multidevs=remap"
        return ["-fsdev", fsdev, "-device", f"virtio-9p-pci,fsdev=fs{index},mount_tag={self.tag}"]


@dataclass(frozen=True)
class VhostUserFs:
    """A virtiofs device backed by a virtiofsd listening on `socket`."""

    tag: str
    socket: Path

    def args(self, index: int) -> list[str]:
        return [
            "-chardev",
            f"socket,id=vfs{index},path={_esc(self.socket)}",
            "-device",
            f"vhost-user-fs-pci,chardev=vfs{index},tag={self.tag},queue-size=1024",
        ]


@dataclass(frozen=True)
class Disk:
    """A virtio-blk disk; the guest finds it by `serial` (at most 20 characters)."""

    path: Path
    serial: str
    format: str = "raw"
    cache: str = "none"

    def args(self, index: int) -> list[str]:
        drive = f"file={_esc(self.path)},if=none,id=disk{index},format={self.format},cache={self.cache}"
        return [
            "-drive",
            drive,
            "-device",
            f"virtio-blk-pci,drive=disk{index},serial={self.serial}",
        ]


@dataclass(frozen=True)
class UserNet:
    """QEMU user networking: the guest is 10.0.2.15, the host's loopback is 10.0.2.2."""

    def args(self, index: int) -> list[str]:
        return [
            "-netdev",
            f"user,id=net{index}",
            "-device",
            f"virtio-net-pci,netdev=net{index}",
        ]


Device = Share9p | VhostUserFs | Disk | UserNet


@dataclass(frozen=True)
class QemuConfig:
    """Everything the lab guest's command line depends on."""

    kernel: Path
    initrd: Path
    control_socket: Path  # second serial port: host -> guest commands
    accel_args: tuple[str, ...] = ("-accel", "tcg,thread=multi", "-cpu", "max")
    cpus: int = 2
    memory_mib: int = 1024
    append: tuple[str, ...] = ()
    devices: tuple[Device, ...] = field(default_factory=tuple)
    qemu: str = QEMU


def kernel_cmdline(root: str, *, net: bool = False, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The guest kernel's command line: serial console, panic -> exit, lab switches."""
    args = ["console=ttyS0", "panic=-1", "rdinit=/init", f"mb.root={root}"]
    if net:
        args.append("mb.net=1")
    return (*args, *extra)


def qemu_argv(cfg: QemuConfig) -> list[str]:
    """The full QEMU command line for `cfg`.

    The console (ttyS0) is QEMU's stdout; commands arrive on ttyS1 from a unix
    socket QEMU listens on. Guest RAM is a shared memfd, which vhost-user-fs needs.
    """
    mem = f"{cfg.memory_mib}M"
    argv = [
        cfg.qemu,
        "-name",
        "mountbench-lab",
        "-nodefaults",
        "-no-user-config",
        "-display",
        "none",
        "-no-reboot",
        *cfg.accel_args,
        "-smp",
        str(cfg.cpus),
        "-m",
        mem,
        "-object",
        f"memory-backend-memfd,id=mem,size={mem},share=on",
        "-numa",
        "node,memdev=mem",
        "-kernel",
        str(cfg.kernel),
        "-initrd",
        str(cfg.initrd),
        "-append",
        " ".join(cfg.append),
        "-chardev",
        "stdio,id=con,signal=off",
        "-serial",
        "chardev:con",
        "-chardev",
        f"socket,id=ctl,path={_esc(cfg.control_socket)},server=on,wait=off",
        "-serial",
        "chardev:ctl",
    ]
    for index, dev in enumerate(cfg.devices):
        argv += dev.args(index)
    return argv


def _esc(path: Path) -> str:
    """QEMU option values escape a comma by doubling it."""
    return str(path).replace(",", ",,")
