"""The summary grid: read/write twins on one line, one unit per section, --unit for one family."""

from __future__ import annotations

import pytest
from support.factories import INFO
from support.synthetic import study_run

from mountbench.errors import UsageError
from mountbench.kinds import make_workload
from mountbench.model import RunConfig, RunData, Sample, Target, TargetRecord, Workload
from mountbench.presets import load_preset
from mountbench.report.content import build_report
from mountbench.report.grid import parse_unit

QUICK = load_preset("quick").workloads


def _quick_run(extra: tuple[Workload, ...] = ()) -> RunData:
    """The quick preset on ram and disk: disk 4× slower at everything, three samples each."""
    workloads = (*QUICK, *extra)
    samples = []
    for target, scale in (("ram", 1.0), ("disk", 0.25)):
        for workload in workloads:
            for round_, noise in enumerate((1.0, 1.02, 0.98)):
                metrics = {}
                for direction in workload.description.directions:
                    metrics |= {
                        f"{direction}.bw": 2e9 * scale * noise,
                        f"{direction}.iops": 5e4 * scale * noise,
                        f"{direction}.lat_mean": 2e-5 / (scale * noise),
                    }
                samples.append(Sample(target, workload.name, round_, True, metrics, ()))
    return RunData(
        id="q1",
        created_at=1.7e9,
        finished_at=1.7e9 + 60,
        status="complete",
        command="mountbench run",
        config=RunConfig(repeat=3, seed=1, baseline="ram", drop_caches="auto"),
        host={"hostname": "h", "fio_version": "fio-3.33"},
        targets=(TargetRecord(Target("ram", "/ram"), INFO), TargetRecord(Target("disk", "/disk"), INFO)),
        workloads=workloads,
        samples=tuple(samples),
    )


def _lines(report) -> dict[str, dict[str, list[str]]]:
    """Section heading -> line title -> its directions."""
    return {s.heading: {line.title: list(line.rows) for line in s.lines} for s in report.grid.sections}


def test_read_and_write_twins_share_a_line_side_by_side():
    grid = _lines(build_report([_quick_run()]))
    assert grid == {
        "bandwidth, MB/s (higher is better)": {"SEQ 1M Q8": ["read", "write"]},
        "IOPS (higher is better)": {"RND 4K Q32": ["read", "write"], "RND 4K Q1": ["read", "write"]},
    }


def test_a_mixed_workload_fills_both_columns_and_an_unpaired_one_keeps_its_title():
    mixed = make_workload(
        "mix", "fio", "RND 4K 70/30", "preset:test", {"section": "mix", "options": [["rw", "randrw"]]}
    )
    lone = make_workload("lone", "fio", "SEQ 64K read", "preset:test", {"section": "lone", "options": [["bs", "64k"]]})
    grid = _lines(build_report([_quick_run((mixed, lone))]))
    assert grid["IOPS (higher is better)"]["RND 4K 70/30"] == ["read", "write"]
    assert grid["bandwidth, MB/s (higher is better)"]["SEQ 64K read"] == ["read"]


@pytest.mark.parametrize(
    ("unit", "heading", "value"),
    [("IOPS", "IOPS (higher is better)", "12.5k"), ("us", "mean latency, µs (lower is better)", "80.0")],
)
def test_one_unit_for_every_workload(unit, heading, value):
    report = build_report([_quick_run()], unit=parse_unit(unit))
    (section,) = report.grid.sections
    assert section.heading == heading
    assert [line.title for line in section.lines] == ["SEQ 1M Q8", "RND 4K Q32", "RND 4K Q1"]
    disk = section.lines[0].rows["write"].cells["disk"]
    assert section.scale.format(disk.summary.median) == value


def test_the_headline_counts_every_comparison_of_the_grid():
    (headline,) = build_report([_quick_run()]).headlines
    assert headline.text == "disk is slower than ram in all 6 workloads (4.00× each)"
    assert headline.kind == "worse"


def test_time_takes_one_unit_chosen_by_its_size():
    report = build_report([study_run()])
    (section,) = [s for s in report.grid.sections if s.family == "wall"]
    assert section.heading == "wall time, s (lower is better)" and section.directions == ("",)


@pytest.mark.parametrize(("text", "unit"), [("MB/s", "MB/s"), ("mbs", "MB/s"), ("iops", "IOPS"), ("µs", "us")])
def test_unit_aliases(text, unit):
    assert parse_unit(text) == unit


def test_an_unknown_unit_is_a_usage_error():
    with pytest.raises(UsageError, match="--unit"):
        parse_unit("furlongs")
