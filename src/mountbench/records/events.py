"""Machine-readable progress: one JSON line per event, flushed at once.

The lab reads these from a guest's console to know when each sample starts
and ends, so it can measure the host processes serving the mount meanwhile.
The start (sent just before the timed part) and done events also carry
`cpu_busy_s`: the machine's busy CPU seconds so far, all CPUs, from /proc/stat
(null where there is none); done minus start is the CPU the whole machine
spent during the sample, the guest's in the lab.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO

from mountbench.model import PlanItem, Sample

MARKER = "MB-EVENT"
PROC_STAT = Path("/proc/stat")

# /proc/stat "cpu" columns: user nice system idle iowait irq softirq steal guest guest_nice.
# Busy is everything but idle and iowait; guest and guest_nice are already in user and nice.
_BUSY_COLUMNS = (0, 1, 2, 5, 6, 7)


def busy_cpu_seconds(stat_text: str, ticks_per_s: int) -> float | None:
    """Busy CPU seconds of all CPUs since boot, from the text of /proc/stat."""
    for line in stat_text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            values = [int(v) for v in fields[1:]]
            return sum(values[i] for i in _BUSY_COLUMNS if i < len(values)) / ticks_per_s
    return None


def machine_busy_cpu_s() -> float | None:
    """This machine's busy CPU seconds since boot (all CPUs), or None without /proc/stat."""
    try:
        return busy_cpu_seconds(PROC_STAT.read_text(), os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError):
        return None


def _item(item: PlanItem) -> dict[str, object]:
    """Which sample an event is about."""
    return {"target": item.target, "workload": item.workload, "round": item.round, "warmup": item.warmup}


class EventLog:
    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def _emit(self, **fields: object) -> None:
        self.stream.write(f"{MARKER} {json.dumps({'t': time.time(), **fields})}\n")
        self.stream.flush()

    def on_start(self, run_id: str, plan: list[PlanItem], pending: list[PlanItem]) -> None:
        warmups = sum(item.warmup for item in pending)
        measured = sum(not item.warmup for item in plan)
        self._emit(event="run", run=run_id, samples=measured, pending=len(pending) - warmups, warmups=warmups)

    def on_sample_start(self, item: PlanItem, done: int, total: int, eta_s: float) -> None:
        self._emit(event="start", **_item(item), cpu_busy_s=machine_busy_cpu_s())

    def on_sample_done(self, item: PlanItem, sample: Sample) -> None:
        busy = machine_busy_cpu_s()  # first, before anything else spends CPU
        moved = sum(v for k, v in sample.metrics.items() if k.endswith(".bytes"))
        self._emit(event="done", **_item(item), ok=sample.ok, bytes=moved, cpu_busy_s=busy)

    def on_saved(self, run_id: str) -> None:
        """A sample is stored, and the run's JSON export (when asked for) rewritten with it."""
        self._emit(event="saved", run=run_id)

    def on_finish(self, run_id: str, status: str) -> None:
        self._emit(event="finish", run=run_id, status=status)


class Fanout:
    """Send every event to several listeners."""

    def __init__(self, *listeners: object) -> None:
        self.listeners = listeners

    def __getattr__(self, name: str):
        def call(*args: object) -> None:
            for listener in self.listeners:
                getattr(listener, name)(*args)

        return call


def parse_event(line: str) -> dict | None:
    """The event in a console line, or None when the line is something else."""
    index = line.find(MARKER + " ")
    if index < 0:
        return None
    try:
        return json.loads(line[index + len(MARKER) + 1 :])
    except json.JSONDecodeError:
        return None
