"""What the host needs for `mountbench containers`: every missing piece as a Problem with its
fix (`doctor --containers` lists them; the lab refuses to start on the first), and what the
other container engines would need, said as present or absent with the reason."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from mountbench.labs.containers.mounts import MOUNT_TYPES
from mountbench.labs.frame import Problem, variant_problems

DOCTOR_FLAG = "--containers"  # `mountbench doctor --containers` lists every problem below


def lab_problems(optional: bool = False, mount_types: Iterable[str] | None = None) -> list[Problem]:
    """Missing host pieces for the lab, each with the command that fixes it (empty: all good).
    With ``optional``, also the engines the lab does not measure here, and why."""
    problems: list[Problem] = []

    def need(ok: bool, what: str, fix: str) -> None:
        if not ok:
            problems.append(Problem(what, fix))

    need(
        os.geteuid() == 0,
        "not running as root: the lab runs rootful Podman (its storage, cgroups and mounts need root)",
        "run mountbench containers as root (sudo)",
    )
    need(shutil.which("podman") is not None, "podman is missing", "apt-get install podman")
    need(
        shutil.which("runc") is not None,
        "runc is missing (the lab runs containers with runc: crun cannot set their limits on hosts like this one)",
        "apt-get install runc",
    )
    need(
        shutil.which("fio") is not None,
        "fio is missing (the image is built from the host's fio)",
        "apt-get install fio",
    )
    need(
        shutil.which("ldd") is not None,
        "ldd is missing (it lists what the image must hold)",
        "apt-get install libc-bin",
    )
    need(
        overlay_supported(),
        "the kernel has no overlay filesystem (Podman's storage driver and the :O mount need it)",
        "modprobe overlay",
    )
    problems += variant_problems(MOUNT_TYPES, mount_types)
    if optional:
        problems += [Problem(f"{engine} not measured: {why}", fix, optional=True) for engine, why, fix in others()]
    return problems


def overlay_supported(filesystems: Path = Path("/proc/filesystems")) -> bool:
    try:
        return any(line.split()[-1] == "overlay" for line in filesystems.read_text().splitlines() if line.strip())
    except OSError:
        return False


def others() -> list[tuple[str, str, str]]:
    """The engines this run does not measure, each with why and what would add it: rootless
    Podman and Docker (the lab measures rootful Podman)."""
    found = []
    helpers = [tool for tool in ("newuidmap", "fuse-overlayfs") if shutil.which(tool) is None]
    why = (
        f"{' and '.join(helpers)} missing"
        if helpers
        else "present, but the lab runs as root and measures rootful Podman"
    )
    found.append(("rootless Podman", why, "apt-get install uidmap fuse-overlayfs; measured by hand as a user"))
    if shutil.which("docker") is None:
        found.append(("Docker", "docker is not installed", "apt-get install docker.io"))
    else:
        found.append(("Docker", "installed, but the lab measures Podman only", "compare by hand: docker run -v ..."))
    return found


def engines() -> dict[str, str]:
    """What the run's facts say about each engine: measured, or why not."""
    return {"rootful Podman": "measured"} | {engine: why for engine, why, _fix in others()}
