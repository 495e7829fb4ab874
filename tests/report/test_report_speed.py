"""Issue 48, item 12: reports fast (a three-target default run: HTML 34.7 s at load 12, `show` 10.9 s). A
report decides its runs once (analysis/decided.decide_runs knows runs by identity: the report relabels them,
and the rounds' reasons and the JSON document summarised the originals again), the page draws every chart in
one go (the 'within each sample' chart was drawn apart, after the others), the PDF draws no phone drawing
(its print rules hide them), and the timing test holds the figures to bench/report_speed.py's limits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mountbench.analysis import decided
from mountbench.records.export import read_document
from mountbench.report.content import build_report
from mountbench.report.document import make_document

DATA = Path(__file__).parent.parent / "data" / "exports"
RUNS = ["default-run", "three-targets", "cdm-run", "tree-run", "lab-run"]


@pytest.fixture
def decisions(monkeypatch) -> list[int]:
    """How many times the runs were decided (a family computed), counted around the real function."""
    counted: list[int] = []
    real = decided._decide

    def counting(*args, **kwargs):
        counted.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(decided, "_decide", counting)
    decided._CACHE.clear()
    return counted


@pytest.mark.parametrize("name", RUNS)
def test_a_report_and_its_document_decide_the_runs_once(name, decisions):
    runs = read_document(DATA / f"{name}.json")
    report = build_report(runs)
    assert len(decisions) == 1, "build_report"
    make_document(list(report.runs), summary=report.summary, stops=report.stops)
    assert len(decisions) == 1, "`report --format json` reuses the report's summary and reasons"
    decisions.clear()
    decided._CACHE.clear()
    make_document(runs)  # `run --json`, after every sample
    assert len(decisions) == 1, "the export summarises its runs once"


def test_the_page_draws_every_chart_in_one_go():
    """The series chart is among the page's charts (drawn with the others by chartkit.render_all)."""
    from mountbench.report.html import page_charts

    report = build_report(read_document(DATA / "three-targets.json"))
    assert "series" in {chart.key for chart in page_charts(report)}


def test_the_printed_page_has_no_phone_drawing():
    from mountbench.report.html import render_html

    report = build_report(read_document(DATA / "default-run.json"))
    assert 'class="chart-narrow"' in render_html(report) and 'class="chart-narrow"' not in render_html(
        report, phone=False
    )


def test_reports_of_a_three_target_default_run_are_fast():
    """bench/report_speed.py on the recorded three-target default run: Markdown, HTML (and PDF where
    Chromium is) under 3 s each, `show` under 1 s, on this machine as the last part of the suite finds it."""
    bench = Path(__file__).resolve().parents[2] / "bench" / "report_speed.py"
    done = subprocess.run([sys.executable, str(bench), "--times", "2"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "html + SVG charts" in done.stdout and "show (a new process)" in done.stdout
