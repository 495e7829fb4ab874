"""Pure parts: records (JSON round trips), aggregation, mountinfo parsing, rendering."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import pytest
from rich.console import Console
from rich.table import Table

from mountbench.host.targets import mount_of, parse_mountinfo
from mountbench.probe import (
    CoherenceResult,
    FsInfo,
    InotifyResult,
    LockResult,
    ProbeReport,
    ProbeResult,
    StaleReadResult,
    TargetProbe,
    VisibilityResult,
    data_loss,
    document_json,
    render_coherence_html_fragment,
    render_coherence_markdown,
    render_coherence_terminal,
    render_document_html,
    render_document_markdown,
    render_document_terminal,
    render_html_fragment,
    render_markdown,
    render_terminal,
)
from mountbench.probe.capabilities import MTIME_BASE_NS, MTIME_OFFSETS_NS, mtime_step_ns
from mountbench.probe.inotify import IN_CREATE, IN_MOVED_TO, parse_events
from mountbench.probe.render import _coherence_rows, differing_capabilities, short_names
from mountbench.probefacts import summarize_delays


def target(path: str, fstype: str, *results: ProbeResult, cleanup: str = "removed") -> TargetProbe:
    return TargetProbe(
        path=path,
        fs=FsInfo(fstype=fstype, source="src", mountpoint=path, options="rw", statvfs={"f_bsize": 4096}),
        results=results,
        scratch=f"{path}/.mountbench-probe-abc",
        cleanup=cleanup,
        started="2026-11-22T00:00:00+00:00",
        duration_s=1.5,
    )


LOCAL = target(
    "/mnt/local",
    "ext4",
    ProbeResult("o_direct", "O_DIRECT", "yes", detail="works"),
    ProbeResult("max_name_length", "maximum name length", "yes", value=255, unit="bytes"),
    ProbeResult("mtime_granularity", "mtime granularity", "yes", value=1, unit="ns"),
    ProbeResult("chown_uid", "chown to another uid", "needs root", detail="run as root"),
)
REMOTE = target(
    "/mnt/a|b <remote>",
    "fuse.sshfs",
    ProbeResult("o_direct", "O_DIRECT", "no", errno="EINVAL", detail="open: Invalid argument"),
    ProbeResult("max_name_length", "maximum name length", "yes", value=255, unit="bytes"),
    ProbeResult("mtime_granularity", "mtime granularity", "differs", value=10**9, unit="ns", detail="keeps 1 s <b>"),
    ProbeResult("chown_uid", "chown to another uid", "hung", detail="no answer within 5 s"),
    ProbeResult("statfs", "statfs figures", "skipped", detail="not attempted"),
    cleanup="left /x: removing it hung",
)


def coherence() -> CoherenceResult:
    return CoherenceResult(
        view_a="/host/dir",
        view_b="/mnt/sshfs",
        repeat=3,
        timeout_s=2.5,
        visibility=(
            VisibilityResult("create", (0.3, 0.5, 0.4)),
            VisibilityResult("append", (None, None, None)),
            VisibilityResult("delete", (1000.0, None, 1200.0), hung=1, notes=("hung: x",)),
        ),
        stale_reads=(
            StaleReadResult("rewrite in place", ("torn", "torn", "stale"), (1.0, 2.0, None), ("a", "b", "c")),
            StaleReadResult("replace by rename", ("fresh",) * 3, (0.0,) * 3),
        ),
        inotify=InotifyResult(("create", "delete"), ((), (), ()), (None, None, None)),
        locks=(LockResult("flock", (False, False, False)), LockResult("fcntl", (True, None, True), ("hung",))),
        started="2026-11-22T00:00:00+00:00",
        duration_s=12.0,
    )


# -- records -------------------------------------------------------------------------------------


@pytest.mark.parametrize("probe", [LOCAL, REMOTE])
def test_target_probe_round_trips_through_json(probe: TargetProbe) -> None:
    data = json.loads(json.dumps(probe.to_dict()))
    assert TargetProbe.from_dict(data) == probe


def test_probe_result_round_trip_and_validation() -> None:
    r = ProbeResult("x", "X", "no", errno="EPERM", detail="d", value=1.5, unit="ms", duration_ms=3.0)
    assert ProbeResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    with pytest.raises(ValueError, match="unknown verdict"):
        ProbeResult("x", "X", "maybe")  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        r.verdict = "yes"  # type: ignore[misc]


def test_coherence_round_trips_through_json() -> None:
    c = coherence()
    assert CoherenceResult.from_dict(json.loads(json.dumps(c.to_dict()))) == c


def test_a_record_stored_before_a_field_existed_reads_with_its_default() -> None:
    """Written and read off the fields (probe/plain.py): a key a stored probe lacks takes the
    field's default or its type's empty value; values come back in their fields' types."""
    old = {"path": "/m", "results": [{"capability": "x", "title": "X", "verdict": "yes", "duration_ms": 2}]}
    probe = TargetProbe.from_dict(old)
    assert probe == TargetProbe("/m", FsInfo(), (ProbeResult("x", "X", "yes", duration_ms=2.0),))
    assert probe.swept == () and probe.gone is None and probe.cleanup == "removed"
    c = CoherenceResult.from_dict({"view_a": "a", "view_b": "b", "repeat": "2", "timeout_s": 1, "locks": [
        {"kind": "flock", "blocked": [1, None]}]})  # fmt: skip
    assert (c.repeat, c.timeout_s, c.clock_resolution_ms, c.inotify) == (2, 1.0, None, InotifyResult((), (), ()))
    assert c.locks == (LockResult("flock", (True, None)),)
    assert list(probe.to_dict()) == [f.name for f in dataclasses.fields(TargetProbe)]


def test_summaries_ignore_unseen_delays() -> None:
    s = summarize_delays([3.0, None, 1.0, 2.0])
    assert (s.total, s.seen, s.median_ms, s.min_ms, s.max_ms) == (4, 3, 2.0, 1.0, 3.0)
    none = summarize_delays([None, None])
    assert (none.seen, none.median_ms) == (0, None)
    assert summarize_delays([]).total == 0


def test_stale_counts() -> None:
    assert coherence().stale_reads[0].counts() == {"stale": 1, "torn": 2}


@pytest.mark.parametrize("step", [1, 10, 100, 1000, 10**6, 10**7, 10**9, 2 * 10**9, 4 * 10**9])
@pytest.mark.parametrize("keep", ["truncate", "round", "round up"])
def test_mtime_step_is_the_real_step_not_a_power_of_ten(step: int, keep: str) -> None:
    """A filesystem that keeps times in steps of ``step`` (FAT: 2 s) reads back as that step."""
    set_ns = [MTIME_BASE_NS + off for off in MTIME_OFFSETS_NS]
    if keep == "truncate":
        got = [v // step * step for v in set_ns]
    elif keep == "round":
        got = [(v + step // 2) // step * step for v in set_ns]
    else:
        got = [-(-v // step) * step for v in set_ns]
    assert mtime_step_ns(set_ns, got) == step


def test_mtime_step_refuses_what_no_step_explains() -> None:
    set_ns = [MTIME_BASE_NS + off for off in MTIME_OFFSETS_NS]
    assert mtime_step_ns(set_ns, [v + 3600 * 10**9 for v in set_ns]) is None  # shifted by an hour
    assert mtime_step_ns(set_ns, [42] * len(set_ns)) is None


# -- mountinfo and inotify parsing ---------------------------------------------------------------

MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:40 / /mnt/with\\040space rw,nosuid - tmpfs none rw,size=1024k
41 22 0:41 / /mnt/with\\040space/inner rw - fuse.sshfs root@h:/x rw,user_id=0
"""


def test_parse_mountinfo_and_longest_prefix() -> None:
    entries = parse_mountinfo(MOUNTINFO)
    assert [e.mount_point for e in entries] == ["/", "/mnt/with space", "/mnt/with space/inner"]
    assert mount_of("/mnt/with space/inner/a/b", entries).fstype == "fuse.sshfs"
    assert mount_of("/mnt/with space/innerx", entries).fstype == "tmpfs"
    assert mount_of("/home", entries).source == "/dev/sda1"
    assert "size=1024k" in entries[1].options


def test_parse_inotify_events() -> None:
    import struct

    def ev(mask: int, name: bytes) -> bytes:
        padded = name + b"\0" * (16 - len(name))
        return struct.pack("iIII", 1, mask, 0, len(padded)) + padded

    events = parse_events(ev(IN_CREATE, b"a") + ev(IN_MOVED_TO, b"b"), at=1.0)
    assert [(e.kind, e.name) for e in events] == [("create", "a"), ("moved_to", "b")]


# -- rendering ------------------------------------------------------------------------------------


def plain(table: Table) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(table)
    return console.export_text()


def flat(text: str) -> str:
    """Text with its line breaks and padding collapsed (captions wrap at the table's width)."""
    return " ".join(text.split())


def test_terminal_matrix() -> None:
    table = render_terminal([LOCAL, REMOTE])
    assert isinstance(table, Table)
    assert len(table.columns) == 3 and table.row_count == 5
    text = plain(table)
    assert "✗ EINVAL" in text
    assert "✓ 255 bytes" in text
    assert "≠ 1 s" in text
    assert "hung" in text and "needs root" in text
    assert "keeps 1 s <b>" in text  # in the notes under the table
    assert "/mnt/a|b <remote> (fuse.sshfs) · mtime granularity: keeps 1 s <b>" in " ".join(text.split())
    detailed = plain(render_terminal([REMOTE], details=True))
    assert "keeps 1 s" in detailed and "· mtime granularity" not in detailed


def test_markdown_matrix_escapes_and_lists_notes() -> None:
    md = render_markdown([LOCAL, REMOTE])
    lines = md.splitlines()
    # escaped as every Markdown table is (blocks/to_markdown.py): '<remote>' is text, never an HTML tag
    assert lines[0] == "| capability | /mnt/local (ext4) | /mnt/a\\|b \\<remote> (fuse.sshfs) |"
    assert lines[1] == "|:--|:--|:--|"
    assert "| O_DIRECT | ✓ | ✗ EINVAL |" in lines
    assert "| statfs figures |  | – |" in lines
    assert any("open: Invalid argument" in ln for ln in lines)
    assert any("removing it hung" in ln for ln in lines)


def test_html_fragment_escapes_everything() -> None:
    frag = render_html_fragment([LOCAL, REMOTE])
    assert "<html" not in frag and "<table" in frag
    assert "&lt;remote&gt;" in frag and "<remote>" not in frag
    assert "keeps 1 s &lt;b&gt;" in frag
    assert 'class="verdict-needs-root"' in frag
    assert frag.count("<tr>") == 6  # header + 5 capabilities


def test_render_is_pure() -> None:
    before = LOCAL.to_dict()
    assert render_markdown([LOCAL]) == render_markdown([LOCAL])
    assert render_html_fragment([LOCAL]) == render_html_fragment([LOCAL])
    assert LOCAL.to_dict() == before


def test_coherence_renderings() -> None:
    c = coherence()
    text = plain(render_coherence_terminal([c]))
    assert "400 µs (300 µs–500 µs)" in text
    assert "not within 2.5 s (0/3)" in text
    assert "1/3 not within 2.5 s, 1 hung" in text
    assert "no events within 2.5 s" in text
    assert "does not block (0/3)" in text
    assert "mixed (2/3), 1 unknown" in text
    assert "delete: hung: x" in text  # notes in the caption
    md = render_coherence_markdown([c, c])
    assert md.splitlines()[0].count("/host/dir → /mnt/sshfs") == 2
    assert "torn 2/3" in md and "stale 1/3" in md
    frag = render_coherence_html_fragment([c])
    assert "→" in frag and '<table class="sortable cards">' in frag  # the table every page lays out
    assert not math.isnan(c.visibility_of("create").summary.median_ms or math.nan)


def test_a_single_record_renders_like_a_list_of_one() -> None:
    assert render_markdown(LOCAL) == render_markdown([LOCAL])
    assert render_html_fragment(REMOTE) == render_html_fragment([REMOTE])
    c = coherence()
    assert render_coherence_markdown(c) == render_coherence_markdown([c])
    assert render_coherence_html_fragment(c) == render_coherence_html_fragment([c])
    assert plain(render_terminal(LOCAL)) == plain(render_terminal([LOCAL]))
    assert plain(render_coherence_terminal(c)) == plain(render_coherence_terminal([c]))


# -- data loss first, severity colours, the reference, --diff, narrow terminals --------------------


def lossy_target(path: str, fstype: str = "fuse.fusefat") -> TargetProbe:
    return target(
        path,
        fstype,
        ProbeResult("o_direct", "O_DIRECT", "yes"),
        ProbeResult("symlink", "symlinks", "no", errno="ENOSYS", detail="symlink: Function not implemented"),
        ProbeResult(
            "rename_dir",
            "rename a directory",
            "differs",
            detail="contents lost after rename: d2/f is gone",
            severity="data loss",
        ),
        ProbeResult("mtime_granularity", "mtime granularity", "differs", value=2 * 10**9, unit="ns"),
        ProbeResult("statfs", "statfs figures", "yes", value=32 << 20, unit="bytes", reported=True),
    )


def local_reference() -> TargetProbe:
    return target(
        "/tmp",
        "ext4",
        ProbeResult("o_direct", "O_DIRECT", "yes"),
        ProbeResult("symlink", "symlinks", "yes"),
        ProbeResult("rename_dir", "rename a directory", "yes"),
        ProbeResult("mtime_granularity", "mtime granularity", "yes", value=1, unit="ns"),
        ProbeResult("statfs", "statfs figures", "yes", value=250 << 30, unit="bytes", reported=True),
    )


def torn_coherence(view_b: str = "/mnt/sshfs") -> CoherenceResult:
    c = coherence()
    return CoherenceResult(**{**c.__dict__, "view_b": view_b})


def test_data_loss_comes_first_in_every_output() -> None:
    report = ProbeReport((lossy_target("/mnt/fat"),), (torn_coherence(),), local_reference(), None)
    found = data_loss(report)
    assert found[0].startswith("/mnt/fat (fuse.fusefat) · rename a directory: contents lost after rename")
    assert "read through B right after A's rewrite in place: torn 2/3" in found[1]
    console = Console(width=120, record=True, color_system=None)
    for part in render_document_terminal(report):
        console.print(part)
    terminal = console.export_text()
    assert terminal.startswith("‼ Data loss or corruption found:")
    assert terminal.index("contents lost after rename") < terminal.index("mountbench probe")
    md = render_document_markdown(report)
    assert md.startswith("## ‼ Data loss or corruption found")
    assert md.index("torn 2/3") < md.index("| capability")
    page = render_document_html(report, title="t")
    assert page.index('<ul class="loss">') < page.index("<table")  # the findings before the matrix
    doc = document_json(report, "probe-x")
    assert next(iter(doc)) == "data_loss" and doc["data_loss"] == found
    assert ProbeReport.from_dict(json.loads(json.dumps(doc))) == report
    clean = ProbeReport((local_reference(),))
    assert render_document_markdown(clean).startswith("_No data loss or corruption found._")
    assert data_loss(clean) == [] and document_json(clean, "p")["data_loss"] == []


def test_matrix_marks_data_loss_and_reported_figures() -> None:
    probe = lossy_target("/mnt/fat")
    table = render_terminal(probe)
    data_loss_cell = table.columns[1]._cells[2]
    assert data_loss_cell.plain == "‼ data loss" and "bold" in str(data_loss_cell.style)
    assert "≠ 2 s" in plain(table)
    assert "✓ 32.0 MiB†" in plain(table) and "† a figure the mount reports" in flat(plain(table))
    assert "| rename a directory | **‼ data loss** |" in render_markdown(probe)
    assert 'class="verdict-differs severity-data-loss"' in render_html_fragment(probe)


def test_reference_column_and_diff() -> None:
    fat, ext4 = lossy_target("/mnt/fat"), target("/mnt/disk", "ext4", *local_reference().results)
    ref = local_reference()
    text = plain(render_terminal([fat, ext4], reference=ref))
    assert "local ref." in text and "/tmp (ext4 from src): the same probes on a local directory" in flat(text)
    # --diff: the rows where the columns disagree; O_DIRECT (✓ everywhere) and statfs
    # (sizes differ, but a size is not the answer) are left out
    assert differing_capabilities([fat, ext4], ref) == {"symlink", "rename_dir", "mtime_granularity"}
    diffed = render_terminal([fat, ext4], reference=ref, diff=True)
    assert diffed.row_count == 3 and "O_DIRECT" not in plain(diffed)
    md = render_markdown([fat, ext4], reference=ref, diff=True)
    assert "| O_DIRECT |" not in md and "| symlinks |" in md and "local ref.: /tmp (ext4)" in md
    assert "O_DIRECT" not in render_html_fragment([fat, ext4], reference=ref, diff=True).split("</table>")[0]
    # the same target twice: nothing differs
    assert differing_capabilities([ext4, ext4]) == set()


def test_four_targets_and_the_reference_fit_100_columns_without_wrapping_a_header() -> None:
    paths = [
        "/mnt/virtiofs-share/project",
        "/mnt/9p-share/project",
        "/home/someone/sshfs/build-server/project",
        "/srv/nfs/exports/a-rather-long-directory-name-for-data",
    ]
    fstypes = ["virtiofs", "9p", "fuse.sshfs", "nfs4"]
    probes = [target(p, f, *lossy_target(p).results) for p, f in zip(paths, fstypes, strict=True)]
    table = render_terminal(probes, reference=local_reference(), caption=False)
    console = Console(width=100, record=True, color_system=None)
    console.print(table)
    lines = console.export_text().splitlines()
    assert max(len(ln) for ln in lines) <= 100
    framed = [ln.rstrip() for ln in lines if ln[:1] in "┏┃┡│└"]
    assert all(ln[-1] in "┓┃┩│┘" for ln in framed)  # the right border is there: nothing cropped
    header = [ln for ln in lines if ln.startswith("┃")]
    assert len(header) == 2  # one line of names, one of filesystem types: nothing wrapped
    names = [c.strip() for c in header[0].strip("┃").split("┃")]
    assert names == ["", "virtiofs-sh…", "9p-share/pr…", "build-serve…", "a-rather-lo…", "local ref."]
    types = [c.strip() for c in header[1].strip("┃").split("┃")]
    assert types == ["capability", *(f"({t})" for t in fstypes), "(ext4)"]
    cells = [c.strip() for ln in lines if ln.startswith("│") for c in ln.strip("│").split("│")[1:]]
    assert "‼ data loss" in cells and "✗ ENOSYS" in cells  # cells are not cut either


def test_short_names_tell_paths_apart() -> None:
    assert short_names(["/mnt/a/data", "/mnt/b/data", "/srv/x"]) == ["a/data", "b/data", "x"]
    assert short_names(["/"]) == ["/"]
    assert short_names(["/mnt/" + "x" * 30]) == ["x" * 11 + "…"]
    assert short_names(["/m/" + "a" * 20 + "1", "/m/" + "a" * 20 + "2"]) == [
        "1 " + "a" * 9 + "…",
        "2 " + "a" * 9 + "…",
    ]


def test_coherence_cells_carry_their_severity() -> None:
    c = coherence()
    rows = dict(_coherence_rows([c]))
    assert rows["read through B right after A's rewrite in place"][0].severity == "data loss"
    assert rows["read through B right after A's replace by rename"][0].severity == "ok"
    assert rows["append seen through B after"][0].severity == "bad"  # never seen
    assert rows["delete seen through B after"][0].severity == "warning"  # late and not always
    assert rows["create seen through B after"][0].severity == "ok"
    assert rows["flock lock held through A vs a second locker through B"][0].severity == "bad"
    table = render_coherence_terminal(c)
    torn = table.columns[1]._cells[3]
    assert torn.plain.startswith("‼ stale 1/3, torn 2/3") and "bold" in str(torn.style)
    md = render_coherence_markdown(c)
    assert "| **‼ stale 1/3, torn 2/3" in md
    assert "| ✓ fresh 3/3 |" in md
    assert re.search(r'<td class="severity-data-loss"[^>]*><span class="v"><b>‼ ', render_coherence_html_fragment(c))


def test_coherence_reference_column_and_diff() -> None:
    c = coherence()
    local = CoherenceResult(
        view_a="/tmp",
        view_b="/tmp",
        repeat=3,
        timeout_s=2.5,
        visibility=tuple(VisibilityResult(op, (0.1, 0.1, 0.1)) for op in ("create", "append", "delete")),
        stale_reads=(
            StaleReadResult("rewrite in place", ("fresh",) * 3, (0.0,) * 3),
            StaleReadResult("replace by rename", ("fresh",) * 3, (0.0,) * 3),
        ),
        inotify=InotifyResult(("create", "delete"), (("create", "delete"),) * 3, (0.1, 0.1, 0.1)),
        locks=(LockResult("flock", (True,) * 3), LockResult("fcntl", (True,) * 3)),
    )
    md = render_coherence_markdown(c, reference=local)
    assert "local ref.: /tmp (×3)" in md.splitlines()[0]
    diffed = render_coherence_markdown([c], reference=local, diff=True)
    assert "replace by rename" not in diffed  # fresh on both: the same
    assert "rewrite in place" in diffed and "inotify" in diffed


def test_delays_between_two_machines_are_shown_as_what_the_clocks_allow() -> None:
    """Across the lab's VM boundary the two clocks are matched to within a resolution: a delay
    no longer than it is shown as the bound it is known to, the column says ±, the caption why."""
    import dataclasses

    from mountbench.probe.render import delay_text

    quick = summarize_delays([0.0, 1.5])
    assert delay_text(quick, 2.0) == "750 µs (0 ns–1.50 ms)"
    assert delay_text(quick, 2.0, resolution_ms=2.0) == "≤ 3.50 ms"  # each true delay ≤ measured + 2 ms
    assert delay_text(summarize_delays([30.0, None]), 2.0, resolution_ms=2.0).startswith("30.0 ms (")
    assert delay_text(summarize_delays([]), 2.0) == "not measured"
    across = dataclasses.replace(coherence(), clock_resolution_ms=0.9)
    assert CoherenceResult.from_dict(json.loads(json.dumps(across.to_dict()))) == across
    text = plain(render_coherence_terminal([across]))
    assert "clocks ±900 µs" in text and "≤ 1.40 ms" in text  # create: max 0.5 ms + 0.9 ms
    assert "clocks were matched over the channel to each" in text
    md = render_coherence_markdown(across)
    assert "(×3, clocks ±900 µs)" in md.splitlines()[0] and "matched over" in md
    assert "matched over" in render_coherence_html_fragment(across)
    assert "clocks ±" not in render_coherence_markdown(coherence())  # one machine: no such column note


def test_the_summary_sentence_names_each_target_whole_as_a_run_does():
    """Issue 48: probe's summary sentence cut a name to 'mnt-newcome… (ext4)'. A sentence has room: each target
    is named as a run names it (host/targets.distinct_labels), whole."""
    from mountbench.host.targets import distinct_labels
    from mountbench.probe.render import LIKE_LOCAL, summary_lines

    paths = ["/srv/a/mnt-newcomer-with-a-long-name", "/srv/b/mnt-newcomer-with-a-long-name"]
    probes = tuple(target(path, "ext4", ProbeResult("o_direct", "O_DIRECT", "yes")) for path in paths)
    (line,) = summary_lines(ProbeReport(targets=probes))
    assert LIKE_LOCAL in line and "…" not in line
    from pathlib import PurePosixPath

    named = distinct_labels([PurePosixPath(p) for p in paths], ["ext4", "ext4"])
    assert named == ["a/mnt-newcomer-with-a-long-name (ext4)", "b/mnt-newcomer-with-a-long-name (ext4)"]
    assert line.startswith(", ".join(named) + ":"), line
