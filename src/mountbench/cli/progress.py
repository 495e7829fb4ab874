"""Progress while a run executes: a live bar on a terminal, one line per sample otherwise.

A line per sample (piped output, CI logs, the lab's guest console) says how far the run
is (n/N), what the sample measured (its headline metrics, the numbers the table will
summarise, not the time spent around them), the time elapsed and the ETA:

    12/36 round 1 · disk · seq1m-q8-read: 552 MB/s · 40.1 s elapsed, ETA 1m20s
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

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
from mountbench.engine.plan import LaysOut, layout_of
from mountbench.model import PlanItem, RunOptions, Sample, Workload
from mountbench.report.cells import format_value
from mountbench.report.terminal_layout import Fields
from mountbench.units import format_seconds


class PlanEtaColumn(ProgressColumn):
    """ETA from what the samples taken so far took (LearnedEta), never wrapped."""

    def __init__(self) -> None:
        super().__init__(table_column=Column(no_wrap=True, min_width=9))

    def render(self, task: Task) -> Text:
        eta = task.fields.get("eta")
        bound = "≤" if task.fields.get("bound") else ""  # the plan's bounds: nothing measured yet
        return Text(f"ETA {bound}{clock(eta)}" if eta else "ETA –", style="cyan", no_wrap=True)


class LearnedEta:
    """The time left, learnt from the samples already taken (issue 25: the plan's first guess
    said 2m39s at 52 s for a run that took 5m57s).

    Each item's duration is measured as a whole (setup, cache drop, the timed part, storing):
    the time between one item's end and the next's. An item still to run is expected to take

    1. the median of what its own (target, workload) took, once it ran;
    2. else what it took on this machine before (engine/history.py: ``learnt``), so that the
       first ETA is right before any sample (issue 37);
    3. else its plan estimate × how the same kind of workload on the same target compared
       with its estimates (tree actions on a slow mount take longer than the plan thinks);
    4. else its estimate × how the same kind on the other targets compared with its estimates;
    5. else its estimate × how the same kind compared with its estimates before (``learnt``);
    6. else its estimate: another kind's pace says nothing of it (issue 37: in a tree run the
       fio churn took a twentieth of its bound while the tree actions took more than theirs, and
       scaling all by the first churn sample said 1m40s for 3m42s).

    A failed sample is no pace: what it took is spent (the elapsed time counts it, once), but it
    measured no work, so it sets no cost and no ratio for anything still to run (issue 37: in the
    QEMU lab sshfs failed after 175 s while laying out its working files, 58× its fio bound, and
    the first ETA scaled every fio sample on every mount by it: 5h12m for 28 minutes).

    A sample that lays out working files (engine/plan.py LaysOut, from engine/session.py
    with_layouts) is paced apart from those that do not: a layout's pace says
    nothing of a timed part's, nor the other way round, and another mount's layout says nothing
    of this one's (rule 4 is not used for layouts): in the lab, 256 MiB took 9 s on 9p and 150 s
    on sshfs, and 9p's pace said -77 % for the run after its second sample (+33 % kept to the bound).
    A layout's timed part paces the timed parts too: the first sample on each target lays out, and
    the emulated guest's timed parts took 2-9× their bounds (kept to the bounds until a sample that
    lays out nothing ran, the replay of the lab's run said -58 % after its sixth sample; -26 %).
    A sample that failed where the plan laid out (sshfs's layout timing out) leaves the layout to
    the next sample on its target in that round: it lays them out again (kinds/fio.py setup), and
    its time is a layout's, not a timed part's (the replay's sshfs sample that took 147 s so set
    the pace of the same workload in the later rounds).
    """

    def __init__(
        self,
        kinds: dict[str, str] | None = None,
        learnt: Mapping[tuple[str, str], float] | None = None,
        unbounded: frozenset[str] = frozenset(),
    ) -> None:
        self.kinds = kinds or {}  # workload name -> kind
        # workloads whose plan estimate is no bound but a placeholder (no runtime of their own: a tree
        # action, a size-bound fio job such as the tree preset's churn, 60 s each)
        self.unbounded = unbounded
        self.learnt = dict(learnt or {})  # (target, workload) -> its cost on this machine before
        self.kind_learnt: dict[str, float] = {}  # kind -> cost before ÷ plan estimate (plan())
        # keyed by (..., whether the sample lays out working files)
        self.taken: dict[tuple[str, str, bool], list[float]] = {}
        self.ratios: dict[tuple[str, str, bool], list[float]] = {}  # (target, kind, ...) -> cost ÷ estimate
        self.kind_ratios: dict[tuple[str, bool], list[float]] = {}  # (kind, ...) -> cost ÷ estimate, any target
        # (target, round) -> the layout a failed sample left to the next sample there (see the class)
        self.owed: dict[tuple[str, int], float] = {}

    def plan(self, items: Sequence[PlanItem]) -> None:
        """How each kind's costs before compared with this plan's estimates: for the pairs never seen."""
        by_kind: dict[str, list[float]] = {}
        for item in items:
            before = self.learnt.get((item.target, item.workload))
            if before and item.estimate_s > 0:
                by_kind.setdefault(self.kinds.get(item.workload, ""), []).append(before / item.estimate_s)
        self.kind_learnt = {kind: statistics.median(ratios) for kind, ratios in by_kind.items()}

    @property
    def knows(self) -> bool:
        """Whether any cost was measured, here before or in this run: else the ETA is the plan's
        bounds (an upper bound, said as one)."""
        return bool(self.learnt or self.taken)

    def record(self, item: PlanItem, seconds: float, ok: bool = True, timed_s: float = 0.0) -> None:
        """What ``item`` took (``timed_s`` of it its timed part); a failed sample's time is left
        out of every pace (see the class)."""
        where = (item.target, item.round)
        owed = self.owed.pop(where, 0.0)
        if not ok:
            if self.lays_out(item) or owed:
                self.owed[where] = layout_of(item) or owed
            return
        lays = self.lays_out(item) or owed > 0
        estimate = item.estimate_s + owed
        self.taken.setdefault((item.target, item.workload, lays), []).append(seconds)
        kind = self.kinds.get(item.workload, "")
        if estimate > 0:
            self._ratio(item.target, kind, lays, seconds / estimate)
        timed_estimate = item.estimate_s - layout_of(item)
        if lays and timed_s > 0 and timed_estimate > 0:  # its timed part paces the timed parts (see the class)
            self._ratio(item.target, kind, False, timed_s / timed_estimate)

    def _ratio(self, target: str, kind: str, lays: bool, ratio: float) -> None:
        self.ratios.setdefault((target, kind, lays), []).append(ratio)
        self.kind_ratios.setdefault((kind, lays), []).append(ratio)

    @staticmethod
    def lays_out(item: PlanItem) -> bool:
        """Whether the plan counts a layout of working files in ``item``'s estimate."""
        return layout_of(item) > 0

    def expected(self, item: PlanItem, owed: float | None = None) -> float:
        """What ``item`` will take; ``owed``: a layout a failed sample left to it (by default, if
        it is the next sample on its target in its round)."""
        if owed is None:
            owed = self.owed.get((item.target, item.round), 0.0)
        lays = self.lays_out(item) or owed > 0
        estimate = item.estimate_s + owed
        own = self.taken.get((item.target, item.workload, lays))
        if own:
            return statistics.median(own)
        before = self.learnt.get((item.target, item.workload))
        if before:
            return before
        kind = self.kinds.get(item.workload, "")
        alike = self.ratios.get((item.target, kind, lays))
        if not alike and not lays:  # another mount's layout pace says nothing of this one's (see the class)
            alike = self.kind_ratios.get((kind, lays))
        if alike:
            return estimate * statistics.median(alike)
        if kind in self.kind_learnt:
            return estimate * self.kind_learnt[kind]
        if item.workload in self.unbounded:
            # no bound, no pace of its kind yet: like the samples taken so far (the middle one, a layout's at its
            # planned pace beside), not its placeholder (issue 48: the tree preset's churn kept its 60 s each,
            # and its first ETA said 13m57s for 79 s)
            unlaid = [t for (_target, _workload, laid), times in self.taken.items() if not laid for t in times]
            taken = unlaid or [t for times in self.taken.values() for t in times]  # else those that laid out too
            if taken:
                return statistics.median(taken) + (layout_of(item) + owed if lays and unlaid else 0.0)
        return estimate

    def remaining(self, items: Sequence[PlanItem]) -> float:
        """What ``items`` will take, in order (a failed layout is owed by the first of them on its target and round)."""
        owed = dict(self.owed)
        return sum(self.expected(item, owed.pop((item.target, item.round), 0.0)) for item in items)


def work_said(items: Sequence[PlanItem], unbounded: frozenset[str] = frozenset()) -> str:
    """The plan's estimates said: '302 s of I/O', and what of them is laying out working files
    (engine/session.py with_layouts) apart, at the paces it assumed (engine/plan.py layout_pace):
    '302 s of I/O and 27m08s laying out working files (at 2 MB/s on a network, VM or FUSE mount,
    50 MB/s on a local disk, 500 MB/s in RAM)' (the QEMU lab's default). Samples of ``unbounded`` workloads
    (no runtime of their own: a placeholder, no bound) are said apart, as what the first samples will tell."""
    guessed = [item for item in items if item.workload in unbounded]
    if guessed:
        bounded = [item for item in items if item.workload not in unbounded]
        if not bounded:
            return "none with a runtime of its own (their time is learnt from the first samples)"
        rest = f"{len(guessed)} samples with no runtime of their own (their time is learnt from the first ones)"
        return f"{work_said(bounded)} and {rest}"
    total = sum(item.estimate_s for item in items)
    layouts = sum(layout_of(item) for item in items)
    if layouts <= 0:
        return f"{format_seconds(total)} of I/O"
    paces = sorted({item.pace for item in items if isinstance(item, LaysOut)}, key=lambda pace: pace.rate_bps)
    said = ", ".join(f"{pace.rate_bps / 1e6:g} MB/s {pace.where}" for pace in paces)
    return (
        f"{format_seconds(total - layouts)} of I/O and {format_seconds(layouts)} laying out working files (at {said})"
    )


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


@dataclass(frozen=True)
class Pace:
    """How the run may go on after its planned rounds (RunConfig's --until and --budget): a
    run that adds rounds is not done when the plan is, and a budgeted one goes on to its
    deadline while a comparison is undecided, so its ETA counts the budget down."""

    adds_rounds: bool = False  # --until or --budget (the default budget too)
    budget_s: float | None = None
    default_budget: bool = False  # the preset's default: the planned rounds are all taken
    rounds: int = 0  # the planned rounds (--repeat)
    max_repeat: int = 0  # the most rounds --until may give a cell

    @classmethod
    def of(cls, config: RunOptions) -> Pace:
        return cls(config.until is not None, config.budget, config.default_budget, config.repeat, config.max_repeat)


class ProgressEvents:
    def __init__(
        self,
        console: Console,
        workloads: Sequence[Workload] = (),
        pace: Pace | None = None,
        learnt: Mapping[tuple[str, str], float] | None = None,
    ) -> None:
        self.console = console
        self.pace = pace or Pace()
        self.live = console.is_terminal
        self.workloads = {w.name: w for w in workloads}
        self.progress: Progress | None = None
        self.task = None
        self.total = 0
        self.done = 0
        self.pending: list[PlanItem] = []
        self.unbounded = frozenset(w.name for w in workloads if w.description.duration_bound_s is None)
        self.eta = LearnedEta({w.name: w.kind for w in workloads}, learnt, self.unbounded)
        self.started = self.last_end = time.monotonic()
        # under --until or a budget: the session's ETA at the start of the sample in flight (an upper bound: the
        # rounds the run may still add, each at most, engine/session.py), and when that was; counted down
        self.bound_eta: tuple[float, float] | None = None
        # the most rounds a cell may get (the session's, as the budget fixes them): 'round 4 of at most 12'
        self.at_most: Callable[[], int | None] = lambda: None
        self.planned_said = False  # 'planned rounds taken' is said once

    def on_start(self, run_id: str, plan: list[PlanItem], pending: list[PlanItem]) -> None:
        self.total = len(plan)  # the bar counts warm-ups too: they take time
        self.done = len(plan) - len(pending)
        self.pending = list(pending)
        self.started = self.last_end = time.monotonic()
        self.eta.plan(pending)
        expected = self.eta.remaining(pending)  # the plan's bounds, or what this machine took before
        warmups = sum(item.warmup for item in pending)
        stored = sum(not item.warmup for item in plan) - (len(pending) - warmups)
        warm_text = f" after {warmups} warm-up{'s' if warmups != 1 else ''}" if warmups else ""
        self.console.print(
            f"run {run_id}: {len(pending) - warmups} samples to take{warm_text}"
            f"{f' ({stored} already stored)' if stored else ''}, "
            f"{self._work_said(pending)}"
            f"{self._time_said(expected if self.eta.learnt else None)}",
            # wrapped at the width, piped too (80 columns): with the layouts' paces it outgrew one line;
            # the per-sample lines below are the ones kept whole for logs and grep
        )
        if self.live:
            self.progress = Progress(
                SpinnerColumn(),
                # the description gives way (…) so that the line never wraps, whatever the width
                TextColumn("{task.description}", table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1)),
                BarColumn(bar_width=None if self.console.width >= 100 else 10),
                MofNCompleteColumn(),
                TimeElapsedColumn(table_column=Column(no_wrap=True, min_width=7)),  # '0:01:05' whole
                PlanEtaColumn(),
                console=self.console,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(
                "starting", total=self.total, completed=self.done, eta=self._eta(expected), bound=self._bound()
            )

    def _work_said(self, pending: Sequence[PlanItem]) -> str:
        """'about 3m45s of I/O' (as this machine took before), 'at most 302 s of I/O' (the plan's bounds), and
        how many samples have no runtime of their own: their time is learnt from the first ones."""
        if self.eta.knows:
            return f"about {work_said(pending)}"
        said = work_said(pending, self.unbounded)
        return said if all(item.workload in self.unbounded for item in pending) else f"at most {said}"

    def _time_said(self, learnt: float | None = None) -> str:
        """How long the run will take, said before it starts (``learnt``: as this machine took before)."""
        pace = self.pace
        if pace.budget_s is None and pace.adds_rounds and pace.rounds and pace.max_repeat > pace.rounds:
            # --until alone: the planned rounds, then up to --max-repeat for comparisons still undecided
            planned = learnt if learnt else sum(item.estimate_s for item in self.pending)
            most = planned * pace.max_repeat / pace.rounds
            how = "as this machine took before" if learnt else "at the plan's bounds"
            return (
                f"; the {pace.rounds} planned rounds about {clock(planned)} ({how}), and at most {clock(most)} if "
                f"comparisons stay undecided to --max-repeat {pace.max_repeat}"
            )
        if pace.budget_s is None:
            return f"; about {clock(learnt)} as this machine took before" if learnt else ""
        if pace.default_budget:
            return (f"; it takes about {format_seconds(pace.budget_s)} (the default budget: the planned rounds, "
                    "then more rounds for undecided comparisons while time is left)")  # fmt: skip
        return f"; it ends within its --budget of {format_seconds(pace.budget_s)}"

    def _bound(self) -> bool:
        """The ETA is the plan's bounds, an upper bound (said '≤'): nothing like the run was measured
        here before and no sample is taken yet; a budget's countdown is no bound."""
        return not self.eta.knows and self._budget_left() is None

    def _budget_left(self) -> float | None:
        if self.pace.budget_s is None or not self.pace.adds_rounds:
            return None
        return max(0.0, self.pace.budget_s - (time.monotonic() - self.started))

    def _eta(self, planned_left: float) -> float:
        """A budgeted run that adds rounds goes on to its deadline while anything is undecided:
        its ETA is the budget counted down (or the planned rounds' own time, when longer)."""
        budget_left = self._budget_left()
        return planned_left if budget_left is None else max(planned_left, budget_left)

    def _planned_bound(self, items: Sequence[PlanItem]) -> float:
        """Under --until or a budget, what the run takes at most from ``items`` (the planned ones left) on: them,
        then every round up to the most a cell may get, each a planned round's learnt cost (a layout's
        pace apart from a timed part's: LearnedEta), never past the budget, except for the planned rounds a
        default budget takes all of."""
        planned = self.eta.remaining(items)
        measured = [item for item in self.pending if not item.warmup]
        rounds = sorted({item.round for item in measured})
        at_most = self.at_most() or self.pace.max_repeat
        later = [item for item in measured if item.round == rounds[-1]] if rounds else []
        budget_left = self._budget_left()
        if not at_most:  # how many rounds may follow is not known: up to the budget, if there is one
            return max(planned, budget_left) if budget_left is not None else planned
        bound = planned + max(0, at_most - len(rounds)) * self.eta.remaining(later)
        if budget_left is not None:
            bound = min(bound, budget_left)
            if self.pace.default_budget:
                bound = max(bound, planned)
        return bound

    def _left(self, item: PlanItem) -> list[PlanItem] | None:
        """The planned items after ``item``; None for an item the plan did not have (an adaptive round)."""
        return self.pending[self.pending.index(item) + 1 :] if item in self.pending else None

    def round_name(self, item: PlanItem) -> str:
        """'round 4', and under --until or a budget 'round 4 of at most 12' (issue 48)."""
        at_most = self.at_most() if self.pace.adds_rounds and not item.warmup else None
        return f"{item.name} of at most {at_most}" if at_most else item.name

    def on_sample_start(self, item: PlanItem, done: int, total: int, eta_s: float) -> None:
        description = f"{item.target} · {item.workload} ({self.round_name(item)})"
        self.total = max(self.total, total)  # rounds added by --until/--budget grow N: n never passes it
        left = self._left(item)
        if self.pace.adds_rounds:  # an upper bound: the planned rounds and every round the run may add
            if left is not None:
                eta_s = self._planned_bound([item, *left])
            self.bound_eta = (eta_s, time.monotonic())  # an added round's: the session's own
        elif left is not None:  # this item's own time (its setup already ran) plus what is left after it
            eta_s = self._eta(self.eta.remaining([item, *left]))
        if self.progress is not None:
            self.progress.update(self.task, description=description, completed=done, total=total, eta=eta_s,
                                 bound=self._bound())  # fmt: skip

    def on_sample_done(self, item: PlanItem, sample: Sample) -> None:
        self.done += 1
        now = time.monotonic()
        self.eta.record(item, now - self.last_end, sample.ok, sample.wall_s)
        self.last_end = now
        planned = self._left(item)
        left = planned or []
        eta = self._eta(self.eta.remaining(left))
        if self.bound_eta is not None:  # the session's bound, counted down
            eta = max(0.0, self.bound_eta[0] - (now - self.bound_eta[1]))
        value = measured(sample, self.workloads.get(item.workload))
        if self.progress is not None:
            self.progress.update(self.task, completed=self.done, eta=eta, bound=self._bound())
            if not left and self.done >= self.total:  # the wait that follows says what it is
                self.progress.update(self.task, description=self.waiting())
            if not sample.ok:
                self.progress.console.print(
                    f"[red]✗ {item.name} · {item.target} · {item.workload}: {sample.error}[/red]", markup=True
                )
            return
        elapsed = clock(time.monotonic() - self.started)
        width = len(str(self.total))
        fields = [
            f"{self.done:>{width}}/{self.total} {self.round_name(item)}",
            item.target,
            f"{item.workload}: {value}",
            f"{elapsed} elapsed, {self._after(eta, bool(left) or self.done < self.total, planned is not None)}",
        ]
        # one line per sample where it fits the width (80 columns piped); else wrapped between
        # its fields, never inside a number or a name (issue 37: piped lines reached 84 columns)
        self.console.print(Fields(fields, separator=" ·", first_indent=2, indent=6), markup=False, highlight=False)

    def waiting(self) -> str:
        """What the run does after its last planned sample, while the bar waits (issue 37: it sat at
        '60/60 ETA –' for 24 s, saying nothing)."""
        if self.pace.adds_rounds:
            return "planned samples taken: deciding whether a comparison needs another round, then cleaning up"
        return "every sample taken: removing the run's scratch directories"

    def _after(self, eta: float, more: bool, planned: bool = True) -> str:
        """What follows the sample: an ETA (under --until or a budget an upper bound, 'ETA ≤ 1m40s', counting
        down), once the plan is done what the run does next, said once, and never "done": after its last
        sample the run still cleans up and reports (issue 48: cdm said "done" 6.3 s before the end)."""
        if not self.pace.adds_rounds:
            return f"ETA {clock(eta)}" if more else "last sample taken"
        if planned and not more and not self.planned_said:
            self.planned_said = True
            return f"planned rounds taken; rounds for undecided comparisons may follow, ETA ≤ {clock(eta)}"
        return f"ETA ≤ {clock(eta)}"

    def on_finish(self, run_id: str, status: str) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
