"""The terminal: one console for results (stdout) and one for notes and progress (stderr),
and what several commands print or write the same way."""

from __future__ import annotations

import io
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click
from rich.console import Console

from mountbench.host import outputs
from mountbench.model import RunData

if TYPE_CHECKING:  # the report's modules load in print_run, not on import
    from mountbench.report.model import Report

MIN_WIDTH = 40  # narrower (COLUMNS=3, a tiny pane) and tables lose every column: wrap at 40 instead


def _console(stream: TextIO | None) -> Console:
    """A terminal's own width; piped output (logs, CI, a file) 80 columns unless COLUMNS says
    otherwise, so that what is pasted into an issue or a mail reads as it did on screen; never
    narrower than MIN_WIDTH. A closed stream (cli.main refuses a closed stdout) writes nowhere."""
    if stream is None:
        return Console(file=io.StringIO(), width=80)
    columns = os.environ.get("COLUMNS", "")
    width = None if stream.isatty() else (int(columns) if columns.isdigit() and int(columns) > 0 else 80)
    console = Console(file=stream, width=max(width, MIN_WIDTH) if width is not None else None)
    if console.width < MIN_WIDTH:
        console.width = MIN_WIDTH
    return console


out = _console(sys.stdout)
err = _console(sys.stderr)


def print_run(
    run: RunData,
    baseline: str | None = None,
    metrics: tuple[str, ...] = (),
    *,
    unit: str = "auto",
    per_client: bool = False,
    console: Console | None = None,
) -> Report:
    """The answer and the comparison tables, then each report section the run has (sweeps, clients, pick two).
    The report's modules (statistics, numpy) load here, not with the command: a command refused
    up front, and `run` in the lab's emulated guest until its end, go without them."""
    from mountbench.report.content import build_report
    from mountbench.report.grid import one_unit
    from mountbench.report.terminal import render_run

    # the summary grid in the unit `show` uses, so that its notes have the numbers `show` names
    report = build_report([run], baseline=baseline, metrics=metrics, unit=one_unit([run], unit, metrics))
    for part in render_run(report, per_client=per_client):
        (console or out).print(part)
    return report


def print_answer(report: Report, console: Console | None = None) -> None:
    """The answer again, last, after the detail and the run's notices (issue 48: after a run the headline had
    scrolled off the screen under a hundred lines of detail; hyperfine ends with its summary too)."""
    from mountbench.report.terminal import answer

    (console or out).print(answer(report))


def command_line() -> str:
    """How this process was started, as stored with a run or a probe."""
    return shlex.join(["mountbench", *sys.argv[1:]])


def write_or_print(text: str, path: Path | None, protect: Sequence[outputs.Protected] = ()) -> None:
    """``text`` to a checked output file (host/outputs.py), or to stdout without one (or with -)."""
    output = outputs.check(path, "--out", protect) if path is not None else None
    if output is None or output.is_stdout:
        click.echo(text)
        return
    output.write_text(text + "\n")
    err.print(f"wrote {path}")
