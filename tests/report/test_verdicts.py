"""Verdict sentences: direction-aware factors, ≈ within noise, no CI with one sample."""

from __future__ import annotations

import math

import pytest

from mountbench.metrics import describe
from mountbench.report.verdicts import oriented, verdict
from mountbench.stats import Comparison
from mountbench.summary import Row


def _row(metric: str, title: str = "extracting the tree") -> Row:
    return Row("w", title, describe(metric), {})


def _cmp(ratio: float, low: float, high: float) -> Comparison:
    return Comparison(ratio, low, high, 0.01, not (low <= 1 <= high))


def test_the_study_sentence():
    # S0: extracting took 32 s on 9p and 5.5 s on virtiofs; time is lower-is-better
    text = verdict(_row("wall"), "virtiofs", "9p", _cmp(5.5 / 32, 1 / 6.4, 1 / 5.1)).text
    assert text == "virtiofs is 5.8x faster than 9p at extracting the tree (wall time), 95% CI 5.1–6.4x"


@pytest.mark.parametrize(
    ("metric", "ratio", "expected"),
    [
        ("read.iops", 2.5, "is 2.5x faster than"),
        ("read.iops", 0.4, "is 2.5x slower than"),
        ("read.bw", 1.28, "is 1.28x faster than"),
        ("read.lat_p99", 0.5, "is 2.0x faster than"),
        ("read.lat_p99", 3.0, "is 3.0x slower than"),
        ("cpu.sys", 0.25, "uses 4.0x less CPU than"),
        ("cpu.sys", 12.0, "uses 12x more CPU than"),
        ("host.cpu_s", 3.1, "uses 3.1x more CPU than"),
        ("host.cpu_s_per_gib", 0.5, "uses 2.0x less CPU per GiB than"),
        ("nginx.uss_peak", 2.0, "uses 2.0x more memory than"),
        ("http.requests_per_s", 2.0, "is 2.0x faster than"),
    ],
)
def test_direction_follows_higher_is_better(metric, ratio, expected):
    item = verdict(_row(metric), "a", "b", _cmp(ratio, ratio * 0.9, ratio * 1.1))
    assert expected in item.text and item.significant


def test_interval_is_turned_around_with_the_factor():
    better, factor, low, high = oriented(_cmp(0.25, 0.2, 0.5), describe("read.iops"))
    assert (better, factor, low, high) == (False, 4.0, 2.0, 5.0)


def test_within_noise_says_so():
    item = verdict(_row("read.iops", "RND 4K"), "9p", "virtiofs", _cmp(0.93, 0.8, 1.08))
    assert item.text == "9p ≈ virtiofs at RND 4K (read IOPS): the same within noise (×0.93, 95% CI 0.80–1.08x)"
    assert item.better is None and not item.significant


def test_one_sample_has_no_interval():
    item = verdict(_row("read.iops"), "a", "b", Comparison(3.0, math.nan, math.nan, math.nan, False))
    assert "3.0x faster" in item.text and "no confidence interval" in item.text and not item.significant
