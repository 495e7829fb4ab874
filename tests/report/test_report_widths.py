"""Issue 37: at any width from 40 columns, no number, unit, mark or name is cut across lines; a
table too wide for the width turns into cards (a title, then a line per target) instead.
Issue 34 (7): with 50 targets the tables collapsed to 1-character columns with no labels and
no values. The runs are real ones (tests/data/exports); the 50 targets are synthetic. Checked
in-process at several widths, and as printed in a tmux window at 40, 80 and 120 columns."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from support.factories import make_run

from mountbench.analysis.metrics import describe
from mountbench.records.export import read_document
from mountbench.report.cells import format_value
from mountbench.report.content import build_report
from mountbench.report.grid import one_unit
from mountbench.report.phrasing import cell_standing
from mountbench.report.terminal import render_run, render_short

DATA = Path(__file__).parent.parent / "data" / "exports"
BOX = re.compile(r"[│┃┏┓┗┛┡┩└┘┌┐├┤┼╇╈┳┻━─╋]")


def _printed(report, width: int, *, short: bool = False) -> str:
    console = Console(width=width, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    for part in [render_short(report)] if short else render_run(report):
        console.print(part)
    return console.export_text()


def _words(text: str) -> set[str]:
    return {word.rstrip(":;,") for word in BOX.sub(" ", text).split()}


def whole_words(report) -> set[str]:
    """Words that must each appear whole: target labels, workload titles, the grid's values
    and the comparisons' factors ('4.38×'), and every median as the detail prints it."""
    found = {"(baseline)"} | set(report.summary.targets)
    for section in report.grid.sections:
        for line in section.lines:
            found.update(line.title.split())
            for row in line.rows.values():
                for target, cell in row.cells.items():
                    if cell.summary is not None:
                        found.add(section.scale.format(cell.summary.median))
                    said = cell_standing(row, target)
                    if said is not None:
                        found.update(said.short.split())
    for row in report.summary.rows:
        for cell in row.cells.values():
            if cell.summary is not None:
                found.update(format_value(cell.summary.median, describe(row.metric.name)).split())
    return found


def _assert_whole(text: str, report, width: int) -> None:
    wide = [line for line in text.splitlines() if len(line.rstrip()) > width]
    assert not wide, f"lines wider than {width}: {wide[:3]}"
    missing = {word.rstrip(":;,") for word in whole_words(report)} - _words(text)
    assert not missing, f"cut at {width} columns: {sorted(missing)[:10]}"


@pytest.mark.parametrize("width", [40, 50, 64, 80, 100, 120])
@pytest.mark.parametrize("name", ["default-run", "tree-run"])
def test_no_word_is_cut_at_any_width(name, width):
    report = build_report(read_document(DATA / f"{name}.json"))
    _assert_whole(_printed(report, width), report, width)
    short = _printed(report, width, short=True)
    assert "(base\n" not in short
    grid_words = {w.rstrip(":;,") for s in report.grid.sections for line in s.lines for w in line.title.split()}
    assert grid_words <= _words(short)


def test_the_default_run_short_form_fits_one_screen():
    """What `show` prints: every workload measured bandwidth, so the grid is one table in MB/s."""
    runs = read_document(DATA / "default-run.json")
    report = build_report(runs, unit=one_unit(runs, "auto"))
    assert len(report.grid.sections) == 1
    lines = _printed(report, 80, short=True).rstrip("\n").splitlines()
    assert len(lines) <= 24, "\n".join(lines)
    assert lines[1].startswith("▶ ") and any("(higher is better)" in line for line in lines)


@pytest.mark.parametrize("width", [80, 120])
def test_fifty_targets_switch_to_cards_with_every_label_and_value(width):
    labels = [f"target{n:02d}" for n in range(50)]
    values = {(label, w): [1000.0 + 10 * n + i for i in range(3)] for n, label in enumerate(labels) for w in ("a", "b")}
    report = build_report([make_run(values)])
    text = _printed(report, width)
    _assert_whole(text, report, width)
    for label in labels:  # each label starts a card line of its own, with its value on it
        assert re.search(rf"^\s+{label}( \(baseline\))?: \d", text, flags=re.M), label


@pytest.mark.skipif(shutil.which("tmux") is None, reason="no tmux (apt-get install tmux)")
@pytest.mark.parametrize("width", [40, 80, 120])
def test_in_a_tmux_window_nothing_is_cut(tmp_path, width):
    db = tmp_path / "runs.db"
    env = os.environ | {"MOUNTBENCH_DB": str(db)}
    subprocess.run([sys.executable, "-m", "mountbench", "import", str(DATA / "tree-run.json")], env=env, check=True,
                   capture_output=True)  # fmt: skip
    done = tmp_path / "done"
    session = f"mb-widths-{os.getpid()}-{width}"
    # a detached window starts at 80 columns and takes its size a moment later, and its shell exports the
    # COLUMNS it started with (which rich reads first): wait for the size, then let the programs read it
    ready = f"until [ \"$(stty size | cut -d' ' -f2)\" = {width} ]; do sleep 0.05; done; unset COLUMNS LINES"
    command = (
        f"{ready}; {sys.executable} -m mountbench show --detail; {sys.executable} -m mountbench show; touch {done}"
    )
    subprocess.run(["tmux", "-L", session, "new-session", "-d", "-s", session, "-x", str(width), "-y", "50",
                    "-e", f"MOUNTBENCH_DB={db}", command + "; sleep 60"], check=True)  # fmt: skip
    try:
        subprocess.run(["tmux", "-L", session, "set-option", "-g", "history-limit", "20000"], check=True)
        deadline = time.monotonic() + 120
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert done.exists(), "show did not finish in the tmux window"
        shown = subprocess.run(["tmux", "-L", session, "capture-pane", "-p", "-S", "-", "-t", session],
                               capture_output=True, text=True, check=True).stdout  # fmt: skip
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], check=False)
    report = build_report(read_document(DATA / "tree-run.json"))
    assert "(higher is better)" in shown
    _assert_whole(shown, report, width)


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_samples_show_every_workload_name_whole(width):
    """Issue 37: 'show --samples' printed 'seq1m-q8-…', hiding read vs write."""
    from mountbench.report.terminal import render_samples

    (run,) = read_document(DATA / "default-run.json")
    console = Console(width=width, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(render_samples(run))
    text = console.export_text()
    assert "…" not in text and all(len(line.rstrip()) <= width for line in text.splitlines())
    words = _words(text)
    assert {w.name for w in run.workloads} <= words and {t.target.label for t in run.targets} <= words
    assert sum(1 for line in text.splitlines() if re.search(r"\brnd4k-q1-write\b", line)) == len(
        [s for s in run.samples if s.workload == "rnd4k-q1-write"]
    )
