"""An in-process runner for driving the sample loop in unit tests (like hyperfine's mock
executor): no engine, deterministic metrics, failures and interrupts on demand."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mountbench.kinds import make_workload
from mountbench.kinds.runner import RunnerDefaults
from mountbench.model import Outcome, Prepared, RunSettings, Target, TargetContext, Workload, WorkloadFailed

KIND = "fake"


def fake_workload(name: str) -> Workload:
    return make_workload(name, KIND, name.upper(), "test:fake", {"headline": ["value"]})


@dataclass
class FakeRunner(RunnerDefaults):
    """``value(target, workload, call)`` gives each sample's metric; ``fail`` names the
    (target, workload) cells that fail; ``interrupt_at`` raises KeyboardInterrupt on that
    (1-based) call of run(), as Ctrl-C would in the middle of a sample."""

    value: Callable[[str, str, int], float] = lambda target, workload, call: 100.0 + call
    fail: set[tuple[str, str]] = field(default_factory=set)
    interrupt_at: int | None = None
    kind: str = KIND
    calls: list[tuple[str, str]] = field(default_factory=list)  # (target, workload) per run()
    setups: int = 0
    cleaned: list[str] = field(default_factory=list)

    def check(self, workloads: list[Workload]) -> None:
        pass

    def space_needed(self, workload: Workload) -> tuple[str, int | None]:
        return "fake", 0

    def prepare(self, workload: Workload, ctx: TargetContext, settings: RunSettings) -> Prepared:
        return Prepared(workload, ctx.target.label, f"fake {workload.name}", (), False, 0.01, 0)

    def setup(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> None:
        self.setups += 1

    def run(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> Outcome:
        self.calls.append((prepared.target, prepared.workload.name))
        if self.interrupt_at is not None and len(self.calls) == self.interrupt_at:
            raise KeyboardInterrupt
        if (prepared.target, prepared.workload.name) in self.fail:
            raise WorkloadFailed(f"fake failure on {prepared.target}")
        value = self.value(prepared.target, prepared.workload.name, len(self.calls))
        return Outcome({"value": value}, raw="fake")

    def cleanup(self, ctx: TargetContext) -> None:
        self.cleaned.append(ctx.target.label)


def two_targets(root: Path) -> list[Target]:
    """Targets a and b: two directories made under ``root``, for the in-process loop tests."""
    made = []
    for label in ("a", "b"):
        (root / label).mkdir()
        made.append(Target(label, str(root / label)))
    return made
