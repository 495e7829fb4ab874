import dataclasses

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


# --- paired by design, one family per run (issue 31) ---------------------------------------------

# rounds that differ 2× (a busy machine) with b 1.2× above a in each: only pairing sees it
BUSY = [100.0, 210.0, 55.0, 140.0, 80.0]
ABOVE = [v * f for v, f in zip(BUSY, [1.21, 1.19, 1.2, 1.22, 1.18], strict=True)]


def test_one_run_pairs_its_rounds_and_adds_the_run_level():
    """The rounds of one run pair up by design: what hits both sides of a round (a busy moment) cancels.
    What pairing cannot see, the run's own effect, is the run level's variance added to the interval
    (analysis/runlevel.py): the interval is no narrower than that alone allows."""
    from mountbench.analysis.runlevel import DEFAULTS
    from mountbench.analysis.stats import compare

    cell = summarize_runs([make_run({("a", "w"): BUSY, ("b", "w"): ABOVE})]).rows[0].cells["b"]
    comparison = cell.comparison
    assert comparison.paired and comparison.n == 5
    unpaired = compare(BUSY, ABOVE)
    assert comparison.high / comparison.low < unpaired.high / unpaired.low  # the shared drift cancels
    small = DEFAULTS["ram"].paired_sd("small")  # both targets' records say tmpfs; a 4k workload
    assert comparison.run_var == pytest.approx(2 * small**2)
    assert comparison.se >= (2 * small**2) ** 0.5


def test_merged_runs_are_a_level_of_their_own():
    """a from one run, b from another: their round 0s were not back to back, and each side's level moves
    between runs (the level spread, wider than the paired one). Both in two runs: each run pairs its own
    rounds, and the runs are the level the means vary at."""
    first, second = make_run({("a", "w"): BUSY}, run_id="r1"), make_run({("b", "w"): ABOVE}, run_id="r2")
    cell = summarize_runs([first, second], baseline="a").rows[0].cells["b"]
    assert not cell.comparison.paired and cell.comparison.verdict == "undecided"
    both = summarize_runs([make_run({("a", "w"): BUSY, ("b", "w"): ABOVE}, run_id=r) for r in ("r1", "r2")])
    comparison = both.rows[0].cells["b"].comparison
    assert comparison.paired and comparison.n == 10  # two runs of five pairs
    one = summarize_runs([make_run({("a", "w"): BUSY, ("b", "w"): ABOVE})]).rows[0].cells["b"].comparison
    assert comparison.run_var == pytest.approx(one.run_var / 2)  # two runs' effects averaged


def test_a_failed_sample_on_either_side_leaves_its_round_out_not_the_pairing():
    run = make_run({("a", "w"): BUSY, ("b", "w"): ABOVE})
    no_base = dataclasses.replace(run, samples=tuple(s for s in run.samples if (s.target, s.round) != ("a", 1)))
    comparison = summarize_runs([no_base]).rows[0].cells["b"].comparison
    assert comparison.paired and comparison.n == 4
    no_target = dataclasses.replace(run, samples=tuple(s for s in run.samples if (s.target, s.round) != ("b", 1)))
    assert summarize_runs([no_target]).rows[0].cells["b"].comparison.n == 4
    # --until: the baseline ran rounds 3-4 for another target; b stopped after 3 and pairs on those
    early = dataclasses.replace(
        run, samples=tuple(s for s in run.samples if (s.target, s.round) not in {("b", 3), ("b", 4)})
    )
    assert summarize_runs([early]).rows[0].cells["b"].comparison.n == 3


def test_the_family_is_every_comparison_of_the_run_decided_once():
    values = {("a", w): [100.0, 101.0, 99.0, 100.5] for w in ("w1", "w2")}
    values |= {("b", "w1"): [50.0, 51.0, 49.0, 50.2], ("b", "w2"): [100.0, 102.0, 97.0, 101.0]}
    values |= {("c", "w1"): [300.0, 310.0, 290.0, 305.0], ("c", "w2"): [99.0, 103.0, 98.0, 101.0]}
    summary = summarize_runs([make_run(values)])
    family = summary.family
    assert family.size == 4  # two targets × two workloads: one family for the run, not one per target
    assert family.different >= {("w1", "read.iops", "b"), ("w1", "read.iops", "c")}
    assert family.level == pytest.approx(0.95)  # what every format states, once
    for row in summary.rows:
        for target in ("b", "c"):
            comparison = row.cells[target].comparison
            assert comparison is family.comparisons[(row.workload, row.metric.name, target)]


def test_every_metric_is_decided_once_whichever_a_view_shows():
    """--metric and --unit choose what is displayed, never a verdict: a summary of other metrics reads
    the same family, so one comparison has one verdict and one interval in every view."""
    from support.synthetic import study_run

    run = study_run()
    headline = summarize_runs([run])
    latency = summarize_runs([run], metrics=["lat-p99"])
    iops = summarize_runs([run], metrics=["iops"])
    assert headline.family is latency.family is iops.family
    for summary in (headline, latency, iops):
        for row in summary.rows:
            for label, cell in row.cells.items():
                key = (row.workload, row.metric.name, label)
                if cell.comparison is not None:
                    assert cell.comparison is headline.family.comparisons[key]


def test_samples_after_a_lost_client_are_left_out_of_a_cell_that_has_samples_on_all_clients():
    """A client lost in round 3 of 5: rounds 3-4 summed 2 clients' I/O, rounds 0-2 three clients'.
    The median is over the three-client samples only, and the cell says how many it left out; a
    cell whose every sample ran on fewer clients keeps them (with the samples' own caveat)."""
    from mountbench.analysis.multiclient import CLIENTS_LEFT_OUT, FEWER_CLIENTS

    run = make_run({("a", "rr"): [300, 310, 305, 200, 205], ("b", "rr"): [150, 155, 152, 100, 102]})
    fewer = Caveat(FEWER_CLIENTS, "ran on 2 of 3 clients: ssh://n2 (...) lost earlier in the run")
    samples = tuple(dataclasses.replace(s, caveats=(fewer,)) if s.round >= 3 else s for s in run.samples)
    run = dataclasses.replace(run, samples=samples)
    row = summarize_runs([run]).rows[0]
    a, b = row.cells["a"], row.cells["b"]
    assert a.values == (300, 310, 305) and a.summary.median == 305 and b.summary.median == 152
    assert b.comparison.ratio == pytest.approx(0.5, rel=0.03)  # 3 clients against 3 clients
    (note,) = [c for c in a.caveats if c.code == CLIENTS_LEFT_OUT]
    assert note.text.startswith("2 sample(s) that ran on fewer clients than asked are left out")
    only_fewer = dataclasses.replace(run, samples=tuple(dataclasses.replace(s, caveats=(fewer,)) for s in samples))
    cell = summarize_runs([only_fewer]).rows[0].cells["a"]
    assert len(cell.values) == 5 and not any(c.code == CLIENTS_LEFT_OUT for c in cell.caveats)
    assert any(c.code == FEWER_CLIENTS for c in cell.caveats)
