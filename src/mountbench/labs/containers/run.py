"""`mountbench containers`, start to end: bring the lab up, probe every mount from inside the
container, then run the workloads round by round, alternately on the host (the bind mount's
directory, the baseline) and in the container (every mount type, interleaved by the
container's own mountbench), and bring the rounds home as one run.

Each round is one `mountbench run --repeat 1` on each side, given the same options whole
(--options-json), as the QEMU lab hands them to its guest; which side goes first alternates,
so drift over the run hits both alike. The runtime and working-set size are fixed before the
first round (no --budget or --until: the two sides must run the same jobs).
"""

from __future__ import annotations

import dataclasses
import json
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
from mountbench.errors import ExitCode, MountbenchError, UsageError
from mountbench.host import process as procs
from mountbench.kinds import preset_alone
from mountbench.labfacts import ContainerLabFacts
from mountbench.labs.containers.caveats import mount_caveats
from mountbench.labs.containers.lab import RESULTS, ContainerLab
from mountbench.labs.containers.mounts import MOUNT_TYPES, MountType
from mountbench.labs.containers.prereq import engines
from mountbench.labs.containers.probe import probe_mounts
from mountbench.labs.containers.streams import follow
from mountbench.model import RunData, RunOptions, Target, TargetRecord
from mountbench.records.codec import options_to_dict
from mountbench.records.events import parse_event
from mountbench.records.export import read_document

HOST = "host"  # the baseline: the bind mount's directory, measured from the host
DEFAULT_PRESET = "quick"
DEFAULT_RUNTIME_S = 1.0
DEFAULT_SIZE = 64 * 1024**2  # fits every mount type (tmpfs included) many times over


@dataclass(frozen=True)
class ContainerOptions:
    mount_types: tuple[str, ...]
    run: RunOptions
    probe: bool = True
    probe_timeout_s: float = 5.0


class ContainersStopped(MountbenchError):
    """The run ended early (Ctrl-C, or a side that failed); the rounds that finished were kept."""

    def __init__(self, message: str, code: ExitCode) -> None:
        super().__init__(message)
        self.exit_code = code


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


def segment_argv(python: str, targets: Sequence[str], options: RunOptions, db: str, out: str) -> list[str]:
    """One side's round: the host's own mountbench on its targets, with the run's options whole."""
    return [python, "-m", "mountbench", "run", *targets, "--options-json", json.dumps(options_to_dict(options)),
            "--db", db, "--json", out, "--events", "-"]  # fmt: skip


def run_containers(
    options: ContainerOptions, on_note: Callable[[str], None], command: str
) -> tuple[RunData, ContainersStopped | None]:
    """The run (not yet stored) and, when it ended early, why. Raises on bad input and on a
    lab that cannot start, before any round."""
    chosen = mount_types(options.mount_types)
    run_options = with_defaults(options.run)
    rounds = run_options.repeat
    python = sys.executable
    t0 = time.monotonic()
    with ContainerLab(chosen, on_note=on_note) as lab:
        assert lab.lab is not None
        on_note(f"containers: container with {len(chosen)} mounts up in {time.monotonic() - t0:.1f} s")
        facts: dict[str, Any] = dict(lab.facts)
        facts["mounts"] = {
            mount_type.name: {
                "path": mount_type.path,
                "meaning": mount_type.meaning,
                "outlives": mount_type.outlives,
                "shares": mount_type.shares,
                **m,
            }
            for mount_type, m in zip(chosen, lab.mount_facts(chosen).values(), strict=True)
        }
        facts["mounts"][HOST] = {"path": str(lab.host_dir), "meaning": "the bind mount's directory, from the host",
                                 "outlives": "yes"}  # fmt: skip
        facts["engines"] = engines()
        if options.probe:
            facts["probe"] = probe_mounts(lab, chosen, python, options.probe_timeout_s)
            on_note(f"containers: probed every mount from inside in {time.monotonic() - t0:.1f} s from the start")
        host_runs: list[RunData] = []
        container_runs: list[RunData] = []
        stopped: ContainersStopped | None = None
        container_targets = [f"{k.name}={k.path}" for k in chosen]
        try:
            for r in range(rounds):
                segment = dataclasses.replace(run_options, repeat=1, warmup=run_options.warmup if r == 0 else 0,
                                              max_repeat=1)  # fmt: skip
                sides = ["host", "container"] if r % 2 == 0 else ["container", "host"]
                for side in sides:
                    out = f"round-{r}-{side}.json"
                    on_note(f"containers: round {r + 1}/{rounds} on the {side}")
                    progress = Progress(on_note, side)
                    if side == "host":
                        argv = segment_argv(python, [f"{HOST}={lab.host_dir}"], segment,
                                            str(lab.results / "host.sqlite"), str(lab.results / out))  # fmt: skip
                        status = _stream_host(argv, progress)
                        runs = host_runs
                    else:
                        inside = _job_files_inside(dataclasses.replace(segment, baseline=chosen[0].name),
                                                   lab.results)  # fmt: skip
                        argv = segment_argv(python, container_targets, inside, f"{RESULTS}/container.sqlite",
                                            f"{RESULTS}/{out}")  # fmt: skip
                        status = lab.exec(argv, progress)
                        runs = container_runs
                    path = lab.results / out
                    if not path.exists():
                        last = " | ".join(progress.tail) or "no output"
                        raise ContainersStopped(f"round {r + 1} on the {side} produced no results (exit {status}): "
                                                f"{last}", ExitCode.FAILURE)  # fmt: skip
                    (one,) = read_document(path)
                    runs.append(_renumbered(one, r))
        except KeyboardInterrupt:
            stopped = ContainersStopped("interrupted; the rounds that finished are stored", ExitCode.INTERRUPTED)
        except ContainersStopped as exc:
            stopped = exc
        if not host_runs or not container_runs:  # not one round on both sides: nothing to compare, nothing stored
            if stopped is not None and stopped.exit_code == ExitCode.INTERRUPTED:
                raise ContainersStopped("interrupted before a round finished on both sides; nothing stored",
                                        ExitCode.INTERRUPTED)  # fmt: skip
            raise stopped or UsageError("no round finished")
        run = _merge(host_runs, container_runs, chosen, facts, rounds, command)
    if stopped is not None:
        run = dataclasses.replace(run, status="interrupted")
    return run, stopped


class Progress:
    """One side's round as the user follows it: a line per sample done, errors as they come,
    and the last lines kept for a round that produced nothing."""

    def __init__(self, on_note: Callable[[str], None], side: str) -> None:
        self.on_note, self.side = on_note, side
        self.tail: deque[str] = deque(maxlen=5)

    def __call__(self, line: str) -> None:
        event = parse_event(line)
        if event is None:
            if line.strip():
                self.tail.append(line.strip())
                if "error" in line.lower() or "failed" in line.lower():
                    self.on_note(f"  {self.side}: {line.strip()}")
            return
        if event.get("event") == "done":
            state = "ok" if event.get("ok") else "failed"
            self.on_note(f"  {self.side} · {event.get('target')} · {event.get('workload')}: {state}")


def _stream_host(argv: list[str], on_line: Callable[[str], None]) -> int:
    # stopped as Ctrl-C stops it (SIGTERM: mountbench stops its fio and keeps what it took) should this die
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=procs.die_with_parent(signal.SIGTERM))  # fmt: skip
    try:
        follow(proc, on_line)  # stdout and stderr apart, line by line (streams.py)
        return proc.wait()
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)


def _renumbered(run: RunData, round_index: int) -> RunData:
    samples = tuple(dataclasses.replace(s, round=round_index) for s in run.samples)
    return dataclasses.replace(run, samples=samples)


def _merge(
    host_runs: list[RunData],
    container_runs: list[RunData],
    mount_types: Sequence[MountType],
    facts: dict[str, Any],
    rounds: int,
    command: str,
) -> RunData:
    """One run: the host's target first (the baseline), then every mount; each sample with its
    round and its mount's caveats; the container side's host facts kept beside the host's."""
    first_host, first = host_runs[0], container_runs[0]
    per_type = {k.name: mount_caveats(k) for k in mount_types}
    samples = [s for run in host_runs for s in run.samples]
    samples += [
        dataclasses.replace(s, caveats=s.caveats + per_type.get(s.target, ()))
        for run in container_runs
        for s in run.samples
    ]
    paths = {k.name: k.path for k in mount_types}
    targets = list(first_host.targets) + [
        TargetRecord(Target(r.target.label, f"container:{paths.get(r.target.label, r.target.path)}"), r.info)
        for r in first.targets
    ]
    done = min(len(host_runs), len(container_runs))
    config = dataclasses.replace(
        first_host.config, baseline=HOST, repeat=done if done < rounds else rounds, max_repeat=rounds,
        lab=ContainerLabFacts(facts),
    )  # fmt: skip
    host = {**first_host.host, "container": dict(first.host)}
    return dataclasses.replace(
        first_host,
        samples=tuple(samples),
        targets=tuple(targets),
        config=config,
        host=host,
        command=command,
        status="complete",
    )
