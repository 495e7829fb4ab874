"""`mountbench list`: the stored runs."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from mountbench.blocks.tokens import hold, release
from mountbench.cli.common import db_option
from mountbench.cli.console import out
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
    rows = []
    for row in runs:
        suite, size = run_suite(row.get("config", {}))
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["created_at"]))
        rows.append(Listed(row["id"], started, row["status"], row["hostname"], suite, size, str(row["samples"]),
                           row["targets"] or "?"))  # fmt: skip
    for text, style in list_lines(rows, out.width):
        out.print(text, style=style, markup=False, highlight=False)


@dataclass(frozen=True)
class Listed:
    run: str
    started: str
    status: str
    host: str
    suite: str
    size: str
    samples: str
    targets: str


# the columns, widest first: what a line has no room for goes on the run's second line
LAYOUTS = (
    ("run", "started", "status", "host", "suite", "size", "samples"),
    ("run", "started", "status", "samples"),
    ("run", "status", "samples"),
    ("run", "status"),
)
RIGHT = {"size", "samples"}  # numbers, right-aligned
SAID = {
    "samples": "{} samples",
    "started": "started {}",
    "suite": "{}",
    "size": "size {}",
    "host": "on {}",
}  # on the second line


def list_lines(rows: Sequence[Listed], width: int) -> list[tuple[str, str]]:
    """(text, style) lines: a line per run (what it ran and how far it got), then its targets on the next,
    wrapped there, indented. Where the columns would pass ``width`` (a job file's long name, a long host
    name), the suite, size and host move to that second line too, and at 40 columns the start time (issue
    48: every row wrapped at 80 once a job-file run was stored)."""

    def table(columns: Sequence[str]) -> list[str]:
        cells = [list(columns)] + [[getattr(row, name) for name in columns] for row in rows]
        widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
        return [
            "  ".join(c.rjust(w) if name in RIGHT else c.ljust(w) for c, w, name in zip(line, widths, columns,
                                                                                           strict=True)).rstrip()
            for line in cells
        ]  # fmt: skip

    for columns in LAYOUTS:
        lines = table(columns)
        if max(len(line) for line in lines) <= width:
            break
    out = [(lines[0], "bold")]
    for row, line in zip(rows, lines[1:], strict=True):
        out.append((line, ""))
        moved = [name for name in ("samples", "started", "suite", "size", "host") if name not in columns]
        said = [*(SAID[name].format(getattr(row, name)) for name in moved), f"targets: {row.targets}"]
        wrapped = textwrap.wrap(hold("; ".join(said)), max(30, width - 6), break_on_hyphens=False)
        out += [(("    " if i == 0 else "      ") + release(part), "dim") for i, part in enumerate(wrapped)]
    return out


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
