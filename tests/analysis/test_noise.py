"""A busy machine is named beside the answer (issue 31): which samples ran busy, and the sentence."""

from __future__ import annotations

from mountbench.analysis.noise import Noise, is_busy, noise_of
from mountbench.host.noise import CpuCounters, noise_metrics
from mountbench.model import Sample


def _sample(others: float | None, steal: float | None = 0.0, ok: bool = True) -> Sample:
    metrics = {"read.iops": 1.0}
    if others is not None:
        metrics["noise.others_cpu"] = others
    if steal is not None and others is not None:
        metrics["noise.steal"] = steal
    return Sample("a", "w", 0, ok, metrics)


def test_a_sample_is_busy_when_others_or_the_hypervisor_took_a_share():
    assert is_busy(_sample(30.0)) is True
    assert is_busy(_sample(5.0, steal=12.0)) is True
    assert is_busy(_sample(5.0, steal=1.0)) is False
    assert is_busy(_sample(None)) is None  # stored before noise was recorded


def test_the_sentence_names_the_share_and_what_was_busy():
    samples = [_sample(50.0)] * 4 + [_sample(2.0)] * 6 + [_sample(None)] * 3
    noise = noise_of(samples)
    assert (noise.measured, noise.busy) == (10, 4)
    assert noise.sentence().startswith("the machine was busy during 40 % of samples (4 of 10)")
    assert noise_of([_sample(2.0)] * 10).sentence() == ""
    assert Noise(0, 0, None, None).sentence() == ""


def test_others_cpu_is_what_the_machine_did_beyond_this_process_and_its_children():
    start, end = CpuCounters(busy=100.0, steal=1.0), CpuCounters(busy=104.0, steal=1.5)
    # 2 CPUs for 2 s = 4 CPU-seconds; the machine was busy 4 s, 1 s of it ours: others 3 s = 75 %
    noise = noise_metrics(start, end, own_s=1.0, wall_s=2.0, cpus=2)
    assert noise == {"noise.others_cpu": 75.0, "noise.steal": 12.5}
    assert noise_metrics(start, end, own_s=9.0, wall_s=2.0, cpus=2)["noise.others_cpu"] == 0.0


def test_counters_parse_proc_stat():
    text = "cpu  100 20 30 1000 50 5 5 40 0 0\ncpu0 1 2 3 4\n"
    counters = CpuCounters.parse(text, ticks_per_s=100)
    assert counters.busy == 1.6  # user+nice+system+irq+softirq: 160 ticks
    assert counters.steal == 0.4


def test_a_busy_machine_is_named_beside_the_answer_in_every_format():
    """Issue 31: 'the machine was busy during 40% of samples' beside the answer."""
    import dataclasses
    import html
    import re

    from support.factories import make_run

    from mountbench.report.content import build_report
    from mountbench.report.html import render_html
    from mountbench.report.markdown import render_markdown

    run = make_run({("a", "w"): [100.0, 104.0, 98.0], ("b", "w"): [60.0, 61.0, 59.0]})
    noisy = tuple(
        dataclasses.replace(s, metrics={**s.metrics, "noise.others_cpu": 60.0 if i % 2 else 3.0, "noise.steal": 0.0})
        for i, s in enumerate(run.samples)
    )
    report = build_report([dataclasses.replace(run, samples=noisy)])
    said = [h.text for h in report.headlines if h.kind == "noise"]
    assert said and said[0].startswith("The machine was busy during 50 % of samples (3 of 6)")
    page = html.unescape(
        re.sub(r"<[^>]+>", "", render_html(report, with_charts=False))
    )  # tokens are kept whole in spans
    assert said[0] in render_markdown(report) and said[0] in " ".join(page.split())
    quiet = build_report([run])
    assert not [h for h in quiet.headlines if h.kind == "noise"]
