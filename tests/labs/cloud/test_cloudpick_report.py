"""The cloud pick-two section on a synthetic run (no rclone): rows, verdicts and every format."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console
from support.synthetic import study_run

from mountbench.blocks.to_html import chapter_html
from mountbench.blocks.to_markdown import chapter_markdown
from mountbench.blocks.to_terminal import renderables
from mountbench.labfacts import CloudLabFacts
from mountbench.probe.remotesync import CloudMountProbe, CloudProbe, CloudTarget, SyncResult
from mountbench.report.content import build_report
from mountbench.report.sections import cloudpick
from mountbench.report.sections.section import Options


def _sync(**values: object) -> SyncResult:
    base = dict(repeat=1, timeout_s=6.0, round_trip_ms=(110.0,), first_read_ms=(30.0, 25.0), reread_ms=(0.002,),
                at_close=(True,), close_delay_ms=(0.0,), at_fsync=(False,), fsync_ms=(0.1,), fsync_delay_ms=(None,),
                remote_create_ms=(None,), remote_change=("torn",), remote_change_fresh_ms=(None,))  # fmt: skip
    return SyncResult(**{**base, **values})  # type: ignore[arg-type]


def _report():
    run = study_run()
    probe = CloudProbe(
        (CloudTarget("native", None, None), CloudTarget("virtiofs", "full", 0), CloudTarget("9p", "off", 20, 10000)),
        (
            CloudMountProbe("virtiofs", "/m/full", "/r/full", None,
                            _sync(at_close=(False,), close_delay_ms=(5010.0,), remote_change=("stale",),
                                  round_trip_ms=(45.0,))),
            CloudMountProbe("9p", "/m/off", "/r/off", None, _sync()),
        ),
        1, 6.0, {"rclone": "rclone v1.60.1"},
    )  # fmt: skip
    config = dataclasses.replace(run.config, lab=CloudLabFacts(probe.to_dict()))
    return build_report([dataclasses.replace(run, config=config)])


def test_rows_say_what_each_mode_gets() -> None:
    rows = {r.label: r for r in cloudpick.cloud_rows(_report())}
    assert rows["native"].mode is None and rows["native"].gets == "the baseline"
    full, off = rows["virtiofs"], rows["9p"]
    assert (full.consistency, full.durability, full.to_remote) == ("poor", "poor", "after 5.01 s")
    assert (off.consistency, off.at_close, off.remote_change) == ("data loss", "yes", "torn (size and data disagree)")
    assert off.reads == "30.0 ms / 2.00 µs" and off.round_trip_ms == 110.0
    assert full.performance in ("good", "fair", "poor")


def test_every_format_has_the_section() -> None:
    report = _report()
    md = chapter_markdown(cloudpick.document(report, Options()))
    assert md.startswith("## Cloud drive: pick two") and "| **9p** | off | 20 ms, 10000 KB/s each way | 110 ms" in md
    assert "cloud-pick-two" in str(chapter_html(cloudpick.document(report, Options())))
    (export,) = cloudpick.exports(report)
    assert export.suffix == "-cloudpick" and [r["target"] for r in export.records] == ["native", "virtiofs", "9p"]
    console = Console(width=200, record=True, file=io.StringIO())
    for part in renderables(cloudpick.screen(report, Options())):
        console.print(part)
    text = console.export_text()
    assert "durability at fsync()" in text and "‼ data loss" in text


def test_a_run_without_the_cloud_lab_has_no_section() -> None:
    report = build_report([study_run()])
    assert cloudpick.cloud_rows(report) == [] and cloudpick.screen(report, Options()) == []
    assert cloudpick.document(report, Options()) is None and cloudpick.exports(report) == []
