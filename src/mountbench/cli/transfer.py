"""`mountbench export` and `mountbench import`: move stored runs between machines as a
versioned JSON document."""

from __future__ import annotations

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
    runs = [run for path in files for run in read_document(path)]  # every file is checked before anything is stored
    if not runs:
        click.echo("no runs in " + ", ".join(map(str, files)))
        return
    with Store(db or default_db_path()) as store:
        for run in runs:
            host = run.host.get("hostname", "?")
            if store.import_run(run):
                click.echo(f"imported run {run.id} from {host} ({len(run.samples)} samples)")
            else:
                click.echo(f"run {run.id} from {host} is already stored; skipped")
