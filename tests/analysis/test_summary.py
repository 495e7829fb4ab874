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


def test_one_run_pairs_its_rounds_and_keeps_the_wider_interval():
    """The rounds of one run pair up by design; the interval used is the wider of the paired and the
    unpaired one: an A/A check on tmpfs called 5 of 60 comparisons different on the paired one alone
    (an effect of the run, the same way in all its rounds, which pairing cannot see)."""
    from mountbench.analysis.stats import compare, paired_compare
    from mountbench.analysis.summary import pairs_by_round, ratio_to_baseline

    cells = summarize_runs([make_run({("a", "w"): BUSY, ("b", "w"): ABOVE})]).rows[0].cells
    pairs = pairs_by_round(cells["b"], cells["a"])
    assert pairs is not None and len(pairs) == 5
    paired, unpaired = paired_compare(pairs), compare(BUSY, ABOVE)
    assert paired.high / paired.low < unpaired.high / unpaired.low  # drift shared by both sides: pairing is narrower
    chosen = ratio_to_baseline(cells["b"], cells["a"], 0.05, paired_by_design=True)
    assert chosen == unpaired and not chosen.paired
    # rounds whose ratio varies more than each side does: the paired interval is the wider, and is used
    steady = [100.0, 101.0, 99.0, 100.5, 99.5]
    wobbly = [v * f for v, f in zip(steady, [1.3, 0.8, 1.25, 0.85, 1.2], strict=True)]
    run = make_run({("a", "w"): steady, ("b", "w"): wobbly})
    cells = summarize_runs([run]).rows[0].cells
    assert ratio_to_baseline(cells["b"], cells["a"], 0.05, paired_by_design=True).paired


def test_merged_runs_are_unpaired_even_when_their_round_numbers_match():
    """a from one run, b from another: their round 0s were not back to back."""
    first, second = make_run({("a", "w"): BUSY}, run_id="r1"), make_run({("b", "w"): ABOVE}, run_id="r2")
    cell = summarize_runs([first, second], baseline="a").rows[0].cells["b"]
    assert not cell.comparison.paired and cell.comparison.verdict == "undecided"
    both = summarize_runs([make_run({("a", "w"): BUSY, ("b", "w"): ABOVE}, run_id=r) for r in ("r1", "r2")])
    assert not both.rows[0].cells["b"].comparison.paired  # round 0 twice in a cell


def test_a_round_without_its_baseline_sample_unpairs_and_extra_baseline_rounds_do_not():
    run = make_run({("a", "w"): BUSY, ("b", "w"): ABOVE})
    no_base = dataclasses.replace(run, samples=tuple(s for s in run.samples if (s.target, s.round) != ("a", 1)))
    assert not summarize_runs([no_base]).rows[0].cells["b"].comparison.paired
    # --until: the baseline ran rounds 3-4 for another target; b stopped after 3 and pairs on those
    early = dataclasses.replace(
        run, samples=tuple(s for s in run.samples if (s.target, s.round) not in {("b", 3), ("b", 4)})
    )
    from mountbench.analysis.summary import pairs_by_round

    cells = summarize_runs([early]).rows[0].cells
    assert len(pairs_by_round(cells["b"], cells["a"]) or []) == 3


def test_the_family_is_every_comparison_of_the_run_decided_once():
    values = {("a", w): [100.0, 101.0, 99.0, 100.5] for w in ("w1", "w2")}
    values |= {("b", "w1"): [50.0, 51.0, 49.0, 50.2], ("b", "w2"): [100.0, 102.0, 97.0, 101.0]}
    values |= {("c", "w1"): [300.0, 310.0, 290.0, 305.0], ("c", "w2"): [99.0, 103.0, 98.0, 101.0]}
    summary = summarize_runs([make_run(values)])
    family = summary.family
    assert family.size == 4  # two targets × two workloads: one family for the run, not one per target
    assert family.different == {("w1", "read.iops", "b"), ("w1", "read.iops", "c")}
    assert family.level == pytest.approx(1 - 0.05 / 2)  # Holm's last step: two left
    for row in summary.rows:
        for target in ("b", "c"):
            comparison = row.cells[target].comparison
            assert comparison is family.comparisons[(row.workload, row.metric.name, target)]
            if comparison.verdict == "same":  # w2: shown within ±5 % by the sameness Holm, at its one level
                assert row.workload == "w2" and comparison.level == pytest.approx(family.same_level)
            else:
                assert comparison.level == pytest.approx(family.level)


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
