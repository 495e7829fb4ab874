""" "Pick two", measured: the verdicts from a synthetic `lab --probe` run, and the same
section in every format (terminal, Markdown, HTML, CSV, JSON, the chart), wired into the
report where each format puts its sections; absent from runs made without --probe."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from support.synthetic import EMULATED, study_run

from mountbench import model
from mountbench.blocks.to_terminal import renderables
from mountbench.fio.sweeps import parse_sweep
from mountbench.kinds import make_workload
from mountbench.kinds.fio import KIND as FIO
from mountbench.labfacts import QemuLabFacts
from mountbench.model import RunData, Sample
from mountbench.presets import load_preset
from mountbench.probefacts import (
    CoherenceResult,
    FsInfo,
    InotifyResult,
    LabProbe,
    LockResult,
    MountProbe,
    ProbeResult,
    StaleReadResult,
    TargetProbe,
    VisibilityResult,
)
from mountbench.records.export import write_document
from mountbench.report import chartkit, charts
from mountbench.report.content import build_report
from mountbench.report.document import make_document
from mountbench.report.html import render_html
from mountbench.report.markdown import render_markdown
from mountbench.report.picktwo.vmshares import KEY, TITLE, write_sweep
from mountbench.report.sections import Options, picktwo

NONE, LOOSE, VFS, DISK = "9p cache=none", "9p cache=loose", "virtiofs cache=auto", "disk"
OPS = ("create", "append", "truncate", "rename", "delete")
WRITE_PEAK = {DISK: 1.0e9, LOOSE: 8.0e8, VFS: 6.0e8, NONE: 5.0e7}  # none: 20x slower than the disk
EXTRACT = {DISK: 1.0, LOOSE: 1.5, VFS: 1.8, NONE: 6.0}  # none: 6x slower


def coherence(
    a: str,
    b: str,
    delays: dict[str, tuple[float | None, ...]],
    stale: tuple[str, ...] = ("fresh", "fresh"),
    locks: tuple[bool | None, bool | None] = (True, True),
    resolution: float | None = 2.0,
) -> CoherenceResult:
    n = len(stale)
    return CoherenceResult(
        view_a=a,
        view_b=b,
        repeat=n,
        timeout_s=2.0,
        visibility=tuple(VisibilityResult(op, delays.get(op, (1.0,) * n)) for op in OPS),
        stale_reads=tuple(
            StaleReadResult(mode, stale, tuple(0.0 if o == "fresh" else None for o in stale), ("",) * n)
            for mode in ("replace by rename", "rewrite in place")
        ),
        inotify=InotifyResult(("create",), (("create",),) * n, (1.0,) * n),
        locks=(LockResult("flock", (locks[0],) * n), LockResult("fcntl", (locks[1],) * n)),
        clock_resolution_ms=resolution,
    )


def both_ways(label: str, **kwargs) -> tuple[CoherenceResult, CoherenceResult]:
    guest = f"{label} in the guest"
    return coherence("host", guest, **kwargs), coherence(guest, "host", **kwargs)


def lab_probe() -> LabProbe:
    matrix = TargetProbe(
        "/mnt/9p",
        FsInfo(fstype="9p", source="mb0"),
        (ProbeResult("flock", "flock blocks a second process", "yes"),),
    )
    none = both_ways(NONE, delays={"create": (1.0, 1.5)}, locks=(False, False))  # prompt; locks do not cross
    loose_to_guest = coherence(
        "host", f"{LOOSE} in the guest", {"append": (None, None), "rename": (None, 40.0)}, stale=("stale", "stale")
    )
    loose_to_host = coherence(f"{LOOSE} in the guest", "host", {"append": (None, None)}, locks=(True, False))
    vfs = both_ways(VFS, delays={"rename": (150.0, 900.0)}, stale=("torn", "fresh"))
    return LabProbe(
        mounts=(
            MountProbe(NONE, "/mnt/9p", True, matrix, *none),
            MountProbe(LOOSE, "/mnt/9p-cache-loose", True, None, loose_to_guest, loose_to_host),
            MountProbe(VFS, "/mnt/virtiofs", True, None, *vfs),
            MountProbe(DISK, "/mnt/disk", False),
        ),
        repeat=2,
        timeout_s=2.0,
        errors=("an example error of the probe as a whole",),
    )


def lab_run(probe: LabProbe | None = None, run_id: str = "20261122-101010-abcd") -> RunData:
    """A lab run: the s3 preset's end_fsync write sweep and a tree extract on four mounts."""
    (base,) = [w for w in load_preset("s3").workloads if w.name == "seqw-fsync"]
    points = FIO.sweep(base, [parse_sweep("bs=4k..1M")])
    extract = make_workload(
        "extract", "tree", "extract tree (tar -x)", "preset:tree", {"action": "extract", "headline": ["wall"]}
    )
    samples = []
    for target in (NONE, LOOSE, VFS, DISK):
        for point in points:
            bs = point.description.sweep.number  # type: ignore[union-attr]
            bw = WRITE_PEAK[target] * min(1.0, bs / 2**18)  # saturates at 256k
            for round_, factor in enumerate((1.0, 1.03, 0.97)):
                samples.append(Sample(target, point.name, round_, True, {"write.bw": bw * factor}, (EMULATED,)))
        for round_, factor in enumerate((1.0, 1.03, 0.97)):
            samples.append(Sample(target, "extract", round_, True, {"wall": EXTRACT[target] * factor}, (EMULATED,)))
    base_run = study_run(run_id, targets=("native",))
    record = base_run.targets[0]
    targets = tuple(
        dataclasses.replace(record, target=dataclasses.replace(record.target, label=t, path=f"/mnt/{i}"))
        for i, t in enumerate((NONE, LOOSE, VFS, DISK))
    )
    lab = QemuLabFacts(accel="tcg", emulated=True, probe=probe)
    config = dataclasses.replace(base_run.config, baseline=DISK, lab=lab)
    return dataclasses.replace(
        base_run, targets=targets, workloads=(*points, extract), samples=tuple(samples), config=config
    )


@pytest.fixture
def report():
    return build_report([lab_run(lab_probe())])


def _rows(report):
    (found,) = report.pick_two
    return {row.label: row for row in found.rows}


def _measure(row, name: str):
    return next(m for p in row.properties for m in p.measures if m.measure == name)


# --- the verdicts -------------------------------------------------------------------------------


def test_each_mount_gets_a_verdict_per_property(report) -> None:
    rows = _rows(report)
    assert list(rows) == [NONE, LOOSE, VFS, DISK]  # the report's column order
    verdicts = {m: tuple(r.verdict(p) for p in ("performance", "coherence", "concurrency")) for m, r in rows.items()}
    assert verdicts == {
        NONE: ("poor", "good", "poor"),  # 20x slower writes; prompt; locks do not cross
        LOOSE: ("good", "poor", "fair"),  # appends never shown; flock only
        VFS: ("good", "data loss", "good"),  # a torn read; locks both ways
        DISK: ("good", "not shared", "not shared"),
    }
    assert rows[NONE].gets == "coherence"
    assert rows[LOOSE].gets == "performance"
    assert rows[VFS].gets == "performance + concurrency"
    assert rows[DISK].gets == "performance (not shared with the host)"


def test_the_measures_say_what_they_stand_on(report) -> None:
    rows = _rows(report)
    write, tree, visibility, stale, locks = (
        {label: _measure(row, m) for label, row in rows.items()}
        for m in ("write", "tree", "visibility", "stale", "locks")
    )
    assert write[DISK].text == "1.00 GB/s at bs=256k (the fastest)"  # the knee's point is within noise of 1M's
    assert write[NONE].text.startswith("50.0 MB/s at bs=") and "20× slower than the fastest" in write[NONE].text
    assert tree[NONE].text == "6.00 s (6× slower than the fastest)" and tree[NONE].verdict == "fair"
    assert write[NONE].notes  # the emulation caveat's note number, as on every other number
    # across the VM boundary the clocks are matched to ±2 ms: a 1.5 ms worst is known as "≤ 3.5 ms"
    assert visibility[NONE].text == "every change shown; slowest: create host → guest, ≤ 3.50 ms"
    assert visibility[LOOSE].text == "not seen within 2 s: append both ways; rename host → guest"
    assert stale[LOOSE].text == "stale: stale 4/8 (host → guest)"
    assert locks[LOOSE].text == "only some block: flock: host → guest, guest → host; fcntl: host → guest"
    assert visibility[VFS].verdict == "fair" and "900 ms" in visibility[VFS].text
    assert stale[VFS].text == "torn or missing: torn 4/8 (both ways)"
    assert locks[NONE].text == "neither flock nor fcntl held on one side blocks the other"
    assert locks[VFS].text == "flock and fcntl held on one side block the other, both ways"


def test_the_notes_say_how_it_was_judged_and_what_limits_it(report) -> None:
    notes = " ".join(report.pick_two[0].notes)
    assert "SEQ write + end_fsync" in notes and "good when shown within 2×, poor when shown beyond 10×" in notes
    assert "emulated (TCG)" in notes and "an example error of the probe as a whole" in notes


def test_a_sweep_that_measured_the_page_cache_is_the_last_choice() -> None:
    fsync, buffered = (
        next(w for w in load_preset("s3").workloads if w.name == name) for name in ("seqw-fsync", "seqw-buffered")
    )
    points = [*FIO.sweep(buffered, [parse_sweep("bs=4k..64k")]), *FIO.sweep(fsync, [parse_sweep("bs=4k..64k")])]
    dd = model.Caveat.from_dict(buffered.spec["caveats"][0])
    run = lab_run(lab_probe())
    samples = [
        Sample(t, w.name, r, True, {"write.bw": 1e8}, (dd,) if "buffered" in w.name else ())
        for t in (NONE, DISK)
        for w in points
        for r in range(3)
    ]
    run = dataclasses.replace(run, workloads=tuple(points), samples=tuple(samples))
    chosen = write_sweep(build_report([run]).sweeps)
    assert chosen is not None and "end_fsync" in chosen.title


def test_runs_without_probe_have_no_such_section() -> None:
    plain = build_report([lab_run(None)])
    assert plain.pick_two == ()
    assert renderables(picktwo.screen(plain, Options())) == []
    assert "Pick two" not in render_markdown(plain)
    assert "pick-two" not in render_html(plain, with_charts=False)
    assert picktwo.records(plain) == [] and all(c.key != KEY for c in charts.plan_charts(plain))


# --- every format ----------------------------------------------------------------------------------


def test_terminal_shows_the_table_its_notes_and_the_probes_tables(report) -> None:
    console = Console(width=200, record=True, color_system=None)
    for part in renderables(picktwo.screen(report, Options())):
        console.print(part)
    text = console.export_text()
    assert TITLE in text and "‼ data loss" in text and "– not shared" in text
    assert "performance + concurrency" in text
    assert "! emulated guest (TCG)" in text  # the numbers' caveat, spelled out
    assert "mountbench probe" in text and "mountbench coherence (A → B)" in text  # the probe's own tables
    assert "Data loss or corruption found" in text  # the torn read, first among the probe's findings


def test_markdown_section_sits_after_the_sweeps_with_its_chart(report) -> None:
    text = render_markdown(report, {KEY: "r-pick-two.png"})
    section = text[text.index("## Pick two") : text.index("## Environment")]
    assert text.index("## Sweeps") < text.index("## Pick two")
    assert "| mount | performance | coherence | concurrency | gets |" in section
    assert "**‼ data loss**" in section and "![Pick two, measured" in section and "(r-pick-two.png)" in section
    assert "≤ 3.50 ms" in section and "### What each mount supports" in section
    note = _measure(report.pick_two[0].rows[0], "write").notes[0]
    assert f"the fastest) [\\[{note}\\]](#note-{note})" in section  # linked to its note


def test_html_section_with_its_inline_chart(report) -> None:
    page = render_html(report)
    section = page[page.index('<section id="pick-two"') :]
    section = section[: section.index("</section>")]
    assert "<svg" in section and "v-data-loss" in section and "v-not-shared" in section
    # the probe's own tables, each with its legend
    assert "works as on a local Linux filesystem" in section and "polled with stat() through B" in section
    assert page.index('id="sweeps"') < page.index('id="pick-two"') < page.index('id="environment"')


def test_csv_and_json_records(report) -> None:
    records = picktwo.records(report)
    assert len(records) == 4 * 5
    json.dumps(records)
    assert {r["lab"] for r in records} == {"qemu"}
    vfs_stale = next(r for r in records if r["target"] == VFS and r["measure"] == "stale")
    assert (vfs_stale["verdict"], vfs_stale["property_verdict"], vfs_stale["value"]) == ("data loss", "data loss", 4.0)
    write = next(r for r in records if r["target"] == DISK and r["measure"] == "write")
    assert (write["value"], write["unit"]) == (1.0e9, "B/s") and "emulated guest" in write["notes"]
    (export,) = picktwo.exports(report)
    rows = list(csv.DictReader(io.StringIO(export.csv)))
    assert tuple(rows[0]) == picktwo.CSV_COLUMNS and len(rows) == 20


def test_chart_draws_one_cell_per_mount_and_property(report) -> None:
    (chart,) = [c for c in charts.plan_charts(report) if c.key == KEY]
    svg = chartkit.render(chart, "svg").decode()
    for text in ("performance", "coherence", "concurrency", NONE, "data loss", "not shared"):
        assert text in svg, text
    assert chartkit.render(chart, "png")[:4] == b"\x89PNG"


def test_report_command_writes_the_section_in_csv_and_json(tmp_path: Path, mb_env: dict[str, str]) -> None:
    source = tmp_path / "lab.json"
    write_document(source, make_document([lab_run(lab_probe())]))

    def report_cli(*args: str) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "mountbench", "report", "--from", str(source), *args]
        return subprocess.run(argv, capture_output=True, text=True, env=mb_env, timeout=120)

    done = report_cli("--format", "json")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["pick_two"]) == 20
    out = tmp_path / "r.csv"
    done = report_cli("--format", "csv", "--out", str(out))
    assert done.returncode == 0, done.stderr
    picked = tmp_path / "r-picktwo.csv"
    assert picked.exists() and "r-picktwo.csv" in done.stderr
    assert len(picked.read_text().splitlines()) == 21
