"""The terminal report and the progress lines: what a run prints as it goes and at the end.

Rendered with rich exactly as `show` prints it, at 80 and 200 columns (issue 13)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from support.synthetic import study_run

from mountbench.cli.progress import ProgressEvents
from mountbench.engine.plan import build_plan, pending_items
from mountbench.model import Sample
from mountbench.report.content import build_report
from mountbench.report.terminal import render_report, render_run
from mountbench.report.terminal_layout import Fields, wrap_label


def _text(renderable, width: int = 400) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


@pytest.fixture(scope="module")
def report():
    return build_report([study_run()])


@pytest.mark.parametrize("width", [80, 200])
def test_fits_the_width_and_never_wraps_a_workload_name(report, width):
    text = _text(render_report(report), width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    for title in ("RND 4K Q1 read", "random read 4k QD1 (S4)", "SEQ 1M Q8 write", "extracting the tree"):
        assert any(title in line for line in lines), title
    assert "×0." not in text and not re.search(r"\de[+-]\d", text), "ratios are said as N× faster/slower"


def test_leads_with_the_answer(report):
    lines = _text(render_report(report), 120).splitlines()
    assert lines[0].startswith("mountbench run 20260101-120000-abcd")
    first = "▶ virtiofs is slower than native in 7 of 8 workloads (from 1.22× to 3.00×, median 2.22×"
    assert lines[1].startswith(first)
    summary = lines.index(next(line for line in lines if line.startswith("Summary")))
    detail = lines.index("Detail:")
    assert summary < detail
    grid = "\n".join(lines[summary:detail])
    assert "extracting the tree" in grid and "16.0× slower" in grid and "undecided" in grid


def test_uses_the_width_it_has(report):
    # wide: the comparison has a column of its own; narrow: it goes under the value
    wide = _text(render_report(report), 200)
    assert re.search(r"32\.0 s ±4% │ +16\.0× slower \(14\.0–18\.2×\)", wide)
    narrow = _text(render_report(report), 80)
    assert not re.search(r"32\.0 s ±4% │ +16\.0× slower", narrow)
    assert "16.0× slower" in narrow


def test_a_comparison_carries_the_baselines_measurement_caveats(report):
    text = _text(render_report(report), 200)
    notes = {line.split("] ", 1)[1]: line[1:].split("]")[0] for line in text.splitlines() if line.startswith("[")}
    cache = notes[next(t for t in notes if t.startswith("page cache"))]
    row = next(line for line in text.splitlines() if line.startswith("│ random read 4k QD1 (S4)") and "±" in line)
    # native (the baseline) ran lat-4k on a cached working set: both comparisons of that row say so
    assert row.count(f"2.22× slower (2.06–2.40×) [{cache}]") == 1
    assert row.count(f"2.33× slower (2.15–2.51×) [{cache}]") == 1


def test_run_facts_wrap_between_fields():
    fields = Fields(["run x on vm", "Linux 6.1", "AMD EPYC", "2 CPUs", "23.5 GiB RAM", "fio-3.33", "3 repetitions"])
    lines = fields.lines(30)
    assert lines == [
        "run x on vm; Linux 6.1;",
        "    AMD EPYC; 2 CPUs;",
        "    23.5 GiB RAM; fio-3.33;",
        "    3 repetitions",
    ]
    text = _text(render_report(build_report([study_run()])), 80)
    assert "16.0 GiB RAM" in text and "3 repetitions (seed 7)" in text


def test_labels_wrap_between_their_parts():
    assert wrap_label("tmpfs:/var/tmp/glance-shm", 12) == "tmpfs:/var/\ntmp/glance-\nshm"
    assert wrap_label("ram", 12) == "ram"


def test_other_units_for_the_summary():
    report = build_report([study_run()], unit="MB/s")
    by_heading = {s.heading: [line.title for line in s.lines] for s in report.grid.sections}
    # every workload that measured bandwidth shows it, 4k ones too; the others keep their own unit
    assert "write bs=4k" in by_heading["bandwidth, MB/s (higher is better)"]
    assert by_heading["IOPS (higher is better)"] == ["RND 4K Q1 read", "random read 4k QD1 (S4)"]
    assert by_heading["wall time, s (lower is better)"] == ["extracting the tree"]
    text = _text(render_report(report), 100)
    assert "--unit MB/s" in text


# --- progress --------------------------------------------------------------------------------------


def test_resumed_progress_counts_stored_samples_not_skipped_warmups():
    plan = build_plan(["a", "b"], ["x"], 2, seed=1, estimates={}, warmup=1)
    done = {("a", "x", 0), ("a", "x", 1), ("b", "x", 0)}  # a finished, b has one round left
    console = Console(file=io.StringIO(), width=200, color_system=None)
    events = ProgressEvents(console)
    events.on_start("r1", plan, pending_items(plan, done))
    assert "1 samples to take after 1 warm-up (3 already stored)" in console.file.getvalue()
    item = pending_items(plan, done)[0]
    events.on_sample_done(item, Sample("b", "x", item.round, True, {}, (), wall_s=0.1))
    assert re.search(r"5/6 warm-up 1 · b · x: ok · \d+ s elapsed, ETA ", console.file.getvalue())


def test_piped_progress_prints_n_of_total_the_measured_value_and_the_eta():
    run = study_run()
    pairs = [(t, w) for t in ("native", "9p") for w in ("extract", "seq-write")]
    plan = build_plan(["native", "9p"], ["extract", "seq-write"], 2, seed=3, estimates=dict.fromkeys(pairs, 30.0))
    console = Console(file=io.StringIO(), width=200, color_system=None)
    events = ProgressEvents(console, run.workloads)
    pending = pending_items(plan, set())
    events.on_start("r1", plan, pending)
    for item in pending[:2]:
        metrics = {"wall": 17.8} if item.workload == "extract" else {"write.bw": 2.0e9}
        # the sample took 25.7 s around its timed part: the line says what was measured
        events.on_sample_done(item, Sample(item.target, item.workload, item.round, True, metrics, (), wall_s=25.7))
    lines = [line.strip() for line in console.file.getvalue().splitlines()[1:]]
    assert len(lines) == 2
    for n, line in enumerate(lines, 1):
        assert line.startswith(f"{n}/8 round 1 · "), line
        # the ETA learns from how long the items took (here: no time at all), not the plan's 30 s each
        assert re.search(r": (17\.8 s|2\.00 GB/s) · \d+ s elapsed, ETA (\d+m\d\ds|\d+ s)", line), line
        assert "25.7 s" not in line


def test_piped_progress_fits_80_columns_however_long_the_label():
    """Issue 37: a piped line fits 80 columns, wrapped between its fields (a label longer than a
    whole line breaks after / or -); its first line still starts with n/N for grep."""
    long = "ext4:/tmp/pytest-of-root/pytest-273/popen-gw0/a-rather-long-directory-name/target"
    plan = build_plan([long], ["x"], 1, seed=1, estimates={})
    console = Console(file=io.StringIO(), width=80, color_system=None)  # what a pipe gets
    events = ProgressEvents(console)
    pending = pending_items(plan, set())
    events.on_start("r1", plan, pending)
    events.on_sample_done(pending[0], Sample(long, "x", 0, True, {}, (), wall_s=0.1))
    lines = console.file.getvalue().splitlines()
    assert lines[1].strip() == "1/1 round 1 ·" and all(len(line) <= 80 for line in lines), lines
    joined = "".join(line.strip() for line in lines[2:])
    assert joined.startswith(f"{long}· x: ok · 0 s elapsed, last sample taken"), lines


def test_every_note_is_referenced_at_80_and_120_columns():
    """Issue 25: no orphan note ([4] that nothing refers to), in the terminal, Markdown and HTML."""
    from mountbench.report.html import render_html
    from mountbench.report.markdown import render_markdown

    report = build_report([study_run()])
    numbers = set(range(1, len(report.notes) + 1))
    for width in (80, 120):
        text = "".join(_text(part, width) for part in render_run(report))
        body = text.split("\n[1] ")[0]
        used = {int(n) for group in re.findall(r"\[([\d,]+)\]", body) for n in group.split(",")}
        assert numbers <= used, (width, sorted(numbers - used))
    markdown = render_markdown(report, {})
    assert numbers <= {int(n) for n in re.findall(r"\]\(#note-(\d+)\)", markdown)}
    page = render_html(report, with_charts=False)
    assert numbers <= {int(n) for n in re.findall(r'class="mark" href="#note-(\d+)"', page)}
