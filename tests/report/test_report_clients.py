"""The Clients section of reports (report/clients.py) on a synthetic scaling run."""

import pytest

from mountbench.clients.addresses import ClientSpec
from mountbench.kinds.fioclients import client_workloads
from mountbench.model import ClientResult, RunConfig, RunData, Sample, Target, TargetRecord
from mountbench.presets import load_preset
from mountbench.report.content import build_report
from mountbench.report.html import render_html
from mountbench.report.markdown import render_markdown
from mountbench.report.sections import Options
from mountbench.report.sections import clients as report_clients
from mountbench.report.sections.clients.layout import slowest_text
from mountbench.report.sections.clients.machines import client_host_warnings
from mountbench.report.sections.clients.measures import client_figures, scaling_curves

CLIENTS = (ClientSpec("10.0.0.2"), ClientSpec("10.0.0.3"), ClientSpec("<node4>", 9000))
LABELS = [c.label for c in CLIENTS]
# IOPS each client delivered with 1, 2 and 3 clients at once (three repetitions alike)
PER_CLIENT = {1: [100.0], 2: [90.0, 70.0], 3: [80.0, 60.0, 40.0]}


def scaling_run(host_clients: dict | None = None) -> RunData:
    job = next(w for w in load_preset("quick").workloads if w.name == "rnd4k-q1-read")
    workloads = client_workloads([job], CLIENTS, (1, 2, 3))
    samples = []
    for workload in workloads:
        n = int(workload.description.sweep.number)
        for rep in range(3):
            parts = tuple(ClientResult(LABELS[i], {"read.iops": v}) for i, v in enumerate(PER_CLIENT[n]))
            samples.append(Sample("share", workload.name, rep, True, {"read.iops": sum(PER_CLIENT[n])}, clients=parts))
    failed_parts = (ClientResult(LABELS[0], {"read.iops": 80.0}), ClientResult(LABELS[1], {}, "client 10.0.0.3 boom"),
                    ClientResult(LABELS[2], {}, "client <node4>:9000 delivered no results"))  # fmt: skip
    samples.append(Sample("share", workloads[2].name, 3, False, {}, error="client 10.0.0.3 boom", clients=failed_parts))
    host = {"hostname": "ctl", "fio_version": "fio-3.33", "clients": host_clients or {}}
    return RunData(
        "r1", 1.7e9, 1.7e9 + 60, "complete", "mountbench run --client ...",
        RunConfig(repeat=3, seed=1, baseline="share"), host,
        (TargetRecord(Target("share", "/mnt/share"), None),), tuple(workloads), tuple(samples),
    )  # fmt: skip


def test_scaling_efficiency_is_the_aggregate_over_linear_from_one_client():
    (curve,) = scaling_curves([scaling_run()])
    assert curve.base == "rnd4k-q1-read" and curve.metric.name == "read.iops"
    assert [p.clients for p in curve.points] == [1, 2, 3]
    assert [p.aggregate for p in curve.points] == [100.0, 160.0, 180.0]
    assert [p.per_client for p in curve.points] == [100.0, 80.0, 60.0]
    assert [p.efficiency for p in curve.points] == pytest.approx([1.0, 0.8, 0.6])
    assert dict(curve.points[2].client_values) == dict(zip(LABELS, PER_CLIENT[3], strict=True))


def test_slowest_client_and_failures_are_named():
    figures = {f.workload: f for f in client_figures([scaling_run()])}
    three = figures["rnd4k-q1-read-c3"]
    assert three.slowest == ("<node4>:9000", 40.0)
    assert three.slowest_gap == pytest.approx(1 / 3)  # 40 against a mean of 60
    assert three.failures == (("10.0.0.3", 1), ("<node4>:9000", 1))
    assert figures["rnd4k-q1-read-c1"].slowest is None  # one client: nobody to compare with
    assert slowest_text(three) == "<node4>:9000 (40.0 IOPS, 33% below the clients' mean)"


def test_the_clients_sweep_is_not_a_block_size_sweep():
    assert build_report([scaling_run()]).sweeps == ()


def test_markdown_section_with_and_without_per_client_columns():
    report = build_report([scaling_run()])
    text = render_markdown(report, {"scaling-1-rnd4k-q1-read-read-iops": "x-scaling.png"})
    assert "## Clients" in text and "### Scaling: RND 4K Q1 read · read IOPS · share" in text
    assert "| 3 | 180 IOPS | 60.0 IOPS | 60% |" in text
    assert "](x-scaling.png)" in text
    assert "### Slowest client" in text and "### Per client" not in text
    wide = render_markdown(report, per_client=True)
    assert "### Per client: RND 4K Q1 read, 3 clients" in wide
    assert "| read IOPS · share | 80.0 IOPS | 60.0 IOPS | 40.0 IOPS | 180 IOPS |" in wide


def test_html_section_escapes_client_names():
    page = render_html(build_report([scaling_run()]), with_charts=False, per_client=True)
    assert '<section id="clients">' in page
    assert "&lt;node4&gt;:9000" in page and "<node4>" not in page


def test_a_run_without_clients_has_no_section():
    from support.factories import make_run

    run = make_run({("a", "w"): [1.0, 2.0, 3.0]})
    assert report_clients.chapters(build_report([run]), Options()) == []
    assert report_clients.screen(build_report([run]), Options()) == []


def test_clients_that_differ_in_kernel_are_warned_about_unknowns_are_not():
    facts = {
        "10.0.0.2": {"kernel": "6.1.0", "fio_version": "fio-3.33", "os": "Linux"},
        "10.0.0.3": {"kernel": "6.18.4", "fio_version": "fio-3.33", "os": "Linux"},
        "<node4>:9000": {"kernel": "unknown", "fio_version": "fio-3.33", "os": "Linux"},
    }
    (warning,) = client_host_warnings([scaling_run(facts)])
    assert warning == "the clients of run r1 differ in kernel: 10.0.0.2 6.1.0, 10.0.0.3 6.18.4"


def test_scaling_chart_draws(tmp_path):
    from mountbench.report import chartkit, charts

    report = build_report([scaling_run()])
    planned = [c for c in charts.plan_charts(report) if c.kind == "scaling"]
    assert [c.key for c in planned] == ["scaling-1-rnd4k-q1-read-read-iops"]
    assert chartkit.render(planned[0], "svg").startswith(b"<?xml")


def test_after_a_lost_client_the_per_client_columns_stand_on_the_aggregates_samples():
    """Issue 49: after a lost client, the per-client columns were medians that took in the later samples on
    fewer clients (they summed to 3.14 GB/s) while the aggregate beside them stood on the samples on all
    clients only (2.78 GB/s). Both now stand on the same samples, so the columns add up to the aggregate,
    and the table says how many samples it left out."""
    from mountbench.analysis.multiclient import FEWER_CLIENTS
    from mountbench.model import Caveat

    job = next(w for w in load_preset("quick").workloads if w.name == "rnd4k-q1-read")
    (workload,) = client_workloads([job], CLIENTS, ())
    full = tuple(ClientResult(label, {"read.iops": 100.0}) for label in LABELS)
    later = (ClientResult(LABELS[0], {"read.iops": 150.0}), ClientResult(LABELS[1], {"read.iops": 150.0}))
    lost = Caveat(FEWER_CLIENTS, "ran on 2 of 3 clients: <node4>:9000 lost earlier in the run")
    samples = (
        Sample("share", workload.name, 0, True, {"read.iops": 300.0}, clients=full),
        Sample("share", workload.name, 1, True, {"read.iops": 300.0}, caveats=(lost,), clients=later),
        Sample("share", workload.name, 2, True, {"read.iops": 300.0}, caveats=(lost,), clients=later),
    )
    run = RunData(
        "r2", 1.7e9, 1.7e9 + 60, "complete", "mountbench run --client ...", RunConfig(repeat=3, seed=1,
        baseline="share"), {"hostname": "ctl"}, (TargetRecord(Target("share", "/mnt/share"), None),), (workload,),
        samples,
    )  # fmt: skip
    (figure,) = client_figures([run])
    assert figure.aggregate == 300.0 and figure.left_out == 2
    assert dict(figure.clients) == {LABELS[0]: 100.0, LABELS[1]: 100.0, LABELS[2]: 100.0}
    assert sum(v for _, v in figure.clients) == figure.aggregate
    report = build_report([run])
    (cell,) = [row.cells["share"] for row in report.summary.rows if row.metric.name == "read.iops"]
    assert cell.summary is not None and cell.summary.median == figure.aggregate  # the summary's own median
    wide = render_markdown(report, per_client=True)
    assert "| read IOPS · share | 100 IOPS | 100 IOPS | 100 IOPS | 300 IOPS |" in wide, wide
    assert "2 samples on fewer clients left out" in wide
