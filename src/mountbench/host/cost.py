"""Host-side cost of serving a lab mount (study S1): the processes that do the work
(QEMU's I/O threads, virtiofsd, sshd/sftp-server), measured while one sample runs with
the same code as ``run --watch`` (watch.py): CPU time (user + sys, children included),
peak USS polled every 100 ms, context switches, as ``host.*`` metrics.

For QEMU only its non-vCPU threads count (its vCPU threads run the guest itself), and
its memory is left out (QEMU's own USS would mostly be guest RAM).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from mountbench.host.procfs import ProcStat
from mountbench.host.watch import POLL_S, Role, Window

__all__ = ["POLL_S", "HostCost", "roles_finder"]

QEMU_ROLE = Role(exclude_threads="CPU ", memory=False)  # QEMU names vCPU threads "CPU 0/TCG", "CPU 1/KVM"


def roles_finder(roles: Callable[[], dict[str, list[int]]]) -> Callable[[Mapping[int, ProcStat]], dict[int, Role]]:
    """A watch.Window finder from the lab's serving processes by role ("qemu", "virtiofsd", "sshd", ...)."""

    def find(table: Mapping[int, ProcStat]) -> dict[int, Role]:
        found: dict[int, Role] = {}
        for role, pids in roles().items():
            for pid in pids:
                found[pid] = QEMU_ROLE if role == "qemu" else Role()
        return found

    return find


class HostCost:
    """Measure windows of host cost, keyed by whatever the caller uses (target, workload, round)."""

    def __init__(self) -> None:
        self.windows: dict[object, Window] = {}

    def start(self, key: object, roles: Callable[[], dict[str, list[int]]]) -> None:
        self.windows[key] = Window(roles_finder(roles)).start()

    def stop(self, key: object) -> dict[str, float]:
        """host.cpu_s, host.cpu_user_s, host.cpu_sys_s, host.ctx_*, and host.uss_peak when a
        daemon's memory was read (the caller adds host.cpu_s_per_gib from the bytes moved)."""
        window = self.windows.pop(key, None)
        if window is None:
            return {}
        return window.stop().metrics("host")

    def close(self) -> None:
        for key in list(self.windows):
            self.stop(key)
