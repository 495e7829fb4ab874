"""What a killed lab run leaves behind, and the one sweep that removes it on the next run.

Each lab writes, in the work directory of a run, which process owns it (its PID and start
time, in the lab's own file). The next run of that lab looks at every work directory under
its root: one whose owner is gone (a PID that is dead, or alive with another start time:
reused) is removed by :func:`sweep_dead`, through the lab's own ``remove`` (what it takes
down first, its containers, processes or mounts, is the lab's business). The mount table is
read from ``/proc/self/mountinfo``, never by a ``stat`` of the mount point: a dead FUSE hangs.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import psutil

SAME_START_S = 1.0  # start times further apart than this are two processes with one PID


def start_time(pid: int) -> float | None:
    """When the process ``pid`` started (seconds since the epoch); None when there is none."""
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def alive(pid: int, started: float | None) -> bool:
    """The process ``pid`` runs and is the one that started at ``started`` (not a reused PID)."""
    now = start_time(pid)
    return now is not None and started is not None and abs(now - started) < SAME_START_S


class Leftover(Protocol):
    """A run's work directory as its lab reads it back."""

    def owner_alive(self) -> bool: ...

    def remove(self) -> list[str]:
        """Take down what the run left and delete the directory; what could not be undone."""
        ...


def sweep_dead(root: Path, read: Callable[[Path], Leftover | None]) -> list[tuple[Path, list[str]]]:
    """Remove the work directories under ``root`` whose owner is gone, each with the problems
    its removal met (empty: all gone). ``read`` gives None for a directory that is not a run's
    (or not yet: no owner written), which is left alone, as is one whose owner still runs."""
    swept: list[tuple[Path, list[str]]] = []
    if not root.is_dir():
        return swept
    for path in sorted(root.iterdir()):
        leftover = read(path) if path.is_dir() else None
        if leftover is not None and not leftover.owner_alive():
            swept.append((path, leftover.remove()))
    return swept


def mount_points() -> list[str]:
    """Every mount point in this mount namespace, decoded (empty when mountinfo cannot be read)."""
    points = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            if len(fields) > 4:
                points.append(decode_mount_path(fields[4]))
    return points


def decode_mount_path(text: str) -> str:
    """mountinfo's octal escapes (``\\040`` for a space) decoded."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)
