"""The small interface every runner implements: check → prepare → setup → run → cleanup.

The records a runner takes and gives (TargetContext, RunSettings, Prepared, Outcome) and
WorkloadFailed live in mountbench.model, the ground floor.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from mountbench.model import Outcome, Prepared, RunSettings, TargetContext, Workload


class Runner(Protocol):
    kind: str

    def check(self, workloads: list[Workload]) -> None:
        """Validate workloads before anything touches a target; raise UsageError."""

    def space_needed(self, workload: Workload) -> tuple[str, int | None]:
        """(file group, bytes) the workload lays out; workloads of one group share files."""

    def shrink_hint(self, workloads: Sequence[Workload]) -> str:
        """What the user can do to shrink the space these workloads (of this runner's kind,
        those that need space) take, said in a refusal for too little space."""

    def ready(self, contexts: list[TargetContext]) -> None:
        """Called once the scratch directories exist, before anything is prepared or run, for
        checks that need them (the clients of `run --client` write a file there); raise
        TargetError to refuse."""

    def prepare(self, workload: Workload, ctx: TargetContext, settings: RunSettings) -> Prepared:
        """Make the workload concrete for this target (no I/O on the target)."""

    def setup(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> None:
        """Untimed per-sample preparation (fresh trees, warming), before caches are dropped
        and before the lab's measurement window opens; raise WorkloadFailed."""

    def layout_bytes(self, prepared: Prepared, first_in_round: bool, first_in_run: bool) -> int:
        """Bytes of working files a sample lays out beyond ``prepared.estimate_s`` (in setup, or
        fio's own layout before its timed part): the plan adds them at its target's pace
        (engine/plan.py layout_pace). ``first_in_round``: no sample of its file group ran on its
        target in this round yet; ``first_in_run``: nor in the run. 0 for a sample that lays out
        nothing."""

    def run(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> Outcome:
        """Take one sample (the timed part only); raise WorkloadFailed on an engine or target failure."""

    def cached_files(self, prepared: Prepared, ctx: TargetContext) -> list[Path] | None:
        """The files inside the scratch directory a sample of ``prepared`` reads, whose pages are
        evicted from the page cache before it when caches are to be cold (engine/caches.py);
        None when evicting files is not enough (a tree walk reads inodes and directory entries):
        then the machine's caches are dropped, as root."""

    def cleanup(self, ctx: TargetContext) -> None:
        """Remove per-target state the runner created inside the scratch directory."""

    def close(self) -> list[str]:
        """Called when the run ends (done, failed or interrupted; it may be called twice) to stop
        what the runner started outside the targets (the ssh:// clients' fio servers); returns
        notices for the user."""

    def host_facts(self) -> dict[str, Any]:
        """What the run's host record says about how this runner measures (fio: the clock it
        chose), read back from RunnerSetup on --resume."""


class RunnerDefaults:
    """What most runners do for the hooks of Runner that only some need: inherit it and
    override the ones that mean something for the kind."""

    kind: str

    def shrink_hint(self, workloads: Sequence[Workload]) -> str:
        return f"drop the {self.kind} workloads with --only"

    def ready(self, contexts: list[TargetContext]) -> None:
        return None

    def close(self) -> list[str]:
        return []

    def layout_bytes(self, prepared: Prepared, first_in_round: bool, first_in_run: bool) -> int:
        return 0

    def cached_files(self, prepared: Prepared, ctx: TargetContext) -> list[Path] | None:
        return None

    def host_facts(self) -> dict[str, Any]:
        return {}
