"""The fio-on-several-clients kind: one fio job run on several machines at once through
fio's own client/server engine (``fio --server`` on each client, one
``fio --client=A jobA --client=B jobB ...`` from the controller per sample).

A workload wraps a fio job and the clients it runs on. ``run --client A --client B``
makes one such workload per fio job; ``--clients 1,2,4`` makes one per job and count
(the first N clients), whose descriptions form a "clients" sweep, the scaling curve.
The target path is the path as the clients see it: a shared directory that the
controller sees at the same path (checked with a real write before the run starts).
Each client works in its own directory ``<scratch>/<client>/``, so files never collide,
except for a job that sets fio's own ``unique_filename=0``: then all clients share
``<scratch>/shared/`` and the job's files, as that option means in fio.

The sample's metrics are mountbench's aggregate (clients/results.py: sums, and latency
percentiles from the merged histograms); each client's own figures are stored with it,
with when it started after the first client and how long it ran (from its own latency log
stamps), and a caveat when the clients ran together for less than 90 % of the sample.

``ssh://`` clients are started once the run really runs (``ready``), through
clients/sshremote.py, and stopped in ``close`` (the session calls it at the end, on
Ctrl-C and on failure); their jobs wait at a start barrier (fio's exec_prerun). A client
lost mid-run (found unreachable: an ``ssh://`` one by its SSH connection) fails that
sample by name and is left out of the run's later samples, which run on the others and
carry a caveat saying so.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mountbench import model
from mountbench.clients import preflight
from mountbench.clients import results as client_results
from mountbench.clients.addresses import ClientSpec, fio_cwd
from mountbench.clients.agent import barrier_option
from mountbench.clients.invocation import KilledOnInterrupt, run_watched, why_unreachable
from mountbench.clients.results import ClientsOutcome, clients_outcome
from mountbench.clients.sshremote import SshClients
from mountbench.errors import UsageError
from mountbench.fio.binary import FioInfo
from mountbench.fio.jobfile import FioJob, render_job, wants_direct
from mountbench.fio.parse import FioOutputError, load_fio_json
from mountbench.host.contain import Fence
from mountbench.kinds.base import Adjustments, RunnerSetup, new_workload, stored_workload
from mountbench.kinds.fio import CLOCK_FACT, FIO_FIXED_COST_S, FioRunner, cache_sensitive, fio_message, jobs_of
from mountbench.kinds.fio import KIND as FIO
from mountbench.kinds.runner import RunnerDefaults
from mountbench.model import (
    Caveat,
    ClientResult,
    Description,
    Outcome,
    Prepared,
    RunSettings,
    SweepPoint,
    TargetContext,
    Workload,
    WorkloadFailed,
)

NAME = "fioclients"
SHARED_DIR = "shared"  # where clients of a unique_filename=0 job work together
# fio's client/server path per sample on top of a local fio's start-up (connecting, sending the
# job, the server's forks, collecting results): a 1 s job took 2.5 s that way against 1.4 s run
# locally, on this project's 2-CPU VM (see bench/clients_scaling.py)
CLIENT_COST_S = 1.1
OVERDUE_GRACE_S = 10.0  # past a sample's expected duration, the clients' reachability is checked
# what results.py says of a client that went away (as opposed to one whose job failed)
LOST_WORDS = ("disconnected mid-sample", "stopped answering", "could not be reached", "became unreachable")
# the start barrier: how far ahead of sending the jobs their common start is set; on this
# project's loaded 2-CPU VM three clients started up to ~0.4 s apart without one
BARRIER_LEAD_S = 1.0  # the first sample's; a miss makes it longer for the rest of the run
BARRIER_PER_CLIENT_S = 0.1
BARRIER_MAX_S = 10.0
BARRIER_SLACK_S = 0.02  # a start this late is the barrier's own jitter (a sleep, a date), not a miss
LOST_CONFIRM_S = 8.0  # how long an ssh:// client's connection may take to end after fio saw it go


METHOD = (
    "Multi-client workloads run fio on every client at once through fio's own client/server; IOPS and "
    "bandwidth are the clients' sum, latency percentiles come from their merged histograms."
)


@dataclass(frozen=True)
class ClientsJob:
    """What a workload of this kind carries: the fio workload and the clients it runs on."""

    job: Workload  # of kind "fio"
    clients: tuple[ClientSpec, ...]
    scaling: bool  # one of several client counts (--clients): a point of the scaling sweep

    @property
    def shared(self) -> bool:
        """fio's ``unique_filename=0``: every client works on the same files."""
        return FioJob.from_spec(self.job.spec).get("unique_filename") == "0"

    def to_spec(self) -> dict[str, Any]:
        return {
            "job": self.job.to_dict(),
            "clients": [c.to_dict() for c in self.clients],
            "scaling": self.scaling,
            "headline": list(self.job.description.headline),
        }

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> ClientsJob:
        return cls(
            stored_workload(spec["job"], FIO.describe),
            tuple(ClientSpec.from_dict(c) for c in spec["clients"]),
            bool(spec.get("scaling", False)),
        )


def client_workloads(
    workloads: Sequence[Workload], clients: Sequence[ClientSpec], counts: Sequence[int]
) -> list[Workload]:
    """Each fio workload on the clients: once on all of them, or once per count in ``counts``."""
    others = [w.name for w in workloads if w.kind != FIO.name]
    if others:
        raise UsageError(
            f"--client runs fio workloads only; {', '.join(others)} run on this machine: "
            "drop --client, or leave out --preset tree/--tree/--tarball"
        )
    together = [w.name for w in workloads if len(jobs_of(w)) > 1]
    if together:  # the clients run one fio job each: sections run together would lose all but the first
        raise UsageError(
            f"--client runs one fio job per workload; {', '.join(together)} is several sections fio runs "
            "together: run it without --client, or give its sections stonewall so each is a workload"
        )
    out = []
    for workload in workloads:
        if not counts:
            out.append(_wrap(workload, tuple(clients), scaling=False))
        else:
            out += [_wrap(workload, tuple(clients[:n]), scaling=True) for n in counts]
    return out


def _wrap(workload: Workload, clients: tuple[ClientSpec, ...], *, scaling: bool) -> Workload:
    n = len(clients)
    plural = "client" if n == 1 else "clients"
    name = f"{workload.name}-c{n}" if scaling else workload.name
    title = f"{workload.title}, {n} {plural}"
    return new_workload(KIND, name, title, workload.source, ClientsJob(workload, clients, scaling).to_spec())


class FioClientsKind:
    name = NAME
    takes_runtime = True  # --runtime (and --budget) shorten its samples
    options = ()  # fio's --file-state is fio's option

    def from_preset(self, preset: str, data: Mapping[str, Any], entry: Mapping[str, Any]) -> Workload:
        raise UsageError(f"preset {preset}: fio on several clients is run by 'run --client HOST', not by a preset")

    def describe(self, workload: Workload) -> Description:
        wrapped = ClientsJob.from_spec(workload.spec)
        inner = wrapped.job.description
        n = len(wrapped.clients)
        space = inner.space_bytes
        if space is not None and not wrapped.shared:
            space *= n  # each client lays out its own files
        sweep = None
        if wrapped.scaling:
            sweep = SweepPoint(group=f"clients {wrapped.job.name}", option="clients", value=str(n), number=float(n))
        labels = ",".join(c.label for c in wrapped.clients)
        together = "sharing one file set" if wrapped.shared else "each in its own directory"
        return Description(
            summary=f"{n} client{'s' if n != 1 else ''} at once ({together}): {inner.summary}",
            options=(*inner.options, f"clients={labels}"),
            headline=inner.headline,
            directions=inner.directions,
            block_size=inner.block_size,
            percentiles=inner.percentiles,
            duration_bound_s=inner.duration_bound_s,
            space_group=inner.space_group,
            space_bytes=space,
            sweep=sweep,
            clients=tuple(c.label for c in wrapped.clients),
            origin=wrapped.job.name,
            origin_title=wrapped.job.title,
            method=METHOD,
        )

    def _rewrap(self, workload: Workload, job: Workload) -> Workload:
        wrapped = ClientsJob.from_spec(workload.spec)
        spec = ClientsJob(job, wrapped.clients, wrapped.scaling).to_spec()
        return new_workload(KIND, workload.name, workload.title, workload.source, spec)

    def adjust(self, workload: Workload, adjustments: Adjustments) -> Workload:
        return self._rewrap(workload, FIO.adjust(ClientsJob.from_spec(workload.spec).job, adjustments))

    def declared_size(self, workload: Workload) -> int | None:
        return FIO.declared_size(ClientsJob.from_spec(workload.spec).job)

    def with_size(self, workload: Workload, size: int) -> Workload:
        return self._rewrap(workload, FIO.with_size(ClientsJob.from_spec(workload.spec).job, size))

    def renamed(self, workload: Workload, name: str, title: str) -> Workload:
        return new_workload(KIND, name, title, workload.source, workload.spec)

    def fsync_variant(self, workload: Workload) -> Workload | None:
        return None  # --fsync-writes made its variants before the workloads went to the clients

    def preset_alone(self, adjustments: Adjustments) -> str | None:
        return None

    def make_runner(self, setup: RunnerSetup) -> FioClientsRunner:
        return FioClientsRunner(setup.fio)


KIND = FioClientsKind()


# --- running -------------------------------------------------------------------------------


class FioClientsRunner(RunnerDefaults):
    kind = NAME

    def __init__(self, fio: FioInfo) -> None:
        self.fio = fio
        # Client jobs keep each server's own clock choice: this machine's TSC test says
        # nothing about theirs (FioRunner chooses only when its clocksource is unset).
        self.inner = FioRunner(fio)
        self.inner.clocksource = None
        self.clients: tuple[ClientSpec, ...] = ()
        # client label -> host facts; filled in place (targets' filesystems once they are ready),
        # so the run's host record can hold this dict before the run starts
        self.facts: dict[str, dict[str, Any]] = {}
        self.writes: dict[tuple[str, str], preflight.WriteCheck] = {}  # (target, client) -> write check
        self.laid_out: set[tuple[str, str, tuple[str, ...]]] = set()
        self.shared = False  # some workload has its clients share one file set
        self.unsettled_until = 0.0  # monotonic time before which an abandoned job may still write
        self.ssh: SshClients | None = None  # the ssh:// clients this run started (None: none)
        self.dial: dict[str, ClientSpec] = {}  # label -> the client as fio's client reaches it
        self.lost: dict[str, str] = {}  # label -> why: clients lost mid-run, left out of later samples
        self.barrier_lead_s = BARRIER_LEAD_S  # grows when a client misses the start barrier
        self.barrier_instant_ns: int | None = None  # the last sample's barrier (epoch ns, this clock)

    def host_facts(self) -> dict[str, Any]:
        """What a run's host record says about its clients (``{"clients": {label: facts}}``), or
        nothing. The facts are filled in further once the targets are ready."""
        if not self.clients:
            return {}
        return {"clients": self.facts, CLOCK_FACT: "each client's fio chooses its own"}

    # --- before anything runs ----------------------------------------------------------------

    def check(self, workloads: list[Workload]) -> None:
        """Every job with fio's own parser (here), then every client: reachable, same fio."""
        wrapped = [ClientsJob.from_spec(w.spec) for w in workloads]
        self.inner.check(list({w.job.name: w.job for w in wrapped}.values()))
        seen: dict[str, ClientSpec] = {}
        for item in wrapped:
            for client in item.clients:
                seen.setdefault(client.label, client)
        self.clients = tuple(seen.values())
        self.shared = any(item.shared for item in wrapped)
        direct = [c for c in self.clients if not c.ssh]
        self.dial = {c.label: c for c in direct}
        if direct:  # ssh:// clients are started (and checked) once the run is really going to run: ready()
            self.facts.update(preflight.check_clients(self.fio, direct))
            preflight.refuse_one_machine_twice(self.facts)

    def space_needed(self, workload: Workload) -> tuple[str, int | None]:
        return workload.description.space_group, workload.description.space_bytes

    def ready(self, contexts: list[TargetContext]) -> None:
        """The ssh:// clients started (logged in, fio checked, its server started and
        tunnelled); each client's directory in every scratch directory, and a real write by
        every client into it that this machine then sees. On failure, whatever was started
        on the clients is stopped again."""
        if not self.clients:
            return
        try:
            paths = [ctx.target.path for ctx in contexts]
            self._start_ssh_clients(paths)
            preflight.refuse_one_machine_twice(self.facts)  # an ssh:// client and a `serve` on it
            preflight.add_path_facts(self.facts, [c for c in self.clients if not c.ssh], paths)
            if self.ssh is not None:
                self.ssh.add_path_facts(paths)
                for label, facts in self.ssh.facts.items():
                    self.facts.setdefault(label, {})["paths"] = facts.get("paths", {})
            dialed = self._dialed(self.clients)
            for ctx in contexts:
                for name in [SHARED_DIR] * self.shared + [c.dirname for c in self.clients]:
                    (ctx.scratch / name).mkdir(exist_ok=True)
                with _workdir() as workdir:
                    checks = preflight.check_writable(self.fio.path, dialed, ctx.scratch, workdir)
                for label, check in checks.items():
                    self.writes[(ctx.target.label, label)] = check
        except BaseException:
            self.close()
            raise

    def _start_ssh_clients(self, paths: Sequence[str]) -> None:
        remote = [c for c in self.clients if c.ssh]
        if not remote:
            return
        self.ssh = SshClients(self.fio, remote)
        self.dial.update(self.ssh.start(paths))
        preflight.check_tunnels(self.fio, [self.dial[c.label] for c in remote])  # fio's own probe through each
        for client in remote:
            self.facts[client.label] = {k: v for k, v in self.ssh.facts[client.label].items() if v != preflight.UNKNOWN}

    def close(self) -> list[str]:
        """Stop everything started on the ssh:// clients (idempotent); what the user should know."""
        if self.ssh is None:
            return []
        self.ssh.stop()
        notices, self.ssh.notices = self.ssh.notices, []
        return notices

    def _shown(self, client: ClientSpec) -> str:
        """How --dry-run names a client in fio's terms (an ssh:// client not started: as given)."""
        dialed = self.dial.get(client.label, client)
        return dialed.fio_arg if dialed.dial or not dialed.ssh else f"{client.label} (through its SSH tunnel)"

    def _dialed(self, clients: Sequence[ClientSpec]) -> list[ClientSpec]:
        return [self.dial.get(c.label, c) for c in clients]

    def _reachable(self, client: ClientSpec) -> str:
        """'' when the client is there; an ssh:// client by its SSH connection (its tunnel's
        local end accepts connections even when the machine behind it is gone)."""
        if client.ssh and self.ssh is not None:
            return self.ssh.why_lost(client.label, ask=True)
        return why_unreachable(client)

    def _active(self, clients: Sequence[ClientSpec]) -> list[ClientSpec]:
        """The clients a sample runs on: those not lost earlier in the run (an ssh:// client
        whose connection has ended is lost now, before its sample is wasted)."""
        if self.ssh is not None:
            for client in clients:
                why = self.ssh.why_lost(client.label) if client.ssh and client.label not in self.lost else ""
                if why:
                    self.lost[client.label] = why
        active = [c for c in clients if c.label not in self.lost]
        if not active:
            gone = "; ".join(f"{c.label}: {self.lost[c.label]}" for c in clients)
            raise WorkloadFailed(f"every client of this workload was lost earlier in the run ({gone})")
        return active

    def _fewer_caveat(self, asked: Sequence[ClientSpec], active: Sequence[ClientSpec]) -> tuple[Caveat, ...]:
        missing = [c for c in asked if c not in active]
        if not missing:
            return ()
        gone = ", ".join(f"{c.label} ({self.lost.get(c.label, 'lost')})" for c in missing)
        return (
            Caveat(
                client_results.FEWER_CLIENTS,
                f"ran on {len(active)} of {len(asked)} clients: {gone} lost earlier in the run; this aggregate is "
                f"not comparable with one over all {len(asked)}",
            ),
        )

    # --- each sample -------------------------------------------------------------------------

    def prepare(self, workload: Workload, ctx: TargetContext, settings: RunSettings) -> Prepared:
        wrapped = ClientsJob.from_spec(workload.spec)
        job = FioJob.from_spec(wrapped.job.spec)
        overrides: list[tuple[str, str | None]] = []
        caveats: list[Caveat] = []
        direct = wants_direct(job)
        refused = [
            (c.label, self.writes[(ctx.target.label, c.label)].odirect_detail)
            for c in wrapped.clients
            if (ctx.target.label, c.label) in self.writes and not self.writes[(ctx.target.label, c.label)].odirect
        ]
        if direct and refused:
            overrides += [("direct", "0"), ("buffered", "1")]
            where = ", ".join(f"{label} ({detail})" for label, detail in refused)
            caveats.append(Caveat(model.ODIRECT_REFUSED, f"buffered on every client: O_DIRECT refused on {where}"))
            direct = False
        if not direct and cache_sensitive(job):
            caveats.append(
                Caveat(
                    model.PAGE_CACHE,
                    "page cache may serve these: buffered I/O on the clients, whose caches mountbench cannot drop",
                )
            )
        comment = f"mountbench: workload {workload.name} ({workload.source}) on target {ctx.target.label}"
        texts = {}
        for client in wrapped.clients:
            where = ctx.scratch / (SHARED_DIR if wrapped.shared else client.dirname)
            options = [("directory", str(where)), *overrides, *client_results.skew_log_options(client)]
            texts[client.label] = render_job(job, options, f"{comment}, client {client.label}")
        bound = workload.description.duration_bound_s
        return Prepared(
            workload=workload,
            target=ctx.target.label,
            text="".join(f"# --client={self._shown(c)}\n{texts[c.label]}" for c in wrapped.clients),
            caveats=tuple(caveats),
            buffered=False,
            estimate_s=(bound or 60.0) + FIO_FIXED_COST_S + CLIENT_COST_S,
            working_set=workload.description.space_bytes,
            payload={"jobs": texts},
            uncached_why="direct I/O" if direct else "the clients' caches cannot be dropped from here; see the caveat",
        )

    def setup(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> None:
        """Lay out the files on every client first (fio's create_only=1, untimed), once per
        file set: fio has no start barrier across clients, and a client still laying out
        its files would not be running alongside the others."""
        wrapped = ClientsJob.from_spec(prepared.workload.spec)
        active = self._active(wrapped.clients)
        key = (ctx.target.label, prepared.workload.description.space_group, tuple(c.label for c in active))
        if key in self.laid_out:
            return
        texts = {label: text + "create_only=1\n" for label, text in prepared.payload["jobs"].items()}
        timeout = 3 * ((prepared.working_set or 0) / 5e6) + 120
        self._run_fio(active, texts, settings.workdir, f"{prepared.target}-layout", timeout, "laying out", 0,
                      overdue_s=30 + (prepared.working_set or 0) / 50e6)  # fmt: skip
        self.laid_out.add(key)

    def run(self, prepared: Prepared, ctx: TargetContext, settings: RunSettings) -> Outcome:
        wrapped = ClientsJob.from_spec(prepared.workload.spec)
        timeout = 3 * prepared.estimate_s + (prepared.working_set or 0) / 5e6 + 120
        stem = f"{prepared.target}-{prepared.workload.name}"
        bound = prepared.workload.description.duration_bound_s or 60.0
        active = self._active(wrapped.clients)
        raw, parts = self._run_fio(active, prepared.payload["jobs"], settings.workdir, stem, timeout,
                                   "running", bound, overdue_s=prepared.estimate_s + OVERDUE_GRACE_S)  # fmt: skip
        clients, skew_caveats = self._with_skew(parts.clients, active, settings.workdir)
        caveats = (*parts.caveats, *skew_caveats, *self._fewer_caveat(wrapped.clients, active))
        return Outcome(parts.aggregate, raw, caveats, clients=clients)

    def _with_skew(
        self, parts: Sequence[ClientResult], clients: Sequence[ClientSpec], workdir: Path
    ) -> tuple[tuple[ClientResult, ...], tuple[Caveat, ...]]:
        """Each client's start (after the earliest one's) and how long it ran, from the
        timestamps of its own clock in its latency logs, less its clock's offset; a caveat
        when they ran together for less than results.OVERLAP_FLOOR of the sample."""
        spans = {}
        logs = fio_cwd(self._dialed(clients), workdir)
        for client in clients:
            files = sorted(logs.glob(client_results.skew_log_glob(client)))
            span = client_results.activity_span([f.read_text(errors="replace") for f in files])
            offset = float(self.facts.get(client.label, {}).get("clock_offset_ms", 0.0) or 0.0)
            if span is not None:
                spans[client.label] = (span[0] - offset, span[1] - offset)
        self._barrier_missed(spans)
        offsets = client_results.start_offsets(spans)
        out = tuple(
            ClientResult(p.client, {**p.metrics, client_results.START_OFFSET: offsets[p.client][0],
                                    client_results.ACTIVE: offsets[p.client][1]}, p.error)
            if p.client in offsets else p
            for p in parts
        )  # fmt: skip
        skew, together = client_results.overlap_of(out)
        return out, client_results.overlap_caveat(skew, together)

    def cleanup(self, ctx: TargetContext) -> None:
        """After an interrupted sample whose fio client had to be killed, the servers finish
        their jobs on their own: wait for that before the scratch directory goes."""
        wait = self.unsettled_until - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    # --- one fio client invocation ------------------------------------------------------------

    def _run_fio(
        self,
        clients: Sequence[ClientSpec],
        texts: Mapping[str, str],
        workdir: Path,
        stem: str,
        timeout: float,
        doing: str,
        settle_s: float,
        overdue_s: float,
    ) -> tuple[str, ClientsOutcome]:
        """One ``fio --client`` for all ``clients``: their raw JSON and what each delivered.
        ``settle_s``: how long a server's job may go on if fio's client has to be killed;
        ``overdue_s``: after how long the clients' reachability is checked."""
        clients = self._dialed(clients)
        barriers = self._barriers(clients) if doing == "running" else {}
        jobs = []
        logs = fio_cwd(clients, workdir)  # where fio's client runs, and writes the logs it receives
        for client in clients:
            path = workdir / _slug(f"{stem}-{client.dirname}.fio")
            barrier = barriers.get(client.label)
            path.write_text(texts[client.label] + (f"exec_prerun={barrier}\n" if barrier else ""))
            jobs.append((client, path))
            for old in logs.glob(client_results.skew_log_glob(client).replace("_clat.", "_*lat.")):
                old.unlink(missing_ok=True)
        out_path = workdir / _slug(f"{stem}.json")
        out_path.unlink(missing_ok=True)
        # --eta=always: fio's client then asks every server for its progress each second and drops
        # (and names) one that stops answering within 5 s; without it an unreachable client hangs the sample
        argv = [self.fio.path, "--output-format=json+", "--eta=always", f"--output={out_path}"]
        for client, path in jobs:
            argv += [f"--client={client.fio_arg}", str(path)]
        try:
            done = run_watched(argv, logs, clients, timeout=timeout, overdue_s=overdue_s, reachable=self._reachable,
                               fence=Fence.of([logs, workdir]))  # fmt: skip
        except KilledOnInterrupt:
            self._abandoned(settle_s)
            raise
        if done.killed:
            self._abandoned(settle_s)
        raw = out_path.read_text(errors="replace") if out_path.exists() else ""
        said = raw[: raw.find("{")] if "{" in raw else raw
        if done.lost:
            lost = {label for label, _ in done.lost}
            self.lost.update(dict(done.lost))
            parts = tuple(
                ClientResult(c.label, {}, f"client {c.label} became unreachable mid-sample ({why})")
                if (why := dict(done.lost).get(c.label))
                else ClientResult(c.label, {}, f"client {c.label} delivered no results (the sample was stopped)")
                for c in clients
            )
            message = "; ".join(p.error for p in parts if p.client in lost)
            raise WorkloadFailed(f"{message}; the sample was stopped", raw, parts)
        if done.timed_out:
            raise WorkloadFailed(f"fio's client did not finish {doing} within {timeout:.0f} s (a client hung?)", raw)
        try:
            parts = clients_outcome(load_fio_json(raw), clients, said + done.stderr)
        except FioOutputError as exc:
            message = fio_message(said + done.stderr) or str(exc)
            raise WorkloadFailed(f"fio's client failed {doing} (exit {done.returncode}): {message}", raw) from None
        if parts.failed:
            failed = self._blame(clients, parts.failed)
            # the clients lost (or named as failing) first, then those that lost their results with them
            ordered = sorted(failed, key=lambda c: "delivered no results" in c.error)
            message = "; ".join(c.error if c.error.startswith("client ") else f"client {c.client}: {c.error}"
                                for c in ordered if c.error)  # fmt: skip
            by_label = {c.client: c for c in failed}
            raise WorkloadFailed(message, raw, tuple(by_label.get(c.client, c) for c in parts.clients))
        return raw, parts

    def _barriers(self, clients: Sequence[ClientSpec]) -> dict[str, str]:
        """The start barrier of clients this run started over ssh (clients/sshremote.py:
        SshClients.barrier) and of `mountbench serve` clients (clients/agent.py:
        barrier_option): every job waits for one instant, BARRIER_LEAD_S (and a little per
        client) from now, enough for fio's client to send every job and the servers to set
        them up; a client that misses it starts late, which its start skew shows. All or
        none: a plain fio server starts its job as it receives it, so with one in the set a
        barrier on the others would only hold them back."""
        self.barrier_instant_ns = None
        if len(clients) < 2:
            return {}
        instant = time.time_ns() + int((self.barrier_lead_s + BARRIER_PER_CLIENT_S * len(clients)) * 1e9)
        found = {
            c.label: (self.ssh.barrier(c.label, instant) if self.ssh else None)
            or barrier_option(self.facts.get(c.label, {}), instant)
            for c in clients
        }
        if not all(found.values()):
            return {}
        self.barrier_instant_ns = instant
        return {label: option for label, option in found.items() if option}

    def _barrier_missed(self, spans: Mapping[str, tuple[float, float]]) -> None:
        """A client that started its I/O after the barrier's instant missed it (fio's client
        took longer to send every job, or a server to set one up, than the lead allowed):
        the later samples get a longer lead, by 1.5 times the miss, up to BARRIER_MAX_S."""
        if self.barrier_instant_ns is None or not spans:
            return
        late_s = max(start for start, _ in spans.values()) / 1000 - self.barrier_instant_ns / 1e9
        if late_s > BARRIER_SLACK_S:
            self.barrier_lead_s = min(BARRIER_MAX_S, self.barrier_lead_s + 1.5 * late_s)

    def _blame(self, clients: Sequence[ClientSpec], failed: Sequence[ClientResult]) -> list[ClientResult]:
        """Which failed clients went away (they are left out of the run's later samples) and
        which only lost their results with them: fio's client may report every connection
        "disconnected" when one server goes. A client is lost when it is found unreachable
        (an ssh:// client: its SSH connection ended, waited for up to LOST_CONFIRM_S), not
        because fio's words say so; a client whose own job failed is not lost."""
        by_label = {c.label: c for c in clients}
        suspects = [by_label[r.client] for r in failed
                    if r.client in by_label and any(words in r.error for words in LOST_WORDS)]  # fmt: skip
        newly: dict[str, str] = {}
        deadline = time.monotonic() + LOST_CONFIRM_S
        while suspects:
            for client in list(suspects):
                why = self._reachable(client)
                if why:
                    newly[client.label] = why
                    suspects.remove(client)
                    deadline = min(deadline, time.monotonic() + 1.0)  # one went: the others had little time
            if not suspects or time.monotonic() >= deadline or any(not c.ssh for c in suspects):
                break
            time.sleep(0.1)
        self.lost.update(newly)
        if not newly:
            return list(failed)
        gone = ", ".join(newly)
        out = []
        for result in failed:
            if result.client in newly:
                out.append(ClientResult(result.client, {}, f"client {result.client} was lost mid-sample: "
                                                            f"{newly[result.client]}"))  # fmt: skip
            elif any(words in result.error for words in LOST_WORDS):
                out.append(ClientResult(result.client, {}, f"client {result.client} delivered no results "
                                                            f"(fio's client ended when {gone} was lost)"))  # fmt: skip
            else:
                out.append(result)
        return out

    def _abandoned(self, settle_s: float) -> None:
        """fio's client was killed: the servers' jobs are not stopped by a vanished client and
        end at their runtime; cleanup() waits for that."""
        self.unsettled_until = max(self.unsettled_until, time.monotonic() + settle_s + 2.0)


@contextlib.contextmanager
def _workdir():
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="mountbench-clients-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _slug(text: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:150]
