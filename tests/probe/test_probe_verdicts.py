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
import json
import mmap
import os
import select
import shutil
import socket
import stat
import struct
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import realmounts as rm

from mountbench.probe import CAPABILITIES, CAPABILITY_IDS, TargetProbe, probe_target

pytestmark = [pytest.mark.root, rm.requires_root]

KINDS = ("tmpfs", "ext4", "overlay", "bindfs", "sshfs", "sshfs-cache-no", "fusefat")
# fusefat's daemon dies in the deep-path check (run last): test_probe_fat.py probes that on a mount of its own
CRASHES = {"fusefat": ("deep_paths",)}


@dataclass
class Probed:
    kind: str
    path: Path
    probe: TargetProbe
    before: dict[str, tuple[object, ...]]
    after: dict[str, tuple[object, ...]]
    source: Path | None  # the directory behind the mount (bindfs, sshfs), seen directly


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


def _mount(kind: str, stack: ExitStack, request: pytest.FixtureRequest) -> tuple[Path, Path | None]:
    if kind == "tmpfs":
        return stack.enter_context(rm.tmpfs()), None
    if kind == "ext4":
        return stack.enter_context(rm.ext4_loop()), None
    if kind == "overlay":  # redirect_dir=off: a directory of its lower layer cannot be renamed (EXDEV)
        return stack.enter_context(rm.overlay(redirect_dir="off")), None
    if kind == "bindfs":
        src = stack.enter_context(rm.host_dir("bindfs-src"))
        return stack.enter_context(rm.bindfs(src)).mountpoint, src
    if kind == "fusefat":
        return stack.enter_context(rm.fusefat()).mountpoint, None
    server = request.getfixturevalue("ssh_server")
    src = stack.enter_context(rm.host_dir("sshfs-src"))
    # sshfs as the issue found it (other users let in, no default_permissions), and with cache=no
    options = ("cache=no",) if kind == "sshfs-cache-no" else ("allow_other",)
    return stack.enter_context(rm.sshfs(src, server, options)).mountpoint, src


@pytest.fixture(scope="module", params=KINDS)
def probed(request: pytest.FixtureRequest) -> Iterator[Probed]:
    """One real mount per kind, probed once; the mount stays up for the oracles."""
    with ExitStack() as stack:
        try:
            mount, source = _mount(request.param, stack, request)
        except rm.Unavailable as exc:
            pytest.skip(str(exc))
        target = mount / "target"
        target.mkdir()
        make_neighbours(target)
        before = rm.tree_snapshot(target)
        crashes = CRASHES.get(request.param, ())
        result = probe_target(target, timeout=5.0, capabilities=[c for c in CAPABILITIES if c.id not in crashes])
        after = rm.tree_snapshot(target)
        yield Probed(request.param, target, result, before, after, source and source / "target")


# -- oracles: direct syscalls -----------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    verdicts: frozenset[str]
    errno: str | None = None
    value: object = None  # None: not checked
    says: tuple[str, ...] = ()  # what the detail must say (what the oracle observed)
    data_loss: bool | None = None  # None: not checked
    near: tuple[int, int] | None = None  # the value within (x - d, x + d)


def exp(
    *verdicts: str,
    errno: str | None = None,
    value: object = None,
    says: tuple[str, ...] = (),
    data_loss: bool | None = None,
    near: tuple[int, int] | None = None,
) -> Expect:
    return Expect(frozenset(verdicts), errno, value, says, data_loss, near)


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
    """✓ only where f_namemax bytes work and one more is refused with ENAMETOOLONG (tools test
    for that code); test_max_name_length_is_the_real_limit checks the length itself."""
    n = os.statvfs(d).f_namemax
    fits = refused(lambda: touch(d / ("n" * n))) is None
    over = refused(lambda: touch(d / ("n" * (n + 1))))
    if fits and over == "ENAMETOOLONG":
        return exp("yes", value=n)
    if fits and over is not None:
        return exp("differs", errno=over, value=n, says=(f"refused with {over}, not ENAMETOOLONG",))
    return exp("differs")


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
            return exp("no", errno=errno.errorcode[ctypes.get_errno()], says=(_posix_fallocate_odd(d),))
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return exp("yes" if st.st_size == 1 << 20 and st.st_blocks * 512 >= 1 << 20 else "differs")


def _posix_fallocate_odd(d: Path) -> str:
    """What posix_fallocate(fd, 20000, 3456) does to a 12,345-byte file (glibc's emulation)."""
    fd = os.open(d / "odd", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.write(fd, b"f" * 12345)
        e = refused(lambda: os.posix_fallocate(fd, 20000, 3456))
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if e is None:
        return f"3,456 bytes at 20,000 of a 12,345-byte file: succeeds (size {size:,})"
    changed = f", and left the file at {size:,} bytes (was 12,345)" if size != 12345 else ""
    return f"3,456 bytes at 20,000 of a 12,345-byte file: fails, {os.strerror(getattr(errno, e))} ({e}){changed}"


def _blocks_follow_size(d: Path) -> bool:
    """A file truncated to more than the whole filesystem holds shows that much allocated."""
    st = os.statvfs(d)
    size = st.f_blocks * st.f_frsize + (1 << 20)
    fd = os.open(d / "big", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        if refused(lambda: os.ftruncate(fd, size)):
            return False
        return os.fstat(fd).st_blocks * 512 >= size
    finally:
        os.close(fd)
        os.unlink(d / "big")


def sparse(d: Path) -> Expect:
    """A hole reported by SEEK_HOLE is ✓. Otherwise three observations the probe must keep apart:
    few blocks allocated (stored sparse: SEEK_HOLE not passed through), st_blocks that only follow
    the size (unknown), or blocks counted for the whole gap (stored as data)."""
    fd = os.open(d / "f", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.pwrite(fd, b"d" * 4096, 2 << 20)
        grow = refused(lambda: os.ftruncate(fd, 4 << 20))  # a helper refused: never "no"
        os.fsync(fd)
        try:
            data, hole = os.lseek(fd, 0, os.SEEK_DATA), os.lseek(fd, 0, os.SEEK_HOLE)
        except OSError as exc:
            return exp("no", errno=err_name(exc))
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if hole == 0 and 0 < data <= 2 << 20:
        return exp("differs" if grow else "yes", says=("the hole is reported",) if not grow else ())
    if st.st_blocks * 512 < st.st_size // 2:
        storage = "SEEK_HOLE not supported through this mount: it reports no hole, yet only"
    elif _blocks_follow_size(d):
        storage = "SEEK_HOLE not supported through this mount (sparse storage unknown"
    else:
        storage = "holes stored as data (measured by allocated blocks on a filesystem that reports them"
    return exp("differs", errno=grow, says=(storage,))


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


# -- what developers' tools rely on (probe/conformance.py) ------------------------------------------

NOBODY = 65534
T_KEPT, T_SET = 1_599_955_200, 1_499_990_400  # whole days, years apart


def _as_nobody(d: Path) -> dict[str, str | None]:
    """In a child as uid 65534 (no groups): what it may do to root's 0644 file and a 0777 directory."""
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            seen = {
                "read": refused(lambda: os.close(os.open("owned", os.O_RDONLY, dir_fd=dfd))),
                "truncate": refused(lambda: os.close(os.open("owned", os.O_WRONLY | os.O_TRUNC, dir_fd=dfd))),
                "chmod": refused(lambda: os.chmod("owned", 0o666, dir_fd=dfd)),
                "create": refused(
                    lambda: os.close(os.open("shared/mine", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=dfd))
                ),
            }
            os.write(w, json.dumps(seen).encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    out = os.read(r, 4096).decode()
    os.close(r)
    os.close(dfd)
    return json.loads(out)


def other_uid(d: Path) -> Expect:
    old = os.umask(0)
    try:
        os.close(os.open(d / "owned", os.O_CREAT | os.O_WRONLY, 0o644))
        (d / "shared").mkdir(0o777)
    finally:
        os.umask(old)
    seen = _as_nobody(d)
    if seen["read"] and seen["create"]:
        return exp("no", errno=seen["read"], says=("other users cannot use the mount at all",))
    wrong = []
    if seen["truncate"] is None:
        wrong.append("opened it for writing with O_TRUNC")
    if seen["chmod"] is None:
        wrong.append("chmod 666 succeeded")
    if seen["create"] is None and os.stat(d / "shared" / "mine").st_uid != NOBODY:
        wrong.append(f"a file it created is owned by uid {os.stat(d / 'shared' / 'mine').st_uid}")
    if wrong:
        return exp("differs", says=(*wrong, "permissions are not enforced"))
    return exp("yes", says=(f"uid {NOBODY}", f"writing refused ({seen['truncate']})"))


def ctime(d: Path) -> Expect:
    files = {n: touch(d / n) for n in ("chmod", "chown", "link", "rename")}
    before = {n: os.stat(f).st_ctime_ns for n, f in files.items()}
    coarse = all(c % 10**9 == 0 for c in before.values())
    time.sleep(2.1 if coarse else 0.05)  # past the clock step a filesystem keeps ctime in (FAT: 2 s)
    ops = {
        "chmod": lambda: os.chmod(files["chmod"], 0o600),
        "chown": lambda: os.chown(files["chown"], 0, 4242),
        "link": lambda: os.link(files["link"], d / "link.2"),
        "rename": lambda: os.rename(files["rename"], d / "renamed"),
    }
    failed = {n: e for n, op in ops.items() if (e := refused(op))}
    after = {**files, "rename": d / "renamed"}
    unchanged = [n for n in ops if n not in failed and os.stat(after[n]).st_ctime_ns == before[n]]
    if len(failed) == len(ops):
        return exp("no", errno=next(iter(failed.values())))
    if unchanged:
        return exp("differs", says=(f"ctime unchanged by {', '.join(unchanged)}",))
    return exp("yes")


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def _utimensat(path: Path, atime: int | None, mtime: int | None, flags: int = 0) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    omit = (1 << 30) - 2
    ts = (_Timespec * 2)((0, omit) if atime is None else (atime, 0), (0, omit) if mtime is None else (mtime, 0))
    if libc.utimensat(-100, os.fsencode(path), ts, flags) != 0:
        raise OSError(ctypes.get_errno(), "utimensat")


def _is(ns: int, want: int) -> bool:
    return abs(ns / 1e9 - want) < 86_400


def utime_one(d: Path) -> Expect:
    f = touch(d / "f")
    says = []
    for which in ("mtime", "atime"):
        os.utime(f, (T_KEPT, T_KEPT))
        e = refused(lambda w=which: _utimensat(f, None, T_SET) if w == "mtime" else _utimensat(f, T_SET, None))
        if e:
            return exp("no", errno=e)
        st = os.stat(f)
        got = {"mtime": st.st_mtime_ns, "atime": st.st_atime_ns}
        other = "atime" if which == "mtime" else "mtime"
        if not _is(got[which], T_SET):
            says.append(f"setting only the {which} left it")
        if not _is(got[other], T_KEPT):
            says.append(f"setting only the {which} changed the {other}")
    return exp("differs", says=tuple(says)) if says else exp("yes")


def symlink_times(d: Path) -> Expect:
    target = touch(d / "t")
    os.utime(target, (T_KEPT, T_KEPT))
    e = refused(lambda: os.symlink("t", d / "l"))
    if e:  # a helper refused: never "no"
        return exp("differs", errno=e)
    e = refused(lambda: _utimensat(d / "l", T_SET, T_SET, 0x100))  # AT_SYMLINK_NOFOLLOW
    if e:
        return exp("no", errno=e)
    link_set = _is(os.lstat(d / "l").st_mtime_ns, T_SET)
    target_kept = _is(os.stat(target).st_mtime_ns, T_KEPT)
    return exp("yes" if link_set and target_kept else "differs")


def dir_rename_contents(d: Path) -> Expect:
    (d / "d").mkdir()
    touch(d / "d" / "f", b"x\n")
    e = refused(lambda: os.rename(d / "d", d / "e"))
    if e:
        return exp("no", errno=e)
    kept = (d / "e" / "f").exists() and (d / "e" / "f").read_bytes() == b"x\n"
    return exp("yes", data_loss=False) if kept else exp("differs", data_loss=True, says=("e/f is gone",))


def unlink_open(d: Path) -> Expect:
    """Sizes not a multiple of 4 KiB too (issue 49: fusefat returns other bytes for 13 and 5,000)."""
    datas = {n: os.urandom(n) for n in (13, 4095, 4096, 5000, 65536)}
    got, listed = {}, []
    for n, data in datas.items():
        fd = os.open(d / f"f{n}", os.O_CREAT | os.O_RDWR, 0o644)
        try:
            os.write(fd, data)
            os.unlink(d / f"f{n}")
            got[n] = os.pread(fd, n + 1, 0)
            listed += os.listdir(d)
        finally:
            os.close(fd)
    for _ in range(40):  # a FUSE mount removes its .fuse_hidden file a moment after the close
        if not os.listdir(d):
            break
        time.sleep(0.05)
    wrong = [n for n, data in datas.items() if got[n] != data]
    if wrong:
        return exp("differs", data_loss=True, says=tuple(f"{n:,} bytes:" for n in wrong))
    if listed:
        return exp("differs", data_loss=False, says=(listed[0][:12],))  # .fuse_hidden…
    return exp("yes", data_loss=False)


def _past_clock_step(stamps: list[int]) -> None:
    coarse = all(c % 10**9 == 0 for c in stamps)
    time.sleep(2.1 if coarse else 0.05)  # past the clock step a filesystem keeps times in (FAT: 2 s)


def content_times(d: Path) -> Expect:
    """echo two > in: does the content change move mtime and ctime (make, git, rsync)?"""
    for name in ("write", "trunc", "grow"):
        touch(d / name)
    touch(d / "shrink", b"xx")
    (d / "made").mkdir()
    (d / "gone").mkdir()
    touch(d / "gone" / "f")
    paths = {"write": d / "write", "O_TRUNC": d / "trunc", "ftruncate": d / "shrink", "posix_fallocate": d / "grow",
             "a create in it": d / "made", "an unlink in it": d / "gone"}  # fmt: skip
    before = {n: os.stat(p) for n, p in paths.items()}
    _past_clock_step([s.st_mtime_ns for s in before.values()])

    def grow() -> None:
        fd = os.open(d / "grow", os.O_WRONLY)
        try:
            os.posix_fallocate(fd, 0, 8192)
        finally:
            os.close(fd)

    ops = {
        "write": lambda: (d / "write").open("r+b").write(b"y"),
        "O_TRUNC": lambda: os.close(os.open(d / "trunc", os.O_WRONLY | os.O_TRUNC)),
        "ftruncate": lambda: os.truncate(d / "shrink", 1),
        "posix_fallocate": grow,
        "a create in it": lambda: touch(d / "made" / "new"),
        "an unlink in it": lambda: os.unlink(d / "gone" / "f"),
    }
    failed = {n: e for n, op in ops.items() if (e := refused(op))}
    after = {n: os.stat(p) for n, p in paths.items()}
    if len(failed) == len(ops):
        return exp("no", errno=next(iter(failed.values())))
    stale = [n for n in ops if n not in failed and (after[n].st_mtime_ns == before[n].st_mtime_ns
                                                     or after[n].st_ctime_ns == before[n].st_ctime_ns)]  # fmt: skip
    if stale:
        return exp("differs", says=tuple(stale))
    return exp("yes")


def time_range(d: Path) -> Expect:
    f = touch(d / "f")
    wrong = []
    for t in (0, 2**31, 4_041_964_800, 2**32 + 86_400):
        e = refused(lambda t=t: os.utime(f, (t, t)))
        if e:
            wrong.append(e)
        elif abs(os.stat(f).st_mtime - t) > 2:
            wrong.append(time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t)))
    return exp("differs", says=tuple(w for w in wrong if w[0].isdigit())) if wrong else exp("yes")


def append_one(d: Path) -> Expect:
    """One process, O_APPEND, 10 bytes onto 13 and onto 8,192 (issue 49: fusefat EPERM, and an 8 KiB file cut)."""
    lost, codes = False, []
    for size in (13, 8192):
        base = os.urandom(size)
        touch(d / f"a{size}", base)
        fd = os.open(d / f"a{size}", os.O_WRONLY | os.O_APPEND)
        e = refused(lambda fd=fd: os.write(fd, b"+" * 10))
        e = refused(lambda fd=fd: os.close(fd)) or e
        got = (d / f"a{size}").read_bytes()
        if got == base + b"+" * 10:
            continue
        if e and got == base:
            codes.append(e)
        else:
            lost = True
    if lost:
        return exp("differs", data_loss=True)
    return exp("no", errno=codes[0]) if codes else exp("yes")


def truncate_grow(d: Path) -> Expect:
    base = os.urandom(13)
    f = touch(d / "f", base)
    e = refused(lambda: os.truncate(f, 8192))
    if e:
        return exp("no", errno=e)
    got = f.read_bytes()
    if got[:13] != base:
        return exp("differs", data_loss=True)
    return exp("yes" if got == base + bytes(8192 - 13) else "differs")


def create_mode(d: Path) -> Expect:
    old = os.umask(0o002)
    try:
        os.close(os.open(d / "f", os.O_CREAT | os.O_WRONLY, 0o666))
        os.mkdir(d / "dir", 0o777)
    finally:
        os.umask(old)
    made = stat.S_IMODE(os.stat(d / "f").st_mode), stat.S_IMODE(os.stat(d / "dir").st_mode)
    said = f"a file created 0666 is {made[0]:04o}, a directory made 0777 is {made[1]:04o}"
    return exp("yes" if made == (0o664, 0o775) else "differs", says=(said,))


def mknod(d: Path) -> Expect:
    e = refused(lambda: os.mknod(d / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3)))
    if e:
        return exp("no", errno=e)
    st = os.lstat(d / "null")
    return exp("yes" if stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3) else "differs")


def hardlink_attrs(d: Path) -> Expect:
    """Mode, link count and group changed through one name: through the other at once? (bindfs: ~1 s late)"""
    a = touch(d / "a")
    e = refused(lambda: os.link(a, d / "b"))
    if e:
        return exp("no", errno=e)
    os.stat(a)
    os.chmod(d / "b", 0o600)
    os.link(d / "b", d / "c")
    os.chown(d / "b", 0, 4242)
    st = os.stat(a)
    at_once = stat.S_IMODE(st.st_mode) == 0o600 and st.st_nlink == 3 and st.st_gid == 4242
    return exp("yes") if at_once else exp("differs", says=("through the other",))


def lower_dir_rename(d: Path) -> Expect:
    """rename(2) of a directory the overlay's lower layer holds (rm.FROM_LOWER at the mount's top), then back."""
    top = Path(os.path.realpath(d))
    while not os.path.ismount(top):
        top = top.parent
    lower = top / rm.FROM_LOWER
    if not lower.is_dir():
        return exp("yes", says=("not an overlay mount",))
    e = refused(lambda: os.rename(lower, top / "renamed-by-oracle"))
    if e is None:
        os.rename(top / "renamed-by-oracle", lower)
        return exp("yes", says=("redirect_dir=on",))
    return exp("no", errno=e, says=("redirect_dir=off",))


def errno_codes(d: Path) -> Expect:
    (d / "full").mkdir()
    touch(d / "full" / "f")
    (d / "full2").mkdir()
    touch(d / "full2" / "f")
    touch(d / "file")
    n = max(256, os.statvfs(d).f_namemax + 1)
    checks = [
        (f"create a {n}-byte name", "ENAMETOOLONG", lambda: touch(d / ("n" * n))),
        (f"look up a {n}-byte name", "ENAMETOOLONG", lambda: os.stat(d / ("n" * n))),
        ("rmdir a non-empty directory", "ENOTEMPTY", lambda: os.rmdir(d / "full")),
        ("rename a directory onto a non-empty one", "ENOTEMPTY", lambda: os.rename(d / "full2", d / "full")),
        ("mkdir an existing name", "EEXIST", lambda: os.mkdir(d / "file")),
        ("rename to another mount (/proc)", "EXDEV", lambda: os.rename(d / "file", "/proc/mountbench-oracle")),
    ]
    wrong = [(what, want, got) for what, want, call in checks if (got := refused(call)) != want]
    if wrong:
        return exp(
            "differs",
            errno=wrong[0][2],
            says=tuple(f"{what}: {got or 'succeeded'}, not {want}" for what, want, got in wrong),
        )
    return exp("yes")


def _below_mount(d: Path) -> int:
    """Bytes of ``d``'s path below the mount point it is on."""
    real = os.path.realpath(d)
    top = real
    while not os.path.ismount(top):
        top = os.path.dirname(top)
    return len(real) - len(top.rstrip("/"))


def deep_paths(d: Path) -> Expect:
    """Where the deep-path limit is: 100-byte directories one inside the other, by descriptor, to within
    100 bytes of PATH_MAX below the mount point (or until a mkdir fails); then files created in the deepest
    under names one byte longer at a time, up to 4,146 bytes within the mount (50 past PATH_MAX); then a
    file renamed in under the longest name that worked."""
    real, inside = os.path.realpath(d), _below_mount(d)
    touch(d / "f", b"deep")
    fds = [os.open(d, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        while inside + 101 <= 4096 - 100:
            if refused(lambda: os.mkdir("d" * 100, dir_fd=fds[-1])):
                break
            fds.append(os.open("d" * 100, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
            inside += 101

        def creates(n: int) -> bool:
            if refused(lambda: os.close(os.open("c" * n, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fds[-1]))):
                return False
            os.unlink("c" * n, dir_fd=fds[-1])
            return True

        # 16 bytes longer at a time, then byte by byte (a FUSE daemon that dies past its limit dies there)
        top, longest, failed_at = min(255, 4146 - inside - 1), 0, None
        for n in [*range(16, top, 16), top]:
            if not creates(n):
                failed_at = n
                break
            longest = n
        for n in range(longest + 1, failed_at or longest + 1):
            if not creates(n):
                break
            longest = n
        limit = inside + 1 + longest
        from_root = len(real) - _below_mount(d) + limit
        if limit < 4146:
            return exp("differs", says=(f"paths end at {limit:,} bytes within the mount",), near=(from_root, 2))
        e = refused(lambda: os.rename("f", "g" * longest, src_dir_fd=fds[0], dst_dir_fd=fds[-1]))
        if e:
            return exp("differs", errno=e, says=("renaming one in there",), near=(from_root, 2))
        return exp("yes", near=(from_root, 2))
    finally:
        for fd in fds:
            os.close(fd)


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
    "other_uid": other_uid,
    "ctime": ctime,
    "utime_one": utime_one,
    "symlink_times": symlink_times,
    "dir_rename_contents": dir_rename_contents,
    "unlink_open": unlink_open,
    "content_times": content_times,
    "time_range": time_range,
    "append_one": append_one,
    "truncate_grow": truncate_grow,
    "create_mode": create_mode,
    "mknod": mknod,
    "hardlink_attrs": hardlink_attrs,
    "lower_dir_rename": lower_dir_rename,
    "errno": errno_codes,
    "deep_paths": deep_paths,
}


def test_every_capability_has_an_oracle() -> None:
    assert set(ORACLES) == set(CAPABILITY_IDS)


@pytest.mark.parametrize("capability", CAPABILITY_IDS)
def test_verdict_matches_the_kernel(probed: Probed, capability: str) -> None:
    if capability in CRASHES.get(probed.kind, ()):
        pytest.skip(f"{capability} kills {probed.kind}'s daemon: test_probe_fat.py checks it on a mount of its own")
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
    for said in expected.says:
        assert said in result.detail, f"{context}: should say {said!r}"
    if expected.data_loss is not None:
        assert (result.severity == "data loss") == expected.data_loss, context
    if expected.near is not None:
        assert isinstance(result.value, int) and abs(result.value - expected.near[0]) < expected.near[1], context
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
    expected = {
        "tmpfs": "tmpfs",
        "ext4": "ext4",
        "overlay": "overlay",
        "bindfs": "fuse",
        "fusefat": "fuse.fusefat",
    }.get(probed.kind, "fuse.sshfs")
    assert fs.fstype == expected
    assert fs.statvfs["f_namemax"] == os.statvfs(probed.path).f_namemax
    assert all(r.duration_ms is not None for r in probed.probe.results)
    assert probed.probe.duration_s is not None and probed.probe.duration_s < 15  # the bound issue 35 sets


def test_figures_the_mount_reports_are_labelled_as_such(probed: Probed) -> None:
    """sshfs invents st_blocks (4 MiB "allocated" for a 4 KiB file with a hole): a figure
    from the mount's own reporting is never presented as measured."""
    statfs = probed.probe.result("statfs")
    assert statfs.reported and "as the mount reports" in statfs.detail
    sparse = probed.probe.result("sparse")
    assert "st_blocks, as the mount reports it" in sparse.detail, sparse
    # and a verdict read from the mount's options (an overlay's redirect_dir), not tried, is marked so too
    reported = {r.capability for r in probed.probe.results if r.reported}
    assert reported == ({"statfs", "lower_dir_rename"} if probed.kind == "overlay" else {"statfs"}), reported


def test_sparse_never_says_stored_as_data_where_the_backing_file_is_sparse(probed: Probed) -> None:
    """bindfs and sshfs: the probe's 4 MiB file with 4 KiB at 2 MiB is sparse in the directory behind
    the mount (SEEK_DATA there finds the data at 2 MiB), whatever SEEK_HOLE says through the mount."""
    if probed.source is None:
        pytest.skip("no directory behind this mount to look at")
    fd = os.open(probed.path / "backing-check", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.pwrite(fd, b"d" * 4096, 2 << 20)
        os.ftruncate(fd, 4 << 20)
        os.fsync(fd)
    finally:
        os.close(fd)
    behind = os.open(probed.source / "backing-check", os.O_RDONLY)
    try:
        assert os.lseek(behind, 0, os.SEEK_DATA) == 2 << 20  # stored sparse
    finally:
        os.close(behind)
        os.unlink(probed.path / "backing-check")
    detail = probed.probe.result("sparse").detail
    assert "holes stored as data" not in detail, detail
    assert "SEEK_HOLE not supported through this mount" in detail, detail


def test_the_hard_link_detail_says_what_was_seen(probed: Probed) -> None:
    """Was "a write through one name is not seen through the other" on bindfs, where the append
    showed a moment later: a late append or st_nlink is said with how late."""
    detail = probed.probe.result("hardlink").detail
    assert "is not seen through the other" not in detail
    for line in detail.split("; "):
        if "append" in line or "st_nlink stayed" in line:
            assert " s" in line, line


def test_the_summary_says_what_tools_meet_there(probed: Probed) -> None:
    """One line per target under the data-loss line: capabilities as on a local filesystem, and
    make, git, rsync -a and an editor's save-by-rename, each ✓ only where all it relies on is ✓."""
    from mountbench.probe import ProbeReport, render_document_markdown
    from mountbench.probe.tools import TOOLS

    text = render_document_markdown(ProbeReport((probed.probe,)))
    results = {r.capability: r for r in probed.probe.results}
    if all(r.verdict == "yes" for r in results.values()):
        assert "find all they rely on" in text
        return
    yes = sum(r.verdict == "yes" for r in results.values())
    assert f"{yes} of {len(results)} capabilities tried as on a local filesystem" in text
    for tool in TOOLS:
        broken = [results[n.capability] for n in tool.needs if results[n.capability].verdict != "yes"]
        mark = "‼" if any(r.severity == "data loss" for r in broken) else "≠" if broken else "✓"
        assert f"{tool.name} {mark}" in text, (tool.name, broken)
        for r in broken:  # each named, with what it breaks for the tool
            why = next(n.why for n in tool.needs if n.capability == r.capability)
            assert f"{r.title} " in text and why in text
