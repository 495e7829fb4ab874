"""`mountbench list`: the stored runs."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import click

from mountbench.cli.console import out
from mountbench.cli.options import db_option
from mountbench.engine.workloads import DEFAULT_PRESET
from mountbench.store import Store, default_db_path
from mountbench.units import format_bytes


@click.command(name="list")
@db_option
def list_runs(db: Path | None) -> None:
    """List stored runs."""
    with Store(db or default_db_path(), writer=False) as store:
        runs = store.list_runs() if store.exists() else []
    if not runs:
        out.print("no runs stored yet; start one with 'mountbench run'")
        return
    header = ("run", "started", "status", "host", "suite", "size", "samples")
    lines = []
    for row in runs:
        suite, size = run_suite(row.get("config", {}))
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["created_at"]))
        lines.append(((row["id"], started, row["status"], row["hostname"], suite, size, str(row["samples"])),
                      row["targets"]))  # fmt: skip
    widths = [max(len(text[i]) for text in [header, *(line for line, _ in lines)]) for i in range(len(header))]
    right = {5, 6}  # size and samples: numbers, right-aligned

    def line(cells: tuple[str, ...]) -> str:
        padded = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded).rstrip()

    # one line per run (what it ran and how far it got), its targets on the next: runs no longer look alike,
    # and long target paths wrap there instead of squeezing every column at 80 columns
    out.print(line(header), style="bold", markup=False, highlight=False)
    for cells, targets in lines:
        out.print(line(cells), markup=False, highlight=False)
        wrapped = textwrap.fill(targets or "?", max(30, out.width - 4), initial_indent="    targets: ",
                                subsequent_indent="             ")  # fmt: skip
        out.print(wrapped, markup=False, highlight=False, style="dim")


def run_suite(config: dict) -> tuple[str, str]:
    """('quick --only rnd*', '64.0 MiB') from a run's stored options; without --size, 'default' (the
    preset's own sizes; issue 37: 'size: preset' read as a size called preset)."""
    names = list(config.get("presets") or [])
    names += [Path(str(job)).name for job in config.get("job_files") or []]
    if not names:
        names = [DEFAULT_PRESET] if config else ["?"]
    words = [", ".join(names)]
    words += [f"--only {pattern}" for pattern in config.get("only") or []]
    size = config.get("size")
    return " ".join(words), format_bytes(float(size)) if size else "default"
