"""The terminal table and the progress lines: what a run prints as it goes and at the end."""

from __future__ import annotations

import io

from rich.console import Console
from support.synthetic import study_run

from mountbench.model import Sample
from mountbench.plan import build_plan, pending_items
from mountbench.progress import ProgressEvents
from mountbench.report.terminal import render_summary
from mountbench.summary import summarize_runs


def _text(renderable) -> str:
    console = Console(file=io.StringIO(), width=400, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


def test_a_ratio_line_carries_the_baselines_measurement_caveats():
    run = study_run()
    text = _text(render_summary(summarize_runs([run]), [run]))
    notes = {line.split("] ", 1)[1]: line[1:].split("]")[0] for line in text.splitlines() if line.startswith("[")}
    cache = next(n for t, n in notes.items() if t.startswith("page cache"))
    # native (the baseline) ran lat-4k on a cached working set: each ratio of that row says so
    ratios = [line for line in text.splitlines() if "×0.45 (0.415–0.488)" in line]
    # RND 4K Q1 read and SEQ 1M write: no caveat on native; lat-4k: native's page-cache caveat
    assert [line.count(f"[{cache}]") for line in ratios] == [0, 0, 2]


def test_resumed_progress_counts_stored_samples_not_skipped_warmups():
    plan = build_plan(["a", "b"], ["x"], 2, seed=1, estimates={}, warmup=1)
    done = {("a", "x", 0), ("a", "x", 1), ("b", "x", 0)}  # a finished, b has one round left
    console = Console(file=io.StringIO(), width=200, color_system=None)
    events = ProgressEvents(console)
    events.on_start("r1", plan, pending_items(plan, done))
    assert "1 samples to take after 1 warm-up (3 already stored)" in console.file.getvalue()
    item = pending_items(plan, done)[0]
    events.on_sample_done(item, Sample("b", "x", item.round, True, {}, (), wall_s=0.1))
    assert "warm-up 1 · b · x: ok" in console.file.getvalue()
