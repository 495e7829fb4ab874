"""The small interface every runner implements: check → prepare → setup → run → cleanup.

The records a runner takes and gives (TargetContext, RunSettings, Prepared, Outcome) and
WorkloadFailed live in mountbench.model, the ground floor.
"""

from __future__ import annotations

from typing import Protocol

from mountbench.model import Outcome, Prepared, RunSettings, TargetContext, Workload


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
    # Optional: ``close() -> list[str]`` is called when the run ends (done, failed or
    # interrupted; it may be called twice) to stop what the runner started outside the targets
    # (the ssh:// clients' fio servers); it returns notices for the user.
    # Optional: ``host_facts() -> dict[str, Any]``: what the run's host record says about how
    # this runner measures (fio: the clock it chose), read back from RunnerSetup on --resume.
