"""Charts: written as real PNG/SVG files with titles, units, error bars and caveat marks;
rendered and checked for clipped or colliding text (issue 13)."""

from __future__ import annotations

import functools
import struct
from pathlib import Path

import matplotlib
import matplotlib.image
import numpy as np
import pytest
from support.factories import fio_workload, make_run
from support.synthetic import study_run

from mountbench.analysis.metrics import describe
from mountbench.cli.formats.as_md import write_charts
from mountbench.kinds import make_workload
from mountbench.report.chartkit import RC, axis_unit, inline_svg, render, spans_orders
from mountbench.report.charts import plan_charts
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
    # bars: read IOPS, write bandwidth (the whole block-size sweep, 4k included), wall time
    assert kinds.count("bars") == 3 and {"ratio", "percentiles", "sweep"} <= set(kinds)


def test_png_bar_chart_is_written_with_real_content(report, tmp_path: Path):
    written = dict((chart.key, path) for chart, path in write_charts(report, tmp_path, "t", "png"))
    path = written["bars-read-iops"]
    data = path.read_bytes()
    width, height = _png_size(data)
    assert 20_000 < len(data) < 1_000_000 and width >= 600 and height >= 250
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
    assert "read IOPS by workload and target" in bars and "read IOPS (IOPS)" not in bars
    assert "8.60k IOPS [1]" in bars and "O_DIRECT refused" in bars  # the value and caveat sit on the bar
    assert "confidence interval of the median" in bars  # the tables' statistic at its own level, said on the chart
    sweep = inline_svg(charts["sweep-1-write-bw"])
    assert "block size (bs, log scale)" in sweep and "write bandwidth (GB/s)" in sweep
    assert "★ 4M  ◆ 4M" in sweep and "★ 64k  ◆ 64k" in sweep  # each target's optimum and knee, in the legend
    percentiles = inline_svg(charts["percentiles-lat-4k-read"])
    assert "read latency (µs, log scale)" in percentiles and "p99.9" in percentiles
    ratio = inline_svg(charts["ratio"])
    assert "right is better" in ratio and "≈ same" in ratio and "16.0× slower" in ratio


def test_inline_svgs_never_share_ids(report):
    import re

    ids = [i for chart in plan_charts(report) for i in re.findall(r'\bid="([^"]+)"', inline_svg(chart))]
    assert len(ids) == len(set(ids))


def test_bars_are_linear_small_multiples_never_a_log_scale(tmp_path: Path):
    """Issue 25: 16.0k against 455k must look 28× shorter. Workloads whose values differ by far
    more than 10× each get a panel of their own, every panel a linear axis from 0."""
    assert spans_orders([100.0, 20_000.0]) and not spans_orders([100.0, 9_000.0])  # sweeps
    run = make_run(
        {
            ("ssd", "w"): [4300.0, 4400.0, 4200.0],
            ("hdd", "w"): [124.0, 120.0, 130.0],
            ("root", "w"): [19300.0, 30300.0, 25000.0],
            ("ssd", "v"): [4.3e6, 4.4e6, 4.2e6],
            ("hdd", "v"): [1.6e4, 1.6e4, 1.7e4],
            ("root", "v"): [4.5e5, 4.6e5, 4.4e5],
        },
        workloads=[fio_workload("w"), fio_workload("v")],
    )
    (bars,) = [c for c in plan_charts(build_report([run])) if c.kind == "bars"]
    figure = bars.draw()
    panels = [ax for ax in figure.axes if ax.get_visible()]
    assert len(panels) == 2 and all(ax.get_xscale() == "linear" and ax.get_xlim()[0] == 0 for ax in panels)
    svg = inline_svg(bars)
    assert "log scale" not in svg and "confidence interval of the median" in svg
    ticks = [t.get_text() for ax in panels for t in ax.get_xticklabels()]
    assert any(t.endswith("M") for t in ticks), ticks  # numbers as the tables write them: 1.50M, never 1500000
    assert not any(t.isdigit() and len(t) > 4 for t in ticks), ticks


def test_the_bars_interval_is_the_tables_own():
    """Issue 31: the bars drew a 95% interval of the geometric mean computed in report/, clipped at zero
    when the median fell outside it; they draw the cell's median interval from analysis/ at its own level."""
    from mountbench.analysis.stats import summarize
    from mountbench.analysis.summary import Cell
    from mountbench.report.bar_charts import cell_interval

    values = (100.0, 110.0, 90.0, 105.0, 95.0)
    summary = summarize(values)
    cell = Cell("a", summary, None, (), (), 0, values)
    assert cell_interval(cell) == (summary.ci_low, summary.ci_high, summary.ci_level)
    assert summary.ci_low <= summary.median <= summary.ci_high
    one = Cell("a", summarize((5.0,)), None, (), (), 0, (5.0,))
    assert cell_interval(one)[2] == 0.0  # one sample: no interval


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


# --- nothing clipped, nothing on top of anything else ---------------------------------------------


def _drawn_texts(figure) -> list[tuple[str, object]]:
    """Every text the renderer really drew (ticks outside the view are not drawn), with its box."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    drawn: list[tuple[str, object]] = []
    original = Text.draw

    def draw(self, renderer):
        original(self, renderer)
        if self.get_visible() and self.get_text().strip():
            drawn.append((self.get_text(), self.get_window_extent(renderer)))

    Text.draw = draw
    try:
        FigureCanvasAgg(figure).draw()
    finally:
        Text.draw = original
    return drawn


@functools.cache
def _charts_of_every_kind():
    quick = build_report([_quick_run()])
    wide = build_report([_wide_run()])
    return plan_charts(build_report([study_run()])) + plan_charts(quick) + plan_charts(wide)


def _wide_run():
    """As a real two-repeat run of tmpfs against a disk: a two-sample interval reaching 1000× its
    median (too wide to rank), one cut at the panel's scale, ratios from 1 to 2000× slower, names
    that wrap onto two lines and a note on every bar."""
    from mountbench import model

    ram, disk = "tmpfs:/dev/shm/mountbench-a", "ext4:/var/tmp/mountbench-b"
    values = {
        (ram, "q32w"): [440e3, 450e3],
        (disk, "q32w"): [1.0e3, 2.01e5],  # 101k IOPS (n=2): its median's interval spans 201×
        (ram, "q1w"): [497e3, 480e3, 510e3],
        (disk, "q1w"): [1000.0, 8000.0, 3000.0],  # 172× slower, the interval 23–1300×
        (ram, "q8"): [200e3, 500e3, 1200e3],  # an interval to 4.57M (86× wide): cut at twice the largest median
        (disk, "q8"): [140e3, 150e3, 160e3],
    }
    caveats = {
        key: (model.Caveat(model.UNSTEADY, f"not steady within the sample: IOPS rose {10 + i}% (a cache filling?)"),)
        for i, key in enumerate(values)
    }
    return make_run(
        values, caveats=caveats, workloads=[fio_workload("q32w"), fio_workload("q1w"), fio_workload("q8")], baseline=ram
    )


def test_an_interval_too_wide_to_rank_does_not_stretch_the_axis():
    """Issue 23's "too wide to rank" on the bars: no whisker for an interval whose ends are more than
    100× apart, a mark on its bar and a note under the chart; an interval reaching past twice the
    panel's largest median ends in an arrowhead there. Each axis spans the medians people compare."""
    report = build_report([_wide_run()])
    (bars,) = [c for c in plan_charts(report) if c.kind == "bars"]
    svg = inline_svg(bars)
    assert "101k IOPS [3] ‡" in svg and "interval too wide to draw (n=2)" in svg
    assert "▸ interval cut at 2× the panel's largest median (n=3)" in svg
    for draw in (bars.draw, bars.narrow):
        with matplotlib.rc_context(RC):
            figure = draw()
        panels = [ax for ax in figure.axes if ax.get_visible()]
        for ax, medians in zip(panels, ([445e3, 101e3], [497e3, 3.0e3], [500e3, 150e3]), strict=True):
            # the medians, the cut and room for the labels, no more: the intervals reach 1e17, 38.2k and 4.57M
            assert max(medians) < ax.get_xlim()[1] < 4.5 * max(medians) < 4.57e6
            ticks = [t.get_text() for t in ax.get_xticklabels()]
            assert all(len(t) <= 5 for t in ticks), ticks  # '600k', '1.20M': never '200000000G'


def test_ratio_axis_labels_as_many_decades_as_fit():
    (ratio,) = [c for c in plan_charts(build_report([_wide_run()])) if c.kind == "ratio"]
    for draw in (ratio.draw, ratio.narrow):
        with matplotlib.rc_context(RC):
            ax = draw().axes[0]
        low, high = ax.get_xlim()
        shown = [t for t in ax.get_xticks() if low <= t <= high]
        assert 1.0 in shown and len(shown) >= 3, shown  # 'same' and at least a decade either side


def _quick_run():
    """Tree workloads far apart (25 ms next to 2.41 s, as in issue 13) and a failure."""
    workloads = [
        make_workload(name, "tree", title, "preset:tree", {"action": name, "headline": ["wall"]})
        for name, title in (("extract", "extracting the tree"), ("delete", "deleting the tree"), ("walk", "walk"))
    ]
    return make_run(
        {
            ("ram", "extract"): [0.025, 0.024, 0.026],
            ("disk", "extract"): [2.41, 2.3, 2.5],
            ("ram", "delete"): [0.011, 0.012, 0.010],
            ("disk", "delete"): [0.75, 0.7, 0.8],
            ("ram", "walk"): [0.1, 0.11, 0.09],
        },
        metric="wall",
        errors={("disk", "walk"): "EIO"},
        workloads=workloads,
    )


def _every_drawing():
    """Every chart, as drawn for the page and for a phone (Chart.narrow), with a test id each."""
    charts = _charts_of_every_kind()
    page = [pytest.param(chart, chart.draw, id=f"{i}-{chart.key}") for i, chart in enumerate(charts)]
    phone = [pytest.param(chart, chart.narrow, id=f"{i}-{chart.key}-phone") for i, chart in enumerate(charts)
             if chart.narrow is not None]  # fmt: skip
    return page + phone


@pytest.mark.parametrize(("chart", "draw"), _every_drawing())
def test_no_text_is_clipped_or_overlaps_another(chart, draw):
    """Every chart, as drawn for the page and for a phone (Chart.narrow)."""
    with matplotlib.rc_context(RC):
        figure = draw()
        texts = _drawn_texts(figure)
    frame = figure.bbox
    assert len(texts) > 5
    for text, box in texts:
        inside = box.x0 >= frame.x0 - 1 and box.x1 <= frame.x1 + 1 and box.y0 >= frame.y0 - 1 and box.y1 <= frame.y1 + 1
        assert inside, f"{chart.key}: {text!r} is clipped ({box.bounds} outside {frame.bounds})"
        if chart.kind in ("bars", "overview"):  # a margin: 'ram (baseline)' once sat 1 px off a phone's edge
            assert box.x0 >= frame.x0 + 6, f"{chart.key}: {text!r} touches the left edge ({box.bounds})"
    for i, (a, box_a) in enumerate(texts):
        for b, box_b in texts[i + 1 :]:
            assert not box_a.overlaps(box_b), f"{chart.key}: {a!r} overlaps {b!r}"
    renderer = figure.canvas.get_renderer()
    plot = figure.axes[0].get_window_extent(renderer)
    legend = figure.axes[0].get_legend()
    if legend is not None:  # never over the data
        assert not legend.get_window_extent(renderer).overlaps(plot)
    for label in figure.axes[0].texts:  # values written on bars stay inside the plot, off its frame
        box = label.get_window_extent(renderer)
        assert plot.x0 + 2 <= box.x0 and box.x1 <= plot.x1 - 2, f"{chart.key}: {label.get_text()!r} leaves the plot"


def test_ratio_axis_says_times_slower_or_faster():
    from mountbench.report.ratio_chart import _times

    assert [_times(v, "faster", "slower") for v in (0.01, 0.1, 0.4, 1.0, 2.5, 100.0)] == [
        "100× slower",
        "10× slower",
        "2.5× slower",
        "same",
        "2.5× faster",
        "100× faster",
    ]


def test_ratio_chart_puts_better_to_the_right_whatever_the_metric():
    """A 68× longer wall time and a 4× lower bandwidth both reach left; a faster one reaches right."""
    run = make_run(
        {("base", "t"): [1.0, 1.02, 0.98], ("slow", "t"): [68.0, 69.0, 67.0]},
        workloads=[fio_workload("t")],
    )
    report = build_report([run])
    (ratio,) = [c for c in plan_charts(report) if c.kind == "ratio"]
    with matplotlib.rc_context(RC):
        figure = ratio.draw()
    ax = figure.axes[0]
    (bar,) = [p for p in ax.patches if p.get_width() != 0]
    metric = report.summary.rows[0].metric
    worse = (68.0 > 1) != metric.higher_is_better  # the slow target is worse in either direction
    assert (bar.get_x() + bar.get_width() < 1) == worse


def test_s1_host_cost_view_in_every_format(tmp_path: Path):
    """Study S1's figure set: per case, throughput next to host CPU and memory per target."""
    from mountbench.model import Sample
    from mountbench.report.html import render_html
    from mountbench.report.markdown import render_markdown
    from mountbench.report.sections.costs import cost_cases

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
    assert "| 9p | 100 MB/s | 840 ms | 0.800 s/GiB | 8.58 MiB |" in section
    assert "| virtiofs | 300 MB/s | 315 ms | 0.300 s/GiB | 38.1 MiB |" in section
    assert "](r-cost-seq.png)" in section
    html = render_html(report)
    assert 'id="host-cost"' in html and "Host cost per case (study S1)" in html
    # no host cost, no section and no chart
    plain = build_report([run])
    assert not cost_cases(plain) and "Host cost" not in render_markdown(plain)
    assert not any(c.kind == "cost" for c in plan_charts(plain))


def test_one_drawing_serves_both_colour_schemes(report):
    """Issue 25: dark mode is a CSS switch, not a second drawing nor an inverting filter. An inline
    SVG's greys (background, text, axes, error bars) become custom properties whose light value is
    the colour drawn and whose dark value is that grey turned over; the targets' colours, the hatches
    (inside their patterns) and the ink of a text on a coloured cell stay as drawn."""
    from mountbench.report.chartkit import dark_grey, page_css, themed

    assert dark_grey("#ffffff") == "#161616" and dark_grey("#000000") == "#e6e6e6"  # the page's dark colours
    assert dark_grey("#0072B2") is None and dark_grey("#999999") is None  # a target's colour, even a grey one
    svg = (
        '<path style="fill: #ffffff"/><text style="font-size: 9px">a</text><path style="stroke: #0072b2"/>'
        '<pattern id="h1"><path style="stroke: #000000"/></pattern>'
        '<g id="on-cell"><text style="font-size: 9px; fill: #ffffff">1.00</text></g>'
        '<text style="fill: #0b6e3b">2.00× faster</text>'
    )
    assert themed(svg) == (
        '<path style="fill: var(--cffffff)"/><text style="fill: var(--c000000); font-size: 9px">a</text>'
        '<path style="stroke: #0072b2"/><pattern id="h1"><path style="stroke: #000000"/></pattern>'
        '<g class="on-cell"><text style="font-size: 9px; fill: #ffffff">1.00</text></g>'
        '<text style="fill: var(--better)">2.00× faster</text>'
    )
    css = page_css(themed(svg))
    assert ":root{--c000000:#000000;--cffffff:#ffffff;}" in css  # light: exactly as drawn
    assert "@media screen and (prefers-color-scheme: dark){:root{--c000000:#e6e6e6;--cffffff:#161616;}}" in css
    every = "".join(inline_svg(chart) for chart in plan_charts(report))
    assert "#ffffff" not in every.replace('fill="#ffffff"', "")  # no white panel left outside a pattern


def test_charts_drawn_in_parallel_are_the_bytes_drawn_one_by_one():
    """render_all draws a document's charts in forked workers where a CPU is free (report speed,
    issue 37): each chart's PNG and SVG, wide and narrow, byte for byte as render() draws it alone."""
    import threading

    from mountbench.report.chartkit import render_all

    if threading.active_count() > 1:
        pytest.skip("this process runs other threads: render_all never forks from one, so it would not fork here")
    charts = plan_charts(build_report([_wide_run()]))
    jobs = [(chart, fmt, False) for chart in charts for fmt in ("png", "svg")]
    jobs += [(chart, "svg", True) for chart in charts if chart.narrow is not None]
    alone = [render(chart, fmt, narrow=narrow) for chart, fmt, narrow in jobs]
    assert render_all(jobs, workers=2) == alone
    assert render_all(jobs, workers=1) == alone
