"""What the host needs for `mountbench lab`, as (problem, fix) pairs for `doctor --lab`."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from mountbench.errors import MountbenchError
from mountbench.labs.qemu.initramfs import find_busybox
from mountbench.labs.qemu.kernel import find_kernel
from mountbench.labs.qemu.mounts import Problem, kind_prerequisites
from mountbench.labs.qemu.virtiofsd import find_virtiofsd


def check_lab_prerequisites(optional: bool = False, kinds: Iterable[str] | None = None) -> list[Problem]:
    """Missing host pieces for the lab, each with the command that fixes it (empty: all good).

    `kinds` limits the mount kinds' own pieces to those kinds (default: every kind, as
    `doctor --lab` lists them); the lab itself checks only the kinds it mounts. With
    `optional`, also pieces the lab works without but is better with (the Rust
    virtiofsd, for a read-only root over virtiofs), marked "optional:".
    """
    problems: list[Problem] = []

    def need(ok: bool, problem: str, fix: str) -> None:
        if not ok:
            problems.append((problem, fix))

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
        problems.append(("no /boot/vmlinuz-* with matching /lib/modules", "apt-get install linux-image-amd64"))
    try:
        find_busybox()
    except MountbenchError:
        problems.append(("no static busybox", "apt-get install busybox-static"))
    need(
        shutil.which("modinfo") is not None or Path("/usr/sbin/modinfo").exists(),
        "modinfo is missing",
        "apt-get install kmod",
    )
    need(shutil.which("fio") is not None, "fio is missing", "apt-get install fio")
    problems += kind_prerequisites(kinds)  # each mount kind's own tools (lab/mounts)
    need(
        not optional or find_virtiofsd("rust") is not None,
        "optional: no Rust virtiofsd, so the guest root goes over 9p (slower program start)",
        "apt-get install libseccomp-dev libcap-ng-dev pkg-config && cargo install virtiofsd",
    )
    return problems
