"""CSV: one row per sample and one per summary cell, stable columns, units in the header."""

from __future__ import annotations

import csv
import io

import pytest
from support.synthetic import study_run

from mountbench.report.content import build_report
from mountbench.report.csvexport import SAMPLE_COLUMNS, SUMMARY_COLUMNS, metric_order, samples_csv, summary_csv


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_one_row_per_sample_with_units_in_the_header():
    run = study_run()
    text = samples_csv(build_report([run]))
    header = next(csv.reader(io.StringIO(text)))
    assert tuple(header[: len(SAMPLE_COLUMNS)]) == SAMPLE_COLUMNS
    assert {"read.iops [IOPS]", "write.bw [B/s]", "read.lat_p99.9 [s]", "wall [s]"} <= set(header)
    rows = _rows(text)
    assert len(rows) == len(run.samples)
    failed = [r for r in rows if r["ok"] == "false"]
    assert len(failed) == 1 and "ENOSPC" in failed[0]["error"] and failed[0]["write.bw [B/s]"] == ""
    odirect = [r for r in rows if r["target"] == "9p" and r["workload"] == "random-read"]
    assert len(odirect) == 3 and all("O_DIRECT refused" in r["caveats"] for r in odirect)
    assert all(r["caveat_codes"] == "odirect-refused" for r in odirect)
    assert float(odirect[0]["read.iops [IOPS]"]) == 20000 * 0.43


def test_one_row_per_summary_cell_with_ratio_and_caveats():
    report = build_report([study_run()])
    text = summary_csv(report)
    assert tuple(next(csv.reader(io.StringIO(text)))) == SUMMARY_COLUMNS and SUMMARY_COLUMNS[0] == "run_id"
    rows = _rows(text)
    assert len(rows) == len(report.summary.rows) * len(report.summary.targets)
    cell = next(r for r in rows if r["workload"] == "extract" and r["target"] == "9p")
    assert cell["unit"] == "s" and cell["higher_is_better"] == "false" and cell["host"] == "studio"
    assert float(cell["median [unit]"]) == 32.0 and float(cell["ratio [x baseline]"]) > 15
    assert cell["significant"] == "true" and cell["run_id"] == "20260101-120000-abcd"
    # readable next to the raw ratio: a 16× longer wall time is 16× slower
    assert cell["comparison"] == "16.0× slower (14.0–18.2×)" and cell["verdict"] == "worse"
    assert float(cell["factor [x]"]) == pytest.approx(float(cell["ratio [x baseline]"]))
    assert float(cell["factor_low [x]"]) < float(cell["factor [x]"]) < float(cell["factor_high [x]"])
    faster = next(r for r in rows if r["workload"] == "bs-64k" and r["target"] == "9p")
    assert faster["verdict"] == "better" and faster["comparison"].startswith("5.00× faster")
    assert float(faster["factor [x]"]) == pytest.approx(float(faster["ratio [x baseline]"]))
    slower = next(r for r in rows if r["workload"] == "random-read" and r["target"] == "9p")
    assert float(slower["factor [x]"]) == pytest.approx(
        1 / float(slower["ratio [x baseline]"])
    )  # IOPS 0.43×: 2.33× slower
    base = next(r for r in rows if r["workload"] == "extract" and r["target"] == "native")
    assert base["ratio [x baseline]"] == "" and base["significant"] == "false" and base["verdict"] == "baseline"
    assert base["run_id"] == "20260101-120000-abcd"
    emulated = next(r for r in rows if r["workload"] == "extract" and r["target"] == "virtiofs")
    assert "emulated guest" in emulated["caveats"]
    assert emulated["baseline_caveats"] == "" and base["baseline_caveats"] == ""


def test_a_ratio_row_names_the_caveats_of_its_baseline():
    rows = _rows(summary_csv(build_report([study_run()])))
    lat = next(r for r in rows if r["workload"] == "lat-4k" and r["target"] == "virtiofs")
    assert "page cache" in lat["baseline_caveats"]


def test_metric_columns_read_in_a_natural_order():
    names = ["write.iops", "read.lat_p99.9", "read.lat_p5", "read.iops", "cpu.sys", "wall", "read.lat_p50"]
    assert sorted(names, key=metric_order) == [
        "read.iops",
        "read.lat_p5",
        "read.lat_p50",
        "read.lat_p99.9",
        "write.iops",
        "cpu.sys",
        "wall",
    ]
