"""probe_target on real mounts; every verdict checked against a direct syscall in the test.

The oracles below never use mountbench code: each asks the kernel the same question
directly, in a directory of its own on the same mount, and derives the verdict the
probe should have reached. Nothing is a constant, because kernels and FUSE servers
differ (O_DIRECT on tmpfs, chown on sshfs...).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import itertools
import mmap
import os
import select
import shutil
import socket
import stat
import struct
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import realmounts as rm

from mountbench.probe import CAPABILITY_IDS, TargetProbe, probe_target

pytestmark = [pytest.mark.root, rm.requires_root]

KINDS = ("tmpfs", "ext4", "bindfs", "sshfs", "sshfs-cache-no", "fusefat")


@dataclass
class Probed:
    kind: str
    path: Path
    probe: TargetProbe
    before: dict[str, tuple[object, ...]]
    after: dict[str, tuple[object, ...]]


def make_neighbours(root: Path) -> None:
    """Files next to where the scratch directory will go, including decoys."""
    (root / "keep.txt").write_bytes(b"keep me\n" * 100)
    (root / "sub").mkdir()
    (root / "sub" / "inner.bin").write_bytes(os.urandom(5000))
    (root / "Case.txt").write_bytes(b"upper")
    (root / ".mountbench-probe-marker").write_bytes(b"a decoy, not ours")
    (root / ".mountbench-probe-decoy").mkdir()  # looks like a scratch dir, has no marker
    (root / ".mountbench-probe-decoy" / "data").write_bytes(b"not ours")
    with contextlib.suppress(OSError):  # FAT has no symbolic links
        os.symlink("keep.txt", root / "link-to-keep")


def _mount(kind: str, stack: ExitStack, request: pytest.FixtureRequest) -> Path:
    if kind == "tmpfs":
        return stack.enter_context(rm.tmpfs())
    if kind == "ext4":
        return stack.enter_context(rm.ext4_loop())
    if kind == "bindfs":
        src = stack.enter_context(rm.host_dir("bindfs-src"))
        return stack.enter_context(rm.bindfs(src)).mountpoint
    if kind == "fusefat":
        return stack.enter_context(rm.fusefat()).mountpoint
    server = request.getfixturevalue("ssh_server")
    src = stack.enter_context(rm.host_dir("sshfs-src"))
    options = ("cache=no",) if kind == "sshfs-cache-no" else ()
    return stack.enter_context(rm.sshfs(src, server, options)).mountpoint


@pytest.fixture(scope="module", params=KINDS)
def probed(request: pytest.FixtureRequest) -> Iterator[Probed]:
    """One real mount per kind, probed once; the mount stays up for the oracles."""
    with ExitStack() as stack:
        try:
            mount = _mount(request.param, stack, request)
        except rm.Unavailable as exc:
            pytest.skip(str(exc))
        target = mount / "target"
        target.mkdir()
        make_neighbours(target)
        before = rm.tree_snapshot(target)
        result = probe_target(target, timeout=5.0)
        after = rm.tree_snapshot(target)
        yield Probed(request.param, target, result, before, after)


# -- oracles: direct syscalls -----------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    verdicts: frozenset[str]
    errno: str | None = None
    value: object = None  # None: not checked


def exp(*verdicts: str, errno: str | None = None, value: object = None) -> Expect:
    return Expect(frozenset(verdicts), errno, value)


def err_name(exc: OSError) -> str:
    return errno.errorcode[exc.errno]


def refused(call: Callable[[], object]) -> str | None:
    """The errno name if ``call`` raises OSError, else None."""
    try:
        call()
    except OSError as exc:
        return err_name(exc)
    return None


def touch(p: Path, data: bytes = b"x") -> Path:
    p.write_bytes(data)
    return p


def o_direct(d: Path) -> Expect:
    try:
        fd = os.open(d / "f", os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o644)
    except OSError as exc:
        return exp("no", errno=err_name(exc))
    try:
        buf = mmap.mmap(-1, 4096)
        buf.write(b"D" * 4096)
        ok = refused(lambda: os.pwritev(fd, [buf], 0)) is None
        out = mmap.mmap(-1, 4096)
        ok = ok and refused(lambda: os.preadv(fd, [out], 0)) is None and out[:] == buf[:]
    finally:
        os.close(fd)
    return exp("yes" if ok else "differs")


def _sync(call: Callable[[int], None]) -> Callable[[Path], Expect]:
    def oracle(d: Path) -> Expect:
        fd = os.open(d / "f", os.O_CREAT | os.O_WRONLY, 0o644)
        try:
            os.write(fd, b"s" * 65536)
            e = refused(lambda: call(fd))
        finally:
            os.close(fd)
        return exp("no", errno=e) if e else exp("yes")

    return oracle


def chmod(d: Path) -> Expect:
    f = touch(d / "f")
    e = refused(lambda: os.chmod(f, 0o751))
    if e:
        return exp("no", errno=e)
    return exp("yes" if stat.S_IMODE(os.stat(f).st_mode) == 0o751 else "differs")


def _chown(which: str) -> Callable[[Path], Expect]:
    def oracle(d: Path) -> Expect:
        f = touch(d / "f")
        e = refused(lambda: os.chown(f, 4242, -1) if which == "uid" else os.chown(f, -1, 4242))
        if e:
            return exp("no", errno=e)
        st = os.stat(f)
        return exp("yes" if (st.st_uid if which == "uid" else st.st_gid) == 4242 else "differs")

    return oracle


def user_xattr(d: Path) -> Expect:
    f = touch(d / "f")
    e = refused(lambda: os.setxattr(f, "user.oracle", b"v"))
    if e:
        return exp("no", errno=e)
    return exp("yes" if os.getxattr(f, "user.oracle") == b"v" else "differs")


def posix_acl(d: Path) -> Expect:
    f = touch(d / "f")
    # version 2; user::rw- user:4242:r-- group::r-- mask::rw- other::---
    acl = struct.pack("<I", 2) + b"".join(
        struct.pack("<HHI", *e)
        for e in [(1, 6, 2**32 - 1), (2, 4, 4242), (4, 4, 2**32 - 1), (16, 6, 2**32 - 1), (32, 0, 2**32 - 1)]
    )
    e = refused(lambda: os.setxattr(f, "system.posix_acl_access", acl))
    if e:
        return exp("no", errno=e)
    same = os.getxattr(f, "system.posix_acl_access") == acl
    mask_in_mode = stat.S_IMODE(os.stat(f).st_mode) & 0o070 == 0o060
    return exp("yes" if same and mask_in_mode else "differs")


def symlink(d: Path) -> Expect:
    touch(d / "t", b"content")
    e = refused(lambda: os.symlink("t", d / "l"))
    if e:
        return exp("no", errno=e)
    ok = os.readlink(d / "l") == "t" and (d / "l").read_bytes() == b"content"
    return exp("yes" if ok else "differs")


def hardlink(d: Path) -> Expect:
    a, b = touch(d / "a", b"first"), d / "b"
    e = refused(lambda: os.link(a, b))
    if e:
        return exp("no", errno=e)
    sa, sb = os.stat(a), os.stat(b)
    with open(b, "ab") as f:
        f.write(b"+second")
    ok = sa.st_ino == sb.st_ino and sa.st_nlink == sb.st_nlink == 2
    ok = ok and a.read_bytes() == b"first+second"
    os.unlink(b)
    ok = ok and os.stat(a).st_nlink == 1
    return exp("yes" if ok else "differs")


def rename_over(d: Path) -> Expect:
    touch(d / "old", b"old")
    touch(d / "new", b"new")
    e = refused(lambda: os.rename(d / "new", d / "old"))
    if e:
        return exp("no", errno=e)
    # Atomicity against a concurrent reader is timing-dependent: either verdict is possible.
    return exp("yes", "differs")


def rename_dir(d: Path) -> Expect:
    (d / "d1").mkdir()
    touch(d / "d1" / "f")
    e = refused(lambda: os.rename(d / "d1", d / "d2"))
    if e:
        return exp("no", errno=e)
    if not (d / "d2" / "f").exists():  # the rename "worked" and lost the contents
        return exp("differs")
    (d / "d3").mkdir()
    return exp("differs" if refused(lambda: os.rename(d / "d2", d / "d3")) else "yes")


def case_sensitive(d: Path) -> Expect:
    touch(d / "Abc")
    return exp("differs" if os.path.lexists(d / "abc") else "yes")


def unicode_names(d: Path) -> Expect:
    nfc, nfd = unicodedata.normalize("NFC", "é"), unicodedata.normalize("NFD", "é")
    e = refused(lambda: touch(d / nfc))
    if e:
        return exp("no", errno=e)
    if os.listdir(d) != [nfc] or os.path.lexists(d / nfd):
        return exp("differs")
    return exp("yes")


def max_name_length(d: Path) -> Expect:
    # Checked against the probe's own finding: n bytes must work and n + 1 must not.
    return exp("yes", "differs")


def fifo(d: Path) -> Expect:
    e = refused(lambda: os.mkfifo(d / "p"))
    if e:
        return exp("no", errno=e)
    return exp("yes" if stat.S_ISFIFO(os.lstat(d / "p").st_mode) else "differs")


def unix_socket(d: Path) -> Expect:
    cwd = os.getcwd()
    os.chdir(d)
    try:
        with socket.socket(socket.AF_UNIX) as server:
            e = refused(lambda: server.bind("s"))
            if e:
                return exp("no", errno=e)
            server.listen(1)
            with socket.socket(socket.AF_UNIX) as client:
                client.settimeout(2)
                return exp("differs" if refused(lambda: client.connect("s")) else "yes")
    finally:
        os.chdir(cwd)


def fallocate(d: Path) -> Expect:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    fd = os.open(d / "f", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        if libc.fallocate(fd, 0, 0, 1 << 20) != 0:
            return exp("no", errno=errno.errorcode[ctypes.get_errno()])
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return exp("yes" if st.st_size == 1 << 20 and st.st_blocks * 512 >= 1 << 20 else "differs")


def sparse(d: Path) -> Expect:
    fd = os.open(d / "f", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.pwrite(fd, b"d" * 4096, 2 << 20)
        if refused(lambda: os.ftruncate(fd, 4 << 20)):  # a helper refused: never "no"
            return exp("differs")
        os.fsync(fd)
        try:
            data, hole = os.lseek(fd, 0, os.SEEK_DATA), os.lseek(fd, 0, os.SEEK_HOLE)
        except OSError as exc:
            return exp("no", errno=err_name(exc))
    finally:
        os.close(fd)
    return exp("yes" if hole == 0 and 0 < data <= 2 << 20 else "differs")


def _append_try(path: Path) -> tuple[bool, bool, bool]:
    """Two processes append 300 lines each; (an append failed, lines lost or torn, their
    lines interleave in the file: the two really ran at the same time)."""
    go_r, go_w = os.pipe()  # both writers start together, so their appends interleave
    pids = []
    for tag in (b"A", b"B"):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            code = 1
            try:
                os.close(go_w)
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                os.read(go_r, 1)
                for i in range(300):
                    os.write(fd, tag + b"%030d\n" % i)
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    os.close(go_r)
    os.close(go_w)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
    lines = path.read_bytes().splitlines()
    intact = len(lines) == 600 and len(set(lines)) == 600 and all(len(x) == 31 for x in lines)
    tags = [line[:1] for line in lines]
    switches = sum(a != b for a, b in itertools.pairwise(tags))
    return any(codes), not intact, switches >= 2


def o_append(d: Path) -> Expect:
    """A try where the writers did not overlap says nothing: try again until one does, or
    until an append fails or loses data (the probe decides the same way)."""
    for attempt in range(20):
        failed, damaged, interleaved = _append_try(d / f"log-{attempt}")
        if failed or damaged:
            # Refused (an append failed) or records lost/torn: which one a run meets depends on
            # how the two writers interleave (fusefat shows both), so either is right.
            return exp("no", "differs")
        if interleaved:
            return exp("yes")
    pytest.skip("the two writers never ran at the same time in 20 tries: the machine is too busy to tell")


def mmap_shared(d: Path) -> Expect:
    f = touch(d / "f", b"\0" * 8192)
    fd = os.open(f, os.O_RDWR)
    try:
        try:
            m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError as exc:
            return exp("no", errno=err_name(exc))
        m[0:6] = b"oracle"
        with open(f, "rb") as other:
            seen = other.read(6) == b"oracle"
        m.close()
    finally:
        os.close(fd)
    return exp("yes" if seen else "differs")


def _other_process_locks(path: Path, lock: Callable[[int, int], None]) -> bool:
    """Does a second process get an exclusive non-blocking lock on ``path`` right now?"""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            fd = os.open(path, os.O_RDWR)
            lock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _lock(lock: Callable[[int, int], None]) -> Callable[[Path], Expect]:
    def oracle(d: Path) -> Expect:
        f = touch(d / "f")
        fd = os.open(f, os.O_RDWR)
        try:
            e = refused(lambda: lock(fd, fcntl.LOCK_EX))
            if e:
                return exp("no", errno=e)
            return exp("differs" if _other_process_locks(f, lock) else "yes")
        finally:
            os.close(fd)

    return oracle


def mtime_granularity(d: Path) -> Expect:
    """The smallest step (from a list of known ones) consistent with truncating or rounding."""
    f = touch(d / "f")
    wants = [1_700_000_000_123_456_789, 1_600_000_001_500_000_000, 1_650_000_003_987_654_321]
    got = []
    for want in wants:
        e = refused(lambda w=want: os.utime(f, ns=(w, w)))
        if e:
            return exp("no", errno=e)
        got.append(os.stat(f).st_mtime_ns)
    for unit in [10**k for k in range(9)] + [10**9, 2 * 10**9]:
        if all(g in (w // unit * unit, (w + unit // 2) // unit * unit) for w, g in zip(wants, got, strict=True)):
            return exp("yes" if unit == 1 else "differs", value=unit)
    return exp("differs")


def inotify(d: Path) -> Expect:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    try:
        if libc.inotify_add_watch(fd, os.fsencode(d), 0x100) < 0:  # IN_CREATE
            return exp("no", errno=errno.errorcode[ctypes.get_errno()])
        touch(d / "new")
        ready, _, _ = select.select([fd], [], [], 1.0)
        return exp("yes" if ready else "differs")
    finally:
        os.close(fd)


def statfs(d: Path) -> Expect:
    st = os.statvfs(d)
    return exp("yes" if st.f_blocks > 0 else "differs", value=st.f_blocks * st.f_frsize)


ORACLES: dict[str, Callable[[Path], Expect]] = {
    "o_direct": o_direct,
    "fsync": _sync(os.fsync),
    "fdatasync": _sync(os.fdatasync),
    "chmod": chmod,
    "chown_uid": _chown("uid"),
    "chown_gid": _chown("gid"),
    "user_xattr": user_xattr,
    "posix_acl": posix_acl,
    "symlink": symlink,
    "hardlink": hardlink,
    "rename_over": rename_over,
    "rename_dir": rename_dir,
    "case_sensitive": case_sensitive,
    "unicode_names": unicode_names,
    "max_name_length": max_name_length,
    "fifo": fifo,
    "unix_socket": unix_socket,
    "fallocate": fallocate,
    "sparse": sparse,
    "o_append": o_append,
    "mmap_shared": mmap_shared,
    "flock": _lock(fcntl.flock),
    "fcntl_lock": _lock(fcntl.lockf),
    "mtime_granularity": mtime_granularity,
    "inotify": inotify,
    "statfs": statfs,
}


def test_every_capability_has_an_oracle() -> None:
    assert set(ORACLES) == set(CAPABILITY_IDS)


@pytest.mark.parametrize("capability", CAPABILITY_IDS)
def test_verdict_matches_the_kernel(probed: Probed, capability: str) -> None:
    result = probed.probe.result(capability)
    oracle_dir = probed.path.parent / f"oracle-{capability}"
    oracle_dir.mkdir()
    try:
        expected = ORACLES[capability](oracle_dir)
    finally:
        shutil.rmtree(oracle_dir)
    context = f"{probed.kind}: {result}"
    assert result.verdict in expected.verdicts, context
    if expected.errno is not None:
        assert result.errno == expected.errno, context
    if expected.value is not None:
        assert result.value == expected.value, context
    if result.verdict in ("no", "differs"):
        assert result.detail, context


def test_max_name_length_is_the_real_limit(probed: Probed) -> None:
    n = probed.probe.result("max_name_length").value
    assert isinstance(n, int)
    d = probed.path.parent / "oracle-names"
    d.mkdir()
    try:
        (d / ("n" * n)).write_bytes(b"")
        with pytest.raises(OSError):
            (d / ("n" * (n + 1))).write_bytes(b"")
    finally:
        shutil.rmtree(d)


def test_neighbours_untouched_and_scratch_removed(probed: Probed) -> None:
    assert probed.probe.cleanup == "removed"
    assert probed.after == probed.before
    assert not [
        p
        for p in os.listdir(probed.path)
        if p.startswith(".mountbench-probe-") and p not in (".mountbench-probe-marker", ".mountbench-probe-decoy")
    ]


def test_fs_info_names_the_mount(probed: Probed) -> None:
    fs = probed.probe.fs
    expected = {"tmpfs": "tmpfs", "ext4": "ext4", "bindfs": "fuse", "fusefat": "fuse.fusefat"}.get(
        probed.kind, "fuse.sshfs"
    )
    assert fs.fstype == expected
    assert fs.statvfs["f_namemax"] == os.statvfs(probed.path).f_namemax
    assert all(r.duration_ms is not None for r in probed.probe.results)
    assert probed.probe.duration_s is not None and probed.probe.duration_s < 30


def test_figures_the_mount_reports_are_labelled_as_such(probed: Probed) -> None:
    """sshfs invents st_blocks (4 MiB "allocated" for a 4 KiB file with a hole): a figure
    from the mount's own reporting is never presented as measured."""
    statfs = probed.probe.result("statfs")
    assert statfs.reported and "as the mount reports" in statfs.detail
    sparse = probed.probe.result("sparse")
    assert "st_blocks, as the mount reports it" in sparse.detail, sparse
    assert not any(r.reported for r in probed.probe.results if r.capability != "statfs")
