"""Reading /proc (Linux): one process's counters, every process at once, private memory,
per-thread context switches and CPU, and process trees. What watch.py measures with."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class ProcStat:
    """One process as /proc/PID/stat shows it; times in seconds."""

    comm: str
    ppid: int
    user: float
    sys: float
    child_user: float  # of the children it waited for
    child_sys: float


ZERO = ProcStat("", 0, 0.0, 0.0, 0.0, 0.0)


def parse_stat(text: str) -> ProcStat:
    """/proc/PID/stat (or .../task/TID/stat); the name may contain spaces and parentheses."""
    comm = text[text.index("(") + 1 : text.rindex(")")]
    rest = text[text.rindex(")") + 2 :].split()
    ticks = [int(v) / _TICKS for v in rest[11:15]]
    return ProcStat(comm, int(rest[1]), *ticks)


def read_stat(path: Path) -> ProcStat | None:
    try:
        return parse_stat(path.read_text())
    except (OSError, ValueError, IndexError):
        return None


def process_table() -> dict[int, ProcStat]:
    """Every process of this machine (zombies included) by PID; empty without /proc."""
    table = {}
    try:
        entries = os.listdir(PROC)
    except OSError:
        return table
    for entry in entries:
        if entry.isdigit():
            stat = read_stat(PROC / entry / "stat")
            if stat is not None:
                table[int(entry)] = stat
    return table


def uss_bytes(pid: int) -> int | None:
    """Private (unshared) memory of a process; None when it cannot be read (permission, gone)."""
    try:
        text = (PROC / str(pid) / "smaps_rollup").read_text()
    except FileNotFoundError:
        return 0 if not (PROC / str(pid)).exists() else _uss_psutil(pid)
    except OSError:
        return None
    total = 0
    for line in text.splitlines():
        if line.startswith(("Private_Clean:", "Private_Dirty:", "Private_Hugetlb:")):
            total += int(line.split()[1]) * 1024
    return total


def _uss_psutil(pid: int) -> int | None:
    """Kernels without smaps_rollup: psutil walks smaps."""
    import psutil

    try:
        return int(psutil.Process(pid).memory_full_info().uss)
    except psutil.NoSuchProcess:
        return 0
    except psutil.AccessDenied:
        return None


def _thread_ids(pid: int) -> list[str]:
    """The ids of a process's live threads (none when it is gone)."""
    try:
        return os.listdir(PROC / str(pid) / "task")
    except OSError:
        return []


def thread_switches(pid: int) -> dict[int, tuple[int, int]]:
    """Thread id -> (voluntary, involuntary) context switches of every live thread."""
    found = {}
    for tid in _thread_ids(pid):
        voluntary = involuntary = None
        try:
            for line in (PROC / str(pid) / "task" / tid / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    voluntary = int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches:"):
                    involuntary = int(line.split()[1])
        except (OSError, ValueError):
            continue
        if voluntary is not None and involuntary is not None:
            found[int(tid)] = (voluntary, involuntary)
    return found


def excluded_thread_cpu(pid: int, prefix: str) -> dict[int, tuple[float, float]]:
    """Thread id -> (user, sys) seconds of the threads whose name starts with ``prefix``."""
    found = {}
    for tid in _thread_ids(pid):
        try:
            name = (PROC / str(pid) / "task" / tid / "comm").read_text().strip()
        except OSError:
            continue
        if name.startswith(prefix):
            stat = read_stat(PROC / str(pid) / "task" / tid / "stat")
            if stat is not None:
                found[int(tid)] = (stat.user, stat.sys)
    return found


def argv0_name(pid: int) -> str:
    """The program name a process was started as (its comm is cut at 15 characters)."""
    try:
        argv0 = (PROC / str(pid) / "cmdline").read_bytes().split(b"\0", 1)[0]
    except OSError:
        return ""
    return Path(argv0.decode(errors="replace")).name


def own_lineage(table: Mapping[int, ProcStat], pid: int | None = None) -> set[int]:
    """This process and its ancestors: never "serving processes" (watching sshd must not count
    the ssh session mountbench was started from, nor mountbench)."""
    pid = os.getpid() if pid is None else pid
    lineage = set()
    while pid > 1 and pid not in lineage:
        lineage.add(pid)
        stat = table.get(pid)
        if stat is None:
            break
        pid = stat.ppid
    return lineage


def descendants(table: Mapping[int, ProcStat], roots: Iterable[int], skip: set[int]) -> set[int]:
    """``roots`` and every process below them, not passing through ``skip``."""
    children: dict[int, list[int]] = {}
    for pid, stat in table.items():
        children.setdefault(stat.ppid, []).append(pid)
    found: set[int] = set()
    todo = [r for r in roots if r not in skip]
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.add(pid)
        todo += [c for c in children.get(pid, ()) if c not in skip]
    return found
