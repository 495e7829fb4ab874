"""`mountbench calibrate`: measure how much a filesystem's results move between runs (engine/calibrate.py),
and list what was measured."""

from __future__ import annotations

import datetime
import secrets
import time
from pathlib import Path

import click

from mountbench.cli.common import db_option, debug_option
from mountbench.cli.console import command_line, err, out
from mountbench.cli.progress import Pace, ProgressEvents
from mountbench.engine import calibrate as calibration
from mountbench.errors import UsageError
from mountbench.fio.binary import find_fio
from mountbench.host import facts as hostinfo
from mountbench.kinds import host_facts
from mountbench.model import ACCESS_CLASSES, RunData, RunLevel, RunOptions
from mountbench.presets import preset_names
from mountbench.store import Store, default_db_path
from mountbench.units import format_seconds

ACCESS_WORDS = {"large": "large blocks (≥ 128 KiB)", "small": "small blocks", "other": "trees, start-up, http"}


@click.command()
@click.argument("directory", required=False, type=click.Path(path_type=Path))
@click.option("--runs", type=click.IntRange(3, 100), default=6, show_default=True,
              help="A/A runs, one after another (more runs: a figure with more degrees of freedom)")  # fmt: skip
@click.option("--repeat", type=click.IntRange(2, 50), default=4, show_default=True, help="rounds in each run")
@click.option("--preset", default="quick", show_default=True, help="the workloads the runs take")
@click.option("--runtime", type=click.FloatRange(0.1, 600), default=0.5, show_default=True,
              help="seconds of I/O per fio sample")  # fmt: skip
@click.option("--list", "list_them", is_flag=True, help="list the calibrations stored, and exit")
@db_option
@debug_option
def calibrate(
    directory: Path | None,
    runs: int,
    repeat: int,
    preset: str,
    runtime: float,
    list_them: bool,
    db: Path | None,
    debug: bool,
) -> None:
    """Measure how much DIRECTORY's filesystem moves between runs (A/A runs of two directories in it).

    One run cannot see how far a second run would differ: where its files land, the state it starts in.
    Every comparison's interval carries that run level (a default per filesystem type until this measures
    it here). The result is stored for the filesystem; every later run on it uses and names it.

    \b
    mountbench calibrate /mnt/nfs --runs 8
    mountbench calibrate --list
    """
    db_path = db or default_db_path()
    if list_them:
        _list(db_path)
        return
    if directory is None:
        raise UsageError("give the directory whose filesystem to calibrate, e.g. mountbench calibrate /mnt/nfs "
                         "(or --list)")  # fmt: skip
    if preset not in preset_names():
        raise UsageError(f"unknown --preset {preset!r}; 'mountbench presets' lists them")
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory; give one on the filesystem to calibrate")
    options = RunOptions(presets=(preset,), repeat=repeat, max_repeat=repeat, runtime=runtime)
    fio = find_fio()
    started = time.monotonic()
    calibration_id = f"calibrate-{datetime.datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
    err.print(f"calibrating {directory}: {runs} A/A runs of preset {preset}, {repeat} rounds each", markup=False)

    def progress(index: int) -> ProgressEvents:
        return ProgressEvents(err, (), Pace(), {})

    def said(index: int, run: RunData) -> None:
        so_far = format_seconds(time.monotonic() - started)
        err.print(f"  run {index + 1} of {runs}: {run.id} ({so_far} so far)", markup=False, highlight=False)

    with Store(db_path) as store:
        found = calibration.calibrate(
            directory.resolve(), runs, options, store, fio, calibration_id=calibration_id, events=progress,
            host=hostinfo.collect(fio.version) | host_facts({}), command=command_line(), on_run=said,
        )  # fmt: skip
    out.print(_describe(found.estimate.level, found.estimate.workloads), markup=False, highlight=False)
    out.print(
        f"stored for {found.key} (runs {', '.join(found.runs)}): every run on this filesystem now uses it, and "
        "says so in its facts", markup=False, highlight=False,
    )  # fmt: skip


def _describe(level: RunLevel, counts: tuple[int, ...]) -> str:
    lines = [f"run level ({level.basis}; {level.df:g} degrees of freedom):"]
    for index, access in enumerate(ACCESS_CLASSES):
        how = f"{counts[index]} workloads" if counts[index] else "not measured: the filesystem type's default"
        lines.append(
            f"  {ACCESS_WORDS[access]}: ±{level.paired[index] * 100:.2g}% between runs against another target, "
            f"±{level.level[index] * 100:.2g}% for its own level ({how})"
        )
    return "\n".join(lines)


def _list(db_path: Path) -> None:
    if not db_path.is_file():
        out.print("no calibrations stored (no database yet)")
        return
    with Store(db_path, writer=False) as store:
        found = store.list_calibrations()
    if not found:
        out.print("no calibrations stored: every run uses its filesystem type's default (mountbench calibrate DIR)")
        return
    for item in found:
        when = datetime.datetime.fromtimestamp(item["created_at"]).strftime("%Y-%m-%d %H:%M")
        out.print(f"{item['key']} ({item['path']}, {when})", markup=False, highlight=False)
        out.print(_describe(item["level"], (1, 1, 1)), markup=False, highlight=False)
