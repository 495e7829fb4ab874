"""One verdict per comparison, whatever the view (issue 46): `show`, `--unit`, `--metric`, every format and
the ratio chart read the one family the run decided (analysis/decided.py); none decides again. Before,
one ratio was "1.07× faster (1.01–1.14)" in the grid and "undecided (0.97–1.19)" in the detail."""

from __future__ import annotations

import csv
import io
import json

import pytest
from support.synthetic import study_run

from mountbench.report.content import build_report
from mountbench.report.csvexport import summary_csv
from mountbench.report.document import make_document
from mountbench.report.markdown import render_markdown
from mountbench.report.phrasing import standing

VIEWS = [
    {"unit": "auto"},
    {"unit": "MB/s"},
    {"unit": "IOPS"},
    {"unit": "us"},
    {"metrics": ("iops",)},
    {"metrics": ("bw",)},
    {"metrics": ("lat-p99",)},
    {"metrics": ("lat-p99.9", "iops")},
]


@pytest.fixture(scope="module")
def run():
    return study_run()


def _said(report) -> dict[tuple[str, str, str], tuple[str, float, float]]:
    """(workload, metric, target) → (the words, low, high) of every comparison the report's tables and grid show."""
    found = {}
    rows = [*report.summary.rows, *report.grid.rows()]
    for row in rows:
        for label, cell in row.cells.items():
            if cell.comparison is None:
                continue
            said = standing(cell.comparison, row.metric)
            found[(row.workload, row.metric.name, label)] = (said.text, cell.comparison.low, cell.comparison.high)
    return found


def test_every_view_shows_the_comparison_the_run_decided(run):
    canonical = build_report([run]).summary.family.comparisons
    seen: dict[tuple[str, str, str], tuple[str, float, float]] = {}
    for view in VIEWS:
        report = build_report([run], **view)
        assert report.summary.family.comparisons.keys() == canonical.keys()
        for key, said in _said(report).items():
            assert (said[1], said[2]) == (canonical[key].low, canonical[key].high), (view, key)
            assert seen.setdefault(key, said) == said, (view, key)  # the same words in every view
    # the views between them showed the headline, both units and latency: not a vacuous check
    assert {m for _, m, _ in seen} >= {"read.iops", "write.iops", "write.bw", "read.lat_p99"}


def test_bandwidth_and_iops_of_one_job_are_one_verdict(run):
    report = build_report([run])
    family = report.summary.family
    for (workload, metric, label), comparison in family.comparisons.items():
        if metric.endswith(".iops"):
            twin = family.comparisons.get((workload, metric.replace(".iops", ".bw"), label))
            if twin is not None and abs(twin.ratio - comparison.ratio) < 1e-6 * comparison.ratio:
                assert (twin.verdict, twin.low, twin.high) == (comparison.verdict, comparison.low, comparison.high)


def test_every_format_carries_the_same_verdicts(run):
    report = build_report([run])
    family = report.summary.family
    markdown = render_markdown(report)
    rows = list(csv.DictReader(io.StringIO(summary_csv(report))))
    document = make_document([run], summary=report.summary)
    for row in report.summary.rows:
        for label, cell in row.cells.items():
            if cell.comparison is None or not cell.comparison.has_interval:
                continue
            text = standing(family.comparisons[(row.workload, row.metric.name, label)], row.metric).text
            assert text in markdown
            (exported,) = [
                r for r in rows if (r["workload"], r["metric"], r["target"]) == (row.workload, row.metric.name, label)
            ]
            assert exported["comparison"] == text
            (stored,) = [
                r
                for r in document["summary"]
                if (r["workload"], r["metric"], r["target"]) == (row.workload, row.metric.name, label)
            ]
            assert (stored["ratio_low"], stored["ratio_high"]) == pytest.approx(
                (cell.comparison.low, cell.comparison.high)
            )
    json.dumps(document)  # a document every format can write
