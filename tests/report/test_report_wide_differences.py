"""Width never hides a decided difference (issue 36: the cloud lab's `off` extract, ~50× slower
than a noisy local disk, read "too wide to rank"). An interval that excludes 1 but whose ends
are more than 100× apart is said by its near end, "at least N× slower", in the headline, the
tables and verdicts of every format and the CSV; "too wide to rank" stays for an interval that
contains 1 and is that wide."""

from __future__ import annotations

import csv
import io
import re

from rich.console import Console
from support.factories import make_run

from mountbench.analysis import stats
from mountbench.report.content import build_report
from mountbench.report.csvexport import summary_csv
from mountbench.report.html import render_html
from mountbench.report.markdown import render_markdown
from mountbench.report.phrasing import TOO_WIDE_TEXT, factor_text
from mountbench.report.terminal import render_report

NOISY_LOCAL = [1000.0, 5000.0, 12000.0]  # IOPS, three rounds: a cold first round, then warmer


def _formats(report) -> dict[str, str]:
    console = Console(width=220, record=True, file=io.StringIO())
    console.print(render_report(report))
    return {"terminal": console.export_text(), "markdown": render_markdown(report),
            "html": render_html(report, with_charts=False)}  # fmt: skip


def _comparison(report, target: str = "off-0ms") -> stats.Comparison:
    (row,) = report.summary.rows
    comparison = row.cells[target].comparison
    assert comparison is not None
    return comparison


def test_a_decided_difference_over_100x_wide_is_ranked_by_its_near_end() -> None:
    report = build_report([make_run({("local", "rr"): NOISY_LOCAL, ("off-0ms", "rr"): [20.0, 20.7, 21.0]})])
    comparison = _comparison(report)
    assert comparison.verdict == stats.DIFFERS and comparison.high / comparison.low > stats.TOO_WIDE_SPAN
    said = f"at least {factor_text(1 / comparison.high)} slower"  # IOPS: the near end of the slowdown
    for fmt, text in _formats(report).items():
        assert said in text, fmt
        assert not re.search(r"too wide to rank(?![:\"”&])", text), fmt  # only the legend's explanation says it
    assert (
        f"off-0ms is slower than local in the one workload ({said.removesuffix(' slower')})"
        in _formats(report)["markdown"]
    )
    rows = list(csv.DictReader(io.StringIO(summary_csv(report))))
    off = next(r for r in rows if r["target"] == "off-0ms")
    assert off["comparison"] == said and off["verdict"] == "worse"


def test_an_undecided_interval_over_100x_wide_is_still_too_wide_to_rank() -> None:
    local = [1000.0, 100000.0, 3000.0]
    report = build_report([make_run({("local", "rr"): local, ("off-0ms", "rr"): [2000.0, 2100.0, 2050.0]})])
    comparison = _comparison(report)
    assert comparison.verdict == stats.UNDECIDED and comparison.too_wide
    for fmt, text in _formats(report).items():
        assert TOO_WIDE_TEXT in text and not re.search(r"at least [\d.]+×", text), fmt
