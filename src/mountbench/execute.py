"""Walk the plan: get targets ready, take each sample, store it at once, clean up.

This is the only module that ties runners, store and caches together. It
reports progress through an Events object and never prints.
"""

from __future__ import annotations

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

from mountbench import caches
from mountbench import targets as targets_mod
from mountbench.errors import MountbenchError, TargetError
from mountbench.model import PlanItem, RunConfig, Sample, Target, TargetRecord, Workload
from mountbench.plan import build_plan, pending_items, remaining_estimate
from mountbench.runners.base import Outcome, Prepared, Runner, RunSettings, TargetContext, WorkloadFailed
from mountbench.store import Store
from mountbench.units import format_bytes
from mountbench.watch import SampleWatch


class Interrupted(MountbenchError):
    """Ctrl-C or SIGTERM: finished samples are kept and the run can be resumed."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"interrupted; finished samples are kept. Resume with: mountbench run --resume {run_id}")
        self.run_id = run_id


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
    per_target: dict[str, int] = {}
    unknown = []
    for workload in workloads:
        if runner_for(workload).space_needed(workload)[1] is None:
            unknown.append(workload.name)
    for target in targets:
        groups: dict[str, int] = defaultdict(int)
        for workload in workloads:
            group, needed = runner_for(workload).space_needed(workload)
            if needed is not None:
                groups[group] = max(groups[group], needed)
        per_target[target.label] = sum(groups.values())
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
        if needed > usage.free:
            where = f"target {labels}" if len(sharing) == 1 else f"the filesystem shared by targets {labels}"
            raise TargetError(
                f"not enough space on {where}: the planned working set needs {format_bytes(needed)}, "
                f"{format_bytes(usage.free)} free; pass --size to shrink it or free space"
            )
    return notices


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
        self.contexts: dict[str, TargetContext] = {}
        self.scratch_dirs: list[Path] = []  # created by this session: the only ones it removes
        self.notices: list[str] = []  # said to the user after the run
        self.locks: list[int] = []  # flock fds on the scratch markers, held while working
        self.prepared: dict[tuple[str, str], Prepared] = {}
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
                info = targets_mod.inspect_target(target, scratch)
                self.contexts[target.label] = TargetContext(target, info, scratch)
        except BaseException:
            self._release_locks()
            self.remove_scratch()  # even with --keep: nothing ran, nothing worth keeping
            raise

    def prepare_all(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix=f"mountbench-{self.run_id}-"))
        self.settings = RunSettings(ram_bytes=psutil.virtual_memory().total, workdir=self.workdir)
        self.prepared = prepare_items(self.contexts, self.workloads, self.runners, self.settings)

    def plan(self) -> list[PlanItem]:
        return plan_items(self.config, self.targets, self.workloads, self.prepared)

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
        spent = spent_estimate = 0.0
        try:
            for index, item in enumerate(pending):
                eta = remaining_estimate(pending[index:], spent, spent_estimate)
                done = len(plan) - len(pending) + index
                sample = self._take(item, functools.partial(self.events.on_sample_start, item, done, len(plan), eta))
                self.events.on_sample_done(item, sample)
                if not item.warmup:  # a warm-up's numbers are thrown away, as hyperfine's are
                    self.store.add_sample(self.run_id, sample)
                    self._saved()
                elif not sample.ok:  # not stored, so said at the end; the measured rounds record their own
                    self.notices.append(f"{item.name} of {item.workload} on {item.target} failed: {sample.error}")
                spent += sample.wall_s
                spent_estimate += item.estimate_s
            status = "complete"
        except KeyboardInterrupt:
            raise Interrupted(self.run_id) from None
        finally:
            try:
                self.store.set_status(self.run_id, status)
                self._saved()
            finally:
                self.finish()
                self.events.on_finish(self.run_id, status)
        return status

    def _saved(self) -> None:
        """Re-export after every sample; an export that fails is a warning, not the end of the run."""
        if self.on_saved is None:
            return
        try:
            self.on_saved(self.run_id)
        except MountbenchError as exc:
            self.on_saved = None
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
        try:
            runner.setup(prepared, ctx, self.settings)
            cache_action, cache_caveats = caches.before_sample(
                self.config.drop_caches, prepared.buffered, prepared.uncached_why
            )
            on_timed_start()
            started = time.time()
            t0 = time.monotonic()
            outcome = self._timed(runner, prepared, ctx)
        except WorkloadFailed as failure:
            return Sample(
                target=item.target,
                workload=item.workload,
                round=item.round,
                ok=False,
                metrics={},
                caveats=prepared.caveats + cache_caveats,
                error=str(failure),
                started_at=started,
                wall_s=time.monotonic() - t0,
                cache_action=cache_action,
                raw=failure.raw,
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
        )

    def _timed(self, runner: Runner, prepared: Prepared, ctx: TargetContext) -> Outcome:
        """The timed part; with --watch, the watched host processes are measured around
        exactly it and their cost (host.*) joins the sample's metrics."""
        assert self.settings is not None
        if self.watch is None:
            return runner.run(prepared, ctx, self.settings)
        window = self.watch.start()
        try:
            outcome = runner.run(prepared, ctx, self.settings)
        finally:
            measured = window.stop()
        return measured.applied_to(outcome)

    # --- cleanup -----------------------------------------------------------------

    def finish(self) -> None:
        for ctx in self.contexts.values():
            for runner in self.runners.values():
                runner.cleanup(ctx)
        self._release_locks()
        if not self.config.keep:
            self.remove_scratch()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _release_locks(self) -> None:
        for fd in self.locks:
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
) -> list[PlanItem]:
    estimates = {key: p.estimate_s for key, p in prepared.items()}
    return build_plan(
        [t.label for t in targets],
        [w.name for w in workloads],
        config.repeat,
        config.seed,
        estimates,
        config.warmup,
    )


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
        plan=plan_items(config, targets, workloads, prepared),
        prepared=prepared,
        scratch_names={label: ctx.scratch for label, ctx in contexts.items()},
    )
