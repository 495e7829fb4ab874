"""The Markdown report, checked against a golden file built from synthetic runs.

Regenerate after an intended change: UPDATE_GOLDEN=1 pytest tests/report/test_report_markdown.py
(then read the diff: it is the report people will paste).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from support.synthetic import ODIRECT, study_run

from mountbench.blocks.to_markdown import md_table, md_text
from mountbench.report.charts import plan_charts
from mountbench.report.content import build_report
from mountbench.report.markdown import render_markdown

GOLDEN = Path(__file__).parent / "golden" / "study.md"


def _render() -> str:
    report = build_report([study_run()])
    return render_markdown(report, {chart.key: f"study-{chart.key}.png" for chart in plan_charts(report)})


def test_markdown_matches_golden_file():
    text = _render()
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "Markdown changed; rerun with UPDATE_GOLDEN=1 if intended, and review the diff"


def test_rendering_is_deterministic():
    assert _render() == _render()


def _note_number(text: str, words: str) -> str:
    """The number of the first numbered note containing ``words``."""
    return next(n for n, note in re.findall(r'^(\d+)\. <a id="note-\d+"></a>(.+)$', text, flags=re.M) if words in note)


def _mark(number: str) -> str:
    return f"[\\[{number}\\]](#note-{number})"


def _row_cells(text: str, title: str, section: str = "## Results") -> list[str]:
    body = text.split(section, 1)[1]
    row = next(line for line in body.splitlines() if line.startswith(f"| {title} | "))
    return [c.strip() for c in row.strip("|").split("|")]


def test_leads_with_the_answer_then_the_same_sections_as_the_html():
    text = _render()
    lines = text.splitlines()
    first = "- **virtiofs is slower than native in 7 of 8 workloads (from 1.22× to 3.00×, median 2.22×"
    assert lines[2].startswith(first)
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == [
        "## Summary",
        "## Verdicts",
        "## Results",
        "## Latency percentiles",
        "## Sweeps",
        "## Environment",
        "## Methodology",
        "## Notes",
    ]
    grid = _row_cells(text, "extracting the tree", "## Summary")
    assert grid[1:] == ["2.00", f"5.50 {_mark('5')}<br>2.75× slower {_mark('5')}", "32.0<br>16.0× slower"]


def test_every_caveat_is_a_numbered_note_marked_in_the_cells_it_affects():
    text = _render()
    odirect = _note_number(text, "O_DIRECT refused")
    cells = _row_cells(text, "RND 4K Q1 read")
    assert cells[3].endswith(_mark(odirect)), cells  # the 9p cell, and only it
    assert _mark(odirect) not in cells[1] + cells[2]
    assert cells[5].endswith(_mark(odirect)) and _mark(odirect) not in cells[4]  # 9p vs native inherits it
    assert ODIRECT.text in text
    assert _note_number(text, "ENOSPC")


def test_every_mark_links_to_a_note():
    text = _render()
    anchors = set(re.findall(r'<a id="(note-\d+)"></a>', text))
    links = set(re.findall(r"\]\(#(note-\d+)\)", text))
    assert links and links <= anchors


def test_a_ratio_carries_the_caveats_of_its_baseline():
    text = _render()
    cache = _note_number(text, "page cache")
    cells = _row_cells(text, "random read 4k QD1 (S4)")
    assert all(c.endswith(_mark(cache)) for c in cells[1:]), cells  # native's caveat reaches both ratios


def test_comparisons_read_as_faster_or_slower():
    text = _render()
    cells = _row_cells(text, "extracting the tree")
    assert cells[4:] == [f"2.75× slower (2.41–3.13×) {_mark('5')}", "16.0× slower (14.0–18.2×)"]
    assert "×0." not in text and "÷" not in text.split("## Methodology")[0]


def test_verdicts_are_stated_like_the_studies():
    text = _render()
    assert "- virtiofs is 2.75× slower than native at extracting the tree (wall time), 95% CI 2.41–3.13×" in text
    assert "9p vs native at SEQ 1M Q8 write (write bandwidth): undecided (95% CI 0.875–1.19×" in text


def test_charts_are_referenced_next_to_their_tables():
    text = _render()
    for key in ("bars-read-iops", "ratio", "percentiles-lat-4k-read", "sweep-1-write-bw"):
        assert f"](study-{key}.png)" in text


def test_without_chart_files_the_report_says_how_to_get_them():
    text = render_markdown(build_report([study_run()]))
    assert "![" not in text and "--out FILE.md" in text


def test_escaping_keeps_tables_intact():
    assert md_text("a*b [x] <y> _lead snake_case") == "a\\*b \\[x\\] \\<y> \\_lead snake_case"
    table = md_table(["h"], [["a|b"]])
    assert "a\\|b" in table and table.count("\n") == 2
