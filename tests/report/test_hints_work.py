"""Issue 48, item 3: every hint is a command that works as written for the run shown, `show` and
`show --detail` number the notes alike, and no view prints a note nothing in it refers to.

`show` said "notes [1]–[21] … --detail" and `--detail` printed 13; "charts: mountbench report RUN"
printed 137 lines of Markdown and no chart; "'mountbench report --format html' draws it" dumped 695 KB
of HTML into the terminal, of the last run rather than the one shown; `--detail --metric lat-p99`
printed a note no cell cited. Recorded runs (tests/data/exports), imported into a database of the
test's own; the hints are run as a user would copy them (a child process each)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent.parent / "data" / "exports"
RUNS = ["default-run", "three-targets", "cdm-run", "tree-run"]
METRICS = [(), ("lat-p99",), ("read.lat_p99.9",), ("iops",), ("lat-mean",)]


def mountbench(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "mountbench", *args]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, cwd=cwd)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> dict[str, object]:
    """A database holding the recorded runs, and each run's id."""
    root = tmp_path_factory.mktemp("hints")
    env = dict(os.environ) | {"MOUNTBENCH_DB": str(root / "results.sqlite"), "COLUMNS": "80"}
    ids = {}
    for name in RUNS:
        done = mountbench("import", str(DATA / f"{name}.json"), env=env)
        ids[name] = re.search(r"\d{8}-\d{6}-[0-9a-f]{4}", done.stdout + done.stderr).group(0)
    return {"env": env, "ids": ids, "root": root}


def _notes(text: str) -> dict[int, str]:
    """The notes a terminal view prints, by number (each note up to the next or the legend)."""
    found: dict[int, str] = {}
    current = None
    for line in text.splitlines():
        start = re.match(r"^\[(\d+)\] (.*)", line)
        if start:
            current = int(start.group(1))
            found[current] = start.group(2)
        elif current is not None and line and not line.startswith(("median ±CV", "    ", "run ")):
            found[current] += " " + line.strip()
        else:
            current = None
    return found


def _cited(text: str) -> set[int]:
    body = "\n".join(line for line in text.splitlines() if not re.match(r"^\[\d+\] ", line))
    return {int(n) for marks in re.findall(r"\[(\d+(?:,\d+)*)\]", body) for n in marks.split(",")}


def _hinted_numbers(hint: str) -> set[int]:
    numbers: set[int] = set()
    for first, last in re.findall(r"\[(\d+)\](?:–\[(\d+)\])?", hint):
        numbers.update(range(int(first), int(last or first) + 1))
    return numbers


@pytest.mark.parametrize("name", RUNS)
def test_show_names_commands_that_work_and_notes_detail_prints(imported, name):
    env, run_id, root = imported["env"], imported["ids"][name], imported["root"]
    short = mountbench("show", run_id, env=env).stdout
    start = short.rindex("\n", 0, short.rindex("detail")) + 1  # the hint: its last lines
    grid, hint = short[:start], " ".join(short[start:].split())
    commands = [c.strip() for c in re.findall(r"mountbench (?:show|report) [^;]+", hint)]
    assert f"mountbench show {run_id} --detail" in commands, hint
    assert f"mountbench report {run_id} --out report.html" in commands, hint
    grid_marks = _cited(grid)
    assert _hinted_numbers(hint) == grid_marks, (hint, grid_marks)

    detail = mountbench(*shlex.split(f"show {run_id} --detail"), env=env).stdout
    printed = _notes(detail)
    assert grid_marks <= set(printed), f"show names notes {sorted(grid_marks)}, --detail prints {sorted(printed)}"
    # the same numbers on the same cells: the grid of --detail is the grid of show, note for note
    detail_grid = detail[: detail.index("Detail:")]
    shown_grid = grid
    # (show's compact grid and --detail's grid: one line per workload and direction, read in the same order)
    assert sorted(re.findall(r"\[[\d,]+\]", detail_grid[detail_grid.index("Summary") :])) == sorted(
        re.findall(r"\[[\d,]+\]", shown_grid)
    )

    work = root / name
    work.mkdir(exist_ok=True)
    mountbench(*shlex.split(f"report {run_id} --out report.html"), env=env, cwd=work)
    page = (work / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and run_id in page


@pytest.mark.parametrize("metrics", METRICS, ids=lambda m: m[0] if m else "headline")
@pytest.mark.parametrize("name", RUNS)
def test_no_orphan_notes_on_the_terminal(imported, name, metrics):
    """Every note --detail prints is cited by a cell it shows, and every cited note is printed."""
    from rich.console import Console

    from mountbench.records.export import read_document
    from mountbench.report.content import build_report
    from mountbench.report.grid import one_unit
    from mountbench.report.terminal import render_run

    runs = read_document(DATA / f"{name}.json")
    report = build_report(runs, metrics=metrics, unit=one_unit(runs, "auto", metrics))
    console = Console(width=80, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    for part in render_run(report):
        console.print(part)
    text = console.export_text()
    printed = set(_notes(text))
    assert printed == _cited(text), f"printed {sorted(printed)}, cited {sorted(_cited(text))}"
    assert sorted(printed) == list(range(1, len(printed) + 1)), "the numbers run without a gap"


@pytest.mark.parametrize("name", ["cdm-run"])
def test_a_note_pointing_at_the_page_names_a_command_for_this_run(imported, name):
    env, run_id = imported["env"], imported["ids"][name]
    detail = mountbench("show", run_id, "--detail", env=env).stdout
    joined = " ".join(detail.split())
    assert "--format html' draws it" not in joined
    assert f"'mountbench report {run_id} --out report.html' draws it" in joined
