"""The container lab's pick two on a synthetic run (no Podman): performance against the host, sharing
with the host (the bind mount's coherence, measured both ways), local-like semantics from the capability
probe inside, and every format, through the one pick-two section (report/sections/picktwo.py)."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console
from support.factories import make_run

from mountbench.blocks.to_html import chapter_html
from mountbench.blocks.to_markdown import chapter_markdown
from mountbench.blocks.to_terminal import renderables
from mountbench.labfacts import (
    SHARED_BOTH_WAYS,
    SHARED_HOST_TO_CONTAINER,
    ContainerImage,
    ContainerLabFacts,
    ContainerMount,
)
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
from mountbench.report.content import build_report
from mountbench.report.picktwo import containermounts
from mountbench.report.sections import Options, picktwo

CAPS = {"lower_dir_rename": "rename a directory from an overlay's lower layer", "chown_uid": "chown to another uid",
        "user_xattr": "user xattrs", "o_direct": "O_DIRECT"}  # fmt: skip


def _caps(path: str, **refused: str) -> TargetProbe:
    results = tuple(ProbeResult(c, title, "no" if c in refused else "yes", refused.get(c)) for c, title in CAPS.items())
    return TargetProbe(path, FsInfo(), results)


def _coherence(a: str, b: str, delay: float | None) -> CoherenceResult:
    ops = ("create", "append", "truncate", "rename", "delete")
    stale = (StaleReadResult("replace by rename", ("fresh",), (0.0,), ("",)),)
    inotify = InotifyResult(("create",), (("create",),), (1.0,))
    visibility = tuple(VisibilityResult(op, (delay,)) for op in ops)
    return CoherenceResult(a, b, 1, 2.0, visibility, stale, inotify, (LockResult("flock", (True,)),),
                           clock_resolution_ms=0.1)  # fmt: skip


def _report(delay: float | None = 0.6):
    values = {("host", "w"): [100.0, 102.0, 98.0], ("bind", "w"): [95.0, 97.0, 96.0],
              ("layer", "w"): [30.0, 31.0, 29.0], ("tmpfs", "w"): [900.0, 950.0, 920.0],
              ("overlay", "w"): [9.0, 9.5, 9.2]}  # fmt: skip
    run = make_run(values, baseline="host")
    shares = {"bind": SHARED_BOTH_WAYS, "overlay": SHARED_HOST_TO_CONTAINER}
    mounts = [ContainerMount("host", "/lab/host", outlives="yes")] + [
        ContainerMount(name, f"/mnt/{name}", outlives="no" if name != "bind" else "yes", shares=shares.get(name, "no"),
                       fstype="overlay" if name in ("layer", "overlay") else "ext4", source="/dev/vda", options="rw")
        for name in ("bind", "layer", "tmpfs", "overlay")
    ]  # fmt: skip
    probe = LabProbe(
        (
            MountProbe("bind", "/mnt/bind", True, _caps("/mnt/bind"), _coherence("host", "bind", delay),
                       _coherence("bind", "host", 0.2)),
            MountProbe("layer", "/layer", False, _caps("/layer", lower_dir_rename="EXDEV")),
            MountProbe("tmpfs", "/mnt/tmpfs", False, _caps("/mnt/tmpfs", o_direct="EINVAL")),
            MountProbe("overlay", "/mnt/overlay", False, _caps("/mnt/overlay", lower_dir_rename="EXDEV",
                                                                user_xattr="EXDEV")),
        ),
        1, 2.0,
    )  # fmt: skip
    facts = ContainerLabFacts(engine="podman 4.3.1", runtime="runc version 1.1.5", storage_driver="overlay",
                              cgroup_manager="cgroupfs", network="none",
                              image=ContainerImage("localhost/mountbench-lab:x", "abc123"), mounts=tuple(mounts),
                              engines={"rootful Podman": "measured", "Docker": "docker is not installed"},
                              probe=probe)  # fmt: skip
    config = dataclasses.replace(run.config, lab=facts)
    return build_report([dataclasses.replace(run, config=config)])


def _rows(report):
    (found,) = report.pick_two
    return {r.label: r for r in found.rows}


def _verdicts(row) -> tuple[str, ...]:
    return tuple(row.verdict(p) for p in containermounts.PROPERTIES)


def test_each_mount_is_judged_against_the_host_and_by_what_the_probe_found_inside() -> None:
    rows = _rows(_report())
    assert list(rows) == ["bind", "layer", "tmpfs", "overlay"]
    assert _verdicts(rows["bind"]) == ("good", "good", "good")
    assert rows["bind"].gets == "performance + shared + local-like"
    assert _verdicts(rows["layer"]) == ("fair", "not shared", "fair")
    assert [m.text for m in rows["layer"].prop("local-like").measures] == ["rename dir from below: EXDEV"]
    assert _verdicts(rows["tmpfs"])[::2] == ("good", "fair")  # faster than the host; no O_DIRECT
    assert _verdicts(rows["overlay"]) == ("poor", "poor", "poor")
    shared = {m.measure: m.text for m in rows["bind"].prop("shared").measures}
    assert (
        shared["visibility"].startswith("every change shown; slowest:") and "host → container" in shared["visibility"]
    )


def test_a_host_write_never_seen_inside_makes_the_bind_mount_poorly_shared() -> None:
    rows = _rows(_report(delay=None))
    assert rows["bind"].verdict("shared") == "poor"
    assert rows["bind"].prop("shared").measures[0].text.startswith("not seen within 2 s")


def test_every_format_shows_pick_two_and_the_mounts() -> None:
    report = _report()
    console = Console(file=io.StringIO(), width=160)
    for part in renderables(picktwo.screen(report, Options())):
        console.print(part)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "Containers: pick two" in text and "EXDEV" in text and "not measured: Docker" in text
    markdown = "\n\n".join(chapter_markdown(c) for c in picktwo.chapters(report, Options()))
    assert "| **bind** |" in markdown and "abc123" in markdown and "| capability | /mnt/bind |" in markdown
    assert "container-pick-two" in "".join(chapter_html(c) for c in picktwo.chapters(report, Options()))
    (export,) = picktwo.exports(report)
    assert export.name == "pick_two" and {r["lab"] for r in export.records} == {"containers"}
    assert containermounts.pick_two(build_report([make_run({("a", "w"): [1.0]})])) is None


def test_the_docs_judge_performance_as_the_code_and_the_legend_do() -> None:
    """Issue 49: docs/containers.md said pick two's performance was judged "against the fastest container
    mount"; the code and the legend use the host's figure (the fastest mount only where the host has
    none), judged from the run's intervals since issue 46. The page says what they do."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[3] / "docs" / "containers.md").read_text()
    said = page[page.index("**performance**") :].split("), **shared")[0]
    assert "the fastest container mount" not in said
    assert "against the host's" in said and "against the host's own" in containermounts.LEGEND
    assert "from the run's intervals" in said and "from the intervals" in containermounts.LEGEND  # issue 46
