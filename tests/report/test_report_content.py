"""What every format shows: columns with hosts, warnings, sweeps, percentile curves, notes."""

from __future__ import annotations

import pytest
from support.factories import fio_workload, make_run
from support.synthetic import HOST, study_run

from mountbench.analysis.metrics import describe as metric_info
from mountbench.errors import UsageError
from mountbench.report.content import build_report

GUEST = HOST | {"hostname": "guest", "kernel": "6.8.0", "os": "Linux 6.8.0", "fio_version": "fio-3.36"}


def test_one_host_keeps_labels_and_pools_the_same_target_across_runs():
    a = make_run({("ram", "w"): [1.0, 2.0, 3.0], ("disk", "w"): [1.0, 1.0, 1.0]}, run_id="a")
    b = make_run({("ram", "w"): [4.0, 5.0, 6.0], ("disk", "w"): [1.0, 1.0, 1.0]}, run_id="b")
    report = build_report([a, b])
    assert report.summary.targets == ("ram", "disk")
    assert report.column("ram").run_ids == ("a", "b")
    assert report.summary.rows[0].cells["ram"].summary.n == 6
    assert not report.warnings and not report.multi_host


def test_runs_from_different_hosts_name_their_host_and_warn_where_it_matters():
    mac = study_run("mac-run", targets=("native",))
    guest = study_run("guest-run", host=GUEST, targets=("virtiofs", "9p"))
    report = build_report([mac, guest])
    assert report.summary.targets == ("native@studio", "virtiofs@guest", "9p@guest")
    assert report.summary.baseline == "native@studio"
    text = "\n".join(report.warnings)
    assert "fio version (studio: fio-3.33; guest: fio-3.36)" in text
    assert "hosts differ in kernel" in text
    assert "hosts differ in CPU (" not in text  # same CPU model: nothing to warn about


def test_same_label_on_two_hosts_gives_two_columns_and_baseline_accepts_either_name():
    a = study_run("a", targets=("native", "virtiofs"))
    b = study_run("b", host=GUEST, targets=("native", "virtiofs"))
    report = build_report([a, b], baseline="native@guest")
    assert set(report.summary.targets) == {"native@studio", "virtiofs@studio", "native@guest", "virtiofs@guest"}
    with pytest.raises(UsageError, match="names several columns"):
        build_report([a, b], baseline="native")
    assert build_report([a, b], baseline="native@studio").summary.baseline == "native@studio"


def test_two_machines_with_one_hostname_are_told_apart():
    twin = GUEST | {"hostname": "studio"}
    report = build_report([study_run("a", targets=("native",)), study_run("b", host=twin, targets=("native",))])
    assert report.summary.targets == ("native@studio", "native@studio-2")


def test_workload_defined_differently_and_incomplete_runs_are_warned_about():
    a = make_run({("x", "w"): [1.0, 1.0, 1.0]}, run_id="a")
    b = make_run({("x", "w"): [1.0, 1.0, 1.0]}, run_id="b", workloads=[fio_workload("w", bs="64k")])
    b = type(b)(**{**b.__dict__, "status": "interrupted"})
    text = "\n".join(build_report([a, b]).warnings)
    assert "'w' is defined differently in runs a, b" in text
    assert "run b is interrupted" in text and "--resume b" in text


def test_study_run_has_one_sweep_and_one_percentile_curve():
    report = build_report([study_run()])
    (sweep,) = report.sweeps
    assert sweep.numbers == (4096, 65536, 1 << 20, 4 << 20) and sweep.metric.name == "write.bw"
    (curve,) = report.percentiles
    assert curve.percentiles[-3:] == (99.5, 99.9, 99.99)
    assert all(row.metric.unit == "s" and not row.metric.higher_is_better for row in curve.rows)


def test_metric_option_selects_rows_and_a_latency_metric_asks_for_curves():
    report = build_report([study_run()], metrics=["read.lat_p99.9"])
    assert {row.metric.name for row in report.summary.rows} == {"read.lat_p99.9"}
    assert report.summary.rows[0].metric.label == "read latency p99.9"
    assert report.percentiles
    with pytest.raises(UsageError, match="no workload"):
        build_report([study_run()], metrics=["trim.iops"])


def test_metric_info_keeps_the_direction_of_decimal_percentiles():
    assert metric_info("write.lat_p99.99").unit == "s"
    assert metric_info("read.iops").higher_is_better


def test_notes_are_shared_and_marks_point_at_them():
    report = build_report([study_run()])
    row = next(r for r in report.summary.rows if r.workload == "random-read")
    (mark,) = report.cell_marks(row, "9p")
    assert "O_DIRECT refused" in report.notes[mark - 1]
    assert report.measurement_marks(row.cells["9p"]) == (mark,)


def test_no_runs_is_a_usage_error():
    with pytest.raises(UsageError, match="no runs"):
        build_report([])
