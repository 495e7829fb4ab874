"""Pure parts: records (JSON round trips), aggregation, mountinfo parsing, rendering."""

from __future__ import annotations

import json
import math

import pytest
from rich.console import Console
from rich.table import Table

from mountbench.probe import (
    CoherenceResult,
    FsInfo,
    InotifyResult,
    LockResult,
    ProbeResult,
    StaleReadResult,
    TargetProbe,
    VisibilityResult,
    render_coherence_html_fragment,
    render_coherence_markdown,
    render_coherence_terminal,
    render_html_fragment,
    render_markdown,
    render_terminal,
)
from mountbench.probe.capabilities import MTIME_BASE_NS, MTIME_OFFSETS_NS, mtime_step_ns
from mountbench.probe.inotify import IN_CREATE, IN_MOVED_TO, parse_events
from mountbench.probe.model import summarize_delays
from mountbench.targets import mount_of, parse_mountinfo


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
    assert "/mnt/a|b <remote> (fuse.sshfs) · mtime granularity: keeps 1 s <b>" in text
    detailed = plain(render_terminal([REMOTE], details=True))
    assert "keeps 1 s" in detailed and "· mtime granularity" not in detailed


def test_markdown_matrix_escapes_and_lists_notes() -> None:
    md = render_markdown([LOCAL, REMOTE])
    lines = md.splitlines()
    assert lines[0] == "| capability | /mnt/local (ext4) | /mnt/a\\|b <remote> (fuse.sshfs) |"
    assert lines[1] == "|---|---|---|"
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
    assert "→" in frag and "<table>" in frag
    assert not math.isnan(c.visibility_of("create").summary.median_ms or math.nan)


def test_a_single_record_renders_like_a_list_of_one() -> None:
    assert render_markdown(LOCAL) == render_markdown([LOCAL])
    assert render_html_fragment(REMOTE) == render_html_fragment([REMOTE])
    c = coherence()
    assert render_coherence_markdown(c) == render_coherence_markdown([c])
    assert render_coherence_html_fragment(c) == render_coherence_html_fragment([c])
    assert plain(render_terminal(LOCAL)) == plain(render_terminal([LOCAL]))
    assert plain(render_coherence_terminal(c)) == plain(render_coherence_terminal([c]))
