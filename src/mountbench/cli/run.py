"""`mountbench run`: compare the storage behind directories, or finish an interrupted run."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import click

from mountbench.cli.console import command_line, err, out, print_run
from mountbench.cli.options import debug_option, given_run_options, options_from_json, pop_run_options, run_options
from mountbench.cli.progress import ProgressEvents
from mountbench.engine import request as runrequest
from mountbench.engine.session import Events, Interrupted, Session, check_space, plan_dry_run
from mountbench.errors import UsageError
from mountbench.fio.binary import find_fio
from mountbench.host import facts as hostinfo
from mountbench.kinds import host_facts
from mountbench.model import Workload
from mountbench.records.events import EventLog, Fanout
from mountbench.records.export import write_document
from mountbench.report.document import make_document
from mountbench.store import Store, default_db_path
from mountbench.units import format_seconds


@click.command()
@click.argument("target", nargs=-1)
@run_options
@click.option("--dry-run", is_flag=True, help="print the plan and the exact fio job files, then exit")
@click.option("--resume", metavar="RUN", help="finish an interrupted or killed run")
@click.option(
    "--events",
    "events_path",
    type=click.Path(path_type=Path),
    hidden=True,
    help="also write machine-readable progress events (JSON lines) to this file (- for stdout)",
)
@click.option("--options-json", hidden=True, help="the run options as one JSON record (how the lab runs the guest)")
@debug_option
def run(
    target: tuple[str, ...],
    dry_run: bool,
    resume: str | None,
    events_path: Path | None,
    options_json: str | None,
    db: Path | None,
    json_out: Path | None,
    debug: bool,
    **params: object,
) -> None:
    """Compare the storage behind TARGET directories (label=path to name them).

    Each target gets a scratch directory .mountbench-<run id>/ that is removed
    afterwards; nothing else in it is touched. With no TARGET: the current
    directory against a RAM baseline.

    \b
    mountbench run /mnt/9p /mnt/virtiofs --tree git --only extract --repeat 5 --warmup 1
    """
    per_client = bool(params.pop("per_client", False))
    if resume:
        if target or given_run_options(params) or options_json:
            raise UsageError("--resume takes no targets, presets or job files: the run's own are used")
        _resume(resume, db, json_out, events_path, per_client)
        return
    options = options_from_json(options_json) if options_json else pop_run_options(params, default_budget=True)
    fio = find_fio()
    request = runrequest.resolve(options, target, fio)
    if dry_run:
        _print_dry_run(request)
        return
    for notice in (*request.notes, *check_space(request.targets, request.workloads, request.runner_for)):
        err.print(f"note: {notice}")
    with Store(db or default_db_path()) as store:
        session = _session(request, store, events_path, json_out)
        host = hostinfo.collect(fio.version) | host_facts(request.runners)
        _execute(session, store, command=command_line(), host=host, per_client=per_client)


def _session(
    request: runrequest.RunRequest,
    store: Store,
    events_path: Path | None,
    json_out: Path | None,
    run_id: str | None = None,
) -> Session:
    return Session(
        request.config,
        request.targets,
        request.workloads,
        request.runners,
        store,
        _events(events_path, request.workloads),
        run_id=run_id,
        on_saved=_exporter(store, json_out),
        watch=request.watch,
    )


def _execute(
    session: Session, store: Store, *, command: str, host: dict, resume: bool = False, per_client: bool = False
) -> None:
    try:
        session.ready_targets()
        session.prepare_all()
        status = session.execute(resume=resume, command=command, host=host)
    except BaseException:
        session.finish()  # idempotent: only scratch directories carrying this run's marker go
        raise
    run = store.load_run(session.run_id)
    print_run(run, per_client=per_client)
    for notice in session.notices:
        err.print(f"warning: {notice}", markup=False)
    if status != "complete":
        raise Interrupted(session.run_id)


def _events(events_path: Path | None, workloads: Sequence[Workload] = ()) -> Events:
    """The progress bar, plus a JSON-lines event log when asked for (the lab reads it)."""
    progress = ProgressEvents(err, workloads)
    if events_path is None:
        return progress
    # the file lives as long as the process
    stream = sys.stdout if str(events_path) == "-" else open(events_path, "a", buffering=1)  # noqa: SIM115
    return Fanout(progress, EventLog(stream))


def _resume(
    run_ref: str, db: Path | None, json_out: Path | None, events_path: Path | None = None, per_client: bool = False
) -> None:
    with Store(db or default_db_path()) as store:
        run = store.load_run(run_ref)
        if run.status == "complete":
            raise UsageError(f"run {run.id} is complete; nothing to resume ('mountbench show {run.id}' shows it)")
        request = runrequest.from_stored(run, find_fio())
        session = _session(request, store, events_path, json_out, run_id=run.id)
        _execute(session, store, command=run.command, host=run.host, resume=True, per_client=per_client)


def _exporter(store: Store, json_out: Path | None) -> Callable[[str], None] | None:
    """Rewrite the JSON export after every sample, so a later failure loses nothing."""
    if json_out is None:
        return None
    json_out = json_out.expanduser()
    if json_out.is_dir():
        raise UsageError(f"--json {json_out} is a directory; give a file name, e.g. {json_out / 'run.json'}")
    if not json_out.parent.is_dir():
        raise UsageError(f"--json {json_out}: directory {json_out.parent} does not exist; create it first")
    if not os.access(json_out.parent, os.W_OK) or (json_out.exists() and not os.access(json_out, os.W_OK)):
        raise UsageError(f"--json {json_out} cannot be written (read-only or no permission); choose a writable path")

    def export(run_id: str) -> None:
        write_document(json_out, make_document([store.load_run(run_id)]))

    return export


def _print_dry_run(request: runrequest.RunRequest) -> None:
    config = request.config
    dry = plan_dry_run(config, request.targets, request.workloads, request.runners)
    total = sum(item.estimate_s for item in dry.plan)
    measured = sum(not item.warmup for item in dry.plan)
    warm_text = f", after {len(dry.plan) - measured} warm-ups" if config.warmup else ""
    out.print(
        f"[bold]Plan[/bold]: {len(request.targets)} targets × {len(request.workloads)} workloads × "
        f"{config.repeat} repetitions = {measured} samples{warm_text}, about {format_seconds(total)} of I/O "
        f"(seed {config.seed}, baseline {config.baseline})"
    )
    for target in request.targets:
        # paths and job files are never wrapped: they are meant to be copied
        out.print(
            f"  target {target.label}: {target.path} (scratch {dry.scratch_names[target.label].name}/)",
            soft_wrap=True,
        )
    out.print("[bold]Order[/bold] (rounds shuffled by the seed):")
    for item in dry.plan:
        out.print(
            f"  {item.name}: {item.target} · {item.workload} (≤ {format_seconds(item.estimate_s)})",
            highlight=False,
        )
    out.print("[bold]Job files[/bold] (O_DIRECT is not probed in a dry run):")
    for (label, _name), prepared in dry.prepared.items():
        out.print(f"[dim]# {label}[/dim]")
        out.print(prepared.text, markup=False, highlight=False, soft_wrap=True)
        for caveat in prepared.caveats:
            out.print(f"  caveat: {caveat.text}", markup=False)
