"""Progress while a run executes: a live bar on a terminal, one line per sample otherwise.

A line per sample (piped output, CI logs, the lab's guest console) says how far the run
is (n/N), what the sample measured (its headline metrics, the numbers the table will
summarise, not the time spent around them), the time elapsed and the ETA:

    12/36 round 1 · disk · seq1m-q8-read: 552 MB/s · 40.1 s elapsed, ETA 1m20s
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from mountbench.analysis.metrics import describe
from mountbench.engine.plan import remaining_estimate
from mountbench.model import PlanItem, Sample, Workload
from mountbench.report.cells import format_value
from mountbench.units import format_seconds


class PlanEtaColumn(ProgressColumn):
    """ETA from the plan's estimates (corrected by what finished), not from a rate."""

    def render(self, task: Task) -> Text:
        eta = task.fields.get("eta")
        return Text(f"ETA {format_seconds(eta)}" if eta else "ETA –", style="cyan")


def clock(seconds: float) -> str:
    """Elapsed time and ETAs to the second: '0 s', '42 s', '3m05s', '1h02m'."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def measured(sample: Sample, workload: Workload | None) -> str:
    """The sample's headline metrics as the report shows them: '552 MB/s', '17.8 s'."""
    if not sample.ok:
        return f"FAILED: {sample.error}"
    names = [m for m in (workload.description.headline if workload else ()) if m in sample.metrics]
    return ", ".join(format_value(sample.metrics[m], describe(m)) for m in names) or "ok"


class ProgressEvents:
    def __init__(self, console: Console, workloads: Sequence[Workload] = ()) -> None:
        self.console = console
        self.live = console.is_terminal
        self.workloads = {w.name: w for w in workloads}
        self.progress: Progress | None = None
        self.task = None
        self.total = 0
        self.done = 0
        self.pending: list[PlanItem] = []
        self.spent = self.spent_estimate = 0.0
        self.started = time.monotonic()

    def on_start(self, run_id: str, plan: list[PlanItem], pending: list[PlanItem]) -> None:
        self.total = len(plan)  # the bar counts warm-ups too: they take time
        self.done = len(plan) - len(pending)
        self.pending = list(pending)
        self.started = time.monotonic()
        estimate = sum(item.estimate_s for item in pending)
        warmups = sum(item.warmup for item in pending)
        stored = sum(not item.warmup for item in plan) - (len(pending) - warmups)
        warm_text = f" after {warmups} warm-up{'s' if warmups != 1 else ''}" if warmups else ""
        self.console.print(
            f"run {run_id}: {len(pending) - warmups} samples to take{warm_text} ({stored} already stored), "
            f"about {format_seconds(estimate)} of I/O",
            soft_wrap=not self.live,  # piped: one line, whatever its length, for logs and grep
        )
        if self.live:
            self.progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                PlanEtaColumn(),
                console=self.console,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task("starting", total=self.total, completed=self.done, eta=estimate)

    def on_sample_start(self, item: PlanItem, done: int, total: int, eta_s: float) -> None:
        description = f"{item.target} · {item.workload} ({item.name})"
        if self.progress is not None:
            self.progress.update(self.task, description=description, completed=done, total=total, eta=eta_s)

    def on_sample_done(self, item: PlanItem, sample: Sample) -> None:
        self.done += 1
        self.spent += sample.wall_s
        self.spent_estimate += item.estimate_s
        left = self.pending[self.pending.index(item) + 1 :] if item in self.pending else []
        eta = remaining_estimate(left, self.spent, self.spent_estimate)
        value = measured(sample, self.workloads.get(item.workload))
        if self.progress is not None:
            self.progress.update(self.task, completed=self.done, eta=eta)
            if not sample.ok:
                self.progress.console.print(
                    f"[red]✗ {item.name} · {item.target} · {item.workload}: {sample.error}[/red]", markup=True
                )
            return
        elapsed = clock(time.monotonic() - self.started)
        width = len(str(self.total))
        self.console.print(
            f"  {self.done:>{width}}/{self.total} {item.name} · {item.target} · {item.workload}: {value} · "
            f"{elapsed} elapsed, ETA {clock(eta) if left else 'none: done'}",
            markup=False,
            highlight=False,
            soft_wrap=True,  # one line per sample, however long the target's label
        )

    def on_finish(self, run_id: str, status: str) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
