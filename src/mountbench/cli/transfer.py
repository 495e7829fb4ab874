"""`mountbench export`, `mountbench import` and `mountbench forget`: move stored runs between
machines as a versioned JSON document, and delete one. An imported run is a record, never a plan:
it is marked with where it came from, and never resumed (nothing stored in it is run)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from mountbench.cli.common import db_option, debug_option
from mountbench.host import outputs
from mountbench.records.export import read_document, write_document
from mountbench.report.content import unique_runs
from mountbench.report.document import make_document
from mountbench.store import Store, default_db_path


@click.command()
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.option(
    "--out", type=click.Path(path_type=Path), metavar="FILE.json", required=True, help="file to write (- for stdout)"
)
@click.option("--no-raw", is_flag=True, help="leave out fio's raw JSON output (a much smaller file)")
@db_option
@debug_option
def export(run_refs: tuple[str, ...], out: Path, no_raw: bool, db: Path | None, debug: bool) -> None:
    """Write stored runs to a versioned JSON file ('mountbench import' reads it elsewhere)."""
    db_path = db or default_db_path()
    output = outputs.check(out, "--out", outputs.database(db_path))
    with Store(db_path, writer=False) as store:
        loaded = [store.load_run(ref, with_raw=not no_raw) for ref in run_refs]
    runs = unique_runs(loaded)  # a run named twice ('last' and its id) once
    write_document(output, make_document(runs, with_raw=not no_raw))
    samples = sum(len(run.samples) for run in runs)
    click.echo(f"exported {len(runs)} run(s), {samples} samples, to {output}", err=output.is_stdout)


@click.command(name="import")
@click.argument("files", metavar="FILE.json...", nargs=-1, required=True, type=click.Path(path_type=Path))
@db_option
@debug_option
def import_runs(files: tuple[Path, ...], db: Path | None, debug: bool) -> None:
    """Store runs from files made by 'mountbench export'; runs already stored are skipped."""
    # every file is checked before anything is stored
    read = [(path, run) for path in files for run in read_document(path)]
    runs = [run for _, run in read]
    if not runs:
        click.echo("no runs in " + ", ".join(map(str, files)))
        return
    when = time.strftime("%Y-%m-%d %H:%M")
    origins = {id(run): f"imported from {path.name} on {when}" for path, run in read}
    with Store(db or default_db_path()) as store:
        for run in runs:
            host = run.host.get("hostname", "?")
            if store.import_run(run, origin=origins.get(id(run)) or f"imported on {when}"):
                click.echo(f"imported run {run.id} from {host} ({len(run.samples)} samples)")
            else:
                click.echo(f"run {run.id} from {host} is already stored; skipped")


@click.command()
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@db_option
@debug_option
def forget(run_refs: tuple[str, ...], db: Path | None, debug: bool) -> None:
    """Delete stored runs (their samples, targets and workloads) from the results database.

    \b
    mountbench forget 20250101-120000-abcd
    """
    path = db or default_db_path()
    with Store(path, writer=False) as reader:  # every run named exists before any goes; a refusal writes nothing
        ids = [reader.resolve(ref) for ref in run_refs]
    with Store(path) as store:
        for run_id in dict.fromkeys(ids):
            store.forget_run(run_id)
            click.echo(f"forgot run {run_id}")
