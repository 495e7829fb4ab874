"""The probe on a limited filesystem: a FAT16 image mounted with fusefat (issue 18).

Each verdict and explanation the issue found wrong or misleading is asserted here, next
to a direct system call (no mountbench code) showing why it is the right answer. The
generic oracle matrix in test_probe_verdicts.py covers fusefat as well.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import html
import json
import os
import select
import stat
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from support import realmounts as rm
from support.runhelpers import mountbench

from mountbench.probe import CAPABILITIES, TargetProbe, probe_target
from mountbench.probe.catalogue import by_id

pytestmark = [pytest.mark.root, rm.requires_root]


@pytest.fixture(scope="module")
def fat() -> Iterator[tuple[Path, TargetProbe]]:
    """One FAT16 image through fusefat, probed once but for the deep-path check (it kills the daemon:
    test_the_deep_path_check_kills_the_daemon_last_and_every_output_says_so has a mount of its own);
    the mount stays up for the checks."""
    with ExitStack() as stack:
        try:
            mount = stack.enter_context(rm.fusefat())
        except rm.Unavailable as exc:
            pytest.skip(str(exc))
        target = mount.mountpoint / "target"
        target.mkdir()
        yield target, probe_target(target, timeout=5.0, capabilities=[c for c in CAPABILITIES if not c.last])


@pytest.fixture
def oracle_dir(fat: tuple[Path, TargetProbe], request: pytest.FixtureRequest) -> Iterator[Path]:
    d = fat[0].parent / f"oracle-{request.node.name[:40]}"
    d.mkdir()
    yield d
    for root, dirs, files in os.walk(d, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    os.rmdir(d)


def test_fs_is_fusefat(fat: tuple[Path, TargetProbe]) -> None:
    assert fat[1].fs.fstype == "fuse.fusefat"
    assert fat[1].cleanup == "removed"


def test_inotify_works_the_append_that_fails_is_not_its_call(fat, oracle_dir: Path) -> None:
    """Was "✗ inotify_add_watch: EPERM"; the EPERM came from an append in the same step."""
    result = fat[1].result("inotify")
    assert result.verdict == "yes", result
    # the watch is accepted and IN_CREATE arrives...
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    try:
        assert libc.inotify_add_watch(fd, os.fsencode(oracle_dir), 0x100) >= 0  # IN_CREATE
        (oracle_dir / "f").write_bytes(b"one")
        assert select.select([fd], [], [], 2.0)[0]
    finally:
        os.close(fd)
    # ...while reopening the 3-byte file to append to it is what fusefat refuses
    with pytest.raises(PermissionError), open(oracle_dir / "f", "ab") as f:
        f.write(b"two")


def test_mtime_step_is_measured_two_seconds(fat, oracle_dir: Path) -> None:
    """Was "✗ EPERM"; utime with nanoseconds works and keeps 2 s steps, which is "≠ 2 s"."""
    result = fat[1].result("mtime_granularity")
    assert (result.verdict, result.value, result.unit) == ("differs", 2_000_000_000, "ns"), result
    assert "2 s" in result.detail
    f = oracle_dir / "f"
    f.write_bytes(b"x")
    os.utime(f, ns=(1_600_000_001_500_000_000,) * 2)
    assert os.stat(f).st_mtime_ns == 1_600_000_000_000_000_000


def test_sparse_names_the_refused_helper_and_says_what_the_blocks_show(fat, oracle_dir: Path) -> None:
    """Was "✗ EPERM [Errno 1]"; ftruncate growing the file is refused (a helper: "≠" naming the step).
    SEEK_HOLE reports no hole, and FAT really has none: the blocks fusefat reports cover the gap."""
    result = fat[1].result("sparse")
    assert result.verdict == "differs", result
    assert (result.step, result.errno) == ("ftruncate growing the file", "EPERM")
    assert "ftruncate growing the file to 4 MiB was refused" in result.detail
    assert "holes stored as data (measured by allocated blocks on a filesystem that reports them" in result.detail
    assert "as the mount reports it" in result.detail
    fd = os.open(oracle_dir / "s", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.pwrite(fd, b"d" * 4096, 2 << 20)
        with pytest.raises(PermissionError):
            os.ftruncate(fd, 4 << 20)
        assert os.lseek(fd, 0, os.SEEK_DATA) == 0
        assert os.lseek(fd, 0, os.SEEK_HOLE) == os.fstat(fd).st_size
        assert os.fstat(fd).st_blocks * 512 >= os.fstat(fd).st_size  # the gap is allocated
    finally:
        os.close(fd)


def test_rename_dir_loses_contents_and_says_so_as_data_loss(fat, oracle_dir: Path) -> None:
    """Was "✗ ENOENT" with a raw message: the rename succeeds and the contents are lost."""
    result = fat[1].result("rename_dir")
    assert (result.verdict, result.severity) == ("differs", "data loss"), result
    assert "contents lost after rename" in result.detail
    (oracle_dir / "d1").mkdir()
    (oracle_dir / "d1" / "f").write_bytes(b"inside")
    os.rename(oracle_dir / "d1", oracle_dir / "d2")
    assert not (oracle_dir / "d2" / "f").exists()


def test_fallocate_says_what_applications_see(fat, oracle_dir: Path) -> None:
    """fallocate(2) is refused (ENOTSUP). posix_fallocate (glibc's emulation) was said to succeed;
    on an unaligned range of an unaligned file it fails with EPERM and changes the file's size."""
    result = fat[1].result("fallocate")
    assert (result.verdict, result.errno, result.step) == ("no", "ENOTSUP", "fallocate(2)"), result
    assert "posix_fallocate() succeeds" not in result.detail and "glibc" in result.detail
    fd = os.open(oracle_dir / "a", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.posix_fallocate(fd, 0, 1 << 20)
        assert os.fstat(fd).st_size == 1 << 20
    finally:
        os.close(fd)
    assert "1,048,576 bytes at 0: succeeds" in result.detail
    fd = os.open(oracle_dir / "odd", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.write(fd, b"f" * 12345)
        with pytest.raises(PermissionError):
            os.posix_fallocate(fd, 20000, 3456)
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    assert size != 12345
    said = "3,456 bytes at 20,000 of a 12,345-byte file: fails, Operation not permitted (EPERM), and left the file at"
    said += f" {size:,} bytes (was 12,345)"
    assert said in result.detail, result.detail


def test_errno_and_name_length_say_eperm_is_not_enametoolong(fat, oracle_dir: Path) -> None:
    """Was "✓ 255 bytes": a 256-byte name is refused with EPERM, which tools testing for ENAMETOOLONG miss."""
    names = fat[1].result("max_name_length")
    assert (names.verdict, names.errno, names.value) == ("differs", "EPERM", 255), names
    with pytest.raises(OSError) as refused:
        (oracle_dir / ("n" * 256)).write_bytes(b"")
    assert refused.value.errno == errno.EPERM
    codes = fat[1].result("errno")
    assert codes.verdict == "differs" and "create a 256-byte name: EPERM, not ENAMETOOLONG" in codes.detail
    (oracle_dir / "d").mkdir()
    (oracle_dir / "d" / "f").write_bytes(b"x")
    with pytest.raises(OSError) as refused:
        os.rmdir(oracle_dir / "d")
    assert f"rmdir a non-empty directory: {errno.errorcode[refused.value.errno]}, not ENOTEMPTY" in codes.detail


def test_case_insensitivity_judged_by_content_not_fuse_inode_numbers(fat, oracle_dir: Path) -> None:
    result = fat[1].result("case_sensitive")
    assert result.verdict == "differs", result
    assert "another inode" not in result.detail and "the same content" in result.detail
    (oracle_dir / "Case.txt").write_bytes(b"upper")
    assert (oracle_dir / "case.txt").read_bytes() == b"upper"
    # FUSE numbers inodes per path it was asked for: st_ino says "two files" wrongly
    assert os.stat(oracle_dir / "Case.txt").st_ino != os.stat(oracle_dir / "case.txt").st_ino


def test_every_refusal_names_its_call(fat: tuple[Path, TargetProbe]) -> None:
    probe = fat[1]
    refused = [r for r in probe.results if r.verdict == "no"]
    assert {r.capability for r in refused} >= {"chmod", "symlink", "hardlink", "user_xattr", "fallocate"}
    for r in refused:
        assert r.step and r.detail.startswith(r.step), r
        assert r.errno in errno.errorcode.values(), r
    for r in probe.results:
        assert "[Errno" not in r.detail and "without a label" not in r.detail, r


def test_replace_by_rename_is_data_loss_when_not_atomic(fat: tuple[Path, TargetProbe]) -> None:
    result = fat[1].result("rename_over")
    if result.verdict == "differs":  # timing-dependent: a reader must catch the gap
        assert result.severity == "data loss" and "not atomic" in result.detail
    else:
        assert result.verdict == "yes"


def _processes_under(path: Path) -> list[int]:
    import psutil

    return [p.pid for p in psutil.process_iter(["cmdline"]) if any(str(path) in a for a in p.info["cmdline"] or ())]


@pytest.mark.slow
def test_the_deep_path_check_kills_the_daemon_last_and_every_output_says_so(tmp_path: Path, mb_env) -> None:
    """`mountbench probe` on FAT: the deep-path check runs last, fusefat's daemon dies in it, and
    that is the verdict ("the mount's daemon died"); the probe says the mount is gone, took under
    15 s, and leaves nothing running. Mounted again, the scratch directory left on the image goes
    with the next probe there, and the tree is as before. Terminal, Markdown, HTML and JSON all
    start with the data loss. The oracle: the same rename past PATH_MAX, by hand, kills the daemon
    again."""
    with ExitStack() as stack:
        try:
            first = stack.enter_context(rm.fusefat())
        except rm.Unavailable as exc:
            pytest.skip(str(exc))
        target = first.mountpoint / "target"
        target.mkdir()
        (target / "keep.txt").write_bytes(b"keep me\n")
        before = rm.tree_snapshot(target)
        t0 = time.monotonic()
        proc = mountbench("probe", str(target), "--no-reference", env=mb_env)
        took = time.monotonic() - t0
        assert proc.returncode == 0, proc.stderr
        assert took < 15, took
        assert first.proc.wait(timeout=5) != 0  # the daemon died (fusefat aborts on a buffer overflow)
        assert _processes_under(first.mountpoint) == []  # nothing of the probe runs on
        said = " ".join(proc.stdout.split())  # the terminal wraps long lines
        assert proc.stdout.startswith("‼ Data loss or corruption found:")
        assert said.index("rename a directory: contents lost") < said.index("mountbench probe")
        assert "deep paths: where the limit is: the mount's daemon died: create a file in the deepest directory" in said
        assert "the mount is gone after 'deep paths: where the limit is'" in said
        outputs = {}
        for fmt in ("md", "html", "json"):
            shown = mountbench("probe", "--show", "last", "--format", fmt, env=mb_env)
            assert shown.returncode == 0, shown.stderr
            outputs[fmt] = shown.stdout
        assert outputs["md"].startswith("## ‼ Data loss or corruption found")
        assert outputs["md"].index("contents lost after rename") < outputs["md"].index("| capability")
        assert "the mount is gone" in outputs["md"].split("| capability")[0]
        body = outputs["html"].split("</style>", 1)[1]
        # the data loss comes first on the page, before any table
        assert body.lstrip().startswith('<h2 class="loss">‼ Data loss or corruption found'), body[:500]
        assert html.unescape(outputs["html"]).count("the mount's daemon died") >= 1  # in the capability table
        doc = json.loads(outputs["json"])
        assert next(iter(doc)) == "data_loss"
        assert any("rename a directory: contents lost after rename" in line for line in doc["data_loss"])
        (probed,) = doc["targets"]
        deep = next(r for r in probed["results"] if r["capability"] == "deep_paths")
        assert (deep["verdict"], deep["severity"], deep["errno"]) == ("differs", "data loss", "ECONNABORTED")
        assert deep["step"] == "create a file in the deepest directory"
        died_at = int(deep["detail"].split(" bytes within the mount")[0].rsplit(" at ", 1)[1].replace(",", ""))
        assert probed["gone"] and "left" in probed["cleanup"] and doc["summary"][0]["gone"] == probed["gone"]

        with rm.fusefat(image=first.source) as again:  # the image, mounted again elsewhere
            target = again.mountpoint / "target"
            (left,) = [p for p in target.iterdir() if p.name.startswith(".mountbench-probe-")]
            swept = probe_target(target, timeout=5.0, capabilities=[by_id("fsync")])
            assert len(swept.swept) == 1 and str(left) in swept.swept[0], swept.swept
            assert rm.tree_snapshot(target) == before  # nothing left behind
            # the oracle, by hand: 100-byte directories to within 100 bytes of PATH_MAX below the mount
            # point, then files 16 bytes longer at a time as the probe made them, until the daemon dies:
            # within a step of where the probe saw it die
            work = target / "oracle"
            work.mkdir()
            fds = [os.open(work, os.O_RDONLY | os.O_DIRECTORY)]
            inside = len("/target/oracle")
            while inside + 101 <= 4096 - 100:
                os.mkdir("d" * 100, dir_fd=fds[-1])
                fds.append(os.open("d" * 100, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
                inside += 101
            died = None
            for n in [*range(16, 4146 - inside - 1, 16), 4146 - inside - 1]:  # as the probe searched
                try:
                    os.close(os.open("c" * n, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fds[-1]))
                except OSError as exc:
                    died = exc
                    break
                os.unlink("c" * n, dir_fd=fds[-1])
            assert died is not None, "the daemon took every length"
            assert abs((inside + 1 + n) - died_at) < 16  # the same limit, overshot by under a step either time
            assert died.errno == errno.ECONNABORTED
            assert again.proc.wait(timeout=5) != 0
            for fd in fds:
                os.close(fd)


def test_what_a_hand_check_found_on_fat_is_in_the_verdicts(fat, oracle_dir: Path) -> None:
    """Issue 49, items 9-11, each next to the plain system calls that show it: a read after unlink of an
    open file returns other bytes for sizes that are not a multiple of 4 KiB; a write, O_TRUNC or
    posix_fallocate moves neither mtime nor ctime, nor an unlink the directory's; 1970 reads back as 2098;
    one process's O_APPEND is refused on a small file and cuts an 8 KiB one; a file cannot grow by
    truncate; mknod is EIO; a too-long name looked up is ENOENT."""
    probe = fat[1]
    unlinked = probe.result("unlink_open")
    assert (unlinked.verdict, unlinked.severity) == ("differs", "data loss"), unlinked
    data = os.urandom(13)
    fd = os.open(oracle_dir / "u", os.O_CREAT | os.O_RDWR, 0o644)
    os.write(fd, data)
    os.unlink(oracle_dir / "u")
    assert os.pread(fd, 14, 0) != data and "13 bytes:" in unlinked.detail
    os.close(fd)

    times = probe.result("content_times")
    assert times.verdict == "differs" and "mtime unchanged by write" in times.detail, times
    (oracle_dir / "in").write_bytes(b"one\n")
    before = os.stat(oracle_dir / "in").st_mtime_ns
    time.sleep(2.1)
    with open(oracle_dir / "in", "r+b") as f:  # echo two > in, without the truncation fusefat also ignores
        f.write(b"two\n")
    assert os.stat(oracle_dir / "in").st_mtime_ns == before

    stamped = probe.result("time_range")
    assert "1970-01-01 00:00:00" in stamped.detail and "read back as 2098-01-01" in stamped.detail, stamped
    os.utime(oracle_dir / "in", (0, 0))
    assert time.gmtime(os.stat(oracle_dir / "in").st_mtime).tm_year == 2098

    appended = probe.result("append_one")
    assert (appended.verdict, appended.severity) == ("differs", "data loss"), appended
    base = os.urandom(8192)
    (oracle_dir / "log").write_bytes(base)
    fd = os.open(oracle_dir / "log", os.O_WRONLY | os.O_APPEND)
    with contextlib.suppress(OSError):
        os.write(fd, b"+" * 10)
    with contextlib.suppress(OSError):
        os.close(fd)
    assert (oracle_dir / "log").read_bytes() != base + b"+" * 10

    grown = probe.result("truncate_grow")
    assert (grown.verdict, grown.errno) == ("no", "EPERM"), grown
    with pytest.raises(PermissionError):
        os.truncate(oracle_dir / "in", 8192)
    node = probe.result("mknod")
    assert (node.verdict, node.errno) == ("no", "EIO"), node
    with pytest.raises(OSError) as refused:
        os.mknod(oracle_dir / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    assert refused.value.errno == errno.EIO
    codes = probe.result("errno")
    assert "look up a 256-byte name: ENOENT, not ENAMETOOLONG" in codes.detail, codes
    with pytest.raises(FileNotFoundError):
        os.stat(oracle_dir / ("n" * 256))
