"""What a report format is: a name, the suffixes of its files, and how it writes a built report
to standard output or a checked file (host/outputs.py), with any files next to it (Markdown's
charts, CSV's samples). It says what it wrote as ``Written`` lines; cli/report.py prints them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mountbench.host.outputs import Output
    from mountbench.report.model import Report


@dataclass(frozen=True)
class Request:
    """What the caller asked for that a format may use (each format reads what concerns it)."""

    chart_format: str = "png"  # Markdown's chart files
    per_client: bool = False  # each client's figures too (run --client)
    samples: bool = False  # CSV to standard output: the samples instead of the summary


Written = list[str]  # what was written, one line each ("wrote r.md and 3 chart(s) next to it")


@dataclass(frozen=True)
class Format:
    """One report format. ``write(report, output, request)``: ``output`` None is standard output;
    returns what it wrote (nothing for standard output)."""

    name: str
    suffixes: tuple[str, ...]  # its files' suffixes, the first its own (".md", ".markdown")
    description: str  # a few words for --format's help
    write: Callable[[Report, Output | None, Request], Written]


def print_text(text: str) -> None:
    """Text to standard output as it is (no newline added)."""
    import click

    click.echo(text, nl=False)
