"""Facts about the host, collected once per run and stored with it."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil

from mountbench import __version__


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


def machine_identity() -> dict[str, str]:
    """This machine's own identity: its machine-id and this boot's id ('' where unreadable),
    which tell two spellings of one machine apart from two machines."""

    def read(*paths: str) -> str:
        for path in paths:
            try:
                return Path(path).read_text().strip()
            except OSError:
                continue
        return ""

    return {
        "machine_id": read("/etc/machine-id", "/var/lib/dbus/machine-id"),
        "boot_id": read("/proc/sys/kernel/random/boot_id"),
    }


def collect(fio_version: str = "") -> dict[str, Any]:
    return {
        "hostname": socket.gethostname(),
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
    }
