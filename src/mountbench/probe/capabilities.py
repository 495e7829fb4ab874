"""One function per capability: try it for real inside a work directory, say what happened.

Each function takes a :class:`ProbeContext` (its own empty work directory inside the
scratch directory, and the time budget) and returns a :class:`Finding`. They run in a
child process (see :mod:`mountbench.probe.sandbox`), so they may block, fork helpers
and change the working directory freely. A refused call is reported by raising
:class:`Refused` (through :func:`step`), which the runner turns into verdict "no"
with the errno name.

Verdict rule: "no" only when a call is refused; "differs" when the calls succeed
but the filesystem does not behave like a local Linux one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import itertools
import mmap
import os
import socket
import stat
import struct
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mountbench.probe import inotify
from mountbench.probe.model import DIFFERS, NO, YES, Finding
from mountbench.probe.sandbox import Child, errno_name


@dataclass(frozen=True)
class ProbeContext:
    work: Path  # an empty directory of the probe's own, inside the scratch directory
    timeout: float  # the probe's whole budget; internal waits use fractions of it


class Refused(Exception):
    """A call was refused with an errno: verdict "no"."""

    def __init__(self, what: str, err: OSError) -> None:
        super().__init__(f"{what}: {err.strerror or err}")
        self.what = what
        self.err = err

    def finding(self) -> Finding:
        return Finding(NO, detail=str(self), errno=errno_name(self.err.errno))


@contextmanager
def step(what: str) -> Iterator[None]:
    """Label the call(s) inside: an OSError becomes :class:`Refused` naming ``what``."""
    try:
        yield
    except OSError as err:
        raise Refused(what, err) from err


@dataclass(frozen=True)
class Capability:
    id: str
    title: str
    fn: Callable[[ProbeContext], Finding]
    needs_root: bool = False


# -- small helpers ------------------------------------------------------------------


def _write(path: Path, data: bytes, flags: int = 0) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _read(path: Path | str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


# -- data path ----------------------------------------------------------------------


def probe_o_direct(ctx: ProbeContext) -> Finding:
    path = ctx.work / "odirect"
    with step("open(O_CREAT|O_RDWR|O_DIRECT)"):
        fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o644)
    try:
        wbuf = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT wants
        wbuf.write(b"D" * 4096)
        try:
            os.pwritev(fd, [wbuf], 0)
        except OSError as err:
            return Finding(
                DIFFERS,
                f"open accepted O_DIRECT but an aligned 4 KiB write failed: {errno_name(err.errno)} ({err.strerror})",
            )
        rbuf = mmap.mmap(-1, 4096)
        try:
            n = os.preadv(fd, [rbuf], 0)
        except OSError as err:
            return Finding(
                DIFFERS,
                f"aligned write worked but an aligned 4 KiB read failed: {errno_name(err.errno)}",
            )
        if n != 4096 or rbuf[:] != wbuf[:]:
            return Finding(DIFFERS, f"aligned read returned {n} bytes that differ from the write")
        try:
            os.pwrite(fd, b"u" * 100, 1)
            unaligned = "accepted"
        except OSError as err:
            unaligned = f"refused ({errno_name(err.errno)})"
    finally:
        os.close(fd)
    return Finding(YES, f"aligned 4 KiB write and read work; an unaligned 100-byte write is {unaligned}")


def _sync_probe(ctx: ProbeContext, name: str, call: Callable[[int], None]) -> Finding:
    path = ctx.work / name
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(fd, b"s" * 65536)
        t0 = time.perf_counter()
        with step(f"{name} after a 64 KiB write"):
            call(fd)
        took = time.perf_counter() - t0
    finally:
        os.close(fd)
    return Finding(YES, f"{name} after a 64 KiB write took {_ms(took):.3f} ms", value=_ms(took), unit="ms")


def probe_fsync(ctx: ProbeContext) -> Finding:
    return _sync_probe(ctx, "fsync", os.fsync)


def probe_fdatasync(ctx: ProbeContext) -> Finding:
    return _sync_probe(ctx, "fdatasync", os.fdatasync)


# -- ownership and metadata -----------------------------------------------------------


def probe_chmod(ctx: ProbeContext) -> Finding:
    path = ctx.work / "f"
    _write(path, b"x")
    wrong = []
    for mode in (0o600, 0o751, 0o644):
        with step(f"chmod {mode:o}"):
            os.chmod(path, mode)
        got = stat.S_IMODE(os.stat(path).st_mode)
        if got != mode:
            wrong.append(f"chmod {mode:o} gave {got:o}")
    if wrong:
        return Finding(DIFFERS, "; ".join(wrong))
    return Finding(YES, "modes 600, 751, 644 set and read back")


def _other_id(current: int) -> int:
    return 4242 if current != 4242 else 4243


def _chown_probe(ctx: ProbeContext, which: str) -> Finding:
    path = ctx.work / "f"
    _write(path, b"x")
    st = os.stat(path)
    current = st.st_uid if which == "uid" else st.st_gid
    other = _other_id(current)
    with step(f"chown {which} {current} -> {other}"):
        if which == "uid":
            os.chown(path, other, -1)
        else:
            os.chown(path, -1, other)
    st = os.stat(path)
    got = st.st_uid if which == "uid" else st.st_gid
    if got != other:
        return Finding(DIFFERS, f"chown to {which} {other} succeeded but the file shows {which} {got}")
    return Finding(YES, f"{which} {current} -> {other} set and read back")


def probe_chown_uid(ctx: ProbeContext) -> Finding:
    return _chown_probe(ctx, "uid")


def probe_chown_gid(ctx: ProbeContext) -> Finding:
    return _chown_probe(ctx, "gid")


def probe_user_xattr(ctx: ProbeContext) -> Finding:
    path = ctx.work / "f"
    _write(path, b"x")
    name, value = "user.mountbench", b"probe-value\x00\xff"
    with step(f"setxattr {name}"):
        os.setxattr(path, name, value)
    with step(f"getxattr {name}"):
        got = os.getxattr(path, name)
    with step("listxattr"):
        listed = os.listxattr(path)
    problems = []
    if got != value:
        problems.append(f"getxattr returned {got!r}, set {value!r}")
    if name not in listed:
        problems.append(f"listxattr does not list it ({listed})")
    if problems:
        return Finding(DIFFERS, "; ".join(problems))
    return Finding(YES, "set, read back and listed")


ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK, ACL_OTHER = 1, 2, 4, 8, 16, 32
ACL_UNDEFINED_ID = 0xFFFFFFFF
ACL_XATTR = "system.posix_acl_access"


def acl_xattr(entries: list[tuple[int, int, int]]) -> bytes:
    """The kernel's xattr form of an ACL (version 2; entries sorted by tag, then id)."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", tag, perm, qid) for tag, perm, qid in sorted(entries))


def parse_acl_xattr(data: bytes) -> list[tuple[int, int, int]]:
    (version,) = struct.unpack_from("<I", data)
    if version != 2:
        raise ValueError(f"ACL xattr version {version}")
    return [struct.unpack_from("<HHI", data, off) for off in range(4, len(data), 8)]


SAMPLE_ACL = [
    (ACL_USER_OBJ, 6, ACL_UNDEFINED_ID),
    (ACL_USER, 4, 4242),
    (ACL_GROUP_OBJ, 4, ACL_UNDEFINED_ID),
    (ACL_MASK, 6, ACL_UNDEFINED_ID),
    (ACL_OTHER, 0, ACL_UNDEFINED_ID),
]


def probe_posix_acl(ctx: ProbeContext) -> Finding:
    path = ctx.work / "f"
    _write(path, b"x")
    with step(f"setxattr {ACL_XATTR} (user:4242:r--, mask rw-)"):
        os.setxattr(path, ACL_XATTR, acl_xattr(SAMPLE_ACL))
    with step(f"getxattr {ACL_XATTR}"):
        got = os.getxattr(path, ACL_XATTR)
    entries = sorted(parse_acl_xattr(got))
    if entries != sorted(SAMPLE_ACL):
        return Finding(DIFFERS, f"ACL set but read back as {entries}")
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o070 != 0o060:
        return Finding(DIFFERS, f"ACL read back, but group bits of the mode ({mode:o}) ignore the mask")
    return Finding(YES, "an ACL with a named user set and read back; mode reflects the mask")


# -- names and links -----------------------------------------------------------------


def probe_symlink(ctx: ProbeContext) -> Finding:
    _write(ctx.work / "target", b"through the link")
    link = ctx.work / "link"
    with step("symlink"):
        os.symlink("target", link)
    with step("readlink"):
        got = os.readlink(link)
    problems = []
    if got != "target":
        problems.append(f"readlink gave {got!r}")
    if not stat.S_ISLNK(os.lstat(link).st_mode):
        problems.append("lstat does not say it is a link")
    with step("open through the link"):
        content = _read(link)
    if content != b"through the link":
        problems.append("reading through the link gave other content")
    if problems:
        return Finding(DIFFERS, "; ".join(problems))
    return Finding(YES, "created, readlink and lstat right, followed on open")


def probe_hardlink(ctx: ProbeContext) -> Finding:
    a, b = ctx.work / "a", ctx.work / "b"
    _write(a, b"first")
    with step("link"):
        os.link(a, b)
    sa, sb = os.stat(a), os.stat(b)
    problems = []
    if sa.st_ino != sb.st_ino:
        problems.append(f"st_ino differs between the names ({sa.st_ino} vs {sb.st_ino})")
    if (sa.st_nlink, sb.st_nlink) != (2, 2):
        problems.append(f"st_nlink is {sa.st_nlink}/{sb.st_nlink}, expected 2")
    with open(b, "ab") as f:
        f.write(b"+second")
    if _read(a) != b"first+second":
        problems.append("a write through one name is not seen through the other")
    os.unlink(b)
    nlink = os.stat(a).st_nlink
    if nlink != 1:
        problems.append(f"st_nlink is {nlink} after unlinking one name, expected 1")
    if problems:
        return Finding(DIFFERS, "; ".join(problems))
    return Finding(YES, "same st_ino, st_nlink 2 then 1, data shared")


def _rename_reader(path: str, seconds: float) -> dict[str, Any]:
    """Open and read ``path`` in a loop; count failures and torn contents."""
    counts = {"reads": 0, "missing": 0, "torn": 0}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            data = _read(path)
        except FileNotFoundError:
            counts["missing"] += 1
            continue
        counts["reads"] += 1
        token = data[:8]
        if len(token) != 8 or data != token * 64:
            counts["torn"] += 1
    return counts


def probe_rename_over(ctx: ProbeContext) -> Finding:
    target = ctx.work / "target"
    _write(target, b"%08d" % 0 * 64)
    _write(ctx.work / "new0", b"%08d" % 1 * 64)
    with step("rename over an existing file"):
        os.rename(ctx.work / "new0", target)
    if _read(target) != b"%08d" % 1 * 64 or (ctx.work / "new0").exists():
        return Finding(DIFFERS, "after rename the target does not hold the new content")
    # Atomic replacement: a reader in another process must never find the name missing.
    window = min(0.3, ctx.timeout / 10)
    reader = Child(_rename_reader, str(target), window, new_group=False)
    end = time.monotonic() + window
    version = 1
    while time.monotonic() < end:
        version += 1
        tmp = ctx.work / f"new{version}"
        _write(tmp, b"%08d" % version * 64)
        os.rename(tmp, target)
    outcome = reader.wait(ctx.timeout / 3)
    if outcome.status != "ok":
        return Finding(DIFFERS, f"concurrent reader ended with {outcome.status}: {outcome.message}")
    c = outcome.value
    seen = f"{version - 1} replacements while another process read {c['reads']} times"
    if c["missing"] or c["torn"]:
        return Finding(
            DIFFERS,
            f"not atomic: the name was missing {c['missing']} times and content torn {c['torn']} times during {seen}",
        )
    return Finding(YES, f"atomic: never missing nor torn during {seen}")


def probe_rename_dir(ctx: ProbeContext) -> Finding:
    d1, d2, d3 = ctx.work / "d1", ctx.work / "d2", ctx.work / "d3"
    os.mkdir(d1)
    _write(d1 / "f", b"inside")
    with step("rename a directory"):
        os.rename(d1, d2)
    if d1.exists() or _read(d2 / "f") != b"inside":
        return Finding(DIFFERS, "after renaming, the old name remains or the content is lost")
    os.mkdir(d3)
    try:
        os.rename(d2, d3)
    except OSError as err:
        return Finding(
            DIFFERS,
            f"renamed, but renaming a directory over an empty one fails: {errno_name(err.errno)}",
        )
    if _read(d3 / "f") != b"inside":
        return Finding(DIFFERS, "renaming over an empty directory lost the content")
    return Finding(YES, "renamed (with content), also over an empty directory")


def probe_case_sensitive(ctx: ProbeContext) -> Finding:
    upper, lower = ctx.work / "Case.txt", ctx.work / "case.txt"
    _write(upper, b"upper")
    if os.path.lexists(lower):
        same = os.path.samefile(upper, lower)
        return Finding(
            DIFFERS,
            "case-insensitive: 'case.txt' finds 'Case.txt'" + ("" if same else " (another inode)"),
        )
    _write(lower, b"lower")
    names = sorted(os.listdir(ctx.work))
    if names != ["Case.txt", "case.txt"] or _read(upper) != b"upper":
        return Finding(DIFFERS, f"after creating both names the directory holds {names}")
    return Finding(YES, "'Case.txt' and 'case.txt' are two files")


NFC_NAME = unicodedata.normalize("NFC", "caf\u00e9")
NFD_NAME = unicodedata.normalize("NFD", "caf\u00e9")


def probe_unicode_names(ctx: ProbeContext) -> Finding:
    nfc, nfd = ctx.work / NFC_NAME, ctx.work / NFD_NAME
    with step("create a file with an NFC name"):
        _write(nfc, b"nfc")
    listed = os.listdir(ctx.work)
    if listed != [NFC_NAME]:
        form = "NFD" if listed == [NFD_NAME] else repr(listed)
        return Finding(DIFFERS, f"created with an NFC name, listed as {form}: names are normalised")
    if os.path.lexists(nfd):
        return Finding(DIFFERS, "the NFD spelling finds the NFC file: lookups normalise names")
    with step("create a file with the NFD name"):
        _write(nfd, b"nfd")
    if sorted(os.listdir(ctx.work)) != sorted([NFC_NAME, NFD_NAME]) or _read(nfc) != b"nfc":
        return Finding(DIFFERS, f"after creating both spellings: {os.listdir(ctx.work)}")
    return Finding(YES, "NFC and NFD spellings of 'café' are two files (names are bytes)")


def probe_max_name_length(ctx: ProbeContext) -> Finding:
    dfd = os.open(ctx.work, os.O_RDONLY | os.O_DIRECTORY)
    errors: dict[int, OSError] = {}

    def fits(n: int) -> bool:
        name = "n" * n
        try:
            fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644, dir_fd=dfd)
        except OSError as err:
            errors[n] = err
            return False
        os.close(fd)
        os.unlink(name, dir_fd=dfd)
        return True

    try:
        if not fits(1):
            raise Refused("create a 1-byte name", errors[1])
        if fits(255):
            lo, hi = (255, 256) if not fits(256) else (256, 4095)
            if hi == 4095 and fits(hi):
                lo = hi
        else:
            lo, hi = 1, 255
        while hi - lo > 1:  # invariant: a name of lo bytes fits, one of hi bytes does not
            mid = (lo + hi) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid
        best = lo
        namemax = os.fstatvfs(dfd).f_namemax
    finally:
        os.close(dfd)
    refused = f"; {best + 1} bytes: {errno_name(errors[best + 1].errno)}" if best + 1 in errors else ""
    detail = f"{best} bytes{refused} (statvfs f_namemax {namemax})"
    if best != namemax:
        return Finding(DIFFERS, detail, value=best, unit="bytes")
    return Finding(YES, detail, value=best, unit="bytes")


# -- special files --------------------------------------------------------------------


def probe_fifo(ctx: ProbeContext) -> Finding:
    path = ctx.work / "fifo"
    with step("mkfifo"):
        os.mkfifo(path, 0o644)
    if not stat.S_ISFIFO(os.lstat(path).st_mode):
        return Finding(DIFFERS, "mkfifo succeeded but lstat does not show a FIFO")
    with step("open the FIFO"):
        rfd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            wfd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            os.close(rfd)
            raise
    try:
        os.write(wfd, b"ping")
        got = os.read(rfd, 16)
    finally:
        os.close(wfd)
        os.close(rfd)
    if got != b"ping":
        return Finding(DIFFERS, f"data through the FIFO came out as {got!r}")
    return Finding(YES, "created; data passes through it")


def probe_unix_socket(ctx: ProbeContext) -> Finding:
    os.chdir(ctx.work)  # a relative name: sun_path is limited to 108 bytes
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with step("bind a Unix socket"):
            server.bind("sock")
        server.listen(1)
        if not stat.S_ISSOCK(os.lstat("sock").st_mode):
            return Finding(DIFFERS, "bound, but lstat does not show a socket")
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            client.settimeout(max(0.2, ctx.timeout / 5))
            server.settimeout(max(0.2, ctx.timeout / 5))
            try:
                client.connect("sock")
                conn, _ = server.accept()
            except OSError as err:
                return Finding(DIFFERS, f"bound, but connecting to it fails: {errno_name(err.errno)}")
            with conn:
                client.sendall(b"ping")
                got = conn.recv(16)
        finally:
            client.close()
    finally:
        server.close()
    if got != b"ping":
        return Finding(DIFFERS, f"data through the socket came out as {got!r}")
    return Finding(YES, "bound, connected through the name, data passes")


# -- allocation ---------------------------------------------------------------------------


def probe_fallocate(ctx: ProbeContext) -> Finding:
    libc = _libc()
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    libc.fallocate.restype = ctypes.c_int
    size = 1 << 20
    fd = os.open(ctx.work / "alloc", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        if libc.fallocate(fd, 0, 0, size) != 0:
            err = ctypes.get_errno()
            raise Refused("fallocate(mode 0, 1 MiB)", OSError(err, os.strerror(err)))
        st = os.fstat(fd)
    finally:
        os.close(fd)
    allocated = st.st_blocks * 512
    detail = f"1 MiB: size {st.st_size}, {allocated} bytes allocated"
    if st.st_size != size:
        return Finding(DIFFERS, detail)
    if allocated < size:
        return Finding(DIFFERS, detail + " (st_blocks does not show the allocation)")
    return Finding(YES, detail)


def probe_sparse(ctx: ProbeContext) -> Finding:
    path = ctx.work / "sparse"
    size, data_at = 4 << 20, 2 << 20
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.pwrite(fd, b"d" * 4096, data_at)
        os.ftruncate(fd, size)
        os.fsync(fd)
        with step("lseek(SEEK_DATA, 0)"):
            first_data = os.lseek(fd, 0, os.SEEK_DATA)
        with step("lseek(SEEK_HOLE, 0)"):
            first_hole = os.lseek(fd, 0, os.SEEK_HOLE)
        allocated = os.fstat(fd).st_blocks * 512
    finally:
        os.close(fd)
    detail = (
        f"4 KiB written at 2 MiB in a 4 MiB file: SEEK_DATA(0)={first_data}, "
        f"SEEK_HOLE(0)={first_hole}, {allocated} bytes allocated"
    )
    if first_hole == 0 and 0 < first_data <= data_at:
        return Finding(YES, detail)
    return Finding(DIFFERS, detail + " (holes not reported)")


# -- concurrency -----------------------------------------------------------------------------

RECORD = 32


def _appender(path: str, tag: str, count: int, seconds: float) -> int:
    """Append up to ``count`` fixed-size records within ``seconds``; return how many."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    end = time.monotonic() + seconds
    written = 0
    try:
        while written < count and time.monotonic() < end:
            os.write(fd, f"{tag}{written:08d}".ljust(RECORD - 1, ".").encode() + b"\n")
            written += 1
    finally:
        os.close(fd)
    return written


def probe_o_append(ctx: ProbeContext) -> Finding:
    path = ctx.work / "log"
    with step("open(O_APPEND)"):
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))
    seconds = ctx.timeout * 0.4  # on a slow mount, fewer records rather than a hang
    writers = [Child(_appender, str(path), tag, 300, seconds, new_group=False) for tag in "AB"]
    counts = {}
    for tag, w in zip("AB", writers, strict=True):
        outcome = w.wait(ctx.timeout * 0.5)
        if outcome.status == "oserror":
            return Finding(NO, f"appending: {outcome.message}", errno=outcome.errno)
        if outcome.status != "ok":
            return Finding(DIFFERS, f"a writer ended with {outcome.status}: {outcome.message}")
        counts[tag] = outcome.value
    data = _read(path)
    lines = data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")
    good = [ln for ln in lines if len(ln) == RECORD - 1]
    seen = {ln[:9] for ln in good}
    expected = {f"{t}{i:08d}".encode() for t, n in counts.items() for i in range(n)}
    total = sum(counts.values())
    lost = len(expected - seen)
    torn = len(lines) - len(good)
    detail = f"{total} records of {RECORD} bytes from 2 processes: file is {len(data)} bytes"
    if lost or torn or len(data) != total * RECORD:
        return Finding(DIFFERS, f"{detail}, {lost} records lost, {torn} torn")
    return Finding(YES, f"{detail}, none lost or torn")


def probe_mmap_shared(ctx: ProbeContext) -> Finding:
    path = ctx.work / "mapped"
    _write(path, b"\0" * 8192)
    fd = os.open(path, os.O_RDWR)
    reader = os.open(path, os.O_RDONLY)
    try:
        with step("mmap(MAP_SHARED, PROT_WRITE)"):
            mm = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        try:
            mm[100:116] = b"mountbench-mmap!"
            before = os.pread(reader, 16, 100)
            mm.flush()
            after = os.pread(reader, 16, 100)
        finally:
            mm.close()
    finally:
        os.close(reader)
        os.close(fd)
    if before == b"mountbench-mmap!":
        return Finding(YES, "a store into the mapping is seen by read() at once")
    if after == b"mountbench-mmap!":
        return Finding(DIFFERS, "read() sees a store into the mapping only after msync")
    return Finding(DIFFERS, "read() does not see a store into the mapping, even after msync")


def try_lock(path: str, kind: str, blocking: bool) -> dict[str, Any]:
    """Try an exclusive ``flock`` or ``fcntl`` lock on ``path`` (run it in another process)."""
    fd = os.open(path, os.O_RDWR)
    t0 = time.monotonic()
    try:
        flags = fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB)
        try:
            if kind == "flock":
                fcntl.flock(fd, flags)
            else:
                fcntl.lockf(fd, flags)
        except OSError as err:
            return {"got": False, "errno": errno_name(err.errno)}
        return {"got": True, "waited_ms": _ms(time.monotonic() - t0)}
    finally:
        os.close(fd)


def _lock_probe(ctx: ProbeContext, kind: str) -> Finding:
    path = ctx.work / "lockfile"
    _write(path, b"lock")
    fd = os.open(path, os.O_RDWR)
    try:
        with step(f"{kind} LOCK_EX"):
            if kind == "flock":
                fcntl.flock(fd, fcntl.LOCK_EX)
            else:
                fcntl.lockf(fd, fcntl.LOCK_EX)
        nb = Child(try_lock, str(path), kind, False, new_group=False).wait(ctx.timeout / 4)
        if nb.status != "ok":
            return Finding(DIFFERS, f"second process's non-blocking attempt: {nb.status} {nb.message}")
        if nb.value["got"]:
            return Finding(DIFFERS, "a second process got the lock while the first held it")
        hold = min(0.3, ctx.timeout / 10)
        waiter = Child(try_lock, str(path), kind, True, new_group=False)
        early = waiter.poll(hold)
        if early is not None and early.status == "ok" and early.value["got"]:
            return Finding(DIFFERS, "a second process's blocking attempt got the lock while held")
        if kind == "flock":
            fcntl.flock(fd, fcntl.LOCK_UN)
        else:
            fcntl.lockf(fd, fcntl.LOCK_UN)
        late = waiter.wait(ctx.timeout / 3)
    finally:
        os.close(fd)
    if late.status != "ok" or not late.value["got"]:
        return Finding(DIFFERS, f"blocked, but not granted after release ({late.status})")
    return Finding(
        YES,
        f"second process refused ({nb.value['errno']}) with LOCK_NB, blocked for "
        f"{late.value['waited_ms']:.0f} ms, granted after release",
    )


def probe_flock(ctx: ProbeContext) -> Finding:
    return _lock_probe(ctx, "flock")


def probe_fcntl_lock(ctx: ProbeContext) -> Finding:
    return _lock_probe(ctx, "fcntl")


# -- time, events, figures ---------------------------------------------------------------------

UTIME_NS = 1_700_000_000_123_456_789


def granularity_ns(set_ns: int, got_ns: int) -> int | None:
    """The coarsest power-of-ten unit (in ns) that explains ``got_ns`` (None if none does)."""
    for unit in (10**k for k in range(10)):
        if set_ns - set_ns % unit == got_ns or -(-set_ns // unit) * unit == got_ns:
            return unit
    return None


def _unit_text(ns: int) -> str:
    for unit, name in ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs")):
        if ns >= unit:
            return f"{ns // unit} {name}"
    return f"{ns} ns"


def probe_mtime_granularity(ctx: ProbeContext) -> Finding:
    path = ctx.work / "f"
    _write(path, b"x")
    with step("utimensat with nanoseconds"):
        os.utime(path, ns=(UTIME_NS, UTIME_NS))
    got = os.stat(path).st_mtime_ns
    unit = granularity_ns(UTIME_NS, got)
    # Writes: how finely do mtimes set by the filesystem itself step?
    stamps = []
    for _ in range(10):
        with open(path, "ab") as f:
            f.write(b"x")
        stamps.append(os.stat(path).st_mtime_ns)
        time.sleep(0.002)
    steps = sorted({b - a for a, b in itertools.pairwise(stamps) if b != a})
    writes = f"10 writes 2 ms apart gave {len(set(stamps))} distinct mtimes"
    if all(s % 1_000_000_000 == 0 for s in stamps):
        writes += ", all whole seconds"
    elif steps:
        writes += f", smallest step {steps[0] / 1e6:.3f} ms"
    if unit is None:
        return Finding(DIFFERS, f"set {UTIME_NS} ns, read back {got} ns; {writes}")
    detail = f"utime keeps {_unit_text(unit)}; {writes}"
    return Finding(YES if unit == 1 else DIFFERS, detail, value=unit, unit="ns")


INOTIFY_WANTED = {
    ("create", "f"),
    ("modify", "f"),
    ("close_write", "f"),
    ("attrib", "f"),
    ("moved_from", "f"),
    ("moved_to", "g"),
    ("delete", "g"),
}


def probe_inotify(ctx: ProbeContext) -> Finding:
    with step("inotify_add_watch on the directory"), inotify.Watch(ctx.work) as watch:
        f, g = ctx.work / "f", ctx.work / "g"
        _write(f, b"one")
        with open(f, "ab") as fh:
            fh.write(b"two")
        os.chmod(f, 0o600)
        os.rename(f, g)
        os.unlink(g)
        _events, missing = watch.collect_until(INOTIFY_WANTED, min(1.0, ctx.timeout / 4))
    if missing:
        got = sorted(INOTIFY_WANTED - missing)
        return Finding(
            DIFFERS,
            f"missing {sorted(missing)}; received {got}" if got else "no events at all",
        )
    return Finding(YES, "create, modify, close_write, attrib, moved_from/to, delete all arrived")


def probe_statfs(ctx: ProbeContext) -> Finding:
    with step("statvfs"):
        st = os.statvfs(ctx.work)
    total = st.f_blocks * st.f_frsize
    detail = (
        f"bsize {st.f_bsize}, frsize {st.f_frsize}, {total / 2**30:.2f} GiB total, "
        f"{st.f_bavail * st.f_frsize / 2**30:.2f} GiB available, "
        f"{st.f_ffree} of {st.f_files} inodes free, namemax {st.f_namemax}"
    )
    problems = []
    if st.f_blocks == 0 or st.f_frsize == 0:
        problems.append("no size reported")
    if st.f_bfree > st.f_blocks or st.f_bavail > st.f_bfree:
        problems.append("free figures exceed the total")
    if problems:
        return Finding(DIFFERS, f"{detail} ({'; '.join(problems)})", value=total, unit="bytes")
    return Finding(YES, detail, value=total, unit="bytes")


CAPABILITIES: tuple[Capability, ...] = (
    Capability("o_direct", "O_DIRECT", probe_o_direct),
    Capability("fsync", "fsync", probe_fsync),
    Capability("fdatasync", "fdatasync", probe_fdatasync),
    Capability("chmod", "chmod", probe_chmod),
    Capability("chown_uid", "chown to another uid", probe_chown_uid, needs_root=True),
    Capability("chown_gid", "chown to another gid", probe_chown_gid, needs_root=True),
    Capability("user_xattr", "user xattrs", probe_user_xattr),
    Capability("posix_acl", "POSIX ACLs", probe_posix_acl),
    Capability("symlink", "symlinks", probe_symlink),
    Capability("hardlink", "hard links (st_nlink, st_ino)", probe_hardlink),
    Capability("rename_over", "rename over an existing file (atomic)", probe_rename_over),
    Capability("rename_dir", "rename a directory", probe_rename_dir),
    Capability("case_sensitive", "case-sensitive names", probe_case_sensitive),
    Capability("unicode_names", "NFC and NFD names distinct", probe_unicode_names),
    Capability("max_name_length", "maximum name length", probe_max_name_length),
    Capability("fifo", "FIFO", probe_fifo),
    Capability("unix_socket", "Unix socket", probe_unix_socket),
    Capability("fallocate", "fallocate", probe_fallocate),
    Capability("sparse", "sparse files (SEEK_HOLE/SEEK_DATA)", probe_sparse),
    Capability("o_append", "O_APPEND from two processes", probe_o_append),
    Capability("mmap_shared", "shared writable mmap seen by read()", probe_mmap_shared),
    Capability("flock", "flock blocks a second process", probe_flock),
    Capability("fcntl_lock", "fcntl lock blocks a second process", probe_fcntl_lock),
    Capability("mtime_granularity", "mtime granularity", probe_mtime_granularity),
    Capability("inotify", "inotify (same path)", probe_inotify),
    Capability("statfs", "statfs figures", probe_statfs),
)

CAPABILITY_IDS: tuple[str, ...] = tuple(c.id for c in CAPABILITIES)


def by_id(capability_id: str) -> Capability:
    for cap in CAPABILITIES:
        if cap.id == capability_id:
            return cap
    raise KeyError(capability_id)
