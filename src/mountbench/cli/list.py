"""`mountbench list`: the stored runs."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.table import Table

from mountbench.cli.console import out
from mountbench.cli.options import db_option
from mountbench.store import Store, default_db_path


@click.command(name="list")
@db_option
def list_runs(db: Path | None) -> None:
    """List stored runs."""
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
