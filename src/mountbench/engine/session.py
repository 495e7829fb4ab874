"""Walk the plan: get targets ready, take each sample, store it at once, clean up.

This is the only module that ties runners, store and caches together. It
reports progress through an Events object and never prints.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import secrets
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import psutil

from mountbench.analysis import runlevel, sequential, stats
from mountbench.engine import caches
from mountbench.engine.plan import (
    SLOW_PACE,
    LayoutPace,
    LaysOut,
    build_plan,
    extra_round,
    layout_of,
    layout_pace,
    pending_items,
    remaining_estimate,
)
from mountbench.errors import Interrupted, MountbenchError, TargetError
from mountbench.host import scratch as scratch_mod
from mountbench.host import targets as targets_mod
from mountbench.host.noise import NoiseWindow
from mountbench.host.watch import SampleWatch
from mountbench.kinds.runner import Runner
from mountbench.model import (
    Outcome,
    PlanItem,
    Prepared,
    RunConfig,
    RunLevel,
    RunSettings,
    Sample,
    Target,
    TargetContext,
    TargetInfo,
    TargetRecord,
    Workload,
    WorkloadFailed,
)
from mountbench.store import Store, StoreFull
from mountbench.units import format_bytes, format_seconds


class Events(Protocol):
    def on_start(self, run_id: str, plan: list[PlanItem], pending: list[PlanItem]) -> None: ...

    def on_sample_start(self, item: PlanItem, done: int, total: int, eta_s: float) -> None: ...

    def on_sample_done(self, item: PlanItem, sample: Sample) -> None: ...

    def on_finish(self, run_id: str, status: str) -> None: ...


class NullEvents:
    def on_start(self, run_id: str, plan: list[PlanItem], pending: list[PlanItem]) -> None:
        pass

    def on_sample_start(self, item: PlanItem, done: int, total: int, eta_s: float) -> None:
        pass

    def on_sample_done(self, item: PlanItem, sample: Sample) -> None:
        pass

    def on_finish(self, run_id: str, status: str) -> None:
        pass


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def check_space(
    targets: Sequence[Target], workloads: Sequence[Workload], runner_for: Callable[[Workload], Runner]
) -> list[str]:
    """Refuse, before any write, a filesystem whose free space cannot hold the working
    sets of all the targets on it (two targets on one disk share its free space).

    Returns notices for what could not be checked."""
    notices = []
    per_target = {target.label: planned_space(workloads, runner_for) for target in targets}
    unknown = []
    for workload in workloads:
        if runner_for(workload).space_needed(workload)[1] is None:
            unknown.append(workload.name)
    for target in targets:
        if unknown:
            notices.append(f"{target.label}: space needed by {', '.join(unknown)} unknown; not checked")
    by_device: dict[int, list[Target]] = defaultdict(list)
    for target in targets:
        by_device[os.stat(target.path).st_dev].append(target)
    for sharing in by_device.values():
        usage = shutil.disk_usage(sharing[0].path)
        labels = ", ".join(t.label for t in sharing)
        if usage.total == 0:  # ramfs and some FUSE mounts report no size at all
            notices.append(f"{labels}: the filesystem reports no size; free space not checked")
            continue
        needed = sum(per_target[t.label] for t in sharing)
        margin = space_margin(needed) if needed else 0
        if needed + margin > usage.free:
            where = f"target {labels}" if len(sharing) == 1 else f"the filesystem shared by targets {labels}"
            hint = _shrink_hint(workloads, runner_for)
            largest = max((runner_for(w).space_needed(w)[1] or 0 for w in workloads), default=0)
            fits = _fitting_size(largest, needed, usage.free) if "--size" in hint else None
            raise TargetError(
                f"not enough space on {where}: the planned working set needs {format_bytes(needed)} and "
                f"{format_bytes(margin)} beside it (the scratch directory, the filesystem's own blocks), "
                f"{format_bytes(usage.free)} free{_leftover_note(sharing, needed + margin - usage.free)}; "
                f"{hint}{f' (--size {fits}M fits)' if fits else ''} or free space"
            )
    return notices


def planned_space(workloads: Sequence[Workload], runner_for: Callable[[Workload], Runner]) -> int:
    """Bytes of working files a target holds at most at once: each file group's largest (workloads of
    one group share their files, or lay theirs out one at a time: Runner.space_needed), summed."""
    groups: dict[str, int] = defaultdict(int)
    for workload in workloads:
        group, needed = runner_for(workload).space_needed(workload)
        if needed is not None:
            groups[group] = max(groups[group], needed)
    return sum(groups.values())


SPACE_MARGIN = 1 << 20  # beside a working set: the scratch directory, its marker, job files
SPACE_SHARE = 0.01  # and the filesystem's own blocks for the files (ext4's extent trees, tmpfs's pages)


def space_margin(needed: int) -> int:
    """What a run writes beside its working set, at most: issue 48's 64 MiB tmpfs passed the check with
    --size 64M (64.0 MiB needed, 64.0 MiB free) and every sample failed ('has 64.0 MiB of 64.0 MiB')."""
    return SPACE_MARGIN + int(needed * SPACE_SHARE)


def _fitting_size(largest: int, needed: int, free: int) -> int | None:
    """The largest --size in MiB whose working set (the same share of ``needed`` as ``largest`` of it) fits
    in ``free`` with its margin; None when not even 1 MiB does."""
    if largest <= 0 or needed <= 0:
        return None
    scale = (free - SPACE_MARGIN) / (needed * (1 + SPACE_SHARE))
    fits = int(largest * scale) >> 20
    return fits if fits >= 1 else None


def _leftover_note(targets: Sequence[Target], shortfall: int) -> str:
    """How much of a shortfall mountbench's own leftover scratch directories hold (those of
    live runs and probes, or of another host's: dead ones were removed before this check)."""
    found = [entry for target in targets for entry in scratch_mod.leftovers(target.path)]
    held = sum(size for _path, size in found)
    if not held:
        return ""
    names = ", ".join(Path(path).name for path, _size in found[:3]) + (", ..." if len(found) > 3 else "")
    covers = "all of the shortfall" if held >= shortfall else f"{format_bytes(held)} of the shortfall"
    return (
        f" (short by {format_bytes(shortfall)}; mountbench's own leftover scratch directories there hold "
        f"{format_bytes(held)}, {covers}: {names}; delete them if no mountbench is working there)"
    )


def sweep_leftovers(targets: Sequence[Target], run_id: str | None = None) -> list[str]:
    """Remove the scratch directories that killed runs and probes left in the targets (never
    ``run_id``'s own, which a resume reuses); one notice per directory removed."""
    own = targets_mod.scratch_name(run_id) if run_id else None
    removed = [line for target in targets for line in scratch_mod.sweep_dead(target.path, exclude=own)]
    return [f"removed a leftover scratch directory: {line}" for line in removed]


def _shrink_hint(workloads: Sequence[Workload], runner_for: Callable[[Workload], Runner]) -> str:
    """What shrinks the space the run needs, from the runners that need some (--size scales fio
    jobs but not trees; --tree tiny is not suggested when it is what was given)."""
    needing = [w for w in workloads if runner_for(w).space_needed(w)[1]]
    hints = [runner_for(workload).shrink_hint(needing) for workload in needing]
    return "; ".join(dict.fromkeys(hints)) or "drop workloads with --only"


LOOK_MARGIN = 1.1  # a round after the planned ones costs this much more than one of them (its look's analysis)
BUDGET_NOTICE = "the budget of "  # how every notice of what the budget did begins (one of them is said)


class _Clock:
    """Where the run is in its plan and its budget: counts for progress, the ETA, and
    whether a sample still fits before the deadline."""

    def __init__(self, budget: float | None, *, total: int, done: int) -> None:
        self.began = time.monotonic()
        self.deadline = self.began + budget if budget is not None else None
        self.budget = budget
        self.total = total
        self.done = done
        self.spent = 0.0
        self.spent_estimate = 0.0

    def record(self, wall_s: float, estimate_s: float, ok: bool = True) -> None:
        """A failed sample's time is no pace for the others (issue 37): counted as done, not in the factor."""
        self.done += 1
        if not ok:
            return
        self.spent += wall_s
        self.spent_estimate += estimate_s

    def factor(self) -> float:
        """How the samples so far compared with their estimates (0.5x–3x)."""
        if self.spent_estimate > 0 and self.spent > 0:
            return min(3.0, max(0.5, self.spent / self.spent_estimate))
        return 1.0

    def fits(self, estimate_s: float) -> bool:
        return self.deadline is None or time.monotonic() + estimate_s * self.factor() <= self.deadline

    def fitting(self, pairs: list, estimate: Callable[[object], float]) -> list:
        """The leading pairs whose samples fit in the time left."""
        if self.deadline is None:
            return pairs
        left = self.deadline - time.monotonic()
        kept = []
        for pair in pairs:
            cost = estimate(pair) * self.factor()
            if cost <= left:
                kept.append(pair)
                left -= cost
        return kept

    def eta(self, items: Sequence[PlanItem], after_s: float = 0.0, keep_all: bool = False) -> float:
        """Seconds left, at most: ``items`` at the pace so far, then ``after_s`` (the rounds an adaptive run may
        still add, each at most: Session.rounds_at_most), and never past the deadline, except for the items a
        default budget takes all of (``keep_all``). Issue 48: under --until the ETA said only what the current
        round had left ('ETA 1 s' coming and going while the run went on for minutes)."""
        mine = remaining_estimate(items, self.spent, self.spent_estimate)
        left = mine + after_s
        if self.deadline is not None:
            left = min(left, max(0.0, self.deadline - time.monotonic()))
            if keep_all:
                left = max(left, mine)
        return left

    def ran_out_notice(self, not_taken: int, of: int) -> str:
        """Planned samples the budget left out: said only when some were."""
        return (
            f"the budget of {format_seconds(self.budget or 0)} ran out: {not_taken} of the {of} planned samples "
            "did not fit and were not taken"
        )


class Session:
    """One run from readiness to cleanup."""

    def __init__(
        self,
        config: RunConfig,
        targets: Sequence[Target],
        workloads: Sequence[Workload],
        runners: dict[str, Runner],
        store: Store,
        events: Events | None = None,
        run_id: str | None = None,
        on_saved: Callable[[str], None] | None = None,
        watch: SampleWatch | None = None,
    ) -> None:
        self.config = config
        self.watch = watch  # --watch: host processes measured around each timed part (watch.py)
        self.targets = tuple(targets)
        self.workloads = tuple(workloads)
        self.runners = runners
        self.store = store
        self.events = events or NullEvents()
        self.run_id = run_id or new_run_id()
        self.on_saved = on_saved
        self.export_failed = ""  # why the export after each sample stopped ('' while it works)
        self.contexts: dict[str, TargetContext] = {}
        self.scratch_dirs: list[Path] = []  # created by this session: the only ones it removes
        self.notices: list[str] = []  # said to the user after the run
        self.locks: list[int] = []  # flock fds on the scratch markers, held while working
        self.prepared: dict[tuple[str, str], Prepared] = {}
        self.scratch_ids: dict[str, tuple[int, int] | None] = {}  # (st_dev, st_ino) of each scratch dir
        self.workdir: Path | None = None
        self.settings: RunSettings | None = None

    def runner_for(self, workload: Workload) -> Runner:
        return self.runners[workload.kind]

    # --- readiness -------------------------------------------------------------

    def ready_targets(self) -> None:
        """Create each scratch directory and inspect the target; undo all on failure."""
        try:
            for target in self.targets:
                scratch = targets_mod.create_scratch(target, self.run_id)
                try:
                    lock = targets_mod.lock_scratch(scratch, self.run_id)
                except TargetError:
                    # another live process owns this run: touch none of its directories
                    self.scratch_dirs.clear()
                    raise
                if lock is not None:
                    self.locks.append(lock)
                self.scratch_dirs.append(scratch)
                self.scratch_ids[target.label] = _identity(scratch)
                info = targets_mod.inspect_target(target, scratch)
                info = dataclasses.replace(info, run_level=self._run_level(info))
                self.contexts[target.label] = TargetContext(target, info, scratch)
            for runner in self.runners.values():  # checks that need the scratch directories
                runner.ready(list(self.contexts.values()))
        except BaseException:
            self._release_locks()
            self.remove_scratch()  # even with --keep: nothing ran, nothing worth keeping
            raise

    def _run_level(self, info: TargetInfo) -> RunLevel:
        """How much this target's results move between runs (analysis/runlevel.py): its filesystem's own
        calibration (mountbench calibrate) when the store has one, else its filesystem type's default."""
        found = self.store.calibration_for(runlevel.calibration_key(info))
        return found if found is not None else runlevel.default_for(info.fstype)

    def prepare_all(self) -> None:
        swept = scratch_mod.sweep_workdirs()  # job-file folders of killed runs (never a target's scratch)
        if swept:
            self.notices.append(f"removed job-file folders left by killed runs: {', '.join(map(str, swept))}")
        self.workdir = scratch_mod.create_workdir(self.run_id)
        self.settings = RunSettings(ram_bytes=psutil.virtual_memory().total, workdir=self.workdir)
        self.prepared = prepare_items(self.contexts, self.workloads, self.runners, self.settings)

    def plan(self) -> list[PlanItem]:
        return plan_items(self.config, self.targets, self.workloads, self.prepared, self.runners, self.contexts)

    # --- the loop ----------------------------------------------------------------

    def execute(self, *, resume: bool = False, command: str = "", host: dict[str, Any] | None = None) -> str:
        """Run every pending plan item; return the final status."""
        plan = self.plan()
        if resume:
            done = self.store.done_items(self.run_id)
            for label, ctx in self.contexts.items():
                self.store.update_target_info(self.run_id, label, ctx.info)
            self.store.set_status(self.run_id, "running")
        else:
            done = set()
            self.store.create_run(
                self.run_id,
                command,
                self.config,
                host or {},
                [TargetRecord(ctx.target, ctx.info) for ctx in self.contexts.values()],
                list(self.workloads),
            )
        pending = pending_items(plan, done)
        self.events.on_start(self.run_id, plan, pending)
        status = "interrupted"
        self._clock = _Clock(self.config.budget, total=len(plan), done=len(plan) - len(pending))
        try:
            self._run_items(pending, planned=True, after=self._after_planned(pending))
            if self.config.until is not None:
                self._adaptive_rounds()
            status = self._final_status()
        except KeyboardInterrupt:
            raise Interrupted(self.run_id) from None
        finally:
            try:
                # a store that cannot be written: with this process gone the run reads as interrupted
                with contextlib.suppress(StoreFull):
                    self.store.set_status(self.run_id, status)
                self._saved()  # the store still answers with the status, so the JSON export says it
            finally:
                self.finish()
                self.events.on_finish(self.run_id, status)
        return status

    def _final_status(self) -> str:
        """'failed' when the run stored samples and every one of them failed, else 'complete'."""
        stored, ok = self.store.sample_counts(self.run_id)
        return "failed" if stored and not ok else "complete"

    def rounds_at_most(self) -> int:
        """The most rounds a cell of this run gets: its last look under --until or a budget (the rounds the
        budget fits, once the planned rounds fixed them; --max-repeat before), else its --repeat."""
        if self.config.until is None:
            return self.config.repeat
        return stats.planned_looks(self.config)[-1]

    def _run_items(
        self, items: Sequence[PlanItem], *, planned: bool = False, after: Callable[[], float] = lambda: 0.0
    ) -> bool:
        """Take and store each item; False when the budget ran out before all were taken. The
        planned rounds under a default budget are all taken (the budget then bounds only the
        rounds added for undecided comparisons): a default run never leaves a cell with 1-2 samples.
        ``after``: what the rounds that may follow these items take at most (the ETA counts them)."""
        clock = self._clock
        keep_all = planned and self.config.default_budget
        for index, item in enumerate(items):
            # the budget's pace is the timed parts' (engine/budget.py sizes them), not a layout's
            # bound (with_layouts: at a slow mount's pace, that would refuse a --budget 60s run's first sample)
            timed_s = item.estimate_s - layout_of(item)
            if not keep_all and not clock.fits(timed_s):
                left = [i for i in items[index:] if not i.warmup]
                if planned and left:
                    self._budget_notice(clock.ran_out_notice(len(left), sum(not i.warmup for i in items)))
                elif left:
                    self._budget_notice(self._undecided_notice(f"during round {item.round + 1}"))
                return False
            eta = clock.eta(items[index:], after(), keep_all)
            start = functools.partial(self.events.on_sample_start, item, clock.done, clock.total, eta)
            began = time.monotonic()  # the clock counts the untimed setup too (a layout per round)
            sample = self._take(item, start)
            self.events.on_sample_done(item, sample)
            if not item.warmup:  # a warm-up's numbers are thrown away, as hyperfine's are
                self.store.add_sample(self.run_id, sample)
                self._saved()
            elif not sample.ok:  # not stored, so said at the end; the measured rounds record their own
                self.notices.append(f"{item.name} of {item.workload} on {item.target} failed: {sample.error}")
            clock.record(time.monotonic() - began, timed_s, sample.ok)
        return True

    def _adaptive_rounds(self) -> None:
        """--until/--budget: after the planned rounds, more rounds for the comparisons that are
        not decided yet (analysis/sequential.py), interleaved and seeded like the first, until all are
        decided, --max-repeat is reached or the budget runs out."""
        until = self.config.until
        assert until is not None
        baseline = self.config.baseline
        estimates = {key: p.estimate_s for key, p in self.prepared.items()}
        laid = {(target, p.workload.description.space_group) for (target, _), p in self.prepared.items()}
        if not self.config.looks:  # fixed before the first look, from the pace alone (no result is read)
            self._fix_looks()
        last = stats.planned_looks(self.config)[-1]
        while True:
            run = self.store.load_run(self.run_id)
            measured = [s.round for s in run.samples]
            next_round = max(measured, default=-1) + 1
            decisions = sequential.decide(run, until)
            if next_round >= last:
                self._last_look_notice(decisions, last)
                return
            if self._clock.deadline is None:
                pairs = sequential.pairs_to_sample(decisions, baseline)
            else:  # the comparisons nearest a decision first, each with its baseline, as many as fit
                ranked = sorted(decisions, key=lambda d: d.distance)
                pairs = self._clock.fitting(
                    [sequential.pairs_to_sample([d], baseline) for d in ranked],
                    lambda group: sum(estimates.get(pair, 0.0) for pair in group),
                )
                pairs = list(dict.fromkeys(pair for group in pairs for pair in group))
            if not pairs:
                if any(d.state == sequential.UNDECIDED for d in decisions):
                    self._budget_notice(self._undecided_notice(f"after round {next_round}"))
                return
            items = extra_round(next_round, pairs, self.config.seed, estimates)
            items = with_layouts(items, self.prepared, self.runners, laid, layout_paces(self.contexts))
            self._clock.total += len(items)
            later = last - next_round - 1  # rounds that may follow this one, each at most this one's pairs
            per_round = sum(estimates.get(pair, 0.0) for pair in pairs)
            if not self._run_items(items, after=lambda n=later, cost=per_round: n * cost * self._clock.factor()):
                return

    def _last_look_notice(self, decisions: Sequence[sequential.Decision], last: int) -> None:
        """At the last look a budget fits (before --max-repeat), what is still undecided, said once."""
        open_ = sum(1 for d in decisions if d.state == sequential.UNDECIDED)
        if open_ and self.config.budget is not None and last < self.config.max_repeat:
            self._budget_notice(
                f"the budget of {format_seconds(self.config.budget)} fits {last} rounds: {open_} comparison(s) are "
                "still undecided at that last look (a larger --budget gives them more rounds)"
            )

    def _undecided_notice(self, when: str) -> str:
        """The budget ended the added rounds ``when``: how many comparisons it left undecided."""
        run = self.store.load_run(self.run_id)
        open_ = sum(1 for d in sequential.decide(run, self.config.until or 0.05) if d.state == sequential.UNDECIDED)
        return (
            f"the budget of {format_seconds(self.config.budget or 0)} ran out {when}: {open_} comparison(s) are still "
            "undecided (a larger --budget gives them more rounds)"
        )

    def _budget_notice(self, notice: str) -> None:
        """What the budget did to the run, said once: a later notice of it replaces an earlier one (issue 48:
        'ran out' printed twice per run, and when every planned sample had been taken)."""
        self.notices = [n for n in self.notices if not n.startswith(BUDGET_NOTICE)]
        self.notices.append(notice)

    def _after_planned(self, pending: Sequence[PlanItem]) -> Callable[[], float]:
        """What an adaptive run's added rounds take at most, after its planned ones: each of the rounds up to
        rounds_at_most, every pair in it, at the pace so far; nothing for a fixed run."""
        if self.config.until is None:
            return lambda: 0.0
        measured = [item for item in pending if not item.warmup]
        rounds = max(1, len({item.round for item in measured}))
        per_round = sum(item.estimate_s - layout_of(item) for item in measured) / rounds
        return lambda: max(0, self.rounds_at_most() - self.config.repeat) * per_round * self._clock.factor()

    def _fix_looks(self) -> None:
        """The looks of this adaptive run (analysis/stats.look_share spends the error over them), fixed now,
        after the planned rounds and before any result is read: with a budget, up to the rounds that fit
        in what is left of it at the planned rounds' pace (so that the last look the run can reach spends
        what is left of the error), else up to --max-repeat."""
        config = self.config
        last = config.max_repeat
        rounds = max(1, config.repeat + config.warmup)
        clock = self._clock
        if clock.deadline is not None and clock.budget is not None:
            # the planned rounds' own pace, as the wall clock saw it (layouts and the store's writes included)
            per_round = max(clock.spent, time.monotonic() - clock.began) / rounds
            per_round *= LOOK_MARGIN  # and each look's analysis, which the planned rounds did not have
            left = max(0.0, clock.deadline - time.monotonic())
            if per_round > 0:
                last = max(config.repeat, min(config.max_repeat, config.repeat + int(left // per_round)))
        self.config = dataclasses.replace(config, looks=stats.look_points(config.repeat, last))
        self.store.update_config(self.run_id, self.config)

    def _notice_once(self, notice: str) -> None:
        if notice not in self.notices:
            self.notices.append(notice)

    def _saved(self) -> None:
        """Re-export after every sample; an export that fails is a warning, not the end of the run."""
        if self.on_saved is None:
            return
        try:
            self.on_saved(self.run_id)
        except MountbenchError as exc:
            self.on_saved = None
            self.export_failed = str(exc)
            self.notices.append(f"the JSON export stopped: {exc}")

    def _take(self, item: PlanItem, on_timed_start: Callable[[], None]) -> Sample:
        """Untimed setup, then caches, then the timed part bracketed by the start event."""
        ctx = self.contexts[item.target]
        prepared = self.prepared[(item.target, item.workload)]
        assert self.settings is not None
        runner = self.runner_for(prepared.workload)
        started = time.time()
        t0 = time.monotonic()
        cache_action, cache_caveats = "", ()
        moved = self._detached_note(ctx)
        if moved:  # never let an engine write under the mount point (fio creates a missing directory=)
            return Sample(item.target, item.workload, item.round, False, {}, prepared.caveats,
                          error=f"not run{moved}", started_at=started)  # fmt: skip
        try:
            runner.setup(prepared, ctx, self.settings)
            cache_action, cache_caveats = caches.before_sample(
                self.config.drop_caches, prepared.buffered, prepared.uncached_why,
                runner.cached_files(prepared, ctx), ctx.scratch,
            )  # fmt: skip
            on_timed_start()
            started = time.time()
            t0 = time.monotonic()
            outcome = self._timed(runner, prepared, ctx)
            gone = self._detached_note(ctx)
            if gone:  # the target changed while the sample ran: what it measured is not this target
                raise WorkloadFailed(f"the sample ran while the target changed{gone}")
        except WorkloadFailed as failure:
            return Sample(
                target=item.target,
                workload=item.workload,
                round=item.round,
                ok=False,
                metrics={},
                caveats=prepared.caveats + cache_caveats,
                error=_with_note(str(failure), self._detached_note(ctx)),  # it may have gone during the sample
                started_at=started,
                wall_s=time.monotonic() - t0,
                cache_action=cache_action,
                raw=failure.raw,
                clients=failure.clients,
            )
        return Sample(
            target=item.target,
            workload=item.workload,
            round=item.round,
            ok=True,
            metrics=outcome.metrics,
            caveats=prepared.caveats + cache_caveats + outcome.caveats,
            started_at=started,
            wall_s=time.monotonic() - t0,
            cache_action=cache_action,
            raw=outcome.raw,
            series=outcome.series,
            clients=outcome.clients,
        )

    def _detached_note(self, ctx: TargetContext) -> str:
        """When the scratch directory's path no longer leads to the directory this run made
        (the target was unmounted, e.g. lazily with umount -l), say where its data is."""
        made = self.scratch_ids.get(ctx.target.label)
        now = _identity(ctx.scratch)
        if made is None or now == made:
            return ""
        mount = targets_mod.find_mount(Path(ctx.target.path))
        note = (
            f"; the target is no longer mounted at {ctx.target.path} as this run found it (now {mount.fstype} from "
            f"{mount.source} is there; never mixed with its samples): the scratch directory "
            f"{ctx.scratch.name} and its data stay inside the unmounted filesystem until it is released; "
            "mount it again and delete that directory"
        )
        if now is not None:  # an engine in flight recreated the path on the filesystem underneath
            note += f"; also delete {ctx.scratch}, made under the mount point by the sample that was running"
        return note

    def _timed(self, runner: Runner, prepared: Prepared, ctx: TargetContext) -> Outcome:
        """The timed part; with --watch, the watched host processes are measured around
        exactly it and their cost (host.*) joins the sample's metrics."""
        assert self.settings is not None
        noise = NoiseWindow.open()  # what else the machine did meanwhile (host/noise.py)
        window = self.watch.start(ctx.target.label) if self.watch is not None else None
        if window is None:
            outcome = runner.run(prepared, ctx, self.settings)
        else:
            try:
                outcome = runner.run(prepared, ctx, self.settings)
            finally:
                measured = window.stop()
            outcome = measured.applied_to(outcome)
        return dataclasses.replace(outcome, metrics={**outcome.metrics, **noise.close()})

    # --- cleanup -----------------------------------------------------------------

    def finish(self) -> None:
        for ctx in self.contexts.values():
            for runner in self.runners.values():
                runner.cleanup(ctx)
        for runner in self.runners.values():  # stop what the runner started elsewhere
            self.notices += runner.close()
        if self.config.keep:  # marked while still locked: no sweep by a later run may take it
            self._mark_kept()
        self._release_locks()
        if not self.config.keep:
            self.remove_scratch()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _mark_kept(self) -> None:
        for scratch in self.scratch_dirs:
            if scratch_mod.mark_kept(scratch):
                self._notice_once(f"kept {scratch} (--keep); delete it when done, no later run will")
            else:
                self._notice_once(f"could not mark {scratch} as kept (--keep): a later run may remove it")

    def _release_locks(self) -> None:
        for fd in self.locks:
            with contextlib.suppress(OSError):  # the fd is closed anyway; a FUSE flush may fail (rclone: EPERM)
                os.close(fd)
        self.locks.clear()

    def remove_scratch(self) -> None:
        for scratch in self.scratch_dirs:
            try:
                removed = targets_mod.remove_scratch(scratch, self.run_id)
            except OSError as exc:
                removed, why = False, str(exc)
            else:
                why = "some entries could not be deleted"
            if not removed and scratch.exists():
                self.notices.append(f"could not remove {scratch} ({why}); delete it by hand")
        self.scratch_dirs = [s for s in self.scratch_dirs if s.exists()]


# --- planning, shared by a real run and --dry-run ----------------------------------------------


def prepare_items(
    contexts: Mapping[str, TargetContext],
    workloads: Sequence[Workload],
    runners: Mapping[str, Runner],
    settings: RunSettings,
) -> dict[tuple[str, str], Prepared]:
    """Every workload made concrete for every target: (target label, workload name) -> Prepared."""
    return {
        (label, workload.name): runners[workload.kind].prepare(workload, ctx, settings)
        for label, ctx in contexts.items()
        for workload in workloads
    }


def plan_items(
    config: RunConfig,
    targets: Sequence[Target],
    workloads: Sequence[Workload],
    prepared: Mapping[tuple[str, str], Prepared],
    runners: Mapping[str, Runner],
    contexts: Mapping[str, TargetContext],
) -> list[PlanItem]:
    estimates = {key: p.estimate_s for key, p in prepared.items()}
    plan = build_plan(
        [t.label for t in targets],
        [w.name for w in workloads],
        config.repeat,
        config.seed,
        estimates,
        config.warmup,
    )
    return with_layouts(plan, prepared, runners, set(), layout_paces(contexts))


def layout_paces(contexts: Mapping[str, TargetContext]) -> dict[str, LayoutPace]:
    """Target label -> the pace the plan assumes for laying out working files there (its filesystem type)."""
    return {label: layout_pace(ctx.info.fstype) for label, ctx in contexts.items()}


def with_layouts(
    items: Sequence[PlanItem],
    prepared: Mapping[tuple[str, str], Prepared],
    runners: Mapping[str, Runner],
    laid: set[tuple[str, str]],
    paces: Mapping[str, LayoutPace],
) -> list[PlanItem]:
    """``items`` with each sample's layout of working files (Runner.layout_bytes: fio's per-round
    files for the first sample of their group in each round) added to its estimate at its target's
    pace (``paces``, engine/plan.py layout_pace), so that the plan's estimate is an upper bound on a
    slow mount (issue 37: the QEMU lab's first line said "at most 302 s of I/O" for 32 minutes) and
    seconds, not minutes, on a local one. ``laid``: the (target, file group) pairs laid out earlier in
    the run; those of ``items`` are added to it."""
    found = []
    this_round: set[tuple[str, str]] = set()
    current = None
    for item in items:
        if item.round != current:
            current, this_round = item.round, set()
        made = prepared.get((item.target, item.workload))
        if made is None:
            found.append(item)
            continue
        group = (item.target, made.workload.description.space_group)
        size = runners[made.workload.kind].layout_bytes(made, group not in this_round, group not in laid)
        this_round.add(group)
        laid.add(group)
        if size:
            pace = paces.get(item.target, SLOW_PACE)
            layout = size / pace.rate_bps
            fields = {field.name: getattr(item, field.name) for field in dataclasses.fields(item)}
            item = LaysOut(**{**fields, "estimate_s": item.estimate_s + layout, "layout_s": layout, "pace": pace})
        found.append(item)
    return found


@dataclass(frozen=True)
class DryRun:
    """What a run would do, worked out without writing anything (--dry-run)."""

    run_id: str
    plan: list[PlanItem]
    prepared: dict[tuple[str, str], Prepared]
    scratch_names: dict[str, Path]  # target label -> the scratch directory it would get


def plan_dry_run(
    config: RunConfig, targets: Sequence[Target], workloads: Sequence[Workload], runners: Mapping[str, Runner]
) -> DryRun:
    """The plan and the exact job files a run would use. Targets are inspected without
    writing (O_DIRECT is not probed, so jobs show as they run where it is accepted)."""
    run_id = new_run_id()
    contexts = {t.label: targets_mod.imagine_context(t, run_id) for t in targets}
    settings = RunSettings(
        ram_bytes=psutil.virtual_memory().total, workdir=Path(tempfile.gettempdir()) / f"mountbench-{run_id}"
    )
    prepared = prepare_items(contexts, workloads, runners, settings)
    return DryRun(
        run_id=run_id,
        plan=plan_items(config, targets, workloads, prepared, runners, contexts),
        prepared=prepared,
        scratch_names={label: ctx.scratch for label, ctx in contexts.items()},
    )


def _with_note(error: str, note: str) -> str:
    return error if not note or note in error else error + note


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def run_to_end(session: Session, *, command: str, host: dict[str, Any], resume: bool = False) -> str:
    """Ready the targets, lay out the workloads and take every sample: a session from start to
    end, as `run` and the labs that run on this machine do it. Whatever stops it, the run's
    scratch directories go (``finish``) before the error goes on. The run's final status."""
    try:
        session.ready_targets()
        session.prepare_all()
        return session.execute(command=command, host=host, resume=resume)
    except BaseException:
        session.finish()  # idempotent: only scratch directories carrying this run's marker go
        raise
