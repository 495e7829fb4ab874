"""Charts: written as real PNG/SVG files with titles, units, error bars and caveat marks."""

from __future__ import annotations

import struct
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
from support.factories import fio_workload, make_run
from support.synthetic import study_run

from mountbench.metrics import describe
from mountbench.report.charts import axis_unit, inline_svg, plan_charts, render, spans_orders, write_charts
from mountbench.report.content import build_report

BLUE = np.array([0x00, 0x72, 0xB2]) / 255  # the first target's colour


@pytest.fixture(scope="module")
def report():
    return build_report([study_run()])


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_every_kind_of_chart_is_planned(report):
    kinds = [chart.kind for chart in plan_charts(report)]
    assert kinds.count("bars") == 4 and {"ratio", "percentiles", "sweep"} <= set(kinds)


def test_png_bar_chart_is_written_with_real_content(report, tmp_path: Path):
    written = dict((chart.key, path) for chart, path in write_charts(report, tmp_path, "t", "png"))
    path = written["bars-read-iops"]
    data = path.read_bytes()
    width, height = _png_size(data)
    assert 20_000 < len(data) < 1_000_000 and width >= 600 and height >= 400
    pixels = matplotlib.image.imread(path)[..., :3]
    ink = np.mean(np.any(pixels < 0.9, axis=-1))
    assert 0.05 < ink < 0.8, ink  # bars, text and axes, but not a solid block
    assert np.any(np.all(np.abs(pixels - BLUE) < 0.02, axis=-1)), "the baseline's bars are missing"
    colours = {tuple(p) for p in (pixels[::4, ::4] * 255).astype(int).reshape(-1, 3)}
    assert len(colours) > 20


def test_every_chart_renders_as_png_and_svg(report):
    for chart in plan_charts(report):
        assert _png_size(render(chart, "png"))[0] > 500
        assert render(chart, "svg").lstrip().startswith(b"<?xml")


def test_svg_says_what_was_measured_with_units_and_caveats(report):
    charts = {chart.key: chart for chart in plan_charts(report)}
    bars = inline_svg(charts["bars-read-iops"])
    assert "read IOPS by workload and target" in bars and "read IOPS (IOPS)" in bars
    assert "[1]" in bars and "O_DIRECT refused" in bars  # the caveat sits on the bar and is spelled out
    sweep = inline_svg(charts["sweep-1-write-bw"])
    assert "block size (bytes, log scale)" in sweep and "peak 4M" in sweep and "write bandwidth (GB/s)" in sweep
    percentiles = inline_svg(charts["percentiles-lat-4k-read"])
    assert "read latency (µs, log scale)" in percentiles and "p99.9" in percentiles
    ratio = inline_svg(charts["ratio"])
    assert "times native" in ratio and "≈ ×1.02" in ratio


def test_inline_svgs_never_share_ids(report):
    import re

    ids = [i for chart in plan_charts(report) for i in re.findall(r'\bid="([^"]+)"', inline_svg(chart))]
    assert len(ids) == len(set(ids))


def test_log_scale_when_values_span_orders_of_magnitude(tmp_path: Path):
    assert spans_orders([100.0, 20_000.0]) and not spans_orders([100.0, 9_000.0])
    run = make_run(
        {
            ("ssd", "w"): [4300.0, 4400.0, 4200.0],
            ("hdd", "w"): [124.0, 120.0, 130.0],
            ("root", "w"): [19300.0, 30300.0, 25000.0],
        }
    )
    (bars,) = [c for c in plan_charts(build_report([run])) if c.kind == "bars"]
    assert "log scale" in inline_svg(bars)


@pytest.mark.parametrize(
    ("metric", "values", "expected"),
    [
        ("read.bw", [2.2e9, 1.6e7], (1e9, "GB/s")),
        ("read.bw", [5.0e7], (1e6, "MB/s")),
        ("read.lat_p99", [7e-5, 1e-6], (1e-6, "µs")),
        ("wall", [32.0, 2.0], (1, "s")),
        ("read.iops", [9000.0], (1.0, "IOPS")),
    ],
)
def test_axis_units_are_always_named(metric, values, expected):
    assert axis_unit(describe(metric), values) == expected


def test_edge_cases_render_in_every_format(tmp_path: Path):
    """Failed cells, single samples (no interval), a target with no data at all, zero values."""
    from mountbench.report.csvexport import samples_csv, summary_csv
    from mountbench.report.html import render_html
    from mountbench.report.markdown import render_markdown

    values = {("a", "w1"): [10.0], ("b", "w1"): [20.0], ("a", "w2"): [1.0, 2.0, 3.0], ("b", "w2"): [0.0] * 3}
    run = make_run(
        values | {("c", "w2"): [2.0, 2.0, 2.0]},
        errors={("b", "w3"): "fio: EIO", ("a", "w3"): "fio: EIO", ("c", "w1"): "target gone"},
        workloads=[fio_workload("w1"), fio_workload("w2"), fio_workload("w3")],
    )
    report = build_report([run])
    written = write_charts(report, tmp_path, "edge")
    assert written and all(path.stat().st_size > 5_000 for _, path in written)
    text = render_markdown(report, {chart.key: path.name for chart, path in written})
    assert "no confidence interval" in text and "failed 1/1" in text and "target gone" in text
    assert "<svg" in render_html(report)
    assert summary_csv(report) and samples_csv(report)


def test_s1_host_cost_view_in_every_format(tmp_path: Path):
    """Study S1's figure set: per case, throughput next to host CPU and memory per target."""
    from mountbench.model import Sample
    from mountbench.report.costview import cost_cases
    from mountbench.report.html import render_html
    from mountbench.report.markdown import render_markdown

    values = {("9p", "seq"): [1.0e8, 1.1e8, 0.9e8], ("virtiofs", "seq"): [3.0e8, 3.1e8, 2.9e8]}
    run = make_run(values, "read.bw", workloads=[fio_workload("seq", "read", "1M")])
    cost = {"9p": (0.8, 9e6), "virtiofs": (0.3, 40e6)}
    samples = tuple(
        Sample(s.target, s.workload, s.round, True,
               {**s.metrics, "read.bytes": 2**30, "host.cpu_s": cost[s.target][0] * (1 + s.round / 20),
                "host.cpu_s_per_gib": cost[s.target][0], "host.uss_peak": cost[s.target][1]})
        for s in run.samples
    )  # fmt: skip
    import dataclasses

    report = build_report([dataclasses.replace(run, samples=samples)])
    (case,) = cost_cases(report)
    assert case.throughput.metric.name == "read.bw" and case.cpu.metric.name == "host.cpu_s"
    assert case.cpu_per_gib is not None and case.memory.metric.name == "host.uss_peak"
    charts = {chart.key: chart for chart in plan_charts(report)}
    assert charts[case.key].kind == "cost" and "host CPU and host memory" in charts[case.key].title
    svg = render(charts[case.key], "svg").decode()
    assert "host peak memory (USS)" in svg and "read bandwidth" in svg and "9p (baseline)" in svg
    markdown = render_markdown(report, {case.key: "r-cost-seq.png"})
    section = markdown[markdown.index("## Host cost per case (study S1)") : markdown.index("## Environment")]
    assert "| 9p | 100 MB/s | 840 ms | 800 ms/GiB | 8.58 MiB |" in section
    assert "| virtiofs | 300 MB/s | 315 ms | 300 ms/GiB | 38.1 MiB |" in section
    assert "](r-cost-seq.png)" in section
    html = render_html(report)
    assert 'id="host-cost"' in html and "Host cost per case (study S1)" in html
    # no host cost, no section and no chart
    plain = build_report([run])
    assert not cost_cases(plain) and "Host cost" not in render_markdown(plain)
    assert not any(c.kind == "cost" for c in plan_charts(plain))
