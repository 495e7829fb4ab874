"""Sweeps in reports: which points form one sweep (never guessed across sources, never a
point dropped), optimum and knee per target, and the same sweep in every format, with
charts whose text is neither clipped nor overlapping."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import matplotlib
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from rich.console import Console
from support.synthetic import EMULATED, study_run

from mountbench.blocks.to_terminal import renderables
from mountbench.engine.workloads import assemble
from mountbench.fio.sweeps import parse_sweep
from mountbench.kinds import make_workload
from mountbench.kinds.fio import KIND as FIO
from mountbench.model import Caveat, RunData, Sample, SweepPoint, Workload
from mountbench.presets import load_preset
from mountbench.report import chartkit, charts
from mountbench.report.content import build_report
from mountbench.report.html import render_html
from mountbench.report.markdown import render_markdown
from mountbench.report.sections.sweeps.layout import screen_blocks
from mountbench.report.sections.sweeps.records import SWEEP_COLUMNS, sweep_records, sweeps_csv
from mountbench.report.sections.sweeps.words import optimum_text

NOISE = (1.0, 1.04, 0.97)


def make_run(
    run_id: str,
    workloads: Sequence[Workload],
    bandwidth: Callable[[str, Workload], float],
    targets: Sequence[str] = ("ram", "disk"),
    caveats: dict[str, tuple] | None = None,
) -> RunData:
    """Samples for every (target, workload): write/read bandwidth and IOPS from ``bandwidth``."""
    samples = []
    for target in targets:
        for workload in workloads:
            bw = bandwidth(target, workload)
            bs = workload.description.block_size or 4096
            for round_, factor in enumerate(NOISE):
                metrics = {}
                for direction in workload.description.directions:
                    metrics |= {f"{direction}.bw": bw * factor, f"{direction}.iops": bw * factor / bs}
                samples.append(Sample(target, workload.name, round_, True, metrics, (caveats or {}).get(target, ())))
    base = study_run(run_id, targets=("native",))
    records = tuple(dataclasses.replace(base.targets[0], target=dataclasses.replace(base.targets[0].target, label=t,
                    path=f"/{t}")) for t in targets)  # fmt: skip
    config = dataclasses.replace(base.config, baseline=targets[0])
    return dataclasses.replace(base, targets=records, workloads=tuple(workloads), samples=tuple(samples), config=config)


def saturating(target: str, workload: Workload) -> float:
    """Bandwidth that grows with the block size and levels off, later on 'disk'."""
    point = workload.description.sweep
    bs = point.number if point and point.option == "bs" else float(workload.description.block_size or 4096)
    knee = 2**16 if target == "ram" else 2**20
    return (3e9 if target == "ram" else 8e8) * (1 - math.exp(-bs / knee))


def user_job_file(tmp_path: Path, name: str = "seqw.fio") -> Path:
    """A hand-written sweep with the quick preset's SEQ 1M Q8 write settings, as in the issue."""
    path = tmp_path / name
    head = "[global]\nioengine=libaio\ndirect=1\nsize=256M\nruntime=2500ms\ntime_based=1\nrw=write\niodepth=8\n"
    head += "stonewall\n"  # fio runs the sections one after another: a workload each
    path.write_text(head + "".join(f"[seqw-{bs}]\nbs={bs}\n" for bs in ("4k", "64k", "1m", "4m")))
    return path


# --- which points form a sweep ------------------------------------------------------------------


def test_a_users_sweep_keeps_its_1m_point_next_to_the_quick_preset_from_another_run(tmp_path):
    quick = make_run("quick-run", list(load_preset("quick").workloads), lambda t, w: 5e9)  # far off every curve
    mine = make_run("my-run", FIO.load_job_file(user_job_file(tmp_path)), saturating)
    report = build_report([quick, mine])
    (sweep,) = report.sweeps
    assert [row.workload for row in sweep.rows] == ["seqw-4k", "seqw-64k", "seqw-1m", "seqw-4m"]
    assert sweep.values == ("4k", "64k", "1M", "4M") and not sweep.generated
    one_m = sweep.rows[2].cells["ram"].summary.median
    assert one_m == pytest.approx(saturating("ram", mine.workload("seqw-1m")))  # the user's, not quick's 5 GB/s
    # one metric, one unit along the whole curve, in the sweep and in the main tables
    assert {row.metric.name for row in sweep.rows} == {"write.bw"} and sweep.unit == (1e9, "GB/s")
    seqw_metrics = {row.metric.name for row in report.summary.rows if row.workload.startswith("seqw-")}
    assert seqw_metrics == {"write.bw"}


def test_two_job_files_with_the_same_settings_make_two_sweeps(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = assemble([], [user_job_file(tmp_path / "a")])
    second = assemble([], [user_job_file(tmp_path / "b")])
    a = make_run("a", first, saturating)
    b = make_run("b", [dataclasses.replace(w, name=f"b-{w.name}") for w in second], lambda t, w: 1e8)
    sweeps = build_report([a, b]).sweeps
    assert len(sweeps) == 2 and all(len(s.rows) == 4 for s in sweeps)
    assert {s.title for s in sweeps} == {
        f"sections of job:{tmp_path / d / 'seqw.fio'} differing in bs alone" for d in ("a", "b")
    }


def test_points_recorded_by_the_previous_version_are_split_by_source():
    """Runs stored before this change carry detected points grouped by rw/engine/depth only."""

    def old(name: str, source: str, bs: int, **extra: str) -> Workload:
        spec = {"section": name, "options": [["rw", "write"], ["bs", str(bs)], ["iodepth", "8"], *extra.items()]}
        fresh = make_workload(name, "fio", name, source, spec)
        point = SweepPoint("rw=write iodepth=8", "bs", str(bs), float(bs), generated=False)
        return dataclasses.replace(fresh, description=dataclasses.replace(fresh.description, sweep=point))

    quick = [old("seq1m-q8-write", "preset:quick", 1 << 20, size="256M")]
    mine = [old(f"w{bs}", "job:/mine.fio", bs, size="1G") for bs in (4096, 65536, 1 << 20)]
    mine.append(old("w16m-short", "job:/mine.fio", 16 << 20, size="1G", runtime="1"))  # differs: not a point
    report = build_report([make_run("q", quick, saturating), make_run("m", mine, saturating)])
    (sweep,) = report.sweeps
    assert [row.workload for row in sweep.rows] == ["w4096", "w65536", "w1048576"]


def test_two_workloads_claiming_one_point_are_both_kept_and_the_report_says_so():
    def claimed(name: str, bs: str) -> Workload:
        point = SweepPoint("job:/x.fio sections differing in bs", "bs", bs, float(FIO_SIZES[bs]), generated=False)
        spec = {"section": name, "options": [["rw", "write"], ["bs", bs]], "sweep": point.to_dict()}
        return make_workload(name, "fio", name, "job:/x.fio", spec)

    workloads = [claimed(f"a{bs}", bs) for bs in ("4k", "64k", "1M")] + [claimed(f"b{bs}", bs) for bs in FIO_SIZES]
    report = build_report([make_run("r", workloads, saturating)])
    assert [[row.workload for row in s.rows] for s in report.sweeps] == [["a4k", "a64k", "a1M"], ["b4k", "b64k", "b1M"]]
    assert any("'a4k' and 'b4k' are both the bs=4k point" in w for w in report.warnings)


FIO_SIZES = {"4k": 4096, "64k": 65536, "1M": 1 << 20}


def test_generated_sweeps_with_other_runtimes_are_separate_and_two_points_are_enough():
    (base,) = [w for w in load_preset("quick").workloads if w.name == "seq1m-q8-read"]
    short = assemble(["quick"], [], runtime=0.5, sweeps=[parse_sweep("bs=64k,1M")])
    long = assemble(["quick"], [], runtime=2.0, sweeps=[parse_sweep("bs=64k,1M")])
    renamed = [dataclasses.replace(w, name=w.name.replace("@", "-long@")) for w in long]
    report = build_report([make_run("s", short, saturating), make_run("l", renamed, saturating)])
    read_sweeps = [s for s in report.sweeps if s.title.startswith(base.title)]
    assert len(read_sweeps) == 2 and {len(s.rows) for s in read_sweeps} == {2}
    assert {("runtime=500ms" in s.settings, "runtime=2000ms" in s.settings) for s in read_sweeps} == {
        (True, False),
        (False, True),
    }


def test_a_read_write_mix_gives_one_sweep_per_direction_and_depth_sweeps_keep_iops():
    (mixed,) = [w for w in load_preset("lima").workloads if "readwrite" in w.name]
    depth = FIO.sweep(mixed, [parse_sweep("iodepth=1,4,16")])
    sweeps = build_report([make_run("r", depth, lambda t, w: 1e8 * w.description.sweep.number)]).sweeps
    assert [(s.option, s.metric.name) for s in sweeps] == [("iodepth", "read.iops"), ("iodepth", "write.iops")]


def test_grids_become_heat_maps_and_a_third_option_slices_them():
    (base,) = [w for w in load_preset("quick").workloads if w.name == "seq1m-q8-write"]
    grid = FIO.sweep(base, [parse_sweep("bs=4k,64k,1M"), parse_sweep("iodepth=1,8")])
    report = build_report([make_run("g", grid, saturating)])
    assert not report.sweeps
    (heat,) = report.grids
    assert heat.row_values == ("4k", "64k", "1M") and heat.column_values == ("1", "8") and len(heat.cells) == 6
    assert heat.best["ram"][0] == 2  # the largest block size wins on this curve
    cube = FIO.sweep(base, [parse_sweep("bs=4k,64k"), parse_sweep("iodepth=1,8"), parse_sweep("numjobs=1,2,4")])
    sliced = build_report([make_run("c", cube, saturating)]).grids
    assert [g.fixed for g in sliced] == ["numjobs=1", "numjobs=2", "numjobs=4"]
    line = FIO.sweep(base, [parse_sweep("bs=4k,64k,1M"), parse_sweep("iodepth=8")])  # one depth: a curve
    (curve,) = build_report([make_run("l", line, saturating)]).sweeps
    assert curve.option == "bs" and curve.fixed == "iodepth=8"


def test_an_optimum_is_clear_only_when_no_other_points_interval_reaches_it():
    (base,) = [w for w in load_preset("s3").workloads if w.name == "seqr"]
    points = FIO.sweep(base, [parse_sweep("bs=4k..64k")])
    peaked = {"ram": {"16k": 3e9, "8k": 2e9}, "disk": {"16k": 1.01e9}}  # disk: flat within NOISE (±4 %)

    def bandwidth(target: str, workload: Workload) -> float:
        return peaked[target].get(workload.description.sweep.value, 1e9)

    (sweep,) = (report := build_report([make_run("c", points, bandwidth)])).sweeps
    assert sweep.optima["ram"].clear and sweep.values[sweep.optima["ram"].peak] == "16k"
    assert not sweep.optima["disk"].clear
    assert optimum_text(sweep, "ram") == "16k: 3.00"
    assert optimum_text(sweep, "disk") == "16k: 1.01 ≈"
    flags = {(r["target"], r["value"]): r["optimum_clear"] for r in sweep_records(report) if r["optimum"]}
    assert flags == {("ram", "16k"): True, ("disk", "16k"): False}


def test_optimum_and_knee_per_target():
    (base,) = [w for w in load_preset("s3").workloads if w.name == "seqw-fsync"]
    points = FIO.sweep(base, [parse_sweep("bs=4k..16M")])
    (sweep,) = build_report([make_run("k", points, saturating)]).sweeps
    ram, disk = sweep.optima["ram"], sweep.optima["disk"]
    assert sweep.values[ram.knee] == "256k" and sweep.values[disk.knee] == "4M"
    assert ram.peak > ram.knee and disk.peak >= disk.knee


# --- every format -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3_report():
    workloads = [w for w in assemble(["s3"], [], sweeps=[parse_sweep("bs=4k..16M")]) if w.kind == "fio"]
    (buffered,) = load_preset("s3").workloads[:1]
    dd = Caveat.from_dict(buffered.spec["caveats"][0])  # long: the chart wraps it under the plot
    return build_report([make_run("s3-run", workloads, saturating, caveats={"disk": (EMULATED,), "ram": (dd,)})])


def test_markdown_has_one_table_per_sweep_with_optimum_and_knee_rows(s3_report):
    text = render_markdown(s3_report)
    section = text[text.index("## Sweeps") : text.index("## Environment")]
    assert section.count("### write bandwidth against block size") == 2 and "### read bandwidth" in section
    assert "| block size | ram (baseline) [\\[1\\]](#note-1) | disk [\\[2\\]](#note-2) |" in section
    assert "| **★ optimum** |" in section and "| **◆ knee** | 256k: " in section
    # the columns' notes
    assert '1. <a id="note-1"></a>buffered writes without fsync' in text
    assert '2. <a id="note-2"></a>emulated guest' in text


def test_html_and_terminal_show_the_same_sweeps(s3_report, tmp_path):
    page = render_html(s3_report, with_charts=False)
    assert page.count('id="sweep-') == 3 and "★ optimum" in page and 'class="num knee"' in page
    console = Console(width=120, record=True)
    for part in renderables(screen_blocks(s3_report)):
        console.print(part)
    shown = console.export_text()
    assert shown.count("against block size") == 3 and "◆ knee" in shown and "256k: " in shown
    assert "! emulated guest (TCG)" in shown  # the caveat is spelled out under its table


def test_csv_and_json_rows_flag_each_targets_optimum_and_knee(s3_report):
    records = sweep_records(s3_report)
    assert len(records) == 3 * 13 * 2
    knees = {(r["sweep"], r["target"]): r["value"] for r in records if r["knee"]}
    assert knees[("sweep-1", "ram")] == "256k" and knees[("sweep-1", "disk")] == "4M"
    assert sum(r["optimum"] for r in records) == 3 * 2
    json.dumps(records)  # JSON-safe as they are
    lines = sweeps_csv(s3_report).splitlines()
    assert lines[0] == ",".join(SWEEP_COLUMNS) and len(lines) == 1 + len(records)


# --- charts: nothing clipped, nothing overlapping ------------------------------------------------


def drawn_text_boxes(figure) -> list[tuple[str, object]]:
    """(text, window extent) of every text the renderer really draws."""
    canvas = FigureCanvasAgg(figure)
    renderer = canvas.get_renderer()
    drawn: dict[int, matplotlib.text.Text] = {}
    original = renderer.draw_text

    def spy(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if mtext is not None and s.strip():
            drawn[id(mtext)] = mtext
        return original(gc, x, y, s, prop, angle, ismath, mtext)

    renderer.draw_text = spy
    figure.draw(renderer)
    return [(text.get_text(), text.get_window_extent(renderer)) for text in drawn.values()]


def assert_text_fits(figure) -> None:
    boxes = drawn_text_boxes(figure)
    assert boxes
    width, height = figure.bbox.width, figure.bbox.height
    for text, box in boxes:
        assert box.x0 >= -0.5 and box.y0 >= -0.5 and box.x1 <= width + 0.5 and box.y1 <= height + 0.5, text
    for i, (text, box) in enumerate(boxes):
        for other, other_box in boxes[i + 1 :]:
            overlap_w = min(box.x1, other_box.x1) - max(box.x0, other_box.x0)
            overlap_h = min(box.y1, other_box.y1) - max(box.y0, other_box.y0)
            assert overlap_w <= 0.5 or overlap_h <= 0.5, f"{text!r} overlaps {other!r}"


def _draw(chart):
    with matplotlib.rc_context(chartkit.RC):
        return chart.draw()


def test_sweep_charts_start_at_zero_keep_labels_clear_and_mark_optimum_and_knee(s3_report):
    planned = [c for c in charts.plan_charts(s3_report) if c.kind == "sweep"]
    assert len(planned) == 3
    for chart in planned:
        figure = _draw(chart)
        ax = figure.axes[0]
        assert ax.get_ylim()[0] == 0
        assert ax.get_xlabel() == "block size (bs, log scale)" and ax.get_ylabel().endswith("(GB/s)")
        legend = ax.get_legend()
        texts = [t.get_text() for t in legend.get_texts()]
        # on a plateau the optimum is the smallest of equal medians (4M), the best only within noise (≈);
        # the knee comes well before it
        assert "ram (baseline)\n★ 4M (≈)  ◆ 256k" in texts and "disk\n★ 16M (≈)  ◆ 4M" in texts
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        renderer = canvas.get_renderer()
        assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))  # beside the plot
        assert_text_fits(figure)
    svg = chartkit.inline_svg(planned[0])
    assert "[1] buffered writes without fsync" in svg and "[2] emulated guest" in svg  # under the chart


def test_the_studys_sweep_chart_no_longer_goes_below_zero_or_covers_a_cap():
    (chart,) = [c for c in charts.plan_charts(build_report([study_run()])) if c.kind == "sweep"]
    figure = _draw(chart)
    assert figure.axes[0].get_ylim()[0] == 0
    assert_text_fits(figure)


@pytest.mark.parametrize("axes", [("bs=4k..1M", "iodepth=1..8"), ("bs=1k..16M", "iodepth=1..64")])
def test_heat_maps_fit_their_text(axes):
    (base,) = [w for w in load_preset("quick").workloads if w.name == "seq1m-q8-write"]
    points = FIO.sweep(base, [parse_sweep(a) for a in axes])
    report = build_report([make_run("g", points, saturating, targets=("ram", "disk", "nfs"))])
    (chart,) = [c for c in charts.plan_charts(report) if c.kind == "grid"]
    figure = _draw(chart)
    assert_text_fits(figure)
    heat_maps = [ax for ax in figure.axes if ax.images]
    assert len(heat_maps) == 3 and {ax.images[0].norm.vmin for ax in heat_maps} == {0}
    assert len({id(ax.images[0].norm) for ax in heat_maps}) == 1  # one colour scale for every target
