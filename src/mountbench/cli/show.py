"""`mountbench show`: a stored run, who wins and by how much on one screen; --detail for the
tables per metric, the notes and how the run was made (what `run` prints after a run)."""

from __future__ import annotations

from pathlib import Path

import click

from mountbench.cli.common import db_option, metric_options
from mountbench.cli.console import out, print_run
from mountbench.report.content import build_report
from mountbench.report.grid import one_unit, parse_unit
from mountbench.report.terminal import render_samples, render_short
from mountbench.store import Store, default_db_path


@click.command()
@click.argument("run_ref", metavar="[RUN]", default="last")
@click.option("--baseline", metavar="LABEL", help="compare with this target instead")
@metric_options("show")
@click.option("--detail", is_flag=True, help="every table, the notes and how the run was made, as run prints them")
@click.option("--samples", "list_samples", is_flag=True, help="list every sample in the order it was taken")
@click.option("--per-client", is_flag=True, help="runs on several clients: each client's figures too")
@db_option
def show(
    run_ref: str,
    baseline: str | None,
    metrics: tuple[str, ...],
    unit: str | None,
    detail: bool,
    list_samples: bool,
    per_client: bool,
    db: Path | None,
) -> None:
    """Show a stored run (default: the last): who wins and by how much, on one screen; --detail for the rest."""
    chosen_unit = parse_unit(unit)
    with Store(db or default_db_path(), writer=False) as store:
        run = store.load_run(run_ref)
    if list_samples:
        out.print(render_samples(run))
        return
    if detail or per_client:
        print_run(run, baseline, metrics, unit=chosen_unit, per_client=per_client)
        return
    report = build_report([run], baseline=baseline, metrics=metrics, unit=one_unit([run], chosen_unit, metrics))
    out.print(render_short(report))
