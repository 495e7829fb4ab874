"""The probe on a limited filesystem: a FAT16 image mounted with fusefat (issue 18).

Each verdict and explanation the issue found wrong or misleading is asserted here, next
to a direct system call (no mountbench code) showing why it is the right answer. The
generic oracle matrix in test_probe_verdicts.py covers fusefat as well.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import select
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from support import realmounts as rm
from support.runhelpers import mountbench

from mountbench.probe import TargetProbe, probe_target

pytestmark = [pytest.mark.root, rm.requires_root]


@pytest.fixture(scope="module")
def fat() -> Iterator[tuple[Path, TargetProbe]]:
    """One FAT16 image through fusefat, probed once; the mount stays up for the checks."""
    with ExitStack() as stack:
        try:
            mount = stack.enter_context(rm.fusefat())
        except rm.Unavailable as exc:
            pytest.skip(str(exc))
        target = mount.mountpoint / "target"
        target.mkdir()
        yield target, probe_target(target, timeout=5.0)


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


def test_sparse_names_the_refused_helper_and_says_seeking_works(fat, oracle_dir: Path) -> None:
    """Was "✗ EPERM [Errno 1]"; ftruncate growing the file is refused, SEEK_DATA/HOLE work.
    A failing helper step is "≠" naming the step, never "✗"."""
    result = fat[1].result("sparse")
    assert result.verdict == "differs", result
    assert (result.step, result.errno) == ("ftruncate growing the file", "EPERM")
    assert "ftruncate growing the file to 4 MiB was refused" in result.detail
    assert "SEEK_DATA/SEEK_HOLE work" in result.detail
    assert "as the mount reports it" in result.detail
    fd = os.open(oracle_dir / "s", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.pwrite(fd, b"d" * 4096, 2 << 20)
        with pytest.raises(PermissionError):
            os.ftruncate(fd, 4 << 20)
        assert os.lseek(fd, 0, os.SEEK_DATA) == 0
        assert os.lseek(fd, 0, os.SEEK_HOLE) == os.fstat(fd).st_size
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
    """fallocate(2) is refused (ENOTSUP); posix_fallocate succeeds through glibc's emulation."""
    result = fat[1].result("fallocate")
    assert (result.verdict, result.errno, result.step) == ("no", "ENOTSUP", "fallocate(2)"), result
    assert "posix_fallocate() succeeds" in result.detail and "glibc" in result.detail
    fd = os.open(oracle_dir / "a", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.posix_fallocate(fd, 0, 1 << 20)
        assert os.fstat(fd).st_size == 1 << 20
    finally:
        os.close(fd)


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


@pytest.mark.slow
def test_every_output_of_the_command_leads_with_the_data_loss(fat, tmp_path: Path, mb_env) -> None:
    """`mountbench probe` on FAT: terminal, Markdown, HTML and JSON all start with the data loss."""
    target = fat[0]
    proc = mountbench("probe", str(target), "--no-reference", env=mb_env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("‼ Data loss or corruption found:")
    said = " ".join(proc.stdout.split())  # the terminal wraps long lines where the target's path is long
    assert said.index("rename a directory: contents lost") < said.index("mountbench probe")
    outputs = {}
    for fmt in ("md", "html", "json"):
        shown = mountbench("probe", "--show", "last", "--format", fmt, env=mb_env)
        assert shown.returncode == 0, shown.stderr
        outputs[fmt] = shown.stdout
    assert outputs["md"].startswith("## ‼ Data loss or corruption found")
    assert outputs["md"].index("contents lost after rename") < outputs["md"].index("| capability")
    body = outputs["html"].split("</style>", 1)[1]
    assert (
        body.startswith('<section class="data-loss">') and "contents lost after rename" in body.split("</section>")[0]
    )
    doc = json.loads(outputs["json"])
    assert next(iter(doc)) == "data_loss"
    assert any("rename a directory: contents lost after rename" in line for line in doc["data_loss"])
