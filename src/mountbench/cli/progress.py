"""Progress while a run executes: a live bar on a terminal, one line per sample otherwise.

A line per sample (piped output, CI logs, the lab's guest console) says how far the run
is (n/N), what the sample measured (its headline metrics, the numbers the table will
summarise, not the time spent around them), the time elapsed and the ETA:

    12/36 round 1 · disk · seq1m-q8-read: 552 MB/s · 40.1 s elapsed, ETA 1m20s
"""

from __future__ import annotations

import statistics
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
from rich.table import Column
from rich.text import Text

from mountbench.analysis.metrics import describe
from mountbench.model import PlanItem, Sample, Workload
from mountbench.report.cells import format_value
from mountbench.units import format_seconds


class PlanEtaColumn(ProgressColumn):
    """ETA from what the samples taken so far took (LearnedEta), never wrapped."""

    def __init__(self) -> None:
        super().__init__(table_column=Column(no_wrap=True, min_width=9))

    def render(self, task: Task) -> Text:
        eta = task.fields.get("eta")
        return Text(f"ETA {clock(eta)}" if eta else "ETA –", style="cyan", no_wrap=True)


class LearnedEta:
    """The time left, learnt from the samples already taken (issue 25: the plan's first guess
    said 2m39s at 52 s for a run that took 5m57s).

    Each item's duration is measured as a whole (setup, cache drop, the timed part, storing):
    the time between one item's end and the next's. An item still to run is expected to take

    1. the median of what its own (target, workload) took, once it ran;
    2. else its plan estimate × how the same kind of workload on the same target compared
       with its estimates (tree actions on a slow mount take longer than the plan thinks);
    3. else its estimate × how everything so far compared with its estimates;
    4. else its estimate.
    """

    def __init__(self, kinds: dict[str, str] | None = None) -> None:
        self.kinds = kinds or {}  # workload name -> kind
        self.taken: dict[tuple[str, str], list[float]] = {}
        self.ratios: dict[tuple[str, str], list[float]] = {}
        self.spent = self.spent_estimate = 0.0

    def record(self, item: PlanItem, seconds: float) -> None:
        self.taken.setdefault((item.target, item.workload), []).append(seconds)
        if item.estimate_s > 0:
            self.ratios.setdefault((item.target, self.kinds.get(item.workload, "")), []).append(
                seconds / item.estimate_s
            )
            self.spent += seconds
            self.spent_estimate += item.estimate_s

    def expected(self, item: PlanItem) -> float:
        own = self.taken.get((item.target, item.workload))
        if own:
            return statistics.median(own)
        alike = self.ratios.get((item.target, self.kinds.get(item.workload, "")))
        if alike:
            return item.estimate_s * statistics.median(alike)
        if self.spent_estimate > 0:
            return item.estimate_s * self.spent / self.spent_estimate
        return item.estimate_s

    def remaining(self, items: Sequence[PlanItem]) -> float:
        return sum(self.expected(item) for item in items)


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
        self.eta = LearnedEta({w.name: w.kind for w in workloads})
        self.started = self.last_end = time.monotonic()
        # an item the plan did not have (a round --until or --budget added): the session's ETA at its
        # start, and when that was
        self.added_eta: tuple[float, float] | None = None

    def on_start(self, run_id: str, plan: list[PlanItem], pending: list[PlanItem]) -> None:
        self.total = len(plan)  # the bar counts warm-ups too: they take time
        self.done = len(plan) - len(pending)
        self.pending = list(pending)
        self.started = self.last_end = time.monotonic()
        estimate = sum(item.estimate_s for item in pending)
        warmups = sum(item.warmup for item in pending)
        stored = sum(not item.warmup for item in plan) - (len(pending) - warmups)
        warm_text = f" after {warmups} warm-up{'s' if warmups != 1 else ''}" if warmups else ""
        self.console.print(
            f"run {run_id}: {len(pending) - warmups} samples to take{warm_text}"
            f"{f' ({stored} already stored)' if stored else ''}, "
            f"about {format_seconds(estimate)} of I/O",
            soft_wrap=not self.live,  # piped: one line, whatever its length, for logs and grep
        )
        if self.live:
            self.progress = Progress(
                SpinnerColumn(),
                # the description gives way (…) so that the line never wraps, whatever the width
                TextColumn("{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1)),
                BarColumn(bar_width=None if self.console.width >= 100 else 10),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                PlanEtaColumn(),
                console=self.console,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task("starting", total=self.total, completed=self.done, eta=estimate)

    def _left(self, item: PlanItem) -> list[PlanItem] | None:
        """The planned items after ``item``; None for an item the plan did not have (an adaptive round)."""
        return self.pending[self.pending.index(item) + 1 :] if item in self.pending else None

    def on_sample_start(self, item: PlanItem, done: int, total: int, eta_s: float) -> None:
        description = f"{item.target} · {item.workload} ({item.name})"
        self.total = max(self.total, total)  # rounds added by --until/--budget grow N: n never passes it
        left = self._left(item)
        if left is not None:  # this item's own time (its setup already ran) plus what is left after it
            eta_s = self.eta.expected(item) + self.eta.remaining(left)
        else:
            self.added_eta = (eta_s, time.monotonic())
        if self.progress is not None:
            self.progress.update(self.task, description=description, completed=done, total=total, eta=eta_s)

    def on_sample_done(self, item: PlanItem, sample: Sample) -> None:
        self.done += 1
        now = time.monotonic()
        self.eta.record(item, now - self.last_end)
        self.last_end = now
        planned = self._left(item)
        left = planned or []
        eta = self.eta.remaining(left)
        if planned is None and self.added_eta is not None:  # an added round: the session's own ETA, counted down
            eta = max(0.0, self.added_eta[0] - (now - self.added_eta[1]))
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
            f"{elapsed} elapsed, {'ETA ' + clock(eta) if left or self.done < self.total else 'done'}",
            markup=False,
            highlight=False,
            soft_wrap=True,  # one line per sample, however long the target's label
        )

    def on_finish(self, run_id: str, status: str) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
