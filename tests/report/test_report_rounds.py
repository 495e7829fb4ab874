"""How many rounds each cell got and why it got no more (sequential.stop_reasons), in every
format; and the HTML's 'within each sample' charts from the stored per-interval series."""

from __future__ import annotations

import csv
import dataclasses
import io

from support.factories import fio_workload, make_run

from mountbench.analysis import sequential
from mountbench.analysis.summary import summarize_runs
from mountbench.model import UNSTEADY, Caveat
from mountbench.report.content import build_report
from mountbench.report.csvexport import summary_csv
from mountbench.report.document import make_document
from mountbench.report.html import render_html
from mountbench.report.markdown import render_markdown
from mountbench.report.sections import series as serieschart
from mountbench.report.terminal import render_report


def _adaptive(run, *, until=0.05, max_repeat=6, budget=None, status="complete"):
    config = dataclasses.replace(run.config, until=until, max_repeat=max_repeat, budget=budget)
    return dataclasses.replace(run, config=config, status=status)


def _run():
    """'far' is 10x faster than base (ranked at once); 'near' stays within noise of base
    but too widely to call the same, and ran to --max-repeat."""
    values = {
        ("base", "w"): [100, 104, 96, 101, 99, 103],
        ("far", "w"): [1000, 1010, 990],
        ("near", "w"): [80, 130, 95, 120, 85, 115],
    }
    return make_run(values, workloads=[fio_workload("w")])


def test_stop_reasons_say_why_each_cell_got_its_rounds():
    run = _adaptive(_run())
    stops = sequential.stop_reasons(summarize_runs([run]), run.config, run.status)
    assert stops[("w", "far")] == sequential.Stop(3, sequential.RANKED)
    assert stops[("w", "near")] == sequential.Stop(6, sequential.MAX_REPEAT)
    assert stops[("w", "base")] == sequential.Stop(6, sequential.BASELINE)
    budgeted = _adaptive(_run(), max_repeat=12, budget=60.0)
    assert sequential.stop_reasons(summarize_runs([budgeted]), budgeted.config, "complete")[("w", "near")].reason == (
        sequential.BUDGET
    )
    stopped = _adaptive(_run(), max_repeat=12, status="interrupted")
    assert sequential.stop_reasons(summarize_runs([stopped]), stopped.config, stopped.status)[("w", "near")].reason == (
        sequential.INTERRUPTED
    )
    fixed = _run()  # no --until: every cell got what --repeat gave it
    assert {s.reason for s in sequential.stop_reasons(summarize_runs([fixed]), fixed.config, "complete").values()} == {
        sequential.FIXED
    }


def test_every_format_shows_the_rounds_of_an_adaptive_run():
    report = build_report([_adaptive(_run())])
    assert report.adaptive
    markdown = render_markdown(report)
    section = markdown[markdown.index("### Rounds per cell") :]
    assert "| W | 6 · baseline | 3 · ranked | 6 · max-repeat |" in section
    assert "max-repeat: still undecided at --max-repeat" in section
    assert "3–6 rounds per cell (--until 5% allowed up to 6; seed 1)" in markdown and "spending function" in markdown
    html = render_html(report, with_charts=False)
    assert 'id="rounds"' in html and "6 · max-repeat" in html
    rows = {r["target"]: r for r in csv.DictReader(io.StringIO(summary_csv(report)))}
    assert (rows["far"]["stopped"], rows["near"]["stopped"], rows["base"]["stopped"]) == (
        "ranked",
        "max-repeat",
        "baseline",
    )
    exported = {r["target"]: r["stopped"] for r in make_document([_adaptive(_run())])["summary"]}
    assert exported == {"base": "baseline", "far": "ranked", "near": "max-repeat"}
    from rich.console import Console

    console = Console(width=100, record=True)
    console.print(render_report(report))
    assert "3 · ranked" in console.export_text()


def test_a_fixed_run_has_no_rounds_table_but_says_its_count():
    report = build_report([_run()])
    assert not report.adaptive and "### Rounds per cell" not in render_markdown(report)
    assert {r["stopped"] for r in csv.DictReader(io.StringIO(summary_csv(report)))} == {"fixed"}


def test_html_draws_each_samples_series_unsteady_workloads_first():
    run = _run()
    steady = [100.0, 102.0, 99.0, 101.0]
    falling = [200.0, 150.0, 90.0, 40.0]
    samples = []
    for sample in run.samples:
        flagged = sample.target == "near" and sample.round == 0
        series = {"read.iops": falling if flagged else steady, "interval_s": [0.25]}
        caveats = (Caveat(UNSTEADY, "not steady within the sample"),) if flagged else ()
        samples.append(dataclasses.replace(sample, series=series, caveats=sample.caveats + caveats))
    other = make_run({("base", "v"): [5, 5, 5], ("far", "v"): [6, 6, 6], ("near", "v"): [5, 6, 5]},
                     workloads=[fio_workload("v")])  # fmt: skip
    run = dataclasses.replace(run, samples=tuple(samples) + other.samples, workloads=run.workloads + other.workloads)
    report = build_report([run])
    cases, more = serieschart.series_cases(report)
    assert [c.row.workload for c in cases] == ["w"] and more == 0  # 'v' has no series stored
    assert cases[0].unsteady and len(cases[0].samples["near"]) == 6
    html = render_html(report)
    assert 'id="within-samples"' in html and "W: read IOPS" in html and "dotted: not steady" in html
    assert 'id="within-samples"' not in render_html(build_report([_run()]))  # no series, no section
