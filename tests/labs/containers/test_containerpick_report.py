"""The container pick-two section on a synthetic run (no Podman): performance against the host,
sharing with the host, local-like semantics from the probe, and every format."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console
from support.factories import make_run

from mountbench.blocks.to_html import chapter_html
from mountbench.blocks.to_markdown import chapter_markdown
from mountbench.blocks.to_terminal import renderables
from mountbench.labfacts import ContainerLabFacts
from mountbench.report.content import build_report
from mountbench.report.sections import containerpick
from mountbench.report.sections.section import Options

OK = {"ok": True, "detail": ""}
EXDEV = {"ok": False, "errno": "EXDEV", "detail": "Invalid cross-device link"}


def _report(coherence: dict | None = None):
    values = {("host", "w"): [100.0, 102.0, 98.0], ("bind", "w"): [95.0, 97.0, 96.0],
              ("layer", "w"): [30.0, 31.0, 29.0], ("tmpfs", "w"): [900.0, 950.0, 920.0],
              ("overlay", "w"): [9.0, 9.5, 9.2]}  # fmt: skip
    run = make_run(values, baseline="host")
    caps = {"bind": {"rename_new_dir": OK, "chown": OK, "xattr": OK, "o_direct": OK},
            "layer": {"rename_lower_dir": EXDEV, "rename_new_dir": OK, "chown": OK, "xattr": OK, "o_direct": OK},
            "tmpfs": {"rename_new_dir": OK, "chown": OK, "xattr": OK, "o_direct": EXDEV | {"errno": "EINVAL"}},
            "overlay": {"rename_lower_dir": EXDEV, "rename_new_dir": OK, "chown": OK, "xattr": EXDEV,
                        "o_direct": OK}}  # fmt: skip
    mounts = {name: {"path": f"/mnt/{name}", "fstype": "overlay" if name in ("layer", "overlay") else "ext4",
                     "source": "/dev/vda", "options": "rw", "outlives": "no" if name != "bind" else "yes",
                     "shares": {"bind": "both ways", "overlay": "host to container"}.get(name, "no")}
              for name in ("bind", "layer", "tmpfs", "overlay")}  # fmt: skip
    mounts["host"] = {"path": "/lab/host"}
    coherence = (
        coherence
        if coherence is not None
        else {"host_to_container_s": 0.0006, "host_to_container_inotify": True, "container_to_host": True}
    )
    facts = {"engine": "podman 4.3.1", "runtime": "runc version 1.1.5", "storage_driver": "overlay",
             "rootless": False, "cgroup_manager": "cgroupfs", "network": "none",
             "image": {"name": "localhost/mountbench-lab:x", "id": "abc123"}, "mounts": mounts,
             "engines": {"rootful Podman": "measured", "Docker": "docker is not installed"},
             "probe": {"capabilities": caps, "coherence": coherence}}  # fmt: skip
    config = dataclasses.replace(run.config, lab=ContainerLabFacts(facts))
    return build_report([dataclasses.replace(run, config=config)])


def test_each_mount_is_judged_against_the_host_and_by_what_the_probe_found_inside() -> None:
    rows = {r.mount: r for r in containerpick.container_rows(_report())}
    assert list(rows) == ["bind", "layer", "tmpfs", "overlay"]
    assert (rows["bind"].performance, rows["bind"].shared, rows["bind"].local) == ("good", "good", "good")
    assert rows["bind"].gets == "performance + shared + local-like"
    assert (rows["layer"].performance, rows["layer"].shared, rows["layer"].local) == ("fair", "not shared", "fair")
    assert rows["layer"].local_text == ("rename dir from below: EXDEV",)
    assert rows["tmpfs"].performance == "good" and rows["tmpfs"].local == "fair"  # faster than the host; no O_DIRECT
    assert (rows["overlay"].performance, rows["overlay"].shared, rows["overlay"].local) == ("poor", "poor", "poor")


def test_a_host_write_never_seen_inside_makes_the_bind_mount_poorly_shared() -> None:
    rows = {r.mount: r for r in containerpick.container_rows(_report({"host_to_container_s": None,
                                                                      "container_to_host": True}))}  # fmt: skip
    assert rows["bind"].shared == "poor"


def test_every_format_shows_pick_two_and_the_mounts() -> None:
    report = _report()
    console = Console(file=io.StringIO(), width=160)
    for part in renderables(containerpick.screen(report, Options())):
        console.print(part)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "Containers: pick two" in text and "EXDEV" in text and "not measured: Docker" in text
    markdown = chapter_markdown(containerpick.document(report, Options()))
    assert "| **bind** |" in markdown and "abc123" in markdown
    assert "container-pick-two" in chapter_html(containerpick.document(report, Options()))
    (export,) = containerpick.exports(report)
    assert export.name == "container_pick_two" and export.csv.startswith("mount,performance,")
    assert containerpick.container_rows(build_report([make_run({("a", "w"): [1.0]})])) == []


def test_the_docs_judge_performance_as_the_code_and_the_legend_do() -> None:
    """Issue 49: docs/containers.md said pick two's performance was judged "against the fastest container
    mount"; the code and the legend use the host's figure (the fastest mount only where the host has
    none), judged from the run's intervals since issue 46. The page says what they do."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[3] / "docs" / "containers.md").read_text()
    said = page[page.index("**performance**") :].split("), **shared")[0]
    assert "the fastest container mount" not in said
    assert "against the host's" in said and "against the host's own" in containerpick.LEGEND
    assert "from the run's intervals" in said and "from the intervals" in containerpick.LEGEND  # issue 46
