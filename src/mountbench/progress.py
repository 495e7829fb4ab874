"""Progress while a run executes: a live bar on a terminal, one line per sample otherwise."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
)
from rich.text import Text

from mountbench.model import PlanItem, Sample
from mountbench.units import format_seconds


class PlanEtaColumn(ProgressColumn):
    """ETA from the plan's estimates (corrected by what finished), not from a rate."""

    def render(self, task: Task) -> Text:
        eta = task.fields.get("eta")
        return Text(f"ETA {format_seconds(eta)}" if eta else "ETA –", style="cyan")


class ProgressEvents:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.live = console.is_terminal
        self.progress: Progress | None = None
        self.task = None
        self.total = 0

    def on_start(self, run_id: str, plan: list[PlanItem], pending: list[PlanItem]) -> None:
        self.total = len(plan)  # the bar counts warm-ups too: they take time
        done = len(plan) - len(pending)
        estimate = sum(item.estimate_s for item in pending)
        warmups = sum(item.warmup for item in pending)
        stored = sum(not item.warmup for item in plan) - (len(pending) - warmups)
        warm_text = f" after {warmups} warm-up{'s' if warmups != 1 else ''}" if warmups else ""
        self.console.print(
            f"run {run_id}: {len(pending) - warmups} samples to take{warm_text} ({stored} already stored), "
            f"about {format_seconds(estimate)} of I/O"
        )
        if self.live:
            self.progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                PlanEtaColumn(),
                console=self.console,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task("starting", total=self.total, completed=done, eta=estimate)

    def on_sample_start(self, item: PlanItem, done: int, total: int, eta_s: float) -> None:
        description = f"{item.target} · {item.workload} ({item.name})"
        if self.progress is not None:
            self.progress.update(self.task, description=description, completed=done, total=total, eta=eta_s)

    def on_sample_done(self, item: PlanItem, sample: Sample) -> None:
        if self.progress is not None:
            self.progress.advance(self.task)
            if not sample.ok:
                self.progress.console.print(
                    f"[red]✗ {item.name} · {item.target} · {item.workload}: {sample.error}[/red]", markup=True
                )
            return
        outcome = "ok" if sample.ok else f"FAILED: {sample.error}"
        self.console.print(
            f"  {item.name} · {item.target} · {item.workload}: {outcome} ({format_seconds(sample.wall_s)})"
        )

    def on_finish(self, run_id: str, status: str) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
