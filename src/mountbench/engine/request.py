"""From what the user asked (RunOptions and target arguments) or a stored run (for
--resume) to everything a run needs: its config, targets, workloads and runners,
each checked before anything is written."""

from __future__ import annotations

import dataclasses
import random
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mountbench.clients.addresses import parse_clients
from mountbench.engine import workloads as workloads_mod
from mountbench.engine.budget import default_budget, plan_runtime, until_runtime
from mountbench.errors import TargetError, UsageError
from mountbench.fio.binary import FioInfo
from mountbench.host import facts as hostfacts
from mountbench.host import targets as targets_mod
from mountbench.host.watch import SampleWatch, resolve_watch
from mountbench.kinds import RunnerSetup, make_runners, on_clients, resolved_options
from mountbench.kinds.runner import Runner
from mountbench.model import RunConfig, RunData, RunOptions, Target, Workload


@dataclass(frozen=True)
class RunRequest:
    config: RunConfig
    targets: tuple[Target, ...]
    workloads: tuple[Workload, ...]
    runners: dict[str, Runner]
    notes: tuple[str, ...] = ()  # what the user should know before the run starts
    watch: SampleWatch | None = None  # --watch: host processes measured around every sample

    def runner_for(self, workload: Workload) -> Runner:
        return self.runners[workload.kind]


def resolve(options: RunOptions, target_args: Sequence[str], fio: FioInfo) -> RunRequest:
    """Targets, workloads and the resolved config of a new run; raises UsageError/TargetError."""
    default_set = not target_args
    if options.clients and default_set:
        raise UsageError("--client needs the shared directory as a target, e.g. mountbench run --client A --client B "
                         "share=/mnt/share (the path as the clients and this machine see it)")  # fmt: skip
    targets = targets_mod.resolve_targets(list(target_args) or targets_mod.default_targets())
    workloads = workloads_mod.from_options(options)
    notes: tuple[str, ...] = ()
    if options.default_budget and options.budget is not None:
        options = dataclasses.replace(options, budget=default_budget(options.budget, len(targets)))
    if options.budget is not None and options.runtime is None:
        rounds = options.repeat + options.warmup
        fitted = plan_runtime(workloads, len(targets), rounds, options.budget)
        if fitted.runtime_s is not None:
            options = dataclasses.replace(options, runtime=fitted.runtime_s)
            workloads = workloads_mod.from_options(options)
        notes = (fitted.note,) if fitted.note else ()
    elif options.until is not None and options.runtime is None and not (options.job_files or options.sweeps):
        shorter = until_runtime(workloads)
        if shorter is not None:
            options = dataclasses.replace(options, runtime=shorter)
            workloads = workloads_mod.from_options(options)
            notes = (f"--until: every fio job runs {shorter:g} s, so that the rounds it adds come quickly (a round, "
                     "not a longer sample, is what replicates); --runtime sets another",)  # fmt: skip
    if options.clients:
        workloads = on_clients(workloads, parse_clients(options.clients), options.client_counts)
    runners = make_runners({w.kind for w in workloads}, RunnerSetup(fio, options.kind_options))
    check_workloads(workloads, runners)
    labels = [t.label for t in targets]
    baseline = options.baseline or labels[0]
    if baseline not in labels:
        raise UsageError(f"--baseline {baseline!r} is not a target label; choose one of: {', '.join(labels)}")
    seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**31)
    config = RunConfig.from_options(_as_recorded(options), seed=seed, baseline=baseline, default_targets=default_set)
    watch = resolve_watch(options.watch)
    if watch is not None:
        watch.check_targets([t.label for t in targets])
    return RunRequest(config, tuple(targets), tuple(workloads), runners, notes, watch)


def _as_recorded(options: RunOptions) -> RunOptions:
    """Record the preset that runs when none is named (workloads.chosen_presets), and every kind's
    option the run uses (a default as well as one given)."""
    chosen = workloads_mod.chosen_presets(options.presets, options.job_files, options.kind_options)
    return dataclasses.replace(options, presets=chosen, kind_options=resolved_options(options.kind_options))


def from_stored(run: RunData, fio: FioInfo, relocated: Mapping[str, Path] | None = None) -> RunRequest:
    """What a stored, unfinished run needs to be resumed: its own targets, workloads and
    config, and what its runners recorded in its host facts (fio: the clock its jobs used).

    ``relocated``: labels of targets a lab made anew at another path (cloudlab's mounts, whose
    lab checked they are made as before); every other target must still be the storage it was."""
    relocated = relocated or {}
    if run.origin:
        raise UsageError(
            f"run {run.id} was imported ({run.origin}) and cannot be resumed: an imported run is a record, "
            "never a plan, and nothing stored in it is run; start a new run with its targets and options"
        )
    elsewhere = hostfacts.recorded_elsewhere(run.host)
    if elsewhere:
        raise UsageError(
            f"run {run.id} cannot be resumed here: it was recorded on {elsewhere}, not on this machine "
            f"({socket.gethostname()}), and its samples would be mixed with this machine's; resume it there, "
            "or start a new run here"
        )
    setup = RunnerSetup(fio, run.config.kind_options, resumed_host=run.host)
    runners = make_runners({w.kind for w in run.workloads}, setup)
    check_workloads(list(run.workloads), runners)
    targets = tuple(
        dataclasses.replace(r.target, path=str(relocated[r.target.label])) if r.target.label in relocated else r.target
        for r in run.targets
    )
    for record in run.targets:
        if record.target.label in relocated:
            continue
        targets_mod.resolve_path(record.target.path)
        scratch = Path(record.target.path) / targets_mod.scratch_name(run.id)
        change = targets_mod.target_change(record.target, record.info, scratch)
        if change:
            raise TargetError(
                f"run {run.id} cannot be resumed: target {record.target.label} ({record.target.path}) is no longer "
                f"the storage it measured ({change}); its samples would be mixed with another filesystem's. "
                "Mount it again as it was, then resume, or start a new run"
            )
    watch = resolve_watch(run.config.watch)
    return RunRequest(run.config, targets, run.workloads, runners, watch=watch)


def check_workloads(workloads: Sequence[Workload], runners: dict[str, Runner]) -> None:
    """Each kind's runner checks its own workloads (fio --parse-only, tools present, ...)."""
    unknown = {w.kind for w in workloads} - set(runners)
    if unknown:
        raise UsageError(f"no runner for workload kind(s) {', '.join(sorted(unknown))}; upgrade mountbench")
    for kind, runner in runners.items():
        runner.check([w for w in workloads if w.kind == kind])
