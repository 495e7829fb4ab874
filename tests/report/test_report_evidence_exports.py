"""Every count, level and interval the CSV and JSON exports state matches the samples they hold
(issue 31; tests/report/test_report_evidence.py does the terminal, Markdown, HTML and the charts):
each row's n is the cell's samples in the samples table, its median interval's level is what the
order statistics of n samples really cover, its ratio interval is the run's family's, and the
level its note states is that interval's own."""

from __future__ import annotations

import csv
import html
import io
import re
from collections import Counter

import pytest
from support.factories import starved_run

from mountbench.analysis.stats import median_ci, same_share
from mountbench.report.content import build_report
from mountbench.report.csvexport import samples_csv, summary_csv
from mountbench.report.document import make_document


def _starved():
    """The starved run of test_report_evidence.py, plus a cell that is the same and one undecided."""
    return starved_run(
        {
            # the same: eight rounds, --until's first look that spends sameness error (stats.same_share)
            ("ram", "w3"): [100.0, 101.0, 99.0, 100.5, 100.2, 99.6, 100.8, 99.9],
            ("disk", "w3"): [99.0, 102.0, 100.0, 100.2, 100.9, 99.1, 101.2, 100.4],
            ("ram", "w4"): [100.0, 110.0, 92.0, 104.0],  # undecided: its note states its level
            ("disk", "w4"): [95.0, 115.0, 90.0, 108.0],
        }
    )


@pytest.fixture
def report():
    return build_report([_starved()])


def _held(report) -> dict[tuple[str, str], int]:
    """(workload, target) -> successful samples, as the samples table lists them."""
    rows = list(csv.DictReader(io.StringIO(samples_csv(report))))
    return Counter((r["workload"], r["target"]) for r in rows if r["ok"] == "true")


def _number(text: str) -> float | None:
    return float(text) if text not in ("", None) else None


def test_csv_counts_levels_and_intervals_are_the_samples_and_the_family(report):
    held = _held(report)
    family = report.summary.family
    rows = list(csv.DictReader(io.StringIO(summary_csv(report))))
    assert {(r["workload"], r["target"]) for r in rows} == set(held)
    assert {r["verdict"] for r in rows} >= {"worse", "same", "undecided", "unknown"}
    stated = 0
    for row in rows:
        key = (row["workload"], row["target"])
        cell = next(r for r in report.summary.rows if r.workload == key[0]).cells[key[1]]
        assert int(row["n"]) == held[key] == len(cell.values)
        assert _number(row["ci_level [fraction]"]) == pytest.approx(median_ci(cell.values)[2])
        comparison = family.comparisons.get((key[0], row["metric"], key[1]))
        if comparison is None:
            assert row["ratio_low [x baseline]"] == ""
            continue
        if comparison.has_interval:
            assert _number(row["ratio_low [x baseline]"]) == pytest.approx(comparison.low)
            assert _number(row["ratio_high [x baseline]"]) == pytest.approx(comparison.high)
            assert (row["significant"] == "true") == (key in {k[::2] for k in family.different})
        assert not re.findall(r"its (\d+(?:\.\d+)?)% CI", row["caveats"])  # the level is stated once, not per note
        stated += "its CI (" in row["caveats"]
    assert stated >= 1  # the undecided comparison's note


def test_json_counts_levels_and_intervals_are_the_samples_and_the_family(report):
    document = make_document(list(report.runs), summary=report.summary)
    held = Counter(
        (s["workload"], s["target"]) for run in document["runs"] for s in run["samples"] if s["ok"]
    )  # fmt: skip
    family = report.summary.family
    stated = 0
    for row in document["summary"]:
        key = (row["workload"], row["target"])
        assert row["n"] == held[key]
        values = next(r for r in report.summary.rows if r.workload == key[0]).cells[key[1]].values
        assert row["ci_level"] == pytest.approx(median_ci(values)[2])
        comparison = family.comparisons.get((key[0], row["metric"], key[1]))
        if comparison is None or not comparison.has_interval:
            assert row["ratio_low"] is None and row["ratio_high"] is None  # no interval: none stated
            continue
        assert (row["ratio_low"], row["ratio_high"]) == pytest.approx((comparison.low, comparison.high))
        notes = " ".join(row["caveats"])
        assert not re.findall(r"its (\d+(?:\.\d+)?)% CI", notes)  # the level is stated once, never per note
        stated += "its CI (" in notes
    assert stated >= 1  # the undecided comparison's note


def test_every_format_states_the_level_of_the_intervals_called_the_same(report):
    """A comparison called the same shows the interval its two one-sided tests decided with; how sure the
    run's sameness claims are is said once, as the differences' is: together at 95 % (analysis/family.py).
    The terminal, Markdown and HTML legends and the ratio chart's caption each say so, and no format
    states another level."""
    from rich.console import Console

    from mountbench.report.chartkit import inline_svg
    from mountbench.report.charts import plan_charts
    from mountbench.report.html import render_html
    from mountbench.report.markdown import render_markdown
    from mountbench.report.terminal import render_report

    family = report.summary.family
    assert family.same and family.level == pytest.approx(0.95)
    console = Console(width=200, record=True, color_system=None)
    console.print(render_report(report))
    said = {
        "terminal": console.export_text(),
        "markdown": render_markdown(report),
        "html": render_html(report, with_charts=False),
        "ratio chart": inline_svg({c.kind: c for c in plan_charts(report)}["ratio"]),
    }
    for name, text in said.items():
        plain = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())
        assert "sameness claims together at 95%" in plain, name
        levels = set(re.findall(r"(\d+(?:\.\d+)?)% (?:CI|confidence)", plain))
        assert levels <= {"95"}, (name, levels)  # one level stated, never an interval's own
    config = report.runs[0].config  # under --until each at its look's share of the sameness error
    for key in family.same:
        comparison = family.comparisons[key]
        step = family.same_step_alphas[family.stage_of[key]]
        assert comparison.level == pytest.approx(1 - 2 * same_share(config, comparison.n) * step)
