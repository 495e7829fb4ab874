import pytest
from support.factories import fio_workload, make_run

from mountbench import model
from mountbench.analysis.summary import summarize_runs
from mountbench.errors import UsageError
from mountbench.model import Caveat


def test_rows_are_workload_metrics_and_columns_targets_with_ratios():
    run = make_run({("ram", "rr"): [100, 101, 99], ("disk", "rr"): [10, 11, 9]})
    summary = summarize_runs([run])
    assert summary.targets == ("ram", "disk")
    assert summary.baseline == "ram"
    (row,) = summary.rows
    assert row.metric.name == "read.iops"
    assert row.cells["ram"].comparison is None
    disk = row.cells["disk"]
    assert disk.summary.median == 10
    assert disk.comparison.ratio == pytest.approx(0.1, rel=0.02)
    assert disk.comparison.significant


def test_baseline_can_be_chosen_and_must_exist():
    run = make_run({("ram", "rr"): [100, 101, 99], ("disk", "rr"): [10, 11, 9]})
    summary = summarize_runs([run], baseline="disk")
    assert summary.rows[0].cells["ram"].comparison.ratio == pytest.approx(10, rel=0.05)
    with pytest.raises(UsageError, match="not a target"):
        summarize_runs([run], baseline="nfs")


def test_headline_is_bandwidth_for_large_sequential_blocks():
    run = make_run(
        {("a", "seq"): [1e9, 1.1e9, 0.9e9]},
        metric="read.bw",
        workloads=[fio_workload("seq", "read", "1M")],
    )
    assert summarize_runs([run]).rows[0].metric.name == "read.bw"


def test_metric_aliases_select_rows_and_unknown_metric_is_an_error():
    run = make_run({("a", "rr"): [1e-4, 2e-4, 1.5e-4]}, metric="read.lat_p99")
    summary = summarize_runs([run], metrics=["lat-p99"])
    assert [r.metric.name for r in summary.rows] == ["read.lat_p99"]
    assert not summary.rows[0].metric.higher_is_better
    with pytest.raises(UsageError, match="no workload in this run has metric bogus"):
        summarize_runs([run], metrics=["bogus"])


def test_failures_and_caveats_reach_the_cell():
    odirect = Caveat(model.ODIRECT_REFUSED, "buffered: O_DIRECT refused (EINVAL)")
    run = make_run(
        {("a", "rr"): [5, 5, 5], ("b", "rr"): [1, 9, 5]},
        errors={("b", "rr"): "fio failed: No space left on device"},
        caveats={("b", "rr"): (odirect,)},
    )
    cell = summarize_runs([run]).rows[0].cells["b"]
    assert cell.failed == 1
    assert cell.errors == ("fio failed: No space left on device",)
    codes = {c.code for c in cell.caveats}
    assert model.ODIRECT_REFUSED in codes and model.WIDE_RATIO in codes  # 1, 9, 5 against 5, 5, 5


def test_a_workload_that_always_failed_still_has_a_row():
    run = make_run(
        {("a", "ok"): [5, 5, 5]}, errors={("a", "bad"): "boom"}, workloads=[fio_workload("ok"), fio_workload("bad")]
    )
    rows = summarize_runs([run]).rows
    bad = next(r for r in rows if r.workload == "bad")
    assert bad.cells["a"].summary is None and bad.cells["a"].errors == ("boom",)


def test_percentile_names_with_a_decimal_point_keep_unit_and_direction():
    from mountbench.analysis.metrics import describe, metric_matches

    info = describe("read.lat_p99.9")
    assert (info.unit, info.higher_is_better, info.label) == ("s", False, "read latency p99.9")
    assert metric_matches("lat-p99.9", "read.lat_p99.9")
    assert not metric_matches("lat-p99", "read.lat_p99.9")
    assert describe("wall").unit == "s" and describe("host.cpu_s_per_gib").unit == "s/GiB"


def test_host_cost_metrics_are_named_and_shown_with_every_headline():
    from mountbench.analysis.metrics import describe, headline_metrics

    assert describe("host.cpu_s").label == "host CPU time" and describe("host.cpu_s").higher_is_better is False
    assert describe("nginx.cpu_s_per_gib").label == "nginx CPU per GiB moved"
    assert describe("host.uss_peak").unit == "B" and describe("host.ctx_voluntary").unit == ""
    assert describe("http.requests_per_s").label == "http requests/s" and describe("http.requests_per_s").unit == "1/s"
    assert describe("http.lat_p99").unit == "s" and describe("http.errors").higher_is_better is False
    run = make_run({("a", "w"): [1.0], ("b", "w"): [2.0]})
    workload = run.workloads[0]
    available = ["read.iops", "host.cpu_s", "host.ctx_voluntary", "host.uss_peak"]
    assert headline_metrics(workload, available) == ["read.iops", "host.cpu_s", "host.uss_peak"]
    assert headline_metrics(workload, ["read.iops"]) == ["read.iops"]
