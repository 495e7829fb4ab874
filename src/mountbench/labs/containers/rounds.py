"""`mountbench containers`, start to end: bring the lab up, probe every mount from inside the
container, then run the workloads round by round, alternately on the host (the bind mount's
directory, the baseline) and in the container (every mount type, interleaved by the
container's own mountbench), and store the rounds as one run as they come.

Each round is one `mountbench run --repeat 1` on each side, delegated (labs/delegated.py) with the
same options whole, as the QEMU lab hands them to its guest; which side goes first alternates, so
drift over the run hits both alike. The runtime and working-set size are fixed before the first
round (no --budget or --until: the two sides must run the same jobs). The run is stored once the
first round has finished on both sides, then each side's round as it ends: a run stopped or killed
is resumed on a lab made again (:func:`resume_containers`), which takes the sides' rounds not taken.
"""

from __future__ import annotations

import dataclasses
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mountbench.engine import workloads
from mountbench.errors import ExitCode, TargetError, UsageError
from mountbench.host import process as procs
from mountbench.kinds import preset_alone
from mountbench.labfacts import HOST_TARGET, ContainerLabFacts, ContainerMount
from mountbench.labs.containers.caveats import mount_caveats
from mountbench.labs.containers.containerlab import RESULTS, ContainerLab
from mountbench.labs.containers.containerprobe import probe_container
from mountbench.labs.containers.mounts import MOUNT_TYPES, MountType
from mountbench.labs.containers.prereq import engines
from mountbench.labs.delegated import Delegation, Inside, command, delegate
from mountbench.labs.frame import Stopped
from mountbench.labs.insideprobe import ProbeOptions
from mountbench.model import RunData, RunOptions, Target, TargetRecord
from mountbench.store import Store

HOST = HOST_TARGET  # the baseline: the bind mount's directory, measured from the host
DEFAULT_PRESET = "quick"
DEFAULT_RUNTIME_S = 1.0
DEFAULT_SIZE = 64 * 1024**2  # fits every mount type (tmpfs included) many times over


@dataclass(frozen=True)
class ContainerOptions:
    mount_types: tuple[str, ...]
    run: RunOptions
    probe: bool = True
    probe_timeout_s: float = 5.0


def mount_types(names: Sequence[str]) -> list[MountType]:
    """The mount types asked for (default: all), in the registry's order; bad names refused."""
    wanted = [n.strip() for text in names for n in text.split(",") if n.strip()]
    if names and not wanted:
        raise UsageError(f"--mount {','.join(names)!r} names no mount type; choose from: {', '.join(MOUNT_TYPES)}")
    unknown = [n for n in wanted if n not in MOUNT_TYPES]
    if unknown:
        raise UsageError(f"--mount {unknown[0]!r} is not a container mount type; choose from: {', '.join(MOUNT_TYPES)}")
    return [mount_type for name, mount_type in MOUNT_TYPES.items() if not wanted or name in wanted]


def with_defaults(options: RunOptions) -> RunOptions:
    """The quick preset at 1 s a job and 64 MiB unless given; the host is the baseline; the
    options both sides cannot share are refused."""
    if options.baseline not in (None, HOST):
        raise UsageError(f"--baseline: the container lab compares with the host ({HOST!r}); drop --baseline")
    for given, flag in ((options.until, "--until"), (options.budget, "--budget")):
        if given is not None:
            raise UsageError(f"{flag} is for 'mountbench run': the container lab runs fixed rounds (use --repeat)")
    if options.watch:
        raise UsageError("--watch is for 'mountbench run'")
    if options.clients or options.client_counts:
        raise UsageError("--client and --clients are for 'mountbench run'")
    chosen = options
    if not options.presets and not options.job_files and preset_alone(options.kind_options) is None:
        chosen = dataclasses.replace(chosen, presets=(DEFAULT_PRESET,))
    if chosen.runtime is None:
        chosen = dataclasses.replace(chosen, runtime=DEFAULT_RUNTIME_S)
    if chosen.size is None:
        chosen = dataclasses.replace(chosen, size=DEFAULT_SIZE)
    chosen = dataclasses.replace(chosen, baseline=HOST, default_budget=False)
    workloads.from_options(chosen)  # job files read and checked here, before anything starts (include, ...)
    return chosen


JOBS = "jobs"  # the job files' folder in the lab's results directory (the container reads them there)


def _job_files_inside(options: RunOptions, results: Path) -> RunOptions:
    """The run's job files copied into the lab's results directory, named as the container sees them
    (their host paths are not in the container)."""
    if not options.job_files:
        return options
    (results / JOBS).mkdir(exist_ok=True)
    inside = []
    for index, job in enumerate(options.job_files):
        name = f"{index}-{Path(job).name}"
        shutil.copyfile(job, results / JOBS / name)
        inside.append(f"{RESULTS}/{JOBS}/{name}")
    return dataclasses.replace(options, job_files=tuple(inside))


def segment_argv(python: str, targets: Sequence[str], options: RunOptions, db: str, export: Path | str) -> list[str]:
    """One side's round as labs/delegated.py starts it (``containers --dry-run`` says it)."""
    inside = HereInside(Path(export).parent, python)
    argv, _ = command(inside, Delegation(tuple(targets), options, db, export=Path(export).name))
    return argv


@dataclass
class HereInside:
    """This machine, as labs/delegated.py runs the host side's round here: in mountbench's own process
    group (a Ctrl-C at the terminal stops it as it stops mountbench: SIGINT, and mountbench stops its fio
    and keeps what it took), SIGTERM should mountbench die."""

    results: Path
    python: str = sys.executable

    @property
    def results_inside(self) -> str:
        return str(self.results)

    def run(self, argv: Sequence[str], setup: Sequence[Sequence[str]], on_line: Callable[[str], None],
            timeout: float | None) -> int:  # fmt: skip
        for step in setup:
            subprocess.run(list(step), check=True, capture_output=True, timeout=60)
        proc = procs.spawn(argv, session=False, death_signal=signal.SIGTERM, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        try:
            procs.stream(proc, on_line)  # stdout and stderr apart, line by line
            return proc.wait(timeout=timeout)
        finally:
            procs.stop_tree(proc, signal.SIGTERM, grace_s=30.0)


class Progress:
    """One side's round as the user follows it: a line per sample done, errors as they come,
    and the last lines kept for a round that produced nothing."""

    def __init__(self, on_note: Callable[[str], None], side: str) -> None:
        self.on_note, self.side = on_note, side
        self.tail: deque[str] = deque(maxlen=5)

    def on_output(self, line: str) -> None:
        if line.strip():
            self.tail.append(line.strip())
            if "error" in line.lower() or "failed" in line.lower():
                self.on_note(f"  {self.side}: {line.strip()}")

    def on_event(self, event: dict[str, Any]) -> None:
        if event.get("event") == "done":
            state = "ok" if event.get("ok") else "failed"
            self.on_note(f"  {self.side} · {event.get('target')} · {event.get('workload')}: {state}")


class Rounds:
    """The run as the host stores it, one side's round at a time: the host's target first (the
    baseline), then every mount; each sample with its round and its mount's caveats; the container
    side's host facts beside the host's. Stored once round 0 has finished on both sides."""

    def __init__(self, store: Store, lab: ContainerLab, chosen: Sequence[MountType], options: RunOptions,
                 facts: ContainerLabFacts, command: str, run_id: str | None = None) -> None:  # fmt: skip
        self.store, self.lab, self.chosen, self.options = store, lab, list(chosen), options
        self.facts, self.command, self.run_id = facts, command, run_id
        self.rounds = options.repeat
        self.first: dict[str, RunData] = {}  # round 0 of each side, until the run is stored
        self.on_saved: Callable[[str], None] | None = None

    def side(self, r: int, side: str, on_note: Callable[[str], None]) -> None:
        """One side's round, taken and stored; Stopped when it produced nothing (or was stopped)."""
        lab = self.lab
        on_note(f"containers: round {r + 1}/{self.rounds} on the {side}")
        segment = dataclasses.replace(self.options, repeat=1, warmup=self.options.warmup if r == 0 else 0,
                                      max_repeat=1)  # fmt: skip
        export = f"round-{r}-{side}.json"
        progress = Progress(on_note, side)
        if side == HOST:
            inside: Inside = HereInside(lab.results)
            delegation = Delegation((f"{HOST}={lab.host_dir}",), segment, str(lab.results / "host.sqlite"), export)
        else:
            inside = lab
            options = _job_files_inside(dataclasses.replace(segment, baseline=self.chosen[0].name), lab.results)
            targets = tuple(f"{k.name}={k.path}" for k in self.chosen)
            delegation = Delegation(targets, options, f"{RESULTS}/container.sqlite", export)
        outcome = delegate(inside, delegation, on_output=progress.on_output, on_event=progress.on_event,
                           what=f"round {r + 1} on the {side}")  # fmt: skip
        if outcome.stopped is not None:
            raise outcome.stopped
        if outcome.run is None:
            last = " | ".join(progress.tail) or "no output"
            raise Stopped(f"round {r + 1} on the {side} produced no results (exit {outcome.status}): {last}",
                          ExitCode.FAILURE)  # fmt: skip
        self.keep(r, side, outcome.run)

    def keep(self, r: int, side: str, run: RunData) -> None:
        """A side's round stored (round 0 of both sides first: the run's targets are both sides')."""
        caveats = {k.name: mount_caveats(k) for k in self.chosen}
        samples = [dataclasses.replace(s, round=r, caveats=s.caveats + caveats.get(s.target, ())) for s in run.samples]
        if self.run_id is not None:
            for sample in samples:
                self.store.add_sample(self.run_id, sample)
        else:
            self.first[side] = dataclasses.replace(run, samples=tuple(samples))
            if len(self.first) == 2:
                self.run_id = self.first[HOST].id
                self.store.import_run(self._merged(self.first[HOST], self.first[CONTAINER]))
        if self.run_id is not None and self.on_saved is not None:
            self.on_saved(self.run_id)

    def _merged(self, host_run: RunData, container_run: RunData) -> RunData:
        paths = {k.name: k.path for k in self.chosen}
        targets = list(host_run.targets) + [
            TargetRecord(Target(r.target.label, f"container:{paths.get(r.target.label, r.target.path)}"), r.info)
            for r in container_run.targets
        ]
        config = dataclasses.replace(host_run.config, baseline=HOST, repeat=self.rounds, max_repeat=self.rounds,
                                     lab=self.facts)  # fmt: skip
        host = {**host_run.host, "container": dict(container_run.host)}
        return dataclasses.replace(host_run, samples=host_run.samples + container_run.samples, targets=tuple(targets),
                                   config=config, host=host, command=self.command, status="running")  # fmt: skip

    def take(self, pending: Sequence[tuple[int, str]], on_note: Callable[[str], None]) -> Stopped | None:
        """Take the sides' rounds in order; why the run ended early (None: every one was taken). The run
        ends stored: complete, or interrupted with the rounds that finished on both sides."""
        stopped: Stopped | None = None
        try:
            for r, side in pending:
                self.side(r, side, on_note)
        except KeyboardInterrupt:
            stopped = Stopped("interrupted; the rounds that finished are stored", ExitCode.INTERRUPTED)
        except Stopped as exc:
            stopped = exc
        if self.run_id is None:  # not one round on both sides: nothing to compare, nothing stored
            if stopped is not None and stopped.exit_code == ExitCode.INTERRUPTED:
                raise Stopped("interrupted before a round finished on both sides; nothing stored",
                              ExitCode.INTERRUPTED)  # fmt: skip
            raise stopped or UsageError("no round finished")
        run = self.store.load_run(self.run_id)
        done = len(both_sides(run))
        config = dataclasses.replace(run.config, repeat=min(done, self.rounds) or self.rounds)
        self.store.update_config(self.run_id, config)
        self.store.set_status(self.run_id, "interrupted" if stopped is not None else "complete")
        return stopped


CONTAINER = "container"
SIDES = (HOST, CONTAINER)


def taken(run: RunData) -> set[tuple[int, str]]:
    """(round, side) of every side's round the run holds."""
    return {(s.round, HOST if s.target == HOST else CONTAINER) for s in run.samples}


def both_sides(run: RunData) -> set[int]:
    """The rounds the run holds on both sides."""
    found = taken(run)
    return {r for r, side in found if side == HOST and (r, CONTAINER) in found}


def plan(rounds: int) -> list[tuple[int, str]]:
    """Every side's round in the order they run: which side goes first alternates."""
    return [(r, side) for r in range(rounds) for side in (SIDES if r % 2 == 0 else SIDES[::-1])]


def run_containers(
    options: ContainerOptions,
    store: Store,
    on_note: Callable[[str], None],
    command: str,
    on_saved: Callable[[str], None] | None = None,
) -> tuple[str, Stopped | None]:
    """The stored run's id and, when it ended early, why. Raises on bad input and on a lab that cannot
    start, before any round. ``on_saved(run_id)`` is called after every stored side's round."""
    chosen = mount_types(options.mount_types)
    run_options = with_defaults(options.run)
    t0 = time.monotonic()
    with ContainerLab(chosen, on_note=on_note) as lab:
        assert lab.lab is not None
        on_note(f"containers: container with {len(chosen)} mounts up in {time.monotonic() - t0:.1f} s")
        host = ContainerMount(HOST, str(lab.host_dir), "the bind mount's directory, from the host", "yes")
        facts = dataclasses.replace(lab.facts, mounts=(host, *lab.mount_facts(chosen)), engines=engines())
        if options.probe:
            probe = probe_container(lab, chosen, ProbeOptions(timeout_s=options.probe_timeout_s), on_note)
            facts = dataclasses.replace(facts, probe=probe)
            on_note(f"containers: probed every mount from inside in {time.monotonic() - t0:.1f} s from the start")
        rounds = Rounds(store, lab, chosen, run_options, facts, command)
        rounds.on_saved = on_saved
        stopped = rounds.take(plan(run_options.repeat), on_note)
        assert rounds.run_id is not None
        return rounds.run_id, stopped


def resume_containers(
    run: RunData,
    store: Store,
    events: object,
    on_note: Callable[[str], None],
    on_saved: Callable[[str], None] | None = None,
    keep: bool = False,
) -> str:
    """Finish an interrupted or killed container-lab run: the lab made again with the run's mount types
    (the same Podman and runtime, checked), and the sides' rounds it does not hold taken. The probe is
    not repeated: the run keeps the one it stored. Returns the final status."""
    facts = run.config.lab
    if not isinstance(facts, ContainerLabFacts):
        raise UsageError(f"run {run.id} is not a containers run; resume it with 'mountbench run --resume {run.id}'")
    names = [m.name for m in facts.mounts if m.name != HOST]
    unknown = [name for name in names if name not in MOUNT_TYPES]
    if unknown:
        raise TargetError(f"run {run.id} cannot be resumed: its mount type {unknown[0]} is not one this mountbench "
                          "has; start a new run")  # fmt: skip
    chosen = [MOUNT_TYPES[name] for name in names]
    options = RunOptions(**{f.name: getattr(run.config, f.name) for f in dataclasses.fields(RunOptions)})
    with ContainerLab(chosen, on_note=on_note) as lab:
        for what in ("engine", "runtime", "storage_driver"):
            then, now = getattr(facts, what), getattr(lab.facts, what)
            if then != now:
                said = what.replace("_", " ")
                raise TargetError(f"run {run.id} cannot be resumed: it measured {said} {then}, this is {now}; its "
                                  "samples would mix two. Start a new run")  # fmt: skip
        store.move_target(run.id, HOST, str(lab.host_dir))
        store.set_status(run.id, "running")
        rounds = Rounds(store, lab, chosen, dataclasses.replace(options, repeat=run.config.max_repeat), facts,
                        run.command, run.id)  # fmt: skip
        rounds.on_saved = on_saved
        pending = [item for item in plan(run.config.max_repeat) if item not in taken(run)]
        on_note(f"containers: resuming run {run.id}: {len(pending)} side round(s) of {2 * run.config.max_repeat} "
                "left, on a lab made again")  # fmt: skip
        stopped = rounds.take(pending, on_note)
    if stopped is not None and stopped.exit_code != ExitCode.INTERRUPTED:
        raise stopped
    return store.load_run(run.id).status
