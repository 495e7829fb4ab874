"""`mountbench lab`: run mountbench inside a throwaway QEMU guest on every mount
type, measure what the host spends serving each sample, and bring the results
home as one stored run.

The guest runs the host's own mountbench (its root is the host root, read-only)
against /mnt/<slug> for each mount, writes its JSON export to the results share
and prints JSON-line events on its console; the host brackets each sample with
those events to measure the serving processes (hostcost).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import Any

from mountbench.errors import ExitCode, MountbenchError, UsageError
from mountbench.host import facts as hostinfo
from mountbench.host.cost import HostCost
from mountbench.labfacts import QemuLabFacts
from mountbench.labs.frame import refuse
from mountbench.labs.qemu import (
    DEFAULT_MOUNTS,
    Guest,
    LabMount,
    LabTimeout,
    MountSpec,
    parse_mount_spec,
)
from mountbench.labs.qemu.caveats import emulation_caveat, host_cache_caveat
from mountbench.labs.qemu.guestprobe import GUEST_ENV, ProbeOptions, probe_lab
from mountbench.labs.qemu.history import learnt_for_guest, learnt_json
from mountbench.labs.qemu.prereq import DOCTOR_FLAG, lab_problems
from mountbench.model import Caveat, RunData, RunOptions, Sample, Target, TargetRecord, Workload
from mountbench.records.codec import options_to_dict
from mountbench.records.events import parse_event
from mountbench.records.export import read_document

GIB = 1024**3


@dataclasses.dataclass(frozen=True)
class LabOptions:
    mounts: tuple[str, ...]
    run: RunOptions  # what the guest's `mountbench run` is asked, as the host was (baseline: a mount)
    accel: str = "auto"
    cpus: int = 2
    memory: str = "1G"
    kernel: str | None = None
    keep_guest: bool = False
    timeout_s: float = 3600.0
    probe: ProbeOptions | None = None  # lab --probe: probe the mounts after the run (labprobe.py)
    # what the guest run's first ETA learns from: this machine's earlier lab runs and the workloads the
    # guest will run (labs/qemu/history.py); the guest's own database is new every run
    earlier: tuple[RunData, ...] = ()
    workloads: tuple[Workload, ...] = ()


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


def lab_specs(texts: Sequence[str]) -> list[MountSpec]:
    specs = [parse_mount_spec(t) for t in texts] if texts else list(DEFAULT_MOUNTS)
    labels = [s.label for s in specs]
    for label in labels:
        if labels.count(label) > 1:
            raise UsageError(f"--mount {label} is given twice; give each mount once")
    return specs


def check_prerequisites(specs: Sequence[MountSpec]) -> None:
    """Refuse, before anything boots, a host that lacks the lab or these mounts' pieces."""
    refuse(lab_problems(types={spec.type_name for spec in specs}), DOCTOR_FLAG)


def guest_command(guest: Guest, options: RunOptions, baseline_slug: str, learnt: str = "") -> str:
    """The shell command the guest runs: the host's own mountbench on every ready mount,
    with the host's run options handed over whole (--options-json), and what each mount's
    samples cost in this machine's earlier lab runs (``learnt``: --learnt-json)."""
    targets = [f"{m.slug}={m.guest_path}" for m in guest.mounts if not m.guest_error]
    guest_options = dataclasses.replace(options, baseline=baseline_slug)
    argv = [
        sys.executable, "-m", "mountbench", "run", *targets,
        "--options-json", json.dumps(options_to_dict(guest_options)),
        "--db", "/tmp/mountbench-lab.sqlite",
        "--json", f"{guest.guest_results}/run.json",
        "--events", "-",
        *(["--learnt-json", learnt] if learnt else []),
    ]  # fmt: skip
    return f"cd /tmp && env {GUEST_ENV} {shlex.join(argv)}"


def _learnt(options: LabOptions, working: Sequence[LabMount]) -> str:
    """--learnt-json for the guest run: what each working mount's samples cost before, or ''."""
    learnt = learnt_for_guest(options.earlier, working, options.workloads)
    return learnt_json(learnt) if learnt else ""


class LabStopped(MountbenchError):
    """The guest run ended early (Ctrl-C or its time limit); what finished was kept."""

    def __init__(self, message: str, code: ExitCode) -> None:
        super().__init__(message)
        self.exit_code = code


def run_lab(options: LabOptions, on_output: Callable[[str], None]) -> tuple[RunData, LabStopped | None]:
    """Boot, run, measure, bring home. Raises on bad input before anything boots. When the
    guest run is stopped early, the samples it finished still come home, with the reason."""
    specs = lab_specs(options.mounts)
    baseline_spec = _baseline(specs, options.run.baseline)
    check_prerequisites(specs)
    cost = HostCost()
    extra: dict[tuple[str, str, int], dict[str, float]] = {}
    starts: dict[tuple[str, str, int], dict[str, Any]] = {}
    guest = Guest(
        specs=specs, cpus=options.cpus, memory=options.memory, accel=options.accel,
        kernel=options.kernel, keep=options.keep_guest,
    )  # fmt: skip
    with guest:
        if guest.network_note:  # the servers its guest reaches over the network are not the lab's alone
            on_output(f"note: the lab's network servers listen on the host's loopback, where every local user "
                      f"reaches them ({guest.network_note})")  # fmt: skip
        working = [m for m in guest.mounts if not m.guest_error]
        if not working:
            raise UsageError("no mount worked in the guest; see the errors above ('mountbench doctor --lab')")
        # the guest run needs a working baseline; the intended one is restored on the way home
        guest_baseline = next((m.slug for m in working if m.label == baseline_spec.label), working[0].slug)

        def on_line(line: str) -> None:
            event = parse_event(line)
            if event is None:
                on_output(line)
                return
            if event.get("event") == "start":
                key = (event["target"], event["workload"], event["round"])
                starts[key] = event
                cost.start(key, lambda slug=event["target"]: guest.serving_processes(slug))
            elif event.get("event") == "done":
                key = (event["target"], event["workload"], event["round"])
                metrics = cost.stop(key)
                moved = float(event.get("bytes") or 0)
                if moved > 0 and "host.cpu_s" in metrics:
                    metrics["host.cpu_s_per_gib"] = metrics["host.cpu_s"] / (moved / GIB)
                guest_cpu = guest_cpu_s(starts.pop(key, {}), event)
                if guest_cpu is not None:
                    metrics["guest.cpu_s"] = guest_cpu
                extra[key] = metrics

        stopped: LabStopped | None = None
        status: int | None = None
        try:
            status = guest.run_in_guest(
                guest_command(guest, options.run, guest_baseline, _learnt(options, working)), on_line=on_line,
                timeout=options.timeout_s,
            )  # fmt: skip
        except KeyboardInterrupt:
            stopped = LabStopped("interrupted; the samples that finished are stored", ExitCode.INTERRUPTED)
        except LabTimeout:
            stopped = LabStopped(
                f"the guest run did not finish within {options.timeout_s:.0f} s; the samples that finished are "
                "stored (use fewer mounts, workloads or repetitions)",
                ExitCode.FAILURE,
            )
        finally:
            cost.close()
        results = guest.results_path / "run.json"
        if not results.exists():
            if stopped:
                raise stopped
            raise UsageError(f"the guest run produced no results (exit {status}); see its output above")
        (guest_run,) = read_document(results)
        if stopped:
            guest_run = dataclasses.replace(guest_run, status="interrupted")
        lab = guest.describe()
        mounts = mount_facts(guest.mounts, emulated=bool(lab.get("emulated")))
        if options.probe is not None and stopped is None:
            try:
                lab["probe"] = probe_lab(guest, options.probe, on_output).to_dict()
            except KeyboardInterrupt:  # the run came home already: keep it, without the probe
                stopped = LabStopped("interrupted during --probe; the run is stored without it", ExitCode.INTERRUPTED)
    return _bring_home(guest_run, lab, extra, mounts, baseline_spec.label), stopped


def mount_facts(mounts: Sequence[LabMount], emulated: bool) -> dict[str, dict[str, Any]]:
    """What bringing the run home needs of each mount, by slug: its label, where it was,
    why it failed in the guest, and its caveats (see labs/qemu/caveats.py)."""
    return {
        m.slug: {"label": m.label, "guest_path": m.guest_path, "error": m.guest_error,
                 "emulation": emulation_caveat(m.spec, emulated), "host_cache": host_cache_caveat(m.spec)}
        for m in mounts
    }  # fmt: skip


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


def _bring_home(
    run: RunData,
    lab: dict[str, Any],
    extra: dict[tuple[str, str, int], dict[str, float]],
    mounts: dict[str, dict[str, Any]],
    baseline_label: str,
) -> RunData:
    """Relabel targets with the full mount option sets, attach host and guest costs and
    each mount's caveats (emulation, host cache), and add failed-mount cells for mounts
    the guest could not use."""
    label = {slug: m["label"] for slug, m in mounts.items()}
    per_mount = {slug: _present(m["emulation"], m["host_cache"]) for slug, m in mounts.items()}
    samples = [
        dataclasses.replace(
            s,
            target=label.get(s.target, s.target),
            metrics={**s.metrics, **extra.get((s.target, s.workload, s.round), {})},
            caveats=s.caveats + per_mount.get(s.target, ()),
        )
        for s in run.samples
    ]
    targets = [
        TargetRecord(Target(label.get(r.target.label, r.target.label), r.target.path), r.info) for r in run.targets
    ]
    repeat = run.config.repeat
    for mount in mounts.values():
        if mount["error"]:
            targets.append(TargetRecord(Target(mount["label"], mount["guest_path"]), None))
            emulation = _present(mount["emulation"])
            for workload in run.workloads:
                samples += [
                    Sample(mount["label"], workload.name, r, False, {}, emulation,
                           error=f"mount failed in the guest: {mount['error']}")
                    for r in range(repeat)
                ]  # fmt: skip
    config = dataclasses.replace(run.config, baseline=baseline_label, lab=lab_facts(lab))
    lab_host = hostinfo.collect()
    host = {**run.host, "hostname": f"lab guest on {lab_host['hostname']}", "lab_host": lab_host}
    return dataclasses.replace(
        run,
        samples=tuple(samples),
        targets=tuple(targets),
        config=config,
        host=host,
        command=shlex.join(["mountbench", *sys.argv[1:]]),
    )


def lab_facts(described: dict[str, Any]) -> QemuLabFacts:
    """Guest.describe()'s facts as the typed record stored with the run."""
    fields = {f.name for f in dataclasses.fields(QemuLabFacts)} - {"boot", "mounts", "probe"}
    return QemuLabFacts(
        **{name: described.get(name) for name in fields},
        boot=dict(described.get("boot") or {}),
        mounts=tuple(dict(m) for m in described.get("mounts") or ()),
        probe=described.get("probe"),
    )


def _present(*caveats: Caveat | None) -> tuple[Caveat, ...]:
    return tuple(c for c in caveats if c is not None)
