"""Issue 48, item 8: `show` is one 80×24 screen for three targets, the cdm preset and the tree preset too
(they took 30, 32 and 48 lines): a compact grid, the detail on request; and `list` stays within 80 columns
once a job-file run is stored (every row wrapped). Recorded runs (tests/data/exports), printed by the
commands themselves into a pipe (80 columns) and in process at 80 columns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from mountbench.records.export import read_document
from mountbench.report.content import build_report
from mountbench.report.grid import one_unit
from mountbench.report.terminal import render_short

DATA = Path(__file__).parent.parent / "data" / "exports"
RUNS = ["default-run", "three-targets", "cdm-run", "tree-run"]


def _short(name: str, width: int = 80) -> list[str]:
    runs = read_document(DATA / f"{name}.json")
    console = Console(width=width, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(render_short(build_report(runs, unit=one_unit(runs, "auto"))))
    return console.export_text().rstrip("\n").splitlines()


@pytest.mark.parametrize("name", RUNS)
def test_show_is_one_screen(name):
    lines = _short(name)
    assert len(lines) <= 24, "\n".join(lines)
    assert all(len(line.rstrip()) <= 80 for line in lines)
    assert lines[1].startswith("▶ "), "the answer first"
    report = build_report(read_document(DATA / f"{name}.json"))
    titles = {line.title for section in report.grid.sections for line in section.lines}
    text = "\n".join(lines)
    assert all(title.split()[0] in text for title in titles), "every workload of the grid is on the screen"
    assert "--detail" in text and "--out report.html" in text


def _mountbench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "mountbench", *args], capture_output=True, text=True, env=env,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc


def test_list_stays_within_80_columns_with_a_job_file_run_stored(tmp_path):
    env = dict(os.environ) | {"MOUNTBENCH_DB": str(tmp_path / "db.sqlite")}
    env.pop("COLUMNS", None)  # piped: 80 columns
    document = json.loads((DATA / "default-run.json").read_text())
    run = document["runs"][0]
    run["id"] = "20261128-120000-beef"
    run["config"] |= {"presets": [], "job_files": ["/home/someone/benchmarks/random-read-and-write-mixed.fio"],
                      "only": ["rnd*"]}  # fmt: skip
    run["host"]["hostname"] = "build-server-07.example.org"
    path = tmp_path / "job-run.json"
    path.write_text(json.dumps(document))
    for source in (DATA / "tree-run.json", DATA / "cdm-run.json", path):
        _mountbench("import", str(source), env=env)
    listed = _mountbench("list", env=env).stdout.splitlines()
    assert all(len(line) <= 80 for line in listed), "\n".join(line for line in listed if len(line) > 80)
    text = "\n".join(listed)
    assert "random-read-and-write-mixed.fio --only rnd*" in text and "build-server-07.example.org" in text
    for run_id, samples in (("20261128-120000-beef", "38"), ("20261127-070136-f53b", "90")):
        row = next(line for line in listed if line.startswith(run_id))
        # a run's id, status and samples on one line, never wrapped away from each other
        assert "complete" in row and row.rstrip().endswith(samples), row


@pytest.mark.parametrize("name", RUNS)
def test_the_answer_is_said_again_last(name):
    """Issue 48, item 13: after `run`'s hundred lines of detail the headline had scrolled away; the run ends
    with it (cli/run.py prints report.terminal.answer after its notices), the busy machine left out."""
    from mountbench.report.terminal import answer

    runs = read_document(DATA / f"{name}.json")
    report = build_report(runs)
    console = Console(width=80, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(answer(report))
    said = " ".join(console.export_text().split())
    assert said.startswith("Answer: ▶")
    for headline in report.headlines:
        assert (" ".join(headline.text.split()) in said) == (headline.kind != "noise"), headline.text
    assert f"mountbench show {runs[0].id}" in said
