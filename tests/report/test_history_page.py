"""`mountbench history`'s outputs (report/history.py, history_chart.py): the page holds the chart (inline
SVG, nothing fetched), the steps and the runs; the terminal's lines fit 80 columns."""

from __future__ import annotations

import dataclasses
import io
import re

from rich.console import Console
from support.factories import history_runs

from mountbench.analysis import overtime
from mountbench.report.history import page, terminal
from mountbench.report.history_chart import chart_title

STEP = [1.0] * 5 + [0.6] * 5


def _history(runs):
    ((storage, items),) = overtime.storages(runs).items()
    return overtime.history(items, storage)


def test_the_page_holds_the_chart_the_steps_and_every_run():
    found = _history(history_runs(STEP, seed=11))
    html = page([found])
    assert html.startswith("<!doctype html>") and "default-src 'none'" in html
    assert f'aria-label="{chart_title(found)}"' in html and html.count("<svg ") == 2  # wide, and for a phone
    assert not re.search(r"""(src|href)=["']https?:""", html)  # self-contained
    assert "steps the data support" in html and "lower (worse)" in html
    assert all(run_id in html for run_id, _, _ in found.runs)
    assert html.count("step: ") == 3  # one per workload, in its table


def test_a_cut_is_said_on_the_page():
    runs = [r if i < 5 else dataclasses.replace(r, host={**r.host, "fio_version": "fio-3.36"})
            for i, r in enumerate(history_runs(STEP, seed=12))]  # fmt: skip
    html = page([_history(runs)])
    assert "not comparable across 1 cut" in html and "fio fio-3.33 → fio-3.36" in html
    assert "not comparable with the runs above" in html


def test_the_terminal_fits_80_columns():
    found = _history(history_runs(STEP, seed=13))
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, color_system=None)
    for part in terminal([found]):
        console.print(part)
    lines = buffer.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert sum("── step: " in line for line in lines) == 3
    assert any(line.startswith("  between runs 5 and 6") for line in lines)
