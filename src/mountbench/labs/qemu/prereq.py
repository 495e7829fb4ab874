"""What the host needs for `mountbench lab`: every missing piece as a Problem with its fix
(`doctor --lab` lists them; the lab refuses to boot on the first)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from mountbench.errors import MountbenchError
from mountbench.labs.frame import Problem, variant_problems
from mountbench.labs.qemu.initramfs import find_busybox
from mountbench.labs.qemu.kernel import find_kernel
from mountbench.labs.qemu.mounts import MOUNT_TYPES
from mountbench.labs.qemu.virtiofsd import find_virtiofsd

DOCTOR_FLAG = "--lab"  # `mountbench doctor --lab` lists every problem below


def lab_problems(optional: bool = False, types: Iterable[str] | None = None) -> list[Problem]:
    """Missing host pieces for the lab, each with the command that fixes it (empty: all good).

    `types` limits the mount types' own pieces to those mount types (default: every one, as
    `doctor --lab` lists them); the lab itself checks only the mount types it mounts. With
    `optional`, also pieces the lab works without but is better with (the Rust
    virtiofsd, for a read-only root over virtiofs).
    """
    problems: list[Problem] = []

    def need(ok: bool, problem: str, fix: str) -> None:
        if not ok:
            problems.append(Problem(problem, fix))

    need(
        os.geteuid() == 0,
        "not running as root: the lab starts virtiofsd, sshd and a passthrough 9p root, tested only as root",
        "run mountbench lab as root (sudo)",
    )
    need(
        shutil.which("qemu-system-x86_64") is not None,
        "qemu-system-x86_64 is missing",
        "apt-get install qemu-system-x86",
    )
    try:
        kernel = find_kernel()
        need(
            os.access(kernel.image, os.R_OK),
            f"{kernel.image} is not readable by this user",
            f"run as root, or: sudo chmod 0644 {kernel.image}",
        )
    except MountbenchError:
        need(False, "no /boot/vmlinuz-* with matching /lib/modules", "apt-get install linux-image-amd64")
    try:
        find_busybox()
    except MountbenchError:
        need(False, "no static busybox", "apt-get install busybox-static")
    need(
        shutil.which("modinfo") is not None or Path("/usr/sbin/modinfo").exists(),
        "modinfo is missing",
        "apt-get install kmod",
    )
    need(shutil.which("fio") is not None, "fio is missing", "apt-get install fio")
    problems += variant_problems(MOUNT_TYPES, types)  # each mount type's own tools (labs/qemu/mounts)
    if optional and find_virtiofsd("rust") is None:
        problems.append(
            Problem(
                "no Rust virtiofsd, so the guest root goes over 9p (slower program start)",
                "apt-get install libseccomp-dev libcap-ng-dev pkg-config && cargo install virtiofsd",
                optional=True,
            )
        )
    return problems
