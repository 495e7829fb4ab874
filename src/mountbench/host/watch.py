"""What serving a mount costs this machine (study S1): the CPU time, peak memory and
context switches of the processes that do the work (sshfs, virtiofsd, unfsd, a FUSE
daemon, nfsd kernel threads, QEMU's I/O threads, nginx) while one sample runs.

A :class:`Window` measures a set of processes that a *finder* names, asked afresh at
the start, every 100 ms (as S1 polled) and at the end, so processes that appear during
the sample (a FUSE daemon's workers, sftp-server) count too:

- CPU: user and sys from ``/proc/PID/stat``, including what children the measured
  processes waited for used (``cutime``/``cstime``), so short-lived helpers count even
  when no poll saw them. A process that exits between polls loses at most its last
  100 ms, unless a measured parent reaped it, in which case nothing is lost. Threads
  a role excludes (QEMU's vCPU threads, which run the guest itself) are subtracted.
- Memory: the peak over the polls of the summed USS (private pages, from
  ``/proc/PID/smaps_rollup``) of the processes whose memory counts.
- Context switches: voluntary and involuntary, summed over every thread seen.

``--watch NAME|PID`` builds its finder with :class:`WatchSpec` (a name or a PID, plus
their descendants, never mountbench itself nor the shell it runs under); the lab's
finder names the processes serving each mount (hostcost.py).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mountbench import model
from mountbench.errors import UsageError
from mountbench.host.procfs import (
    PROC,
    ZERO,
    ProcStat,
    argv0_name,
    descendants,
    excluded_thread_cpu,
    own_lineage,
    process_table,
    thread_switches,
    uss_bytes,
)
from mountbench.model import Caveat, Outcome

__all__ = ["POLL_S", "Cost", "Role", "SampleWatch", "WatchSpec", "Window", "moved_bytes", "resolve_watch"]

POLL_S = 0.1
GIB = 1024**3
COMM_MAX = 15  # the kernel keeps the first 15 characters of a process name


# --- one measurement window --------------------------------------------------------------------


@dataclass(frozen=True)
class Role:
    """How one measured process counts."""

    exclude_threads: str = ""  # CPU of threads whose name starts with this is left out ("CPU " for QEMU)
    memory: bool = True  # its USS counts towards the peak (QEMU's would mostly be guest RAM)


Finder = Callable[[Mapping[int, ProcStat]], Mapping[int, Role]]


@dataclass(frozen=True)
class Cost:
    """What the measured processes spent during one window."""

    cpu_user_s: float
    cpu_sys_s: float
    uss_peak: int | None  # bytes; None when no process's memory counted or could be read
    ctx_voluntary: int
    ctx_involuntary: int
    processes: int  # distinct processes measured
    memory_denied: bool = False  # some process's memory could not be read (not root)

    @property
    def cpu_s(self) -> float:
        return self.cpu_user_s + self.cpu_sys_s

    def metrics(self, prefix: str, moved_bytes: float | None = None) -> dict[str, float]:
        """``host.cpu_s``, ``host.cpu_user_s``, ``host.cpu_sys_s``, ``host.cpu_s_per_gib`` (when
        bytes moved are known), ``host.uss_peak``, ``host.ctx_voluntary``, ``host.ctx_involuntary``."""
        out = {
            f"{prefix}.cpu_s": self.cpu_s,
            f"{prefix}.cpu_user_s": self.cpu_user_s,
            f"{prefix}.cpu_sys_s": self.cpu_sys_s,
            f"{prefix}.ctx_voluntary": float(self.ctx_voluntary),
            f"{prefix}.ctx_involuntary": float(self.ctx_involuntary),
        }
        if moved_bytes:
            out[f"{prefix}.cpu_s_per_gib"] = self.cpu_s / (moved_bytes / GIB)
        if self.uss_peak is not None:
            out[f"{prefix}.uss_peak"] = float(self.uss_peak)
        return out


@dataclass
class _Seen:
    """What a window knows about one process."""

    role: Role
    base: ProcStat  # counters at the window's start (zero for a process born during it)
    last: ProcStat
    new: bool  # born during the window
    threads_at_start: set[int] = field(default_factory=set)
    switches_base: dict[int, tuple[int, int]] = field(default_factory=dict)
    switches_last: dict[int, tuple[int, int]] = field(default_factory=dict)
    excluded_base: dict[int, tuple[float, float]] = field(default_factory=dict)
    excluded_last: dict[int, tuple[float, float]] = field(default_factory=dict)


class Window:
    """Measure the processes ``finder`` names from :meth:`start` to :meth:`stop`."""

    def __init__(self, finder: Finder, poll_s: float = POLL_S) -> None:
        self.finder = finder
        self.poll_s = poll_s
        self.seen: dict[int, _Seen] = {}
        self.existed: set[int] = set()  # every PID alive at the start
        self.final: set[int] = set()  # every PID alive at the end
        self.peak_uss: int | None = None
        self.memory_denied = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Window:
        table = process_table()
        self.existed = set(table)
        self._observe(table)
        self._thread = threading.Thread(target=self._poll, name="mountbench-watch", daemon=True)
        self._thread.start()
        return self

    def _poll(self) -> None:
        while not self._stop.wait(self.poll_s):
            self._observe(process_table())

    def _observe(self, table: Mapping[int, ProcStat]) -> None:
        roles = self.finder(table)
        with self._lock:
            memory = 0
            counted = False
            for pid, role in roles.items():
                stat = table.get(pid)
                if stat is None:
                    continue
                seen = self.seen.get(pid)
                if seen is None:
                    new = pid not in self.existed
                    seen = _Seen(role, ZERO if new else stat, stat, new)
                    self.seen[pid] = seen
                    first = True
                else:
                    seen.last = stat
                    first = False
                switches = thread_switches(pid)
                if first:
                    seen.threads_at_start = set(switches)
                for tid, counts in switches.items():
                    if tid not in seen.switches_base:
                        old = not seen.new and tid in seen.threads_at_start
                        seen.switches_base[tid] = counts if old else (0, 0)
                    seen.switches_last[tid] = counts
                if role.exclude_threads:
                    for tid, times in excluded_thread_cpu(pid, role.exclude_threads).items():
                        seen.excluded_base.setdefault(tid, times)
                        seen.excluded_last[tid] = times
                if role.memory:
                    uss = uss_bytes(pid)
                    if uss is None:
                        self.memory_denied = True
                    else:
                        memory += uss
                        counted = True
            if counted:
                self.peak_uss = max(self.peak_uss or 0, memory)

    def stop(self) -> Cost:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        final = process_table()
        self.final = set(final)
        self._observe(final)
        return self._cost(final)

    def _cost(self, final: Mapping[int, ProcStat]) -> Cost:
        user = system = 0.0
        voluntary = involuntary = 0
        with self._lock:
            for pid, seen in self.seen.items():
                base, last = seen.base, seen.last
                if pid not in final and self._reaped_by_measured(seen, final):
                    # its whole life is now in the parent's children counters: take out what it had spent before
                    end = ProcStat("", 0, 0.0, 0.0, 0.0, 0.0)
                else:
                    end = last  # alive: last is the final reading; gone: at most one poll is lost
                user += end.user + end.child_user - base.user - base.child_user
                system += end.sys + end.child_sys - base.sys - base.child_sys
                for tid, (u, s) in seen.excluded_last.items():
                    u0, s0 = seen.excluded_base[tid]
                    user -= u - u0
                    system -= s - s0
                for tid, (v, i) in seen.switches_last.items():
                    v0, i0 = seen.switches_base[tid]
                    voluntary += v - v0
                    involuntary += i - i0
            return Cost(  # /proc counts clock ticks: rounding drops float noise such as 1e-18
                cpu_user_s=max(0.0, round(user, 6)),
                cpu_sys_s=max(0.0, round(system, 6)),
                uss_peak=self.peak_uss,
                ctx_voluntary=max(0, voluntary),
                ctx_involuntary=max(0, involuntary),
                processes=len(self.seen),
                memory_denied=self.memory_denied,
            )

    def _reaped_by_measured(self, seen: _Seen, final: Mapping[int, ProcStat]) -> bool:
        parent = seen.last.ppid
        return parent in self.seen and parent in final


# --- --watch NAME|PID ----------------------------------------------------------------------------


@dataclass(frozen=True)
class WatchSpec:
    """One --watch argument: a process name (as ps shows it) or a PID; their descendants count too.
    ``LABEL=NAME|PID`` ties it to one target: it is measured only around that target's samples
    (the daemon serving one mount is not what another mount costs)."""

    text: str
    pid: int | None = None
    name: str | None = None
    target: str | None = None  # only around this target's samples (None: every sample)

    @classmethod
    def parse(cls, text: str) -> WatchSpec:
        text = text.strip()
        label, sep, what = text.partition("=")
        if sep and label.strip() and what.strip():
            spec = cls.parse(what)
            return dataclasses.replace(spec, text=text, target=label.strip())
        if not text or sep:
            raise UsageError(
                f"--watch {text!r}: give a process name or PID, e.g. --watch sshfs or --watch 4242, "
                "or tie it to one target: --watch LABEL=sshfs"
            )
        if text.isdigit():
            if int(text) <= 0:
                raise UsageError(f"--watch {text}: not a process ID; give a PID from 'pgrep -l NAME' or a name")
            return cls(text, pid=int(text))
        if "/" in text:
            raise UsageError(f"--watch {text}: give a process name without its path, e.g. --watch {Path(text).name}")
        return cls(text, name=text)

    def matches(self, pid: int, stat: ProcStat) -> bool:
        if self.pid is not None:
            return pid == self.pid
        assert self.name is not None
        if stat.comm != self.name[:COMM_MAX]:
            return False
        return len(self.name) <= COMM_MAX or argv0_name(pid) == self.name


class _Matcher:
    """The finder of one --watch window; remembers which specs matched and which processes
    they matched at the start (to tell a process that exited mid-sample)."""

    def __init__(self, specs: Sequence[WatchSpec], lineage: set[int]) -> None:
        self.specs = specs
        self.lineage = lineage
        self.matched: set[WatchSpec] = set()
        self.first_roots: dict[int, WatchSpec] | None = None

    def __call__(self, table: Mapping[int, ProcStat]) -> dict[int, Role]:
        mine = descendants(table, [os.getpid()], set())  # fio, nginx, wrk...: the workload, not the server
        skip = self.lineage | mine
        roots: dict[int, WatchSpec] = {}
        for pid, stat in table.items():
            if pid in skip:
                continue
            for spec in self.specs:
                if spec.matches(pid, stat):
                    roots[pid] = spec
                    self.matched.add(spec)
        if self.first_roots is None:
            self.first_roots = roots
        return dict.fromkeys(descendants(table, roots, skip), Role())


@dataclass(frozen=True)
class Measured:
    """A --watch window's result: metrics to add to the sample, and caveats."""

    cost: Cost | None  # None: none of the watched processes ran during the sample
    caveats: tuple[Caveat, ...]

    def applied_to(self, outcome: Outcome) -> Outcome:
        """The sample's outcome with the host.* metrics (CPU per GiB from the bytes it moved)."""
        extra = self.cost.metrics("host", moved_bytes(outcome.metrics)) if self.cost else {}
        return dataclasses.replace(
            outcome, metrics={**outcome.metrics, **extra}, caveats=outcome.caveats + self.caveats
        )


class WatchedWindow:
    def __init__(self, specs: Sequence[WatchSpec], lineage: set[int]) -> None:
        self.matcher = _Matcher(specs, lineage)
        self.window = Window(self.matcher)
        self.specs = specs

    def stop(self) -> Measured:
        cost = self.window.stop()
        final = self.window.final
        caveats = []
        missing = [s.text for s in self.specs if s not in self.matcher.matched]
        if missing:
            caveats.append(
                Caveat(
                    model.HOST_COST_PARTIAL,
                    f"host cost leaves out {', '.join(missing)}: not running during this sample",
                )
            )
        first = self.matcher.first_roots or {}
        exited = [f"{spec.text} (pid {pid})" for pid, spec in first.items() if pid not in final]
        if exited:
            caveats.append(
                Caveat(
                    model.HOST_COST_PARTIAL,
                    f"host cost counts {', '.join(exited)} only until it exited during this sample",
                )
            )
        if cost.memory_denied:
            caveats.append(
                Caveat(
                    model.HOST_COST_PARTIAL,
                    "host memory leaves out processes whose memory map this user may not read (run as root)",
                )
            )
        return Measured(cost if cost.processes else None, tuple(caveats))


class SampleWatch:
    """--watch for a whole run: one window per sample, around its timed part."""

    def __init__(self, specs: Sequence[WatchSpec]) -> None:
        self.specs = tuple(specs)
        self.lineage = own_lineage(process_table())

    def start(self, target: str | None = None) -> WatchedWindow | None:
        """A window over the watches that apply to ``target``'s samples; None when none does."""
        specs = [s for s in self.specs if s.target is None or s.target == target]
        if not specs:
            return None
        window = WatchedWindow(specs, self.lineage)
        window.window.start()
        return window

    def check_targets(self, labels: Sequence[str]) -> None:
        """A watch tied to a label that names no target is a one-line error."""
        for spec in self.specs:
            if spec.target is not None and spec.target not in labels:
                raise UsageError(
                    f"--watch {spec.text}: {spec.target!r} is not a target label; choose one of: {', '.join(labels)}"
                )


def resolve_watch(texts: Sequence[str]) -> SampleWatch | None:
    """The --watch arguments, each checked against the running processes (a one-line
    error for one that matches nothing); None when none was given."""
    if not texts:
        return None
    specs = list(dict.fromkeys(WatchSpec.parse(t) for t in texts))
    if not (PROC / "self" / "stat").exists():
        raise UsageError("--watch reads /proc, which only Linux has; run without --watch here")
    table = process_table()
    lineage = own_lineage(table)
    mine = descendants(table, [os.getpid()], set())
    for spec in specs:
        if spec.pid is not None and spec.pid in lineage | mine:
            raise UsageError(
                f"--watch {spec.text} is mountbench itself, one of its children or the shell it runs under; "
                "watch the processes that serve the mount (e.g. --watch sshfs)"
            )
        if not any(spec.matches(pid, stat) for pid, stat in table.items() if pid not in lineage | mine):
            if spec.pid is not None:
                raise UsageError(f"--watch {spec.text}: no process has that PID; check it with 'ps -p {spec.pid}'")
            raise UsageError(
                f"--watch {spec.text}: no process named {spec.text} is running; start it first, or check the "
                f"name with 'pgrep -l {spec.text[:COMM_MAX]}'"
            )
    return SampleWatch(specs)


def moved_bytes(metrics: Mapping[str, float]) -> float:
    """Bytes a sample moved (fio's read/write/trim.bytes, http.bytes): what CPU per GiB divides by."""
    return sum(v for k, v in metrics.items() if k.endswith(".bytes"))
