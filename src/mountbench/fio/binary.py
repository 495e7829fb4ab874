"""The fio binary: finding it, checking its version, listing its engines, and choosing
the clock every job of a run uses. Shared by every kind that runs fio."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from mountbench.errors import ToolMissing

MIN_FIO_VERSION = (3, 25)
# the install command of every packaging a user is likely to have (mountbench itself installs with pip)
FIO_INSTALL = (
    ("apt-get install fio", "Debian, Ubuntu"),
    ("dnf install fio", "Fedora, RHEL"),
    ("zypper install fio", "openSUSE"),
    ("pacman -S fio", "Arch"),
    ("apk add fio", "Alpine"),
    ("brew install fio", "macOS"),
)
FIO_PACKAGE_HINT = "install it with " + ", ".join(f"'{command}' ({where})" for command, where in FIO_INSTALL)


@dataclass(frozen=True)
class FioInfo:
    path: str
    version: str  # "fio-3.33"

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return parse_fio_version(self.version)


def parse_fio_version(text: str) -> tuple[int, ...]:
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not match:
        return (0,)
    return tuple(int(part) for part in match.groups() if part is not None)


def find_fio(required: tuple[int, int] = MIN_FIO_VERSION) -> FioInfo:
    """Locate fio and check its version; raise ToolMissing with the fix."""
    path = shutil.which("fio")
    if path is None:
        raise ToolMissing(f"fio is not installed or not on PATH; {FIO_PACKAGE_HINT}")
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolMissing(f"cannot run {path} --version ({exc}); reinstall fio") from None
    info = FioInfo(path, version)
    if info.version_tuple < required:
        wanted = ".".join(map(str, required))
        raise ToolMissing(f"{path} is {version}, mountbench needs fio {wanted} or newer; {FIO_PACKAGE_HINT}")
    return info


@cache
def fio_engines(fio_path: str) -> frozenset[str]:
    """I/O engines compiled into this fio (``fio --enghelp``)."""
    out = subprocess.run([fio_path, "--enghelp"], capture_output=True, text=True, timeout=30).stdout
    return frozenset(line.strip() for line in out.splitlines()[1:] if line.strip())


def choose_clocksource(fio_path: str) -> str | None:
    """fio's own clock choice, made once per run instead of once per job.

    At every start, fio on x86 with an invariant TSC runs a ~70 ms test of the TSC
    across CPUs and uses it only if the test passes, else clock_gettime. On virtual
    machines that test can pass for one job and fail for the next, so the jobs of one
    run would time themselves with different clocks. mountbench runs the same test
    once (``fio --cpuclock-test``) and names the result in every job (``clocksource=``),
    which also spares each job the test. None where fio has no TSC choice to make.
    """
    if not sys.platform.startswith("linux"):
        return None
    if platform.machine() not in ("x86_64", "i686", "i386") or not _invariant_tsc():
        return "clock_gettime"  # what fio itself uses on Linux without a reliable TSC
    try:
        proc = subprocess.run([fio_path, "--cpuclock-test"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "clock_gettime"
    return "cpu" if proc.returncode == 0 else "clock_gettime"


def _invariant_tsc(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Linux sets both flags from CPUID's invariant-TSC bit, the bit fio checks."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return "constant_tsc" in flags and "nonstop_tsc" in flags
