"""`mountbench run`: compare the storage behind directories, or finish an interrupted run."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import click

from mountbench.cli.against import against_options, pop_gate
from mountbench.cli.console import command_line, err, out, print_answer, print_run
from mountbench.cli.options import (
    check_database,
    debug_option,
    given_run_options,
    options_from_json,
    pop_run_options,
    run_options,
)
from mountbench.cli.progress import LearnedEta, Pace, ProgressEvents, clock, work_said
from mountbench.engine import request as runrequest
from mountbench.engine import upfront
from mountbench.engine.history import learnt_costs
from mountbench.engine.session import (
    Session,
    check_space,
    plan_dry_run,
    planned_space,
    run_to_end,
    sweep_leftovers,
)
from mountbench.errors import Interrupted, RunFailed, TargetError, UsageError
from mountbench.fio.binary import find_fio
from mountbench.host import contain, outputs
from mountbench.host import facts as hostinfo
from mountbench.host import targets as targets_mod
from mountbench.kinds import host_facts
from mountbench.model import PlanItem, RunData, RunOptions
from mountbench.records.events import EventLog, Fanout
from mountbench.records.export import write_document
from mountbench.report.document import make_document
from mountbench.report.terminal_layout import Fields
from mountbench.store import Store, default_db_path
from mountbench.units import format_bytes, format_seconds


@click.command()
@click.argument("target", nargs=-1)
@run_options
@against_options
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
@click.option(
    "--learnt-json",
    hidden=True,
    help="what each (target, workload) cost before, [[target, workload, seconds], ...]: the lab's guest, whose "
    "database is new every run, is handed its host's earlier lab runs (labs/qemu/history.py)",
)
@debug_option
def run(
    target: tuple[str, ...],
    dry_run: bool,
    resume: str | None,
    events_path: Path | None,
    options_json: str | None,
    learnt_json: str | None,
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

    \b
    Exit status: 0 when the run finished, even if some samples failed (they are
    counted in the last line and shown in their cells); 1 when every sample
    failed (status 'failed' in 'mountbench list'); 2 for bad input; 130 when
    interrupted (resume it with --resume). With --against and --fail-on: 1 when
    a comparison regressed beyond the threshold (docs/regressions.md).
    """
    per_client = bool(params.pop("per_client", False))
    db_path = db or default_db_path()
    gate = pop_gate(params, target, db_path, outputs.database(db_path), resume=resume, options_json=options_json)
    if resume:
        if dry_run:
            raise UsageError(
                f"--dry-run with --resume would not be a dry run (the run would go on); 'mountbench show {resume}' "
                f"shows what it has, 'mountbench run --resume {resume}' finishes it"
            )
        if target or given_run_options(params) or options_json:
            raise UsageError("--resume takes no targets, presets or job files: the run's own are used")
        _resume(resume, db_path, json_out, events_path, per_client)
        return
    if gate is not None:
        options, target = gate.options, gate.target_args
    else:
        options = options_from_json(options_json) if options_json else pop_run_options(params, default_budget=True)
    handed = _learnt_from_json(learnt_json)
    if per_client and not options.clients:
        raise UsageError("--per-client shows each client's figures of a run on several clients; add --client HOST "
                         "(or drop --per-client)")  # fmt: skip
    check_database(db_path)  # a database that cannot be written is refused by the dry run as by the run
    protect = _protected(db_path, options)
    json_output = outputs.check(json_out, "--json", protect) if json_out else None
    events_output = outputs.check(events_path, "--events", protect) if events_path else None
    fio = find_fio()
    request = runrequest.resolve(options, target, fio)
    for notice in gate.check(request, fio) if gate is not None else ():
        err.print(f"note: {notice}", markup=False)
    if dry_run:
        _print_dry_run(request, db_path)
        return
    if db_path.is_file():  # one another process holds is refused before any target is touched
        with Store(db_path) as store:
            store.check_can_write()
    swept = sweep_leftovers(request.targets)
    ahead = [*upfront.notes(db_path), *request.notes]  # said once, before the first sample
    for notice in (*swept, *ahead, *check_space(request.targets, request.workloads, request.runner_for)):
        err.print(f"note: {notice}")
    with Store(db_path) as store:
        session = _session(request, store, events_output, json_output, handed=handed)
        host = hostinfo.collect(fio.version) | host_facts(request.runners)
        finished = _execute(session, store, command=command_line(), host=host, per_client=per_client,
                            json_out=json_output)  # fmt: skip
    if gate is not None:
        gate.finish(finished, err if json_output is not None and json_output.is_stdout else out)


LEARN_FROM = 10  # the last complete runs on this machine the first ETA learns from


def _session(
    request: runrequest.RunRequest,
    store: Store,
    events_out: outputs.Output | None,
    json_out: outputs.Output | None,
    run_id: str | None = None,
    handed: Mapping[tuple[str, str], float] | None = None,
) -> Session:
    """``handed``: costs learnt elsewhere (--learnt-json), for the pairs this database has not seen."""
    learnt = {**(handed or {}), **learnt_costs_here(store, request)}
    log = _event_log(events_out)
    progress = ProgressEvents(err, request.workloads, Pace.of(request.config), learnt)
    session = Session(
        request.config,
        request.targets,
        request.workloads,
        request.runners,
        store,
        progress if log is None else Fanout(progress, log),  # the progress bar, and the event log when asked for
        run_id=run_id,
        on_saved=_saved(_exporter(store, json_out), log),
        watch=request.watch,
    )
    progress.at_most = session.rounds_at_most  # 'round 4 of at most 12', as the budget fixes the rounds
    return session


def _execute(
    session: Session,
    store: Store,
    *,
    command: str,
    host: dict,
    resume: bool = False,
    per_client: bool = False,
    json_out: outputs.Output | None = None,
) -> RunData:
    fence = contain.containment()
    if not fence.contained:  # said before the first sample, and recorded in the run's facts
        err.print(f"warning: containment: {fence.fact()}", markup=False, highlight=False)
    status = run_to_end(session, command=command, host=host, resume=resume)
    run = store.load_run(session.run_id)
    console = err if json_out is not None and json_out.is_stdout else out  # the document alone on stdout
    report = print_run(run, per_client=per_client, console=console)
    if console is err:
        write_document(json_out, make_document([run], summary=report.summary, stops=report.stops))
    for notice in session.notices:
        err.print(f"warning: {notice}", markup=False)
    if run.samples:
        print_answer(report, console)  # last: the answer, not the detail, is what stays on the screen
    if session.export_failed and json_out is not None:
        raise RunFailed(
            f"run {run.id} is {status} and stored, but --json {json_out} could not be written "
            f"({session.export_failed}); write it with 'mountbench export {run.id} --out FILE'"
        )
    failed = sum(not sample.ok for sample in run.samples)
    err.print(f"run {run.id} {status}: {len(run.samples)} samples stored, {failed} failed", markup=False,
              highlight=False)  # fmt: skip
    if status == "failed":
        raise RunFailed(
            f"every sample of run {run.id} failed (the errors are stored with them: 'mountbench show {run.id} "
            "--samples'); fix the cause and run again"
        )
    if status != "complete":
        raise Interrupted(session.run_id)
    return run


def _learnt_from_json(text: str | None) -> dict[tuple[str, str], float]:
    """--learnt-json's [[target, workload, seconds], ...]; a one-line error for anything else."""
    if not text:
        return {}
    try:
        rows = json.loads(text)
        return {(str(target), str(workload)): float(seconds) for target, workload, seconds in rows}
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--learnt-json: {exc}; give [[target, workload, seconds], ...]") from None


def _time_taken_before(request: runrequest.RunRequest, plan: Sequence[PlanItem], db: Path) -> float | None:
    """What the plan would take as this machine took it before (the database read, never made)."""
    if not db.is_file():
        return None
    with Store(db, writer=False) as store:
        learnt = learnt_costs_here(store, request)
    if not learnt:
        return None
    eta = LearnedEta({w.name: w.kind for w in request.workloads}, learnt)
    eta.plan(plan)
    return eta.remaining(plan)


def learnt_costs_here(store: Store, request: runrequest.RunRequest) -> Mapping[tuple[str, str], float]:
    """What each (target, workload) cost on this machine in its last complete runs (engine/history.py);
    nothing from a database that does not exist yet (reading would create it before the run is
    checked, and a refused run leaves no database behind)."""
    if not store.path.is_file():
        return {}
    here = socket.gethostname()  # as host/facts.py records it
    recent = [r["id"] for r in store.list_runs() if r["hostname"] == here and r["status"] == "complete"][-LEARN_FROM:]
    return learnt_costs([store.load_run(run_id) for run_id in recent], request.targets, request.workloads)


def _event_log(events_out: outputs.Output | None) -> EventLog | None:
    """The JSON-lines event log, when asked for (a lab reads it)."""
    if events_out is None:
        return None
    # the file lives as long as the process; appended to, so it is opened where the checked path leads
    stream = sys.stdout if events_out.is_stdout else open(events_out.real, "a", buffering=1)  # noqa: SIM115
    return EventLog(stream)


def _saved(export: Callable[[str], None] | None, log: EventLog | None) -> Callable[[str], None] | None:
    """After every stored sample: the JSON export rewritten, then the event log says so (a lab that
    delegated the run reads the export then, and stores what it holds)."""
    if log is None:
        return export

    def saved(run_id: str) -> None:
        if export is not None:
            export(run_id)
        log.on_saved(run_id)

    return saved


def _resume(
    run_ref: str, db: Path, json_out: Path | None, events_path: Path | None = None, per_client: bool = False
) -> None:
    with Store(db, writer=False) as reader:  # what is refused writes nothing, not even a schema
        reader.load_run(run_ref)
    with Store(db) as store:
        run = store.load_run(run_ref)
        if run.status in ("complete", "failed"):
            raise UsageError(f"run {run.id} is {run.status}; nothing to resume ('mountbench show {run.id}' shows it)")
        from mountbench.labs.members import refuse_plain_resume  # the labs load only for a run to resume

        refuse_plain_resume(run)  # a lab's run: its mounts went with the lab
        protect = _protected(db, run.config)
        json_output = outputs.check(json_out, "--json", protect) if json_out else None
        events_output = outputs.check(events_path, "--events", protect) if events_path else None
        request = runrequest.from_stored(run, find_fio())
        for notice in (*sweep_leftovers(request.targets, run.id), *upfront.notes(db)):
            err.print(f"note: {notice}", markup=False)
        session = _session(request, store, events_output, json_output, run_id=run.id)
        _execute(session, store, command=run.command, host=run.host, resume=True, per_client=per_client,
                 json_out=json_output)  # fmt: skip


def _protected(db: Path, options: RunOptions) -> list[outputs.Protected]:
    """What no output of a run may be: its database and its input files (job files, and what the kinds'
    options read, e.g. --tarball)."""
    read = [path for value in options.kind_options for path in value.inputs()]
    return [*outputs.database(db), *outputs.inputs(options.job_files, "one of the run's job files"),
            *outputs.inputs(read, "one of the run's input files")]  # fmt: skip


def _exporter(store: Store, json_out: outputs.Output | None) -> Callable[[str], None] | None:
    """Rewrite the JSON export after every sample, so a later failure loses nothing (standard
    output: once, when the run ends)."""
    if json_out is None or json_out.is_stdout:
        return None

    def export(run_id: str) -> None:
        write_document(json_out, make_document([store.load_run(run_id)]))

    return export


def budget_line(budget_s: float, max_repeat: int, default: bool) -> str:
    """What a budget does to the plan, for the dry run and before a run: where it came from, and
    how to get fixed rounds instead."""
    if default:
        return (
            f"{format_seconds(budget_s)} (the preset's default, as no --repeat, --until, --budget or --runtime was "
            f"given; it grows with the targets): the runtimes below are chosen so that the planned rounds fit, and "
            f"they are all taken even if they need longer; then more rounds go to the comparisons still undecided "
            f"while time is left (up to --max-repeat {max_repeat} per cell); --repeat N runs N fixed rounds at the "
            f"preset's own runtimes instead"
        )
    return (
        f"{format_seconds(budget_s)} (--budget): the runtimes and the first rounds below are chosen to fit in it, "
        f"then more rounds go to the comparisons still undecided while time is left (up to --max-repeat "
        f"{max_repeat} per cell); --repeat N runs N fixed rounds at the preset's own runtimes instead"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _print_dry_run(request: runrequest.RunRequest, db: Path) -> None:
    config = request.config
    dry = plan_dry_run(config, request.targets, request.workloads, request.runners)
    measured = sum(not item.warmup for item in dry.plan)
    warm_text = f", after {len(dry.plan) - measured} warm-ups" if config.warmup else ""
    out.print(
        f"[bold]Plan[/bold]: {_count(len(request.targets), 'target')} × {_count(len(request.workloads), 'workload')} × "
        f"{config.repeat} repetitions = {measured} samples{warm_text}, about {work_said(dry.plan)} "
        f"(seed {config.seed}, baseline {config.baseline})"
    )
    if config.budget is not None:
        out.print(f"[bold]Budget[/bold]: {budget_line(config.budget, config.max_repeat, config.default_budget)}")
    for target in request.targets:
        # paths and job files are never wrapped: they are meant to be copied
        out.print(
            f"  target {target.label}: {target.path} (scratch {dry.scratch_names[target.label].name}/)",
            soft_wrap=True,
        )
    refusal = _dry_run_checks(request, dry.plan, db)
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
    if refusal:
        raise TargetError(f"a run would refuse: {refusal}")


def _dry_run_checks(request: runrequest.RunRequest, plan: Sequence[PlanItem], db: Path) -> str:
    """What `run` checks before its first sample (and `doctor`), checked in the dry run too: the
    tools every workload needs (fio parses the jobs; resolve did it), room for the working sets,
    the clock fio's jobs use, and whether caches can be dropped. One line each (✓ fine, ! works
    with a consequence, ✗ a run would refuse); returns the refusal ('' when a run would start)."""
    lines: list[tuple[str, str]] = []
    lines.append(
        ("✓", f"tools: every engine the {_count(len(request.workloads), 'workload')} need is here and accepts them")
    )
    refusal = ""
    for target in request.targets:
        problem = targets_mod.writable_problem(Path(target.path))
        if problem:
            refusal = refusal or problem
            lines.append(("✗", f"target: {problem}"))
    try:
        notices = check_space(request.targets, request.workloads, request.runner_for)
    except TargetError as exc:
        refusal = refusal or str(exc)
        lines.append(("✗", f"space: {exc}"))
    else:
        lines += [("!", f"space: {notice}") for notice in notices]
        if not notices:
            planned = format_bytes(planned_space(request.workloads, request.runner_for))
            lines.append(
                ("✓", f"space: every target has room for its working sets (at most {planned} at once on each)")
            )
    # what the runners choose once for the run (fio: the clock every job uses; the job files say it)
    for fact, value in host_facts(request.runners).items():
        if isinstance(value, Mapping):  # a record the run fills in as it starts (its clients' facts): never raw
            continue
        lines.append(("✓", f"{fact.replace('_', ' ')}: {value} (chosen now; the run chooses again as it starts)"))
    if request.config.clients:
        given = request.config.clients
        said = (f"clients: {len(given)} given ({', '.join(given)}), not contacted in a dry run: the run checks each "
                "before its first sample (reachable, the same fio, the shared directory)")  # fmt: skip
        lines.append(("!", said))
    took = _time_taken_before(request, plan, db)
    if took:
        lines.append(("✓", f"time: about {clock(took)}, as this machine took before (the plan's bounds: "
                      f"{clock(sum(item.estimate_s for item in plan))})"))  # fmt: skip
    if hostinfo.is_root():
        lines.append(("✓", "caches: the files a buffered sample reads are evicted (posix_fadvise); as root, the "
                      "machine's caches are dropped where that is not enough (tree walks, start-ups)"))  # fmt: skip
    else:
        said = (
            "caches: the files a buffered sample reads are evicted (posix_fadvise, no root needed); tree walks "
            "and start-ups need root to drop the machine's caches (else they are marked)"
        )
        lines.append(("!", said))
    fence = contain.containment()
    lines.append(("✓" if fence.contained else "!", f"containment: {fence.fact()}"))
    out.print("[bold]Checks[/bold] (as run and doctor make them; O_DIRECT is probed when the run starts):")
    style = {"✓": "green", "!": "yellow", "✗": "red"}
    for mark, text in lines:
        out.print(Fields([mark, *text.split()], style=style[mark], separator="", first_indent=2, indent=4))
    out.print(f"  → {'a run would refuse it (exit 2): the ✗ above' if refusal else 'a run would start'}")
    return refusal
