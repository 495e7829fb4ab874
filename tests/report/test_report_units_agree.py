"""One run rendered in every format says each figure the same way: host CPU per GiB moved is
"N s/GiB" in the terminal, Markdown and HTML tables, "s/GiB" over the summary grid's digits and
in the CSV headers (issue 36: "3310" in the terminal, "55m07s/GiB" in HTML)."""

from __future__ import annotations

import csv
import dataclasses
import io
import re
import statistics

from rich.console import Console
from support.synthetic import study_run

from mountbench.model import RunData
from mountbench.report.content import build_report
from mountbench.report.csvexport import samples_csv, summary_csv
from mountbench.report.html import render_html
from mountbench.report.markdown import render_markdown
from mountbench.report.terminal import render_report
from mountbench.units import sig3

PER_GIB = {"virtiofs": (3307.4, 3290.0, 3350.0), "9p": (0.8, 0.81, 0.79)}  # one large, one under a second


def _run_with_host_cost() -> RunData:
    """The study run with the host cost a lab measures: rclone-like CPU per GiB on the two mounts."""
    run = study_run()
    samples = []
    for s in run.samples:
        if s.ok and s.target in PER_GIB:
            cost = {"host.cpu_s": 30.0, "host.cpu_s_per_gib": PER_GIB[s.target][s.round % 3], "host.uss_peak": 9e6}
            s = dataclasses.replace(s, metrics={**s.metrics, **cost})
        samples.append(s)
    return dataclasses.replace(run, samples=tuple(samples))


def _terminal(report) -> str:
    console = Console(width=220, record=True, file=io.StringIO())
    console.print(render_report(report))
    return console.export_text()


def _per_gib_texts(text: str) -> set[str]:
    """Every '<value> <unit>/GiB' the text says (whatever the unit)."""
    return set(re.findall(r"(?<![\w.])([\d.]+(?:k|M)?\s?(?:m\d\ds|\w*s))/GiB", text))


def test_cpu_per_gib_reads_the_same_in_every_format() -> None:
    report = build_report([_run_with_host_cost()])
    row = next(r for r in report.summary.rows if r.metric.name == "host.cpu_s_per_gib")
    medians = [row.cells[t].summary.median for t in PER_GIB]
    assert medians == [statistics.median(values) for values in PER_GIB.values()]
    expected = {f"{sig3(median)} s" for median in medians}
    texts = {"terminal": _terminal(report), "markdown": render_markdown(report), "html": render_html(report)}
    for fmt, text in texts.items():
        assert _per_gib_texts(text) == expected, (fmt, _per_gib_texts(text))
    # the summary grid: the same digits under one unit, "s/GiB", in every format
    terminal = texts["terminal"]
    section = terminal[terminal.index("host CPU per GiB moved, s/GiB") :][:2000]
    assert all(f" {sig3(median)} " in section for median in medians), section
    for fmt in ("markdown", "html"):
        assert "host CPU per GiB moved, s/GiB" in texts[fmt], fmt
    # CSV: the unit in the samples' header and in the summary's unit column
    header = next(csv.reader(io.StringIO(samples_csv(report))))
    assert "host.cpu_s_per_gib [s/GiB]" in header
    units = {r["metric"]: r["unit"] for r in csv.DictReader(io.StringIO(summary_csv(report)))}
    assert units["host.cpu_s_per_gib"] == "s/GiB"
