"""Machine-readable progress: one JSON line per event, flushed at once.

The lab reads these from a guest's console to know when each sample starts
and ends, so it can measure the host processes serving the mount meanwhile.
"""

from __future__ import annotations

import json
import time
from typing import IO

from mountbench.model import PlanItem, Sample

MARKER = "MB-EVENT"


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
        self._emit(event="start", target=item.target, workload=item.workload, round=item.round, warmup=item.warmup)

    def on_sample_done(self, item: PlanItem, sample: Sample) -> None:
        moved = sum(v for k, v in sample.metrics.items() if k.endswith(".bytes"))
        self._emit(
            event="done",
            target=item.target,
            workload=item.workload,
            round=item.round,
            warmup=item.warmup,
            ok=sample.ok,
            bytes=moved,
        )

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
