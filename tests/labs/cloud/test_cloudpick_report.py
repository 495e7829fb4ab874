"""The cloud lab's pick two on a synthetic run (no rclone): rows, verdicts and every format, through
the one pick-two section (report/sections/picktwo.py)."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console
from support.synthetic import study_run

from mountbench.blocks.to_html import chapter_html
from mountbench.blocks.to_markdown import chapter_markdown
from mountbench.blocks.to_terminal import renderables
from mountbench.labfacts import CloudLabFacts
from mountbench.probefacts import CloudMountProbe, CloudProbe, CloudTarget, SyncResult
from mountbench.report.content import build_report
from mountbench.report.sections import Options, picktwo


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
    config = dataclasses.replace(run.config, lab=CloudLabFacts(probe))
    return build_report([dataclasses.replace(run, config=config)])


def _said(row, prop: str) -> dict[str, str]:
    return {m.measure: m.text for m in row.prop(prop).measures}


def test_rows_say_what_each_mode_gets() -> None:
    (found,) = _report().pick_two
    assert found.lab == "cloud"
    rows = {r.label: r for r in found.rows}
    assert rows["native"].baseline and rows["native"].gets == "the baseline"
    full, off = rows["virtiofs"], rows["9p"]
    assert (full.verdict("consistency"), full.verdict("durability")) == ("poor", "poor")
    assert _said(full, "consistency")["to_remote"] == "to remote: after 5.01 s"
    assert (off.verdict("consistency"), _said(off, "consistency")["at_close"]) == ("data loss", "at close(): yes")
    assert _said(off, "consistency")["remote_change"] == "remote change: torn (size and data disagree)"
    about = {m.measure: m for m in off.about}
    assert about["reads"].text == "first read / cached re-read 30.0 ms / 2.00 µs" and about["round_trip"].value == 110.0
    assert about["wire"].text == "RTT 20 ms, 10000 KB/s each way"
    assert full.verdict("performance") in ("good", "fair", "poor")


def test_every_format_has_the_section() -> None:
    report = _report()
    md = "\n\n".join(chapter_markdown(c) for c in picktwo.chapters(report, Options()))
    assert md.startswith("## Cloud drive: pick two")
    assert "| **9p** | off<br>RTT 20 ms, 10000 KB/s each way<br>mkdir+rmdir 110 ms" in md, md
    assert "cloud-pick-two" in str("".join(chapter_html(c) for c in picktwo.chapters(report, Options())))
    (export,) = picktwo.exports(report)
    assert export.suffix == "-picktwo" and {r["target"] for r in export.records} == {"native", "virtiofs", "9p"}
    assert {r["lab"] for r in export.records} == {"cloud"}
    console = Console(width=200, record=True, file=io.StringIO())
    for part in renderables(picktwo.screen(report, Options())):
        console.print(part)
    text = console.export_text()
    assert "durability" in text and "‼ data loss" in text and "at close(): yes" in text


def test_a_run_without_the_cloud_lab_has_no_section() -> None:
    report = build_report([study_run()])
    assert report.pick_two == () and renderables(picktwo.screen(report, Options())) == []
    assert (
        "\n\n".join(chapter_markdown(c) for c in picktwo.chapters(report, Options())) == ""
        and picktwo.exports(report) == []
    )


def test_a_cold_figure_without_an_interval_still_shows_its_warm_figure_beside_it() -> None:
    """One sample a side has no interval: the cold figure is 'not measured' against the baseline, and the
    warm figure is shown beside it all the same (it was shown only when there was an interval)."""
    from support.factories import make_run

    from mountbench.report.picktwo.performance import headline_rows, judge_row

    report = build_report([make_run({("native", "random-read"): [100.0], ("9p", "random-read"): [50.0]},
                                    baseline="native")])  # fmt: skip
    (row,) = headline_rows(report)
    (judged,) = judge_row(report, row, ["9p"], None, "cold ", lambda label: f", warm {label}-figure").values()
    assert judged.verdict == "not measured"
    assert judged.text == "random-read: cold 50.0 IOPS (no interval), warm 9p-figure", judged.text
