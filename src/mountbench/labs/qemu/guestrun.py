"""`mountbench lab`: run mountbench inside a throwaway QEMU guest on every mount type, measure
what the host spends serving each sample, and bring the results home as one stored run.

The guest runs the host's own mountbench (its root is the host root, read-only) against
/mnt/<slug> for each mount, a run delegated as labs/delegated.py says: its export in the results
share, its events on the console, which the host brackets each sample with to measure the serving
processes (hostcost). Every sample is stored on the host as soon as the guest has stored it
(:class:`Homecoming`), relabelled with its mount's full option set, with the host's and the
guest's CPU cost and its mount's caveats; a mount the guest could not use gets a failed cell per
sample. A run stopped or killed is resumed on a guest made again (:func:`resume_qemu`): the guest is
handed the run as the host stored it and finishes it.
"""

from __future__ import annotations

import dataclasses
import shlex
import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mountbench.errors import ExitCode, TargetError, UsageError
from mountbench.host import facts as hostinfo
from mountbench.host.cost import HostCost
from mountbench.labfacts import QemuLabFacts
from mountbench.labs import history
from mountbench.labs.delegated import Delegation, InsideTimeout, delegate, seed, shell_line
from mountbench.labs.frame import Stopped, refuse
from mountbench.labs.insideprobe import ProbeOptions
from mountbench.labs.qemu.caveats import emulation_caveat, host_cache_caveat
from mountbench.labs.qemu.faults import GuestTimeout
from mountbench.labs.qemu.guest import Guest
from mountbench.labs.qemu.guestprobe import GUEST_ENV, probe_guest
from mountbench.labs.qemu.mounts.guestmount import GuestMount, MountSpec
from mountbench.labs.qemu.mountspec import DEFAULT_MOUNTS, parse_mount_spec
from mountbench.labs.qemu.prereq import DOCTOR_FLAG, lab_problems
from mountbench.model import Caveat, RunData, RunOptions, Sample, Target, TargetRecord, Workload
from mountbench.store import Store

GIB = 1024**3
GUEST_DB = "/tmp/mountbench-lab.sqlite"  # the guest run's database: its tmpfs, new every boot
LAB = "qemu"  # the name its runs are stored under (QemuLabFacts.name)


@dataclasses.dataclass(frozen=True)
class QemuOptions:
    mounts: tuple[str, ...]
    run: RunOptions  # what the guest's `mountbench run` is asked, as the host was (baseline: a mount)
    accel: str = "auto"
    cpus: int = 2
    memory: str = "1G"
    kernel: str | None = None
    keep_guest: bool = False
    timeout_s: float = 3600.0
    probe: ProbeOptions | None = None  # lab --probe: probe the mounts after the run (guestprobe.py)
    workloads: tuple[Workload, ...] = ()  # what the guest will run: its first ETA learns their cost here


def guest_cpu_s(start: dict[str, Any], done: dict[str, Any]) -> float | None:
    """Busy CPU seconds of the whole guest between a sample's start and done events
    (each carries the guest's /proc/stat total), or None when either lacks it."""
    before, after = start.get("cpu_busy_s"), done.get("cpu_busy_s")
    if not isinstance(before, int | float) or not isinstance(after, int | float):
        return None
    return max(0.0, float(after) - float(before))


def lab_timeout(workloads: Sequence[Workload], repeat: int, mounts: int) -> float:
    """Seconds the guest run may take: its workloads' bounds plus program start-up under
    emulation, three times over, plus the boot."""
    per_round = 0.0
    for workload in workloads:
        per_round += (workload.description.duration_bound_s or 60.0) + 30.0
    return 600.0 + 3 * per_round * repeat * mounts


def mount_specs(texts: Sequence[str]) -> list[MountSpec]:
    specs = [parse_mount_spec(t) for t in texts] if texts else list(DEFAULT_MOUNTS)
    labels = [s.label for s in specs]
    for label in labels:
        if labels.count(label) > 1:
            raise UsageError(f"--mount {label} is given twice; give each mount once")
    return specs


def check_prerequisites(specs: Sequence[MountSpec]) -> None:
    """Refuse, before anything boots, a host that lacks the lab or these mounts' pieces."""
    refuse(lab_problems(types={spec.type_name for spec in specs}), DOCTOR_FLAG)


def stored_here() -> str:
    """The host name a guest's run is stored under: the guest's, on this machine."""
    return f"lab guest on {socket.gethostname()}"


def learnt_for_guest(
    earlier: Sequence[RunData], mounts: Sequence[GuestMount], workloads: Sequence[Workload]
) -> dict[tuple[str, str], float]:
    """(guest target label: the mount's slug, workload name) -> what one sample cost in the
    earlier lab runs, for the mounts the guest run measures. A mount is the same mount when its
    label (type and every option) is; it is at the same guest path (/mnt/<slug>) as it was, or
    moved there."""
    now = {m.label: Target(m.slug, m.guest_path) for m in mounts}
    return dict(history.learnt_here(earlier, now, workloads, lambda _run, _label: True))


def learnt_json(learnt: dict[tuple[str, str], float]) -> str:
    """The costs as run's --learnt-json takes them: [[target, workload, seconds], ...]."""
    import json

    return json.dumps([[target, workload, round(seconds, 3)] for (target, workload), seconds in learnt.items()])


@dataclasses.dataclass
class GuestInside:
    """The guest as labs/delegated.py runs a command there: a shell line, from /tmp, its root read-only."""

    guest: Guest
    python: str = sys.executable

    @property
    def results(self) -> Path:
        return self.guest.results_path

    @property
    def results_inside(self) -> str:
        return self.guest.guest_results

    def run(self, argv: Sequence[str], setup: Sequence[Sequence[str]], on_line: Callable[[str], None],
            timeout: float | None) -> int:  # fmt: skip
        try:
            return self.guest.run_in_guest(shell_line(argv, setup, GUEST_ENV), on_line=on_line, timeout=timeout)
        except GuestTimeout as exc:
            raise InsideTimeout(str(exc)) from None


class Homecoming:
    """The guest's run stored on the host as it comes, sample by sample: each target relabelled with
    its mount's full option set, each sample with the host's and the guest's cost (measured around its
    events) and its mount's caveats (emulation, host cache), and failed cells for the mounts the guest
    could not use. The run is stored with the guest's own id."""

    def __init__(
        self,
        store: Store,
        mounts: Sequence[GuestMount],
        facts: QemuLabFacts,
        baseline: str,
        command: str,
        serving: Callable[[str], dict[str, list[int]]] | None = None,
        run_id: str | None = None,
    ) -> None:
        self.store, self.mounts, self.facts, self.baseline, self.command = store, mounts, facts, baseline, command
        self.serving = serving  # the host processes serving a mount, by role (Guest.serving_processes)
        self.run_id = run_id  # set by the first run stored (a resume's is known)
        emulated = bool(facts.emulated)
        self.label = {m.slug: m.label for m in mounts}
        self.emulation = {m.slug: _present(emulation_caveat(m.spec, emulated)) for m in mounts}
        self.caveats = {m.slug: self.emulation[m.slug] + _present(host_cache_caveat(m.spec)) for m in mounts}
        self.cost = HostCost()
        self.extra: dict[tuple[str, str, int], dict[str, float]] = {}
        self.starts: dict[tuple[str, str, int], dict[str, Any]] = {}
        self.on_saved: Callable[[str], None] | None = None
        self.boot_times = False  # record the guest's boot times once its run is over (not a resumed run's)

    @classmethod
    def of(cls, store: Store, guest: Guest, baseline: str, command: str, facts: QemuLabFacts | None = None,
           run_id: str | None = None) -> Homecoming:  # fmt: skip
        """For ``guest``'s run (a resumed run keeps the facts it recorded)."""
        home = cls(store, guest.mounts, facts or guest.describe(), baseline, command, guest.serving_processes, run_id)
        home.boot_times = facts is None
        return home

    # --- while it runs ------------------------------------------------------------------

    def on_event(self, event: dict[str, Any]) -> None:
        """A sample's start and end: the host's cost of serving it measured in between."""
        if event.get("event") not in ("start", "done"):
            return
        key = (event["target"], event["workload"], event["round"])
        if event["event"] == "start":
            self.starts[key] = event
            serving = self.serving
            if serving is not None:
                self.cost.start(key, lambda slug=event["target"]: serving(slug))
            return
        metrics = self.cost.stop(key)
        moved = float(event.get("bytes") or 0)
        if moved > 0 and "host.cpu_s" in metrics:
            metrics["host.cpu_s_per_gib"] = metrics["host.cpu_s"] / (moved / GIB)
        guest_cpu = guest_cpu_s(self.starts.pop(key, {}), event)
        if guest_cpu is not None:
            metrics["guest.cpu_s"] = guest_cpu
        self.extra[key] = metrics

    def on_run(self, guest_run: RunData) -> None:
        """The guest's run as its export holds it now: stored on the host (the samples not yet there)."""
        run = self.home(guest_run)
        if self.run_id is None:
            self.run_id = run.id
            self.store.import_run(dataclasses.replace(run, status="running"))
        else:
            done = self.store.done_items(self.run_id)
            for sample in run.samples:
                if (sample.target, sample.workload, sample.round) not in done:
                    self.store.add_sample(self.run_id, sample)
        if self.on_saved is not None:
            self.on_saved(self.run_id)

    def home(self, run: RunData) -> RunData:
        """The guest's run in the host's terms."""
        samples = [
            dataclasses.replace(
                s,
                target=self.label.get(s.target, s.target),
                metrics={**s.metrics, **self.extra.get((s.target, s.workload, s.round), {})},
                caveats=s.caveats + self.caveats.get(s.target, ()),
            )
            for s in run.samples
        ]
        targets = [TargetRecord(Target(self.label.get(r.target.label, r.target.label), r.target.path), r.info)
                   for r in run.targets]  # fmt: skip
        for m in self.mounts:
            if m.guest_error:
                targets.append(TargetRecord(Target(m.label, m.guest_path), None))
                failed = f"mount failed in the guest: {m.guest_error}"
                samples += [
                    Sample(m.label, workload.name, r, False, {}, self.emulation[m.slug], error=failed)
                    for workload in run.workloads
                    for r in range(run.config.repeat)
                ]  # fmt: skip
        config = dataclasses.replace(run.config, baseline=self.baseline, lab=self.facts)
        host = {**run.host, "hostname": stored_here(), "lab_host": hostinfo.collect()}
        return dataclasses.replace(run, samples=tuple(samples), targets=tuple(targets), config=config, host=host,
                                   command=self.command)  # fmt: skip

    def handed_back(self, run: RunData) -> RunData:
        """The host's record of ``run`` in the guest's terms (its mounts by slug, none that failed in it),
        for the guest to resume."""
        slug = {label: s for s, label in self.label.items()}
        working = {m.label for m in self.mounts if not m.guest_error}
        targets = tuple(TargetRecord(Target(slug[r.target.label], r.target.path), r.info) for r in run.targets
                        if r.target.label in working)  # fmt: skip
        samples = tuple(dataclasses.replace(s, target=slug[s.target]) for s in run.samples if s.target in working)
        config = dataclasses.replace(run.config, baseline=slug.get(run.config.baseline, targets[0].target.label),
                                     lab=None)  # fmt: skip
        host = {key: value for key, value in run.host.items() if key != "lab_host"}
        return dataclasses.replace(run, targets=targets, samples=samples, config=config, host=host)

    # --- the run --------------------------------------------------------------------------

    def run(
        self, guest: Guest, delegation: Delegation, on_output: Callable[[str], None], timeout: float
    ) -> Stopped | None:
        """The delegated run in ``guest``, stored as it comes; why it ended early, or None."""
        try:
            outcome = delegate(GuestInside(guest), delegation, on_output=on_output, on_event=self.on_event,
                               on_run=self.on_run, timeout=timeout, what="the guest run")  # fmt: skip
        finally:
            self.cost.close()
        if self.run_id is None:  # not one sample stored
            if outcome.stopped is not None:
                raise outcome.stopped
            raise UsageError(f"the guest run produced no results (exit {outcome.status}); see its output above")
        stopped = outcome.stopped
        if stopped is not None and stopped.exit_code == ExitCode.FAILURE:
            stopped = Stopped(f"{stopped} (use fewer mounts, workloads or repetitions)", stopped.exit_code)
        if self.boot_times:  # the guest's phases, the first command's start among them, known now
            self.facts = dataclasses.replace(self.facts, boot=vars(guest.times).copy())
        if outcome.run is not None:  # what the run found after it began (an adaptive run's looks)
            self.store.update_config(self.run_id, self.home(outcome.run).config)
        final = "interrupted" if stopped is not None or outcome.run is None else outcome.run.status
        self.store.set_status(self.run_id, final)
        return stopped

    def add_probe(self, guest: Guest, options: ProbeOptions, on_output: Callable[[str], None]) -> Stopped | None:
        """--probe, after the run: stored with the run's facts (a Ctrl-C keeps the run without it)."""
        assert self.run_id is not None
        try:
            probe = probe_guest(guest, options, on_output)
        except KeyboardInterrupt:
            return Stopped("interrupted during --probe; the run is stored without it", ExitCode.INTERRUPTED)
        self.facts = dataclasses.replace(self.facts, probe=probe)
        config = self.store.load_run(self.run_id).config
        self.store.update_config(self.run_id, dataclasses.replace(config, lab=self.facts))
        return None


def run_qemu(
    options: QemuOptions, store: Store, on_output: Callable[[str], None], on_saved: Callable[[str], None] | None = None
) -> tuple[str, Stopped | None]:
    """Boot, run, measure, bring home: the stored run's id, and why it ended early (None: it did not).
    Raises on bad input before anything boots; when the guest run is stopped early, the samples it
    finished are stored already. ``on_saved(run_id)`` is called after every stored sample."""
    specs = mount_specs(options.mounts)
    baseline_spec = _baseline(specs, options.run.baseline)
    check_prerequisites(specs)
    earlier = history.earlier_runs(store, LAB, "lab", stored_here())  # the guest's first ETA learns from these
    with _guest(specs, options.accel, options.cpus, options.memory, options.kernel, options.keep_guest) as guest:
        working = _working(guest, on_output)
        # the guest run needs a working baseline; the intended one is restored on the way home
        guest_baseline = next((m.slug for m in working if m.label == baseline_spec.label), working[0].slug)
        home = Homecoming.of(store, guest, baseline_spec.label, shlex.join(["mountbench", *sys.argv[1:]]))
        home.on_saved = on_saved
        learnt = learnt_for_guest(earlier, working, options.workloads)
        delegation = Delegation(tuple(f"{m.slug}={m.guest_path}" for m in working),
                                dataclasses.replace(options.run, baseline=guest_baseline), GUEST_DB,
                                learnt=learnt_json(learnt) if learnt else "")  # fmt: skip
        stopped = home.run(guest, delegation, on_output, options.timeout_s)
        if options.probe is not None and stopped is None:
            stopped = home.add_probe(guest, options.probe, on_output)
        assert home.run_id is not None
        return home.run_id, stopped


def resume_qemu(
    run: RunData,
    store: Store,
    events: object,
    on_note: Callable[[str], None],
    on_saved: Callable[[str], None] | None = None,
    keep: bool = False,
) -> str:
    """Finish an interrupted or killed QEMU-lab run: a guest made again as the run recorded it (the
    same mounts, CPUs, memory, kernel and accelerator), handed the run as the host stored it, takes
    the samples not yet taken (the progress is the guest's own, on ``on_note``). The probe is not
    repeated: the run keeps what it stored. Returns the final status."""
    facts = run.config.lab
    if not isinstance(facts, QemuLabFacts):
        raise UsageError(f"run {run.id} is not a QEMU-lab run; resume it with 'mountbench run --resume {run.id}'")
    specs = [parse_mount_spec(m.spec) for m in facts.mounts if m.spec]
    if not specs or len(specs) != len(facts.mounts):
        raise UsageError(f"run {run.id} cannot be resumed: it does not record how each of its mounts was made; "
                         "start a new run")  # fmt: skip
    check_prerequisites(specs)
    memory = f"{facts.memory_mib}M" if facts.memory_mib else "1G"
    with _guest(specs, facts.accel or "auto", facts.cpus or 2, memory, facts.kernel_image, keep) as guest:
        working = {m.label for m in _working(guest, on_note)}
        missing = [label for label in (r.target.label for r in run.targets)
                   if label not in working and not _failed_before(run, label)]  # fmt: skip
        if missing:
            raise TargetError(f"run {run.id} cannot be resumed: {', '.join(missing)} did not mount in the guest again; "
                              "see the errors above ('mountbench doctor --lab')")  # fmt: skip
        home = Homecoming.of(store, guest, run.config.baseline, run.command, facts, run.id)
        home.on_saved = on_saved
        on_note(f"lab: resuming run {run.id} in a guest made as it recorded ({len(working)} mounts)")
        store.set_status(run.id, "running")
        seed(guest.results_path, home.handed_back(run))
        timeout = lab_timeout(run.workloads, run.config.repeat + run.config.warmup, len(working))
        stopped = home.run(guest, Delegation((), RunOptions(), GUEST_DB, resume=run.id), on_note, timeout)
    if stopped is not None and stopped.exit_code != ExitCode.INTERRUPTED:
        raise stopped
    return store.load_run(run.id).status


def _guest(specs: Sequence[MountSpec], accel: str, cpus: int, memory: str, kernel: str | None, keep: bool) -> Guest:
    return Guest(specs=specs, cpus=cpus, memory=memory, accel=accel, kernel=kernel, keep=keep)


def _working(guest: Guest, on_output: Callable[[str], None]) -> list[GuestMount]:
    """The mounts the guest could use (none: refused), after a note on who reaches its servers."""
    if guest.network_note:  # the servers its guest reaches over the network are not the lab's alone
        on_output(f"note: the lab's network servers listen on the host's loopback, where every local user "
                  f"reaches them ({guest.network_note})")  # fmt: skip
    working = [m for m in guest.mounts if not m.guest_error]
    if not working:
        raise UsageError("no mount worked in the guest; see the errors above ('mountbench doctor --lab')")
    return working


def _failed_before(run: RunData, label: str) -> bool:
    """The mount failed in the guest the run first had: its cells say so already."""
    return any(s.target == label and (s.error or "").startswith("mount failed in the guest") for s in run.samples)


def _baseline(specs: Sequence[MountSpec], wanted: str | None) -> MountSpec:
    if wanted is None:
        for spec in specs:
            if spec.mount_type.reference:
                return spec
        return specs[0]
    for spec in specs:
        if wanted in (spec.label, spec.slug, spec.spec_text):
            return spec
    raise UsageError(f"--baseline {wanted!r} is not one of the mounts: {', '.join(s.label for s in specs)}")


def _present(*caveats: Caveat | None) -> tuple[Caveat, ...]:
    return tuple(c for c in caveats if c is not None)
