"""What a cloud-lab run leaves behind if it is killed, and how the next run cleans it.

Every process the lab starts (rclone serve, toxiproxy, rclone mounts) and every mount
point is written, as it happens, to ``state.json`` in the run's own work directory,
with the owner's PID and start time. A later run looks at the work directories of
runs whose owner is gone (a PID that is dead, or alive with another start time: reused)
and cleans them by that record alone, never by a process name: it kills the recorded
processes still alive with their recorded start times, unmounts the recorded FUSE mount
points still mounted (``fusermount3 -u``, lazily when busy) and removes the directory, with the
workloads' temporary files in it (the trees' sources: the lab points Python's tempdir there). The
run's network namespace needs no sweep: it ended with its holder process (labs/netns.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from mountbench.host.process import stop_processes
from mountbench.labs.leftovers import alive, mount_points, start_time, sweep_dead

STATE = "state.json"
OLD_NAMESPACE = "mountbench-cloudlab-"  # what a run's named namespace was called before issue 52


def mounted(path: Path) -> bool:
    """Is ``path`` a mount point right now (by the mount table, no stat: a dead FUSE hangs)?"""
    return str(path) in mount_points()


def unmount(path: Path) -> str | None:
    """``fusermount3 -u`` (then ``-uz`` when busy); None when done, else why not."""
    if not mounted(path):
        return None
    for args in (["-u"], ["-uz"]):
        try:
            done = subprocess.run(["fusermount3", *args, str(path)], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"fusermount3 {' '.join(args)} {path}: {exc}"
        if done.returncode == 0 and not mounted(path):
            return None
    return f"fusermount3 -u {path}: {done.stderr.strip() or 'still mounted'}"


@dataclass
class LabState:
    """The record of one run's work directory, rewritten whenever it changes."""

    workdir: Path
    owner_pid: int = field(default_factory=os.getpid)
    owner_started: float | None = None
    processes: list[dict[str, Any]] = field(default_factory=list)
    mounts: list[str] = field(default_factory=list)
    network: str = ""  # a named namespace a run before issue 52 made (ip netns add): removed with the rest

    def __post_init__(self) -> None:
        if self.owner_started is None:
            self.owner_started = start_time(self.owner_pid)

    def add_process(self, pid: int, what: str) -> None:
        self.processes.append({"pid": pid, "started": start_time(pid), "what": what})
        self.save()

    def add_mount(self, path: Path) -> None:
        self.mounts.append(str(path))
        self.save()

    def save(self) -> None:
        data = {"owner_pid": self.owner_pid, "owner_started": self.owner_started,
                "processes": self.processes, "mounts": self.mounts, "network": self.network}  # fmt: skip
        tmp = self.workdir / (STATE + ".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, self.workdir / STATE)

    @classmethod
    def load(cls, workdir: Path) -> LabState | None:
        try:
            data = json.loads((workdir / STATE).read_text())
            return cls(workdir, int(data["owner_pid"]), data.get("owner_started"),
                       list(data.get("processes") or []), [str(m) for m in data.get("mounts") or []],
                       str(data.get("network") or ""))  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def owner_alive(self) -> bool:
        return alive(self.owner_pid, self.owner_started)

    def remove(self) -> list[str]:
        """Stop what the record names (mounts first, then processes), then remove the work
        directory; the problems met (a mount that would not go: the directory is then kept)."""
        problems = [p for p in (unmount(Path(m)) for m in reversed(self.mounts)) if p]
        recorded = []
        for entry in reversed(self.processes):
            pid, started = int(entry["pid"]), entry.get("started")
            if alive(pid, started):
                with contextlib.suppress(psutil.Error):
                    recorded.append(psutil.Process(pid))
        stop_processes(recorded)
        # a mount whose rclone just died may only now be removable
        problems = [p for p in (unmount(Path(m)) for m in reversed(self.mounts)) if p]
        if self.network.startswith(OLD_NAMESPACE) and "/" not in self.network:
            subprocess.run(["ip", "netns", "delete", self.network], capture_output=True, timeout=20, check=False)
        if not problems and not any(mounted(Path(m)) for m in self.mounts):
            shutil.rmtree(self.workdir, ignore_errors=True)
        return problems


def sweep_dead_runs(root: Path) -> list[str]:
    """Clean the work directories under ``root`` whose owner is gone; what was cleaned (with
    what was left, when a mount would not go)."""
    return [
        f"{workdir}" + (f" (left: {'; '.join(problems)})" if problems else "")
        for workdir, problems in sweep_dead(root, LabState.load)
    ]


def wait_mounted(path: Path, timeout: float, ok: Any = None) -> bool:
    """Poll until ``path`` is a mount point (``ok()`` false: the mounting process died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if mounted(path):
            return True
        if ok is not None and not ok():
            return mounted(path)
        time.sleep(0.05)
    return mounted(path)
