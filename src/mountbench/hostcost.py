"""Host-side cost of serving a mount (study S1): CPU time and peak memory of the
processes that do the work (QEMU's I/O threads, virtiofsd, sshd/sftp-server)
while one sample runs.

CPU is user+sys from /proc (psutil) between the sample's start and end; for
QEMU only its non-vCPU threads count, since the vCPU threads run the guest
itself. Memory is the peak USS of the serving daemons, polled every 100 ms
(QEMU's own USS would mostly be guest RAM, so it is left out).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

POLL_S = 0.1


def _thread_cpu(pid: int, vcpu_excluded: bool) -> float:
    """User+sys seconds of a process (exited threads included); without its vCPU
    threads when asked, since those run the guest itself."""
    try:
        proc = psutil.Process(pid)
        times = proc.cpu_times()
        total = times.user + times.system
        if vcpu_excluded:
            for thread in proc.threads():
                try:
                    name = Path(f"/proc/{pid}/task/{thread.id}/comm").read_text().strip()
                except OSError:
                    continue
                if name.startswith("CPU "):  # QEMU names vCPU threads "CPU 0/TCG", "CPU 1/KVM"
                    total -= thread.user_time + thread.system_time
        return total
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return 0.0


def _uss(pid: int) -> int:
    try:
        return psutil.Process(pid).memory_full_info().uss
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return 0


@dataclass
class _Window:
    roles: Callable[[], dict[str, list[int]]]
    cpu_start: dict[int, float] = field(default_factory=dict)
    qemu: set[int] = field(default_factory=set)
    peak_uss: int = 0
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def snapshot(self) -> dict[int, float]:
        now = {}
        for role, pids in self.roles().items():
            for pid in pids:
                if role == "qemu":
                    self.qemu.add(pid)
                now[pid] = _thread_cpu(pid, pid in self.qemu)
        return now

    def poll(self) -> None:
        while not self.stop.wait(POLL_S):
            daemons = [pid for role, pids in self.roles().items() if role != "qemu" for pid in pids]
            self.peak_uss = max(self.peak_uss, sum(_uss(pid) for pid in daemons))


class HostCost:
    """Measure windows of host cost, keyed by whatever the caller uses (target, workload, round)."""

    def __init__(self) -> None:
        self.windows: dict[object, _Window] = {}

    def start(self, key: object, roles: Callable[[], dict[str, list[int]]]) -> None:
        window = _Window(roles)
        window.snapshot()  # learn which pids are QEMU
        window.cpu_start = window.snapshot()
        window.thread = threading.Thread(target=window.poll, daemon=True)
        window.thread.start()
        self.windows[key] = window

    def stop(self, key: object) -> dict[str, float]:
        window = self.windows.pop(key, None)
        if window is None:
            return {}
        window.stop.set()
        if window.thread:
            window.thread.join()
        end = window.snapshot()
        cpu = sum(end[pid] - window.cpu_start.get(pid, 0.0) for pid in end)
        metrics = {"host.cpu_s": max(0.0, cpu)}
        if window.peak_uss:
            metrics["host.uss_peak"] = float(window.peak_uss)
        return metrics

    def close(self) -> None:
        for key in list(self.windows):
            self.stop(key)
