"""Commands. The only place that turns errors into exit codes and output."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shlex
import signal
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from mountbench import __version__
from mountbench.cli.options import DB_HELP, given_run_options, options_from_json, pop_run_options, run_options
from mountbench.cli.progress import ProgressEvents
from mountbench.engine import request as runrequest
from mountbench.engine import workloads as workloads_mod
from mountbench.engine.session import Interrupted, Session, check_space, new_run_id, plan_dry_run
from mountbench.errors import ChecksFailed, ExitCode, MountbenchError, UsageError
from mountbench.fio.binary import find_fio, fio_engines
from mountbench.host import facts as hostinfo
from mountbench.host import targets as targets_mod
from mountbench.kinds import RunnerSetup, host_facts, make_runners
from mountbench.lab.mounts import KINDS as LAB_KINDS
from mountbench.model import RunData, Workload
from mountbench.presets import load_preset, preset_names
from mountbench.records.events import EventLog, Fanout
from mountbench.records.export import make_document, write_document
from mountbench.report import picktwo
from mountbench.report.clients_views import clients_terminal
from mountbench.report.content import build_report
from mountbench.report.grid import parse_unit
from mountbench.report.terminal import render_report, render_samples, render_sweeps
from mountbench.store import Store, default_db_path
from mountbench.units import format_bytes, format_seconds


def _console(stream) -> Console:
    """Piped output (logs, CI) gets a wide fixed width instead of rich's 80 columns."""
    width = None if stream.isatty() or os.environ.get("COLUMNS") else 140
    return Console(file=stream, width=width)


out = _console(sys.stdout)
err = _console(sys.stderr)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the click group and map every outcome to an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    try:
        cli.main(args=args, prog_name="mountbench", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:  # click's own usage errors, in our one-line form
        click.echo(f"mountbench: error: {_click_error_line(exc)}", err=True)
        sys.exit(ExitCode.USAGE)
    except (click.exceptions.Abort, KeyboardInterrupt):
        err.print("mountbench: interrupted")
        sys.exit(ExitCode.INTERRUPTED)
    except Interrupted as exc:
        click.echo(f"mountbench: {exc}", err=True)
        sys.exit(ExitCode.INTERRUPTED)
    except MountbenchError as exc:
        if debug:
            traceback.print_exc()
        click.echo(f"mountbench: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except Exception as exc:  # a bug: say so, and show the traceback only on request
        if debug:
            traceback.print_exc()
        else:
            click.echo(
                f"mountbench: internal error: {type(exc).__name__}: {exc} (rerun with --debug for details)", err=True
            )
        sys.exit(ExitCode.FAILURE)
    sys.exit(ExitCode.OK)


def _click_error_line(exc: click.ClickException) -> str:
    """'--repeat: 0 is not in the range 1<=x<=1000; see 'mountbench run --help''."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    context = getattr(exc, "ctx", None)
    if context is not None and isinstance(exc, click.UsageError):
        return f"{message}; see '{context.command_path} --help'"
    return message


def _sigterm_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--debug", is_flag=True, help="show tracebacks for errors")
@click.version_option(__version__, prog_name="mountbench")
def cli(debug: bool) -> None:
    """How does the storage behind these directories really compare?

    \b
    mountbench run                       this directory vs a RAM baseline (/dev/shm)
    mountbench run ssd=/mnt/ssd nfs=/mnt/nfs --preset cdm
    mountbench run /mnt/a /mnt/b --job mytest.fio --repeat 5
    """


# --- run --------------------------------------------------------------------------


@cli.command()
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
@click.option("--debug", is_flag=True, hidden=True)
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
    options = options_from_json(options_json) if options_json else pop_run_options(params)
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
        _execute(session, store, command=_command_line(), host=host, per_client=per_client)


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
    _print_run(run, per_client=per_client)
    for notice in session.notices:
        err.print(f"warning: {notice}", markup=False)
    if status != "complete":
        raise Interrupted(session.run_id)


def _events(events_path: Path | None, workloads: Sequence[Workload] = ()):
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


def _exporter(store: Store, json_out: Path | None):
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


def _print_run(
    run: RunData,
    baseline: str | None = None,
    metrics: tuple[str, ...] = (),
    *,
    unit: str = "auto",
    per_client: bool = False,
) -> None:
    """The answer and the comparison tables, then a table per sweep and the clients' tables when the run has any."""
    report = build_report([run], baseline=baseline, metrics=metrics, unit=unit)
    out.print(render_report(report))
    sweeps = render_sweeps(report)
    if sweeps is not None:
        out.print(sweeps)
    for table in clients_terminal(run, per_client=per_client):
        out.print(table)
    picked = picktwo.render_terminal(report)  # lab --probe: pick two, and the probe's own tables
    if picked is not None:
        out.print(picked)


def _command_line() -> str:
    return shlex.join(["mountbench", *sys.argv[1:]])


# --- list, show, presets ---------------------------------------------------------------


@cli.command(name="list")
@click.option("--db", type=click.Path(path_type=Path), help=DB_HELP)
def list_runs(db: Path | None) -> None:
    """List stored runs."""
    import time

    with Store(db or default_db_path(), writer=False) as store:
        runs = store.list_runs() if store.exists() else []
    if not runs:
        out.print("no runs stored yet; start one with 'mountbench run'")
        return
    table = Table()
    table.add_column("started")
    table.add_column("status", no_wrap=True, min_width=11)  # 'interrupted' whole: it is what to act on
    table.add_column("host")
    table.add_column("samples", justify="right")
    table.add_column("targets", overflow="fold")  # long paths fold rather than squeeze the rest
    table.add_column("run", no_wrap=True)
    for row in runs:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["created_at"]))
        table.add_row(started, row["status"], row["hostname"], str(row["samples"]), row["targets"], row["id"])
    out.print(table)


@cli.command()
@click.argument("run_ref", metavar="[RUN]", default="last")
@click.option("--baseline", metavar="LABEL", help="compare with this target instead")
@click.option(
    "--metric", "metrics", multiple=True, help="metric to show: iops, bw, lat-mean, lat-p99, read.lat_p99.9 …"
)
@click.option("--unit", metavar="UNIT", help="the summary's unit for every workload: MB/s, IOPS or us (mean latency)")
@click.option("--samples", "list_samples", is_flag=True, help="list every sample in the order it was taken")
@click.option("--per-client", is_flag=True, help="runs on several clients: each client's figures too")
@click.option("--db", type=click.Path(path_type=Path), help=DB_HELP)
def show(
    run_ref: str,
    baseline: str | None,
    metrics: tuple[str, ...],
    unit: str | None,
    list_samples: bool,
    per_client: bool,
    db: Path | None,
) -> None:
    """Show a stored run: who wins and by how much, then the detail (default: the last run)."""
    chosen_unit = parse_unit(unit)
    with Store(db or default_db_path(), writer=False) as store:
        run = store.load_run(run_ref)
    if list_samples:
        out.print(render_samples(run))
        return
    _print_run(run, baseline, metrics, unit=chosen_unit, per_client=per_client)


@cli.command()
def presets() -> None:
    """List the named suites and what each runs."""
    for name in preset_names():
        preset = load_preset(name)
        default = " (default)" if name == workloads_mod.DEFAULT_PRESET else ""
        table = Table(title=f"{name}{default}: {preset.description}", title_justify="left", show_edge=False)
        table.add_column("workload", no_wrap=True)
        table.add_column("what runs")
        for workload in preset.workloads:
            table.add_row(workload.name, describe_workload(workload))
        if preset.sweeps:
            swept = " × ".join(axis.text for axis in preset.sweeps)
            table.caption = f"each fio workload runs once per point of --sweep {swept} (named WORKLOAD@OPTION=VALUE)"
            table.caption_justify = "left"
        out.print(table)
        out.print()


def describe_workload(workload: Workload) -> str:
    """One line on what a workload does, as its kind described it."""
    return workload.description.summary


# --- probe ------------------------------------------------------------------------------


@cli.command()
@click.argument("target", nargs=-1)
@click.option(
    "--view",
    "views",
    multiple=True,
    metavar="A=B",
    help="two paths to one directory through different mounts: measure coherence from A to B "
    "(PATH@HOST[:PORT] for a client running 'mountbench serve')",
)
@click.option("--repeat", default=5, show_default=True, type=click.IntRange(1, 100), help="coherence repetitions")
@click.option(
    "--timeout",
    default=5.0,
    show_default=True,
    type=click.FloatRange(0.5, 600),
    help="seconds before a probe is called hung (and the visibility limit)",
)
@click.option(
    "--format", "fmt", type=click.Choice(["terminal", "md", "html", "json"]), default="terminal", show_default=True
)
@click.option("--out", "out_path", type=click.Path(path_type=Path), help="write md/html/json here instead of stdout")
@click.option("--show", "show_ref", metavar="ID", help="re-render a stored probe ('last' for the newest)")
@click.option("--details", is_flag=True, help="terminal: show what was observed in every cell")
@click.option("--diff", is_flag=True, help="show only the capabilities and checks on which the columns disagree")
@click.option(
    "--reference",
    "reference_dir",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="a local directory to run the same probes on, as the reference column [default: the system temp directory]",
)
@click.option("--no-reference", is_flag=True, help="do not measure the local reference column")
@click.option("--db", type=click.Path(path_type=Path), help=DB_HELP)
@click.option("--debug", is_flag=True, hidden=True)
def probe(
    target, views, repeat, timeout, fmt, out_path, show_ref, details, diff, reference_dir, no_reference, db, debug
) -> None:
    """What each TARGET really supports (O_DIRECT, chown, xattrs, locks, mmap, inotify, ...).

    Every capability is tried for real inside a scratch directory that is removed
    afterwards, each in a child process with a timeout, so a hung mount reports
    "hung" instead of hanging mountbench. The same probes run on a local directory
    too, as a reference column. Findings that lose or corrupt data come first.

    \b
    mountbench probe /mnt/9p /mnt/virtiofs /tmp
    mountbench probe --view /srv/share=/mnt/sshfs-share --repeat 10
    mountbench probe --show last --diff
    mountbench probe --view /mnt/nfs@10.0.0.2=/mnt/nfs@10.0.0.3    two clients, each running mountbench serve
    """
    from mountbench import probe as probing
    from mountbench.clients import remoteprobe
    from mountbench.probe.measure import default_reference_dir, measure_all

    with Store(db or default_db_path(), writer=not show_ref) as store:
        if show_ref:
            stored = store.load_probe(show_ref)
        else:
            if not target and not views:
                raise UsageError("give at least one TARGET or --view A=B (see 'mountbench probe --help')")
            paths = [targets_mod.resolve_path(t) for t in target]
            pairs = [remoteprobe.parse_view(v) or _view_pair(v) for v in views]  # PATH@CLIENT: across clients
            local = [(a, b) for a, b in pairs if not isinstance(a, remoteprobe.RemoteView)]
            remote = [(a, b) for a, b in pairs if isinstance(a, remoteprobe.RemoteView)]
            reference = None
            if not no_reference:
                reference = targets_mod.resolve_path(str(reference_dir)) if reference_dir else default_reference_dir()
            measured = measure_all(paths, local, repeat=repeat, timeout=timeout, reference=reference)
            across = tuple(
                remoteprobe.measure_remote_coherence(a, b, repeat=repeat, timeout=timeout) for a, b in remote
            )
            results = dataclasses.replace(measured, coherence=measured.coherence + across).to_dict()
            stored = {"id": "probe-" + new_run_id(), "results": results}
            store.save_probe(stored["id"], _command_line(), hostinfo.collect(), results)
    report = probing.ProbeReport.from_dict(stored["results"])
    if fmt == "terminal":
        parts = probing.render_document_terminal(report, details=details, diff=diff)
        if out_path is None:
            for part in parts:
                out.print(part)
            return
        recorder = Console(file=io.StringIO(), width=140)
        for part in parts:
            recorder.print(part)
        text = recorder.file.getvalue()  # type: ignore[attr-defined]
    elif fmt == "json":
        text = json.dumps(probing.document_json(report, stored["id"]), indent=1)
    elif fmt == "md":
        text = probing.render_document_markdown(report, diff=diff)
    else:
        text = probing.render_document_html(report, title=f"mountbench probe {stored['id']}", diff=diff)
    _write_or_print(text, out_path)


def _view_pair(text: str) -> tuple[Path, Path]:
    a, sep, b = text.partition("=")
    if not sep or not a or not b:
        raise UsageError(f"--view {text}: give two paths as A=B, e.g. --view /srv/share=/mnt/share")
    return targets_mod.resolve_path(a), targets_mod.resolve_path(b)


def _write_or_print(text: str, path: Path | None) -> None:
    if path is None:
        click.echo(text)
        return
    try:
        path.expanduser().write_text(text + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write {path} ({exc.strerror}); choose a writable path") from None
    err.print(f"wrote {path}")


# --- serve ------------------------------------------------------------------------------


@cli.command()
@click.option(
    "--bind",
    default="127.0.0.1",
    show_default=True,
    metavar="ADDRESS",
    help="address to listen on; anything but loopback must be named here (fio's protocol has no authentication)",
)
@click.option("--port", default=8765, show_default=True, type=int, help="fio's port; host facts on PORT + 1")
def serve(bind: str, port: int) -> None:
    """Be a client of 'mountbench run --client': run fio's server here, plus host facts.

    Anyone who can reach these ports can run fio jobs (which create, write and delete
    files) as this user: listen only on a trusted network. Stop with Ctrl-C.

    \b
    mountbench serve --bind 10.0.0.2          then, elsewhere: mountbench run --client 10.0.0.2 share=/mnt/share
    """
    from mountbench.clients import serve as serving_mod

    fio = find_fio()
    with serving_mod.serving(fio, bind, port) as served:
        reach = serving_mod.exposure(bind)
        err.print(
            f"{fio.version} server listening on {bind}:{port} (fio's protocol), "
            f"host facts on {bind}:{served.agent_port} ({reach}); stop with Ctrl-C",
            markup=False,
            highlight=False,
        )
        if reach != "loopback":
            err.print(
                "warning: no authentication: anyone who reaches these ports can run fio jobs here as this user",
                markup=False,
            )
        try:
            serving_mod.wait(served)
        except KeyboardInterrupt:
            err.print("stopped")


# --- lab --------------------------------------------------------------------------------


@cli.command()
@click.option(
    "--mount",
    "mounts",
    multiple=True,
    metavar="SPEC",
    help=f"KIND[:opt=val,...]: {', '.join(LAB_KINDS)} (repeatable; default: a set of six)",
)
@run_options
@click.option("--accel", type=click.Choice(["auto", "kvm", "tcg"]), default="auto", show_default=True)
@click.option("--cpus", default=2, show_default=True, type=click.IntRange(1, 64))
@click.option("--memory", default="1G", show_default=True)
@click.option("--kernel", type=click.Path(exists=True, dir_okay=False), help="bzImage (default: /boot/vmlinuz-*)")
@click.option("--keep-guest", is_flag=True, help="keep images, sockets and logs afterwards")
@click.option(
    "--probe",
    "probe_mounts",
    is_flag=True,
    help="after the run, probe each mount in the guest and measure coherence between the host's directory and the "
    "guest's mount, both ways; the report then answers 'pick two' (performance, coherence, concurrency)",
)
@click.option("--probe-repeat", type=click.IntRange(1, 100), help="--probe: coherence repetitions [default: 3]")
@click.option(
    "--probe-timeout",
    type=click.FloatRange(0.5, 600),
    help="--probe: seconds before a probe is called hung, and how long a change may take to show [default: 5]",
)
@click.option("--debug", is_flag=True, hidden=True)
def lab(
    mounts: tuple[str, ...],
    accel: str,
    cpus: int,
    memory: str,
    kernel: str | None,
    keep_guest: bool,
    probe_mounts: bool,
    probe_repeat: int | None,
    probe_timeout: float | None,
    db: Path | None,
    json_out: Path | None,
    debug: bool,
    **params: object,
) -> None:
    """Compare VM shared folders and virtual disks in a throwaway QEMU guest.

    The run options (--preset, --job, --repeat, ...) are those of 'mountbench run' and
    go to the guest's run as they are; --baseline names a mount (default: guest-tmpfs).

    \b
    mountbench lab                                   9p, 9p cache=loose, virtiofs, sshfs, disk, guest-tmpfs
    mountbench lab --mount 9p:cache=loose --mount virtiofs:cache=always --preset tree --tree git
    mountbench lab --mount disk:format=qcow2,cache=writeback --mount disk:cache=none --preset nine --size 1G
    mountbench lab --mount 9p --mount 9p:cache=loose --mount virtiofs --mount nfs --mount disk --preset s3 --probe
    """
    from mountbench.lab.probe import ProbeOptions
    from mountbench.lab.run import LabOptions, check_prerequisites, lab_specs, lab_timeout, run_lab

    if params.get("clients") or params.get("client_counts_text"):
        raise UsageError("--client and --clients are for 'mountbench run': the lab measures mounts inside one guest")
    specs = lab_specs(mounts)  # bad specs fail here, before anything boots
    if not probe_mounts and (probe_repeat is not None or probe_timeout is not None):
        raise UsageError("--probe-repeat and --probe-timeout apply to --probe; add --probe or drop them")
    check_prerequisites(specs)
    options = pop_run_options(params)
    if options.watch:
        raise UsageError(
            "--watch is for 'mountbench run': the lab measures the host processes serving each mount itself"
        )
    workloads = workloads_mod.from_options(options)  # unknown presets and bad job files fail here too
    runrequest.check_workloads(workloads, make_runners({w.kind for w in workloads}, RunnerSetup(find_fio())))
    timeout = lab_timeout(workloads, options.repeat + options.warmup, len(specs))
    probing = ProbeOptions(probe_repeat or 3, probe_timeout or 5.0) if probe_mounts else None
    lab_options = LabOptions(tuple(mounts), options, accel, cpus, memory, kernel, keep_guest, timeout, probing)
    err.print("booting the lab guest (under TCG this takes a minute)...")
    run, stopped = run_lab(lab_options, on_output=lambda line: err.print(line, markup=False, highlight=False))
    with Store(db or default_db_path()) as store:
        store.import_run(run)
        if json_out:
            write_document(json_out.expanduser(), make_document([run]))
    if run.samples:
        _print_run(run)
    if stopped:
        raise stopped


# --- doctor ------------------------------------------------------------------------------


@cli.command()
@click.argument("target", nargs=-1)
@click.option("--lab", "lab_checks", is_flag=True, help="also check what 'mountbench lab' needs (QEMU, kernel, ...)")
def doctor(target: tuple[str, ...], lab_checks: bool) -> None:
    """Check fio, privileges and each TARGET; print every problem with its fix."""
    problems = 0
    table = Table("check", "result", "fix", show_lines=False)

    def report(check: str, ok: bool, result: str, fix: str = "") -> None:
        nonlocal problems
        problems += 0 if ok else 1
        table.add_row(check, ("[green]✓[/green] " if ok else "[red]✗[/red] ") + result, "" if ok else fix)

    try:
        fio = find_fio()
        report("fio", True, f"{fio.version} at {fio.path}")
        engines = fio_engines(fio.path)
        report(
            "fio libaio engine",
            "libaio" in engines or sys.platform != "linux",
            "available" if "libaio" in engines else "missing",
            "install a fio built with libaio",
        )
    except MountbenchError as exc:
        report("fio", False, "not usable", str(exc))
    root = hostinfo.is_root()
    report(
        "cache dropping",
        root,
        "root: page caches can be dropped" if root else "not root",
        "run as root (sudo) so caches are dropped between samples; otherwise buffered results are marked",
    )
    for arg in target or targets_mod.default_targets():
        _doctor_target(arg, report)
    if lab_checks:
        from mountbench.lab import check_lab_prerequisites

        lab_problems = check_lab_prerequisites(optional=True)
        for problem, fix in lab_problems:
            report("lab", problem.startswith("optional:"), problem, fix)
        if not lab_problems:
            report("lab", True, f"QEMU, kernel, busybox and what each mount kind needs ({', '.join(LAB_KINDS)})")
    out.print(table)
    if problems:
        raise ChecksFailed(f"{problems} problem(s) found; the fix for each is in the table above")
    out.print("all checks passed")


def _doctor_target(arg: str, report) -> None:
    _label, path_text = targets_mod.parse_target_arg(arg)
    try:
        resolved = targets_mod.resolve_targets([arg])[0]
    except MountbenchError as exc:
        report(f"target {path_text}", False, "unusable", str(exc))
        return
    run_id = f"doctor-{os.getpid()}"
    try:
        scratch = targets_mod.create_scratch(resolved, run_id)
    except MountbenchError as exc:
        report(f"target {resolved.label}", False, "not writable", str(exc))
        return
    try:
        info = targets_mod.inspect_target(resolved, scratch)
    finally:
        targets_mod.remove_scratch(scratch, run_id)
    report(f"target {resolved.label}", True, f"{info.fstype} from {info.mount_source}, writable")
    report(
        f"  O_DIRECT on {resolved.label}",
        info.odirect,
        info.odirect_detail,
        "direct workloads will run buffered there and be marked 'buffered: O_DIRECT refused'",
    )
    report(
        f"  free space on {resolved.label}",
        info.free_bytes > 1024**3,
        format_bytes(info.free_bytes),
        "free space or pass --size so the working set fits",
    )


# --- report, export, import (src/mountbench/cli_report.py) ----------------------------------

from mountbench.cli.report import export, import_runs, report  # noqa: E402

cli.add_command(report)
cli.add_command(export)
cli.add_command(import_runs)
