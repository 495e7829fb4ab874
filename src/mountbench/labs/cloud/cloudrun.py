"""`mountbench cloudlab`, start to end: bring the lab up, probe every target (what each
mount supports; how long until a write is on the remote, at close() and at fsync(); what
the mount shows of changes made on the remote), run the workloads on the local disk and
every mount, interleaved and stored as one run, with rclone's own cost per sample, and
take everything down again.

The probe runs first, on fresh mounts (with the upload lag of a tree, treelag.py), and its
result travels in the run's config (``config.lab``, the cloud lab's own facts record), stored
before the first sample. Every sample on a mount starts with its uploads done, and a read
workload is measured cold (from the remote) and, when a mode keeps reads, warm (phases.py).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from mountbench.engine import request as runrequest
from mountbench.engine.session import Events, Session, run_to_end
from mountbench.errors import TargetError, UsageError
from mountbench.fio.binary import find_fio
from mountbench.host import facts as hostinfo
from mountbench.kinds import host_facts
from mountbench.labfacts import CloudLabFacts
from mountbench.labs import history
from mountbench.labs.cloud.caveats import mode_caveats
from mountbench.labs.cloud.cloudlab import UPLOAD_STALL_S, CloudLab
from mountbench.labs.cloud.matrix import LOCAL, CloudSpec
from mountbench.labs.cloud.mountprobes import probe_all
from mountbench.labs.cloud.mounts import CACHE_MODES
from mountbench.labs.cloud.phases import phased, with_phases
from mountbench.labs.cloud.treelag import TREE_FILES, measure_all
from mountbench.labs.cloud.watch import ServingWatch
from mountbench.model import RunData, RunOptions, Target, Workload
from mountbench.probefacts import CloudMountProbe, CloudProbe, CloudTarget
from mountbench.store import Store

DEFAULT_PRESET = "clouddrive"
DEFAULT_SIZE = 64 * 1024**2  # the S4 job's 1000 MiB, scaled so eight mounts lay it out in minutes
TREE_LAG_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class CloudOptions:
    specs: tuple[CloudSpec, ...]
    run: RunOptions
    probe: bool = True
    probe_timeout_s: float = 10.0
    probe_repeat: int = 1
    keep: bool = False
    tree_lag_files: int = TREE_FILES  # the probe's tree (treelag.py); fewer only to wait less (the tests)
    warm: bool = True  # a warm twin of each read workload where a mode caches reads; off only to wait less (the tests)


DELAY_NOTE = "cloudlab: the delay (toxiproxy, no memory limit) is started afresh before every sample on a cloud mount"


def delay_count(lab: CloudLab) -> str:
    """What the output says at the end: every start of the delay during the samples."""
    trips = (f"; its memory guard stopped it {lab.delay_trips} time(s) mid-sample (each such sample void, said in "
             "its cell)" if lab.delay_trips else "; its memory guard never had to stop it")  # fmt: skip
    return f"cloudlab: the delay was started afresh {lab.delay_starts} time(s), once before each sample on a cloud " \
           f"mount{trips}"  # fmt: skip


def with_defaults(options: RunOptions) -> RunOptions:
    """The clouddrive preset at 64 MiB unless presets, job files or a size were given; the
    local disk is always the baseline."""
    if options.baseline not in (None, LOCAL):
        raise UsageError(f"--baseline: the cloud lab compares with the local disk ({LOCAL!r}); drop --baseline")
    if options.watch:
        raise UsageError("--watch is for 'mountbench run': the cloud lab measures its rclone processes itself")
    if options.clients or options.client_counts:
        raise UsageError("--client and --clients are for 'mountbench run'")
    chosen = options
    if not options.presets and not options.job_files:  # --tree alone only chooses the tree
        chosen = dataclasses.replace(chosen, presets=(DEFAULT_PRESET,))
    if chosen.size is None and DEFAULT_PRESET in chosen.presets:
        chosen = dataclasses.replace(chosen, size=DEFAULT_SIZE)
    return dataclasses.replace(chosen, baseline=LOCAL)


Progress = Callable[[Sequence[Workload], Mapping[tuple[str, str], float]], Events]


def run_cloudlab(
    options: CloudOptions,
    store: Store,
    progress: Progress,
    on_note: Callable[[str], None],
    command: str,
    on_saved: Callable[[str], None] | None = None,
) -> tuple[str, str]:
    """The run's id and its status ("complete" or "interrupted": Ctrl-C raises Interrupted
    after the lab is down). ``progress(workloads, learnt)`` makes the run's events once its
    workloads are known, with what each (target, workload) cost in this machine's earlier
    cloud-lab runs (history.py: the first ETA). ``on_saved(run_id)`` is called after every stored sample."""
    run_options = with_defaults(options.run)
    fio = find_fio()
    t0 = time.monotonic()
    with CloudLab(options.specs, keep=options.keep, on_note=on_note) as lab:
        working = [m for m in lab.mounts if m.error is None]
        on_note(f"cloudlab: remote, delay proxy and {len(working)} mounts up in {time.monotonic() - t0:.1f} s")
        for m in lab.mounts:
            if m.error:
                on_note(f"{m.label}: {m.error}")
        if not working:
            raise UsageError("no rclone mount came up; see the notes above (mountbench doctor --cloud)")
        targets = [(LOCAL, lab.local_dir, None)] + [(m.label, m.path, m.remote_path) for m in working]
        request = runrequest.resolve(run_options, [f"{label}={path}" for label, path, _ in targets], fio)
        warm = options.warm and any(m.spec.mode.caches_reads for m in working)
        workloads, phases = with_phases(request.workloads, warm=warm)
        request = dataclasses.replace(request, workloads=tuple(workloads))
        probes: list[CloudMountProbe] = []
        lags: list = []
        errors: list[str] = [f"{m.label}: {m.error}" for m in lab.mounts if m.error]
        if options.probe:
            on_note(f"cloudlab: probing {len(targets)} targets at once (sync with the remote, up to "
                    f"{options.probe_timeout_s:g} s per wait)")  # fmt: skip
            probes, failed = probe_all(
                targets,
                lab.workdir,
                timeout=options.probe_timeout_s,
                repeat=options.probe_repeat,
                seeds={m.label: lab.seed(m) for m in working},
            )
            errors += failed
            for stuck in lab.note_stuck_uploads_of(working, UPLOAD_STALL_S):
                on_note(stuck)
            on_note(f"cloudlab: probed in {time.monotonic() - t0:.1f} s from the start; now the upload lag of a tree "
                    "written through each mount")  # fmt: skip
            lags, failed = measure_all(
                [(m.label, m.path, m.remote_path) for m in working], TREE_LAG_TIMEOUT_S, options.tree_lag_files
            )
            errors += failed
            # a tree file it never uploads must not hold every sample
            lab.note_stuck_uploads_of(working, UPLOAD_STALL_S)
        described = [CloudTarget(LOCAL, None, None)] + [
            CloudTarget(m.label, m.spec.mode.name, m.spec.rtt_ms, m.spec.bandwidth_kbps, m.options) for m in working
        ]
        facts = CloudProbe(tuple(described), tuple(probes), options.probe_repeat, options.probe_timeout_s,
                           dict(lab.tools), tuple(errors), phases, tuple(lags))  # fmt: skip
        on_note(DELAY_NOTE)
        config = dataclasses.replace(request.config, lab=CloudLabFacts(facts))
        host = hostinfo.collect(fio.version) | host_facts(request.runners) | {"cloudlab": dict(lab.tools)}
        learnt = learnt_here(store, request.targets, request.workloads, described)
        events = progress(request.workloads, learnt)
        session = _session(lab, dataclasses.replace(request, config=config), store, events, on_saved, phases=phases)
        status = run_to_end(session, command=command, host=host)
        on_note(delay_count(lab))
    return session.run_id, status


def learnt_here(
    store: Store, targets: Sequence[Target], workloads: Sequence[Workload], described: Sequence[CloudTarget]
) -> Mapping[tuple[str, str], float]:
    """(target label, workload name) -> what one sample cost in this machine's last complete cloud-lab
    runs (labs/history.py: the first ETA). A target is the same target when it is the same mount: its
    label (cache mode and RTT) at the same bandwidth, or the local disk; its path is new every run
    (``.../cloudlab/<id>/mnt/off-20ms``)."""
    now = {t.label: t for t in described}

    def same(run: RunData, label: str) -> bool:
        if label == LOCAL:
            return True
        assert isinstance(run.config.lab, CloudLabFacts)
        then = run.config.lab.probe.target(label)
        return then is not None and label in now and _wire(then) == _wire(now[label])

    earlier = history.earlier_runs(store, CloudLabFacts.name, "cloudlab")
    return history.learnt_here(earlier, {t.label: t for t in targets}, workloads, same)


def _wire(target: CloudTarget) -> tuple[object, ...]:
    return target.mode, target.rtt_ms, target.bandwidth_kbps


def resume_cloudlab(
    run: RunData,
    store: Store,
    events: Events,
    on_note: Callable[[str], None],
    on_saved: Callable[[str], None] | None = None,
    keep: bool = False,
) -> str:
    """Finish an interrupted or killed cloud-lab run: the lab is made again as the run recorded
    it (the same cache modes, RTTs and bandwidth, checked against the same rclone), its mounts
    stand in for the old ones at their new paths, and the samples not yet taken are taken.
    The probe is not repeated: the run keeps the one it stored. Returns the final status."""
    if not isinstance(run.config.lab, CloudLabFacts):
        raise UsageError(f"run {run.id} is not a cloudlab run; resume it with 'mountbench run --resume {run.id}'")
    probe = run.config.lab.probe
    specs = [CloudSpec(CACHE_MODES[t.mode], round(t.rtt_ms or 0), t.bandwidth_kbps) for t in probe.targets if t.mode]
    fio = find_fio()
    with CloudLab(specs, keep=keep, on_note=on_note) as lab:
        paths = {LOCAL: lab.local_dir} | {m.label: m.path for m in lab.mounts if m.error is None}
        missing = [r.target.label for r in run.targets if r.target.label not in paths]
        if missing:
            raise TargetError(f"run {run.id} cannot be resumed: {', '.join(missing)} did not come up again; "
                              "see the notes above (mountbench doctor --cloud)")  # fmt: skip
        then, now = probe.tools.get("rclone"), lab.tools.get("rclone")
        if then and now and then != now:
            raise TargetError(f"run {run.id} cannot be resumed: it measured rclone {then}, this is {now}; its "
                              "samples would mix two rclones. Start a new run")  # fmt: skip
        on_note(f"cloudlab: resuming run {run.id} on {len(paths) - 1} mounts made as it recorded")
        request = runrequest.from_stored(run, fio, relocated=paths)
        for target in request.targets:
            store.move_target(run.id, target.label, target.path)
        session = _session(lab, request, store, events, on_saved, run_id=run.id, phases=probe.phases)
        on_note(DELAY_NOTE)
        status = run_to_end(session, command=run.command, host=run.host, resume=True)
        on_note(delay_count(lab))
        return status


def _session(
    lab: CloudLab,
    request: runrequest.RunRequest,
    store: Store,
    events: Events,
    on_saved: Callable[[str], None] | None,
    run_id: str | None = None,
    phases: dict[str, str] | None = None,
) -> Session:
    """The run on the lab's targets, with rclone's own cost measured around every sample and the
    lab's steps around each (phases.py: uploads done, cold or warm)."""
    working = [m for m in lab.mounts if m.error is None]
    watch = ServingWatch(lab.serving_pids, {m.label: mode_caveats(m.spec.mode) for m in working})
    runners = phased(request.runners, lab, phases or {})
    return Session(
        request.config, request.targets, request.workloads, runners, store, events,
        on_saved=on_saved, watch=watch, run_id=run_id,  # type: ignore[arg-type]
    )  # fmt: skip
