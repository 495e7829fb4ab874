"""Facts about the host, collected once per run and stored with it."""

from __future__ import annotations

import hashlib
import os
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil

from mountbench import __version__
from mountbench.host import container


def cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    if sys.platform == "darwin":
        try:
            return subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True, timeout=5
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            pass
    return platform.processor() or platform.machine()


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


MACHINE_ID_PATHS = ("/etc/machine-id", "/var/lib/dbus/machine-id")


def _first_text(*paths: str) -> str:
    """The stripped text of the first of ``paths`` that reads as text and is not empty ('' if none)."""
    for path in paths:
        try:
            text = Path(path).read_text().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text:
            return text
    return ""


def machine_identity() -> dict[str, str]:
    """This machine's own identity: its machine-id and this boot's id ('' where unreadable),
    which tell two spellings of one machine apart from two machines."""
    return {"machine_id": _first_text(*MACHINE_ID_PATHS), "boot_id": _first_text("/proc/sys/kernel/random/boot_id")}


def machine_id() -> str:
    """This machine's id as mountbench records it: a digest of systemd's machine-id (which should
    not leave the machine as it is), '' where there is none."""
    text = _first_text(*MACHINE_ID_PATHS)
    return hashlib.sha256(b"mountbench machine " + text.encode()).hexdigest()[:16] if text else ""


def recorded_elsewhere(host: dict[str, Any]) -> str:
    """The name of the machine a run's ``host`` facts say it was recorded on, when that is not
    this machine ('' when it is, or when the facts cannot tell). The machine id decides where both
    have one (a renamed machine is still itself); else the host name."""
    recorded_id, here_id = str(host.get("machine_id") or ""), machine_id()
    name = str(host.get("hostname") or "")
    if recorded_id and here_id:
        return (name or "another machine") if recorded_id != here_id else ""
    return name if name and name != socket.gethostname() else ""


def collect(fio_version: str = "") -> dict[str, Any]:
    inside = container.here()
    return {
        "hostname": socket.gethostname(),
        "machine_id": machine_id(),
        "os": f"{platform.system()} {platform.release()}",
        "platform": sys.platform,
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count() or 1,
        "ram_bytes": psutil.virtual_memory().total,
        "fio_version": fio_version,
        "mountbench_version": __version__,
        "python_version": platform.python_version(),
        "root": is_root(),
        # the engine of the container the run ran in, and what showed it ("" on a host: host/container.py)
        "container": inside.said() if inside else "",
    }
