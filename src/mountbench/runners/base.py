"""The small interface every runner implements: check → prepare → run → cleanup."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mountbench.model import Caveat, ClientResult, Target, TargetInfo, Workload


class WorkloadFailed(Exception):
    """One sample failed (engine error, ENOSPC, EIO, target gone). Recorded in its cell.
    ``clients``: on several machines at once, what each delivered (the failed ones say why)."""

    def __init__(self, message: str, raw: str = "", clients: tuple[ClientResult, ...] = ()) -> None:
        super().__init__(message)
        self.raw = raw
        self.clients = clients


@dataclass(frozen=True)
class TargetContext:
    """A target ready for work: where it is, what it is, and its scratch directory."""

    target: Target
    info: TargetInfo
    scratch: Path


@dataclass(frozen=True)
class RunSettings:
    """Run-wide options a runner needs to prepare a workload."""

    size_override: int | None = None
    runtime_override: float | None = None
    ram_bytes: int = 0
    workdir: Path = Path(".")  # private temp dir for job files and engine output (never a target)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Prepared:
    """A workload made concrete for one target: exactly what will run, and its caveats."""

    workload: Workload
    target: str
    text: str  # the job file or command line, shown by --dry-run
    caveats: tuple[Caveat, ...]
    buffered: bool  # page cache involved: caches are dropped before it when allowed
    estimate_s: float
    working_set: int | None  # bytes laid out in the scratch directory, when known
    payload: dict[str, Any] = field(default_factory=dict)
    uncached_why: str = "direct I/O"  # why a sample that is not ``buffered`` needs no cache drop


@dataclass(frozen=True)
class Outcome:
    metrics: dict[str, float]
    raw: str
    caveats: tuple[Caveat, ...] = ()
    series: dict[str, list[float]] = field(default_factory=dict)  # values over the sample's time
    clients: tuple[ClientResult, ...] = ()  # per-client parts when the sample ran on several machines


class Runner(Protocol):
    kind: str

    def check(self, workloads: list[Workload]) -> None:
        """Validate workloads before anything touches a target; raise UsageError."""

    def space_needed(self, workload: Workload) -> tuple[str, int | None]:
        """(file group, bytes) the workload lays out; workloads of one group share files."""

    def prepare(self, workload: Workload, ctx: TargetContext, settings: RunSettings) -> Prepared:
        """Make the workload concrete for this target (no I/O on the target)."""

    def setup(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> None:
        """Untimed per-sample preparation (fresh trees, warming), before caches are dropped
        and before the lab's measurement window opens; raise WorkloadFailed."""

    def run(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> Outcome:
        """Take one sample (the timed part only); raise WorkloadFailed on an engine or target failure."""

    def cleanup(self, ctx: TargetContext) -> None:
        """Remove per-target state the runner created inside the scratch directory."""

    # Optional: ``ready(contexts: list[TargetContext]) -> None`` is called once the scratch
    # directories exist, before anything is prepared or run, for checks that need them
    # (the clients of `run --client` write a file there); raise TargetError to refuse.
