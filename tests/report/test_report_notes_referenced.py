"""Issue 37: every note a report prints is referred to by something it shows, for every
--metric, on the terminal and in Markdown ('show --metric lat-p99' printed 106 notes, 12 of
them referred to: a percentile table's points numbered their spread and ratio caveats,
which it never shows). The runs are real ones (tests/data/exports)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from mountbench.records.export import read_document
from mountbench.report.content import build_report
from mountbench.report.markdown import render_markdown
from mountbench.report.terminal import render_run

DATA = Path(__file__).parent.parent / "data" / "exports"
METRICS = [(), ("iops",), ("bw",), ("lat-mean",), ("lat-p99",), ("read.lat_p99.9",)]


def _report(name: str, metrics: tuple[str, ...]):
    return build_report(read_document(DATA / f"{name}.json"), metrics=metrics)


def _terminal(report) -> str:
    console = Console(width=120, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 (closed with the console)
    for part in render_run(report):
        console.print(part)
    return console.export_text()


def _numbers(marks: str) -> set[int]:
    return {int(n) for n in marks.split(",")}


@pytest.mark.parametrize("metrics", METRICS, ids=lambda m: m[0] if m else "headline")
@pytest.mark.parametrize("name", ["default-run", "tree-run"])
def test_every_printed_note_is_referred_to(name, metrics):
    report = _report(name, metrics)
    text = _terminal(report)
    printed = {int(n) for n in re.findall(r"^\[(\d+)\] ", text, flags=re.M)}
    assert printed == set(range(1, len(report.notes) + 1))
    body = "\n".join(line for line in text.splitlines() if not re.match(r"\[\d+\] ", line))
    referred = set().union(*(_numbers(m) for m in re.findall(r"\[(\d+(?:,\d+)*)\]", body)), set())
    assert printed - referred == set(), f"terminal: notes nothing refers to: {sorted(printed - referred)}"

    markdown = render_markdown(report)
    listed = {int(n) for n in re.findall(r'^(\d+)\. <a id="note-\d+">', markdown, flags=re.M)}
    linked = {int(n) for n in re.findall(r"\]\(#note-(\d+)\)", markdown)}
    assert listed - linked == set(), f"Markdown: notes nothing links to: {sorted(listed - linked)}"
