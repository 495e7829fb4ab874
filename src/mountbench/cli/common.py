"""The options the commands that read stored runs share (--db, --debug, --metric and --unit), apart from
the run options (options.py), whose flags come from every workload kind: `show`, `report`, `list`,
`export` and `import` load none of the kinds, clients or probes to declare them (issue 48: `report` spent
0.4 s importing them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = "results database (default: $MOUNTBENCH_DB or the user data dir)"


def metric_options(verb: str) -> Callable[[F], F]:
    """`report`'s and `show`'s choice of figures: --metric (repeatable) and --unit."""

    def decorate(function: F) -> F:
        unit = "the summary's unit for every workload: MB/s, IOPS or µs (mean latency; us works too)"
        function = click.option("--unit", metavar="UNIT", help=unit)(function)
        metric = f"metric to {verb}: iops, bw, lat-mean, lat-p99, read.lat_p99.9 …"
        return click.option("--metric", "metrics", multiple=True, help=metric)(function)

    return decorate


def db_option(function: F) -> F:
    return click.option("--db", type=click.Path(path_type=Path), help=DB_HELP)(function)


def debug_option(function: F) -> F:
    """--debug after the command's name too; cli.main reads it from the arguments."""
    return click.option("--debug", is_flag=True, hidden=True)(function)
