"""Verdict sentences and the phrasing every format shares: N× faster/slower (always ≥ 1,
the interval turned the same way), three verdicts (a difference, ≈ same within the precision,
undecided), no CI with one sample, three significant digits and never scientific notation."""

from __future__ import annotations

import math

import pytest

from mountbench.analysis.metrics import describe
from mountbench.analysis.stats import Comparison
from mountbench.analysis.summary import Cell, Row
from mountbench.report.phrasing import headlines, sig3, standing
from mountbench.report.verdicts import verdict


def _row(metric: str, title: str = "extracting the tree") -> Row:
    return Row("w", title, describe(metric), {})


def _cmp(ratio: float, low: float, high: float) -> Comparison:
    return Comparison(ratio, low, high, 0.01, not (low <= 1 <= high))


def test_the_study_sentence():
    # S0: extracting took 32 s on 9p and 5.5 s on virtiofs; time is lower-is-better
    text = verdict(_row("wall"), "virtiofs", "9p", _cmp(5.5 / 32, 1 / 6.4, 1 / 5.1)).text
    assert text == "virtiofs is 5.82× faster than 9p at extracting the tree (wall time), 95% CI 5.10–6.40×"


@pytest.mark.parametrize(
    ("metric", "ratio", "expected"),
    [
        ("read.iops", 2.5, "is 2.50× faster than"),
        ("read.iops", 0.4, "is 2.50× slower than"),
        ("read.bw", 1.28, "is 1.28× faster than"),
        ("read.lat_p99", 0.5, "is 2.00× faster than"),
        ("read.lat_p99", 3.0, "is 3.00× slower than"),
        ("cpu.sys", 0.25, "uses 4.00× less CPU than"),
        ("cpu.sys", 12.0, "uses 12.0× more CPU than"),
        ("host.cpu_s", 3.1, "uses 3.10× more CPU than"),
        ("host.cpu_s_per_gib", 0.5, "uses 2.00× less CPU per GiB than"),
        ("nginx.uss_peak", 2.0, "uses 2.00× more memory than"),
        ("http.requests_per_s", 2.0, "is 2.00× faster than"),
    ],
)
def test_direction_follows_higher_is_better(metric, ratio, expected):
    item = verdict(_row(metric), "a", "b", _cmp(ratio, ratio * 0.9, ratio * 1.1))
    assert expected in item.text and item.significant


def test_interval_is_turned_around_with_the_factor():
    said = standing(_cmp(0.25, 0.2, 0.5), describe("read.iops"))
    assert (said.kind, said.factor, said.low, said.high, said.word) == ("worse", 4.0, 2.0, 5.0, "slower")
    assert said.text == "4.00× slower (2.00–5.00×)"
    # a wall time 68× longer is 68× slower, never "×68.1" that reads like a win
    assert standing(_cmp(68.1, 60.0, 77.0), describe("wall")).text == "68.1× slower (60.0–77.0×)"


def test_an_interval_inside_the_precision_is_the_same():
    item = verdict(_row("read.iops", "RND 4K"), "9p", "virtiofs", _cmp(0.99, 0.97, 1.03))
    assert item.text == "9p ≈ virtiofs at RND 4K (read IOPS): the same within ±5% (95% CI 0.970–1.03×)"
    assert item.better is None and not item.significant and item.kind == "same"
    assert standing(_cmp(0.99, 0.97, 1.03), describe("read.iops")).short == "≈ same"


def test_an_interval_containing_1_but_reaching_beyond_the_precision_is_undecided():
    # issue 23: "≈ same (0.957–38.4×)" claimed sameness where nothing was shown
    item = verdict(_row("read.iops", "RND 4K"), "9p", "virtiofs", _cmp(0.93, 0.8, 1.08))
    assert item.text.startswith("9p vs virtiofs at RND 4K (read IOPS): undecided (95% CI 0.800–1.08×")
    assert "what ±5% would take" in item.text and item.kind == "undecided" and item.better is None
    said = standing(_cmp(0.93, 0.8, 1.08), describe("read.iops"))
    assert (said.kind, said.short, said.text) == ("undecided", "undecided", "undecided (0.800–1.08×)")


def test_the_precision_is_the_comparisons_own():
    loose = Comparison(1.05, 0.93, 1.08, 0.4, False, precision=0.10)
    assert standing(loose, describe("read.iops")).kind == "same"
    assert standing(_cmp(1.05, 0.93, 1.08), describe("read.iops")).kind == "undecided"


def test_an_interval_over_100x_wide_is_too_wide_to_rank():
    # issue 23: show --metric lat-p99 printed "≈ same (0.000410–34700×)"
    said = standing(_cmp(3.0, 0.00041, 34700.0), describe("read.lat_p99"))
    assert said.kind == "undecided" and said.too_wide
    assert said.text == "too wide to rank" and said.interval == ""


def test_one_sample_has_no_interval():
    item = verdict(_row("read.iops"), "a", "b", Comparison(3.0, math.nan, math.nan, math.nan, False))
    assert "3.00× faster" in item.text and "no confidence interval" in item.text and not item.significant
    said = standing(Comparison(3.0, math.nan, math.nan, math.nan, False), describe("read.iops"))
    assert said.kind == "unknown" and said.text == "3.00× faster (no CI)"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0391, "0.0391"),
        (6.2, "6.20"),
        (25.6, "25.6"),
        (201.4, "201"),
        (1243.0, "1240"),
        (9.996, "10.0"),
        (0.16, "0.160"),
    ],
)
def test_three_significant_digits_never_scientific(value, text):
    assert sig3(value) == text


def test_a_latency_ratio_of_hundreds_reads_plainly():
    # issue 13: --metric lat-p99 printed "×201 (32.7–1.24e+03)"
    assert standing(_cmp(201.0, 32.7, 1240.0), describe("read.lat_p99")).text == "201× slower (32.7–1240×)"


def _cells(*pairs: tuple[str, Comparison | None]) -> dict[str, Cell]:
    return {t: Cell(t, None, c, (), (), 0, ()) for t, c in pairs}


def test_the_headline_counts_and_leads_with_the_majority():
    rows = [
        Row(f"w{i}", f"W{i}", describe("read.iops"), _cells(("ram", None), ("disk", _cmp(r, r * 0.9, r * 1.1))))
        for i, r in enumerate([1 / 6.0, 1 / 2.0, 1 / 25.0, 1.3])
    ]
    rows.append(Row("w9", "W9", describe("read.iops"), _cells(("ram", None), ("disk", _cmp(1.0, 0.9, 1.1)))))
    rows.append(Row("w8", "W8", describe("read.iops"), _cells(("ram", None), ("disk", _cmp(1.0, 0.98, 1.02)))))
    (line,) = headlines(rows, ["ram", "disk"], "ram")
    assert line.kind == "worse"
    assert line.text == (
        "disk is slower than ram in 3 of 6 workloads (from 2.00× to 25.0×, median 6.00×); faster in 1 (1.30×); "
        "the same (within ±5%) in 1; undecided in 1 (within 1.11× either way; more rounds would decide it)"
    )


def test_the_headline_leaves_out_metrics_the_baseline_cannot_have():
    """Issue 36: a cloud-lab mount's host cost (its rclone processes) has no value on the local disk;
    those rows are no comparison, not "no result in 6 of 8"."""
    from mountbench.analysis.stats import summarize

    measured = Cell("local", summarize([100.0, 101.0]), None, (), (), 0, (100.0, 101.0))
    slower = _cells(("off", _cmp(0.01, 0.009, 0.011)))["off"]
    rows = [Row("read", "Read", describe("read.iops"), {"local": measured, "off": slower})]
    rows += [Row("read", "Read", describe(name), _cells(("local", None), ("off", None))) for name in
             ("host.cpu_s", "host.uss_peak", "host.cpu_per_gib")]  # fmt: skip
    (line,) = headlines(rows, ["local", "off"], "local")
    assert line.text == "off is slower than local in the one workload (100×)"
