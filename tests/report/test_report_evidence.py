"""Every count, level and interval a report states matches the samples it holds (issue 31): a
run whose budget ran out after 1-2 rounds said "3-12 rounds per cell" in the terminal, "the
median of 3-12 samples" in HTML, "ran 3-12 measured times" in the methodology; the legend said
95 % while the notes said 99.2 %; the charts drew "error bars: 95 %" from a statistic of their own.
One test per format, charts included."""

from __future__ import annotations

import html
import re

import pytest
from rich.console import Console
from support.factories import fio_workload, make_run, starved_run

from mountbench.analysis.quality import level_text
from mountbench.report.chartkit import inline_svg
from mountbench.report.charts import plan_charts
from mountbench.report.content import build_report
from mountbench.report.html import render_html
from mountbench.report.markdown import render_markdown
from mountbench.report.methodology import repetitions
from mountbench.report.terminal import render_report


def _starved():
    """A default-budget run whose budget ran out: 1-2 samples a cell, --until allowing 12."""
    return starved_run()


@pytest.fixture
def report():
    return build_report([_starved()])


def _plain(text: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def test_the_counts_are_the_samples_held(report):
    held = sorted({len(cell.values) for row in report.summary.rows for cell in row.cells.values()})
    assert held == [1, 2] and repetitions(report) == "1–2"


def test_terminal_counts_and_level(report):
    console = Console(width=200, record=True, color_system=None)
    console.print(render_report(report))
    text = " ".join(console.export_text().split())
    assert "1–2 rounds per cell" in text and "3–12" not in text
    assert "fewer than the planned 3" in text
    assert f"{level_text(report.summary.family.level)} CI (all the run's comparisons together" in text


def test_markdown_counts_and_level(report):
    text = _plain(render_markdown(report))
    assert "Each value: the median of 1–2 samples" in text and "ran 1–2 measured times" in text
    assert "3–12" not in text
    assert f"{level_text(report.summary.family.level)} CI (all the run's comparisons together" in text


def test_html_counts_and_level(report):
    text = _plain(render_html(report, with_charts=False))
    assert "Each value: the median of 1–2 samples" in text and "ran 1–2 measured times" in text
    assert "3–12" not in text
    assert f"{level_text(report.summary.family.level)} CI (all the run's comparisons together" in text


def test_charts_state_the_levels_their_intervals_have(report):
    """The bars' whiskers are each cell's median interval at the level it has (50 % for two samples,
    none for one); the ratio chart's are the family's intervals, at the family's level."""
    charts = {chart.kind: chart for chart in plan_charts(report)}
    bars = _plain(inline_svg(charts["bars"]))
    levels = sorted({cell.summary.ci_level for row in report.summary.rows for cell in row.cells.values()})
    assert levels == [0.0, 0.5]
    assert "error bars: 50% confidence interval of the median" in bars
    ratios = _plain(inline_svg(charts["ratio"]))
    assert f"error bars: {level_text(report.summary.family.level)} confidence interval" in ratios


def test_every_interval_in_a_note_states_its_direction_and_its_level(report):
    notes = [n for n in report.notes if n.startswith("undecided")]
    for note in notes:
        assert re.search(r"its \d+(\.\d+)?% CI \([\d.]+–[\d.]+×, disk ÷ ram\)", note), note


def test_a_time_metric_s_note_says_its_interval_as_the_table_does():
    """A tree table showed "(0.0392–3.59×)" and its note "(0.279–25.5× of the raw ratio)" for the same
    interval, inverted, without saying which way is faster: both now say it as speed, and the note
    names the direction."""
    from mountbench.report.phrasing import cell_standing

    values = {("ram", "w"): [1.0, 1.3, 0.8], ("disk", "w"): [1.1, 0.7, 1.6]}
    report = build_report([make_run(values, metric="wall", workloads=[fio_workload("w")])], metrics=["wall"])
    (row,) = report.summary.rows
    standing = cell_standing(row, "disk")
    assert standing is not None and standing.kind == "undecided"
    (note,) = [n for n in report.notes if n.startswith("undecided")]
    assert f"({standing.interval}, disk's speed ÷ ram's)" in note, (standing.interval, note)
