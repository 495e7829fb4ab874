"""One function per capability: try it for real inside a work directory, say what happened.

Each function takes a :class:`ProbeContext` (its own empty work directory inside the
scratch directory, and the time budget) and returns a :class:`Finding`. They run in a
child process (see :mod:`mountbench.probe.sandbox`), so they may block, fork helpers
and change the working directory freely.

Every system call a probe makes carries a label, and the label says whose call it is:

- :func:`step` wraps the capability's own call (``chmod`` for chmod, ``link`` for hard
  links). If it is refused, the verdict is "no" with the errno, naming the call.
- :func:`helper` wraps a call the probe only needs to get there (creating a test file,
  stat after chmod, growing a file to make a hole). If it fails, the verdict is
  "differs" naming the step: the capability could not be shown to work, but it was
  not refused. A limited filesystem (FAT refuses to extend a file from an odd size)
  must never see a capability called "no" because of a helper.
- An OSError from a call with no label is reported as such ("differs"): a bug to fix.

Findings that lose or corrupt data (contents lost after a rename, torn or lost appends,
a replace that readers can see half-done) carry the severity "data loss".
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import itertools
import mmap
import os
import select
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

from mountbench.host import odirect
from mountbench.probe import inotify
from mountbench.probe.sandbox import Child, errno_name
from mountbench.probefacts import DATA_LOSS, DIFFERS, NO, YES, Finding


@dataclass(frozen=True)
class ProbeContext:
    work: Path  # an empty directory of the probe's own, inside the scratch directory
    timeout: float  # the probe's whole budget; internal waits use fractions of it


def _err_text(err: OSError) -> str:
    return f"{err.strerror or err} ({errno_name(err.errno)})" if err.errno else str(err)


class Refused(Exception):
    """The capability's own call was refused: verdict "no"."""

    def __init__(self, what: str, err: OSError) -> None:
        super().__init__(f"{what}: {err.strerror or err}")
        self.what = what
        self.err = err

    def finding(self) -> Finding:
        return Finding(NO, detail=str(self), errno=errno_name(self.err.errno), step=self.what)


class HelperFailed(Exception):
    """A helper step failed: verdict "differs", naming the step (never "no")."""

    def __init__(self, what: str, err: OSError) -> None:
        super().__init__(
            f"a helper step failed, so the capability could not be shown to work: {what}: {_err_text(err)}"
        )
        self.what = what
        self.err = err

    def finding(self) -> Finding:
        return Finding(DIFFERS, detail=str(self), errno=errno_name(self.err.errno), step=self.what)


def unlabelled(err: OSError) -> Finding:
    """An OSError from a call without a label: which step failed is unknown, so never "no"."""
    return Finding(
        DIFFERS,
        detail=f"a call without a label failed (a gap in mountbench's probe, please report it): {err}",
        errno=errno_name(err.errno),
        step="unlabelled call",
    )


@contextmanager
def step(what: str) -> Iterator[None]:
    """Label the capability's own call(s): an OSError becomes :class:`Refused` naming ``what``."""
    try:
        yield
    except OSError as err:
        raise Refused(what, err) from err


@contextmanager
def helper(what: str) -> Iterator[None]:
    """Label a helper call: an OSError becomes :class:`HelperFailed` naming ``what``."""
    try:
        yield
    except OSError as err:
        raise HelperFailed(what, err) from err


@dataclass(frozen=True)
class Capability:
    id: str
    title: str
    fn: Callable[[ProbeContext], Finding]
    needs_root: bool = False
    last: bool = False  # may crash or hang the mount: run after every other capability


# -- small helpers (unlabelled: callers label them) -----------------------------------------


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


def _read_or_none(path: Path) -> bytes | None:
    """The file's content, or None if it does not exist (other errors are raised)."""
    try:
        return _read(path)
    except FileNotFoundError:
        return None


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


# -- data path ----------------------------------------------------------------------


def probe_o_direct(ctx: ProbeContext) -> Finding:
    r = odirect.check(ctx.work, "odirect")
    if not r.opened:
        return Finding(NO, f"{r.failed_step}: {r.message}", errno=r.errno, step=r.failed_step)
    if not r.works:
        why = f"{r.message} ({r.errno})" if r.errno else r.message
        return Finding(
            DIFFERS,
            f"open accepted {r.mechanism}, but the {r.failed_step} failed: {why}",
            errno=r.errno,
            step=r.failed_step,
        )
    return Finding(YES, f"aligned 4 KiB write and read work; an unaligned 100-byte write is {r.unaligned}")


def _sync_probe(ctx: ProbeContext, name: str, call: Callable[[int], None]) -> Finding:
    path = ctx.work / name
    with helper("create a test file"):
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        with helper("write 64 KiB"):
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
    with helper("create a test file"):
        _write(path, b"x")
    wrong = []
    for mode in (0o600, 0o751, 0o644):
        with step(f"chmod {mode:o}"):
            os.chmod(path, mode)
        with helper("stat after chmod"):
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
    with helper("create a test file"):
        _write(path, b"x")
    with helper("stat the test file"):
        st = os.stat(path)
    current = st.st_uid if which == "uid" else st.st_gid
    other = _other_id(current)
    with step(f"chown {which} {current} -> {other}"):
        if which == "uid":
            os.chown(path, other, -1)
        else:
            os.chown(path, -1, other)
    with helper("stat after chown"):
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
    with helper("create a test file"):
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
    with helper("create a test file"):
        _write(path, b"x")
    with step(f"setxattr {ACL_XATTR} (user:4242:r--, mask rw-)"):
        os.setxattr(path, ACL_XATTR, acl_xattr(SAMPLE_ACL))
    with step(f"getxattr {ACL_XATTR}"):
        got = os.getxattr(path, ACL_XATTR)
    entries = sorted(parse_acl_xattr(got))
    if entries != sorted(SAMPLE_ACL):
        return Finding(DIFFERS, f"ACL set but read back as {entries}")
    with helper("stat after setting the ACL"):
        mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o070 != 0o060:
        return Finding(DIFFERS, f"ACL read back, but group bits of the mode ({mode:o}) ignore the mask")
    return Finding(YES, "an ACL with a named user set and read back; mode reflects the mask")


# -- names and links -----------------------------------------------------------------


def probe_symlink(ctx: ProbeContext) -> Finding:
    with helper("create the link's target file"):
        _write(ctx.work / "target", b"through the link")
    link = ctx.work / "link"
    with step("symlink"):
        os.symlink("target", link)
    with step("readlink"):
        got = os.readlink(link)
    problems = []
    if got != "target":
        problems.append(f"readlink gave {got!r}")
    with helper("lstat the link"):
        is_link = stat.S_ISLNK(os.lstat(link).st_mode)
    if not is_link:
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
    with helper("create a test file"):
        _write(a, b"first")
    with step("link"):
        os.link(a, b)
    with helper("stat both names"):
        sa, sb = os.stat(a), os.stat(b)
    problems = []
    if sa.st_ino != sb.st_ino:
        problems.append(f"st_ino differs between the names ({sa.st_ino} vs {sb.st_ino})")
    if (sa.st_nlink, sb.st_nlink) != (2, 2):
        problems.append(f"st_nlink is {sa.st_nlink}/{sb.st_nlink}, expected 2")
    with helper("append through the second name"), open(b, "ab") as f:
        f.write(b"+second")
    patience = min(2.0, ctx.timeout / 4)
    with helper("read and stat through the first name"):
        size_seen = os.stat(a).st_size
        late = _until(lambda: _read(a) == b"first+second", patience)
    if late is None:
        problems.append(
            f"an append through the second name was not seen through the first within {patience:g} s "
            f"(stat through the first name shows {size_seen} bytes, the file has 12)"
        )
    elif late > 0:
        stale = f"; stat through the first name showed {size_seen} bytes at first" if size_seen != 12 else ""
        problems.append(f"an append through the second name was seen through the first after {late:.1f} s{stale}")
    with helper("unlink the second name"):
        os.unlink(b)
    with helper("stat after unlink"):
        nlink = os.stat(a).st_nlink
        settled = _until(lambda: os.stat(a).st_nlink == 1, patience) if nlink != 1 else 0.0
    if settled is None:
        problems.append(f"st_nlink stayed {nlink} for {patience:g} s after unlinking the other name, expected 1")
    elif settled > 0:
        problems.append(
            f"st_nlink stayed {nlink} for {settled:.1f} s after unlinking the other name (stale attributes)"
        )
    if problems:
        return Finding(DIFFERS, "; ".join(problems))
    return Finding(YES, "same st_ino, st_nlink 2 then 1, data shared")


def _until(check: Callable[[], bool], patience: float) -> float | None:
    """Seconds until ``check()`` held (0.0: at once), or None if not within ``patience``."""
    t0 = time.monotonic()
    if check():
        return 0.0
    while True:
        time.sleep(0.05)
        if check():
            return round(time.monotonic() - t0, 3)
        if time.monotonic() - t0 > patience:
            return None


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
    with helper("create the file to replace"):
        _write(target, b"%08d" % 0 * 64)
    with helper("create its replacement"):
        _write(ctx.work / "new0", b"%08d" % 1 * 64)
    with step("rename over an existing file"):
        os.rename(ctx.work / "new0", target)
    with helper("read the file after the rename"):
        content = _read_or_none(target)
        leftover = os.path.lexists(ctx.work / "new0")
    if content != b"%08d" % 1 * 64 or leftover:
        return Finding(DIFFERS, "after rename the target does not hold the new content", severity=DATA_LOSS)
    # Atomic replacement: a reader in another process must never find the name missing.
    window = min(0.3, ctx.timeout / 10)
    reader = Child(_rename_reader, str(target), window, new_group=False)
    end = time.monotonic() + window
    version = 1
    while time.monotonic() < end:
        version += 1
        tmp = ctx.work / f"new{version}"
        with helper(f"write replacement {version}"):
            _write(tmp, b"%08d" % version * 64)
        with step("rename over the file while another process reads it"):
            os.rename(tmp, target)
    outcome = reader.wait(ctx.timeout / 3)
    if outcome.status != "ok":
        return Finding(DIFFERS, f"concurrent reader ended with {outcome.status}: {outcome.message}")
    c = outcome.value
    seen = f"{version - 1} replacements while another process read {c['reads']} times"
    if c["missing"] or c["torn"]:
        return Finding(
            DIFFERS,
            f"not atomic: a reader found no file {c['missing']} times and torn content {c['torn']} times "
            f"during {seen}; an application replacing a file this way can be seen without it",
            severity=DATA_LOSS,
        )
    return Finding(YES, f"atomic: never missing nor torn during {seen}")


def probe_rename_dir(ctx: ProbeContext) -> Finding:
    d1, d2, d3 = ctx.work / "d1", ctx.work / "d2", ctx.work / "d3"
    with helper("mkdir d1"):
        os.mkdir(d1)
    with helper("create d1/f"):
        _write(d1 / "f", b"inside")
    with step("rename a directory"):
        os.rename(d1, d2)
    with helper("look at the renamed directory"):
        content = _read_or_none(d2 / "f")
        listed = sorted(os.listdir(d2))
        old_remains = os.path.lexists(d1)
    if content != b"inside":
        what = "is gone" if content is None else "holds other data"
        return Finding(
            DIFFERS,
            f"contents lost after rename: the rename of d1 to d2 succeeded, but d2/f {what} (d2 lists {listed})",
            severity=DATA_LOSS,
        )
    if old_remains:
        return Finding(DIFFERS, "after renaming, the old name remains")
    with helper("mkdir d3"):
        os.mkdir(d3)
    try:
        os.rename(d2, d3)
    except OSError as err:
        return Finding(
            DIFFERS,
            f"renamed, but renaming a directory over an empty one fails: {_err_text(err)}",
            errno=errno_name(err.errno),
            step="rename a directory over an empty one",
        )
    with helper("read after renaming over an empty directory"):
        content = _read_or_none(d3 / "f")
    if content != b"inside":
        return Finding(DIFFERS, "contents lost after renaming over an empty directory", severity=DATA_LOSS)
    return Finding(YES, "renamed (with content), also over an empty directory")


def probe_case_sensitive(ctx: ProbeContext) -> Finding:
    upper, lower = ctx.work / "Case.txt", ctx.work / "case.txt"
    with helper("create 'Case.txt'"):
        _write(upper, b"upper")
    with helper("look up 'case.txt'"):
        found = os.path.lexists(lower)
    if found:
        # Identity from content, not st_ino: FUSE numbers inodes per path it was asked for.
        with helper("read 'case.txt' and list the directory"):
            content = _read(lower)
            names = sorted(os.listdir(ctx.work))
        what = "the same content" if content == b"upper" else f"other content ({content[:16]!r})"
        preserved = "; the name is kept as 'Case.txt'" if names == ["Case.txt"] else f"; the directory lists {names}"
        return Finding(DIFFERS, f"case-insensitive: 'case.txt' opens 'Case.txt' ({what}){preserved}")
    with step("create 'case.txt' next to 'Case.txt'"):
        _write(lower, b"lower")
    with helper("list the directory and read 'Case.txt'"):
        names = sorted(os.listdir(ctx.work))
        content = _read(upper)
    if names != ["Case.txt", "case.txt"] or content != b"upper":
        return Finding(DIFFERS, f"after creating both names the directory holds {names}")
    return Finding(YES, "'Case.txt' and 'case.txt' are two files")


NFC_NAME = unicodedata.normalize("NFC", "caf\u00e9")
NFD_NAME = unicodedata.normalize("NFD", "caf\u00e9")


def probe_unicode_names(ctx: ProbeContext) -> Finding:
    nfc, nfd = ctx.work / NFC_NAME, ctx.work / NFD_NAME
    with step("create a file with an NFC name"):
        _write(nfc, b"nfc")
    with helper("list the directory"):
        listed = os.listdir(ctx.work)
    if listed != [NFC_NAME]:
        form = "NFD" if listed == [NFD_NAME] else repr(listed)
        return Finding(DIFFERS, f"created with an NFC name, listed as {form}: names are normalised")
    with helper("look up the NFD spelling"):
        nfd_found = os.path.lexists(nfd)
    if nfd_found:
        return Finding(DIFFERS, "the NFD spelling finds the NFC file: lookups normalise names")
    with step("create a file with the NFD name"):
        _write(nfd, b"nfd")
    with helper("list the directory and read the NFC file"):
        listed = os.listdir(ctx.work)
        content = _read(nfc)
    if sorted(listed) != sorted([NFC_NAME, NFD_NAME]) or content != b"nfc":
        return Finding(DIFFERS, f"after creating both spellings: {listed}")
    return Finding(YES, "NFC and NFD spellings of 'café' are two files (names are bytes)")


def probe_max_name_length(ctx: ProbeContext) -> Finding:
    with helper("open the work directory"):
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
        with helper(f"unlink the {n}-byte name"):
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
        with helper("fstatvfs (f_namemax)"):
            namemax = os.fstatvfs(dfd).f_namemax
    finally:
        os.close(dfd)
    over = errno_name(errors[best + 1].errno) if best + 1 in errors else None
    refused = f"; {best + 1} bytes: {over}" if over else ""
    detail = f"{best} bytes{refused} (statvfs f_namemax, as the mount reports it: {namemax})"
    if best != namemax:
        return Finding(DIFFERS, detail, value=best, unit="bytes")
    if over not in (None, "ENAMETOOLONG"):
        return Finding(
            DIFFERS,
            f"{detail}: a name too long is refused with {over}, not ENAMETOOLONG "
            "(tools that test for ENAMETOOLONG misbehave)",
            errno=over,
            step=f"create a {best + 1}-byte name",
            value=best,
            unit="bytes",
        )
    return Finding(YES, detail, value=best, unit="bytes")


# -- special files --------------------------------------------------------------------


def probe_fifo(ctx: ProbeContext) -> Finding:
    path = ctx.work / "fifo"
    with step("mkfifo"):
        os.mkfifo(path, 0o644)
    with helper("lstat the FIFO"):
        is_fifo = stat.S_ISFIFO(os.lstat(path).st_mode)
    if not is_fifo:
        return Finding(DIFFERS, "mkfifo succeeded but lstat does not show a FIFO")
    with step("open the FIFO"):
        rfd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            wfd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            os.close(rfd)
            raise
    try:
        with step("pass data through the FIFO"):
            os.write(wfd, b"ping")
            got = os.read(rfd, 16)
    finally:
        os.close(wfd)
        os.close(rfd)
    if got != b"ping":
        return Finding(DIFFERS, f"data through the FIFO came out as {got!r}")
    return Finding(YES, "created; data passes through it")


def probe_unix_socket(ctx: ProbeContext) -> Finding:
    with helper("chdir to the work directory"):
        os.chdir(ctx.work)  # a relative name: sun_path is limited to 108 bytes
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with step("bind a Unix socket"):
            server.bind("sock")
        with step("listen"):
            server.listen(1)
        with helper("lstat the socket"):
            is_sock = stat.S_ISSOCK(os.lstat("sock").st_mode)
        if not is_sock:
            return Finding(DIFFERS, "bound, but lstat does not show a socket")
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            client.settimeout(max(0.2, ctx.timeout / 5))
            server.settimeout(max(0.2, ctx.timeout / 5))
            try:
                client.connect("sock")
                conn, _ = server.accept()
            except OSError as err:
                return Finding(
                    DIFFERS,
                    f"bound, but connecting to it fails: {_err_text(err)}",
                    errno=errno_name(err.errno),
                    step="connect through the name",
                )
            with conn, step("pass data through the socket"):
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


ODD_FILE, ODD_OFFSET, ODD_LEN = 12_345, 20_000, 3_456  # an unaligned file and range


def _posix_fallocate_try(path: Path, start_size: int, offset: int, length: int) -> str:
    """posix_fallocate(3) on a new file of ``start_size`` bytes: what it returned and the size after."""
    what = f"{length:,} bytes at {offset:,}" + (f" of a {start_size:,}-byte file" if start_size else "")
    try:
        fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
    except OSError as err:
        return f"{what}: not tried, creating its test file failed: {_err_text(err)}"
    try:
        if start_size:
            os.write(fd, b"f" * start_size)
        try:
            os.posix_fallocate(fd, offset, length)
        except OSError as err:
            size = os.fstat(fd).st_size
            changed = f", and left the file at {size:,} bytes (was {start_size:,})" if size != start_size else ""
            return f"{what}: fails, {_err_text(err)}{changed}"
        size = os.fstat(fd).st_size
        return f"{what}: succeeds (size {size:,})"
    except OSError as err:
        return f"{what}: a helper step failed: {_err_text(err)}"
    finally:
        os.close(fd)


def _posix_fallocate_note(work: Path, size: int) -> str:
    """What applications calling posix_fallocate(3) see where fallocate(2) is refused: glibc
    then writes into every block itself, which a limited mount may refuse part-way."""
    whole = _posix_fallocate_try(work / "alloc-posix", 0, 0, size)
    odd = _posix_fallocate_try(work / "alloc-odd", ODD_FILE, ODD_OFFSET, ODD_LEN)
    return (
        f"posix_fallocate() (glibc emulates it by writing into every block): {whole}; {odd}; callers of "
        "fallocate(2) itself (e.g. fio's fallocate=native, FALLOC_FL_* modes) get the error"
    )


def probe_fallocate(ctx: ProbeContext) -> Finding:
    libc = _libc()
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    libc.fallocate.restype = ctypes.c_int
    size = 1 << 20
    with helper("create a test file"):
        fd = os.open(ctx.work / "alloc", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        if libc.fallocate(fd, 0, 0, size) != 0:
            err = ctypes.get_errno()
            note = _posix_fallocate_note(ctx.work, size)
            return Finding(
                NO,
                f"fallocate(2) (mode 0, 1 MiB): {os.strerror(err)}; {note}",
                errno=errno_name(err),
                step="fallocate(2)",
            )
        with helper("fstat after fallocate"):
            st = os.fstat(fd)
    finally:
        os.close(fd)
    allocated = st.st_blocks * 512
    detail = f"1 MiB: size {st.st_size}; st_blocks, as the mount reports it: {allocated} bytes allocated"
    if st.st_size != size:
        return Finding(DIFFERS, detail)
    if allocated < size:
        return Finding(DIFFERS, detail + " (st_blocks does not show the allocation)")
    return Finding(YES, detail)


def probe_sparse(ctx: ProbeContext) -> Finding:
    path = ctx.work / "sparse"
    size, data_at = 4 << 20, 2 << 20
    with helper("create a test file"):
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    grow_error: OSError | None = None
    try:
        with helper("write 4 KiB at 2 MiB"):
            os.pwrite(fd, b"d" * 4096, data_at)
        try:
            os.ftruncate(fd, size)
        except OSError as err:
            grow_error = err  # said below; SEEK_DATA/SEEK_HOLE can still be asked
        with helper("fsync"):
            os.fsync(fd)
        with step("lseek(SEEK_DATA, 0)"):
            first_data = os.lseek(fd, 0, os.SEEK_DATA)
        with step("lseek(SEEK_HOLE, 0)"):
            first_hole = os.lseek(fd, 0, os.SEEK_HOLE)
        with helper("fstat"):
            st = os.fstat(fd)
    finally:
        os.close(fd)
    holes_reported = first_hole == 0 and 0 < first_data <= data_at
    made_up = None if holes_reported else _made_up_blocks(ctx.work)
    allocated = st.st_blocks * 512
    seeks = f"SEEK_DATA(0)={first_data}, SEEK_HOLE(0)={first_hole}"
    reported = f"st_blocks, as the mount reports it: {allocated} bytes allocated"
    storage = "" if holes_reported else "; " + sparse_storage(st.st_size, allocated, made_up)
    if grow_error is not None:
        return Finding(
            DIFFERS,
            f"ftruncate growing the file to 4 MiB was refused: {_err_text(grow_error)}; "
            f"after 4 KiB written at 2 MiB: {seeks}{storage}; {reported}",
            errno=errno_name(grow_error.errno),
            step="ftruncate growing the file",
        )
    detail = f"4 KiB written at 2 MiB in a 4 MiB file: {seeks}{storage}; {reported}"
    if holes_reported:
        return Finding(YES, detail + " (the hole is reported)")
    return Finding(DIFFERS, detail)


def _made_up_blocks(work: Path) -> str | None:
    """Whether the mount's st_blocks only follow the size: a file truncated to more than the
    whole filesystem holds cannot really have that much allocated. None if they may be real."""
    path = work / "blocks"
    try:
        st = os.statvfs(work)
        size = st.f_blocks * st.f_frsize + (1 << 20)
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            os.ftruncate(fd, size)
            allocated = os.fstat(fd).st_blocks * 512
        finally:
            os.close(fd)
            os.unlink(path)
    except OSError:
        return None  # growing it was refused: st_blocks may well be real
    if allocated >= size:
        return (
            f"an empty file truncated to {size:,} bytes, more than the filesystem holds, shows {allocated:,} allocated"
        )
    return None


def sparse_storage(size: int, allocated: int, made_up: str | None) -> str:
    """What the allocated blocks say about a file whose hole SEEK_HOLE did not report.

    Three observations, told apart: the blocks show the file stored sparse (SEEK_HOLE is not
    passed through the mount); the mount's st_blocks only follow the size (``made_up`` says
    how that was seen), so they say nothing; or the blocks, on a mount that counts them, show
    the gap stored as data.
    """
    if allocated < size // 2:
        return (
            f"SEEK_HOLE not supported through this mount: it reports no hole, yet only {allocated} bytes "
            "are allocated (the file is stored sparse)"
        )
    if made_up is not None:
        return (
            "SEEK_HOLE not supported through this mount (sparse storage unknown: its st_blocks follow the "
            f"size, {made_up})"
        )
    return (
        f"holes stored as data (measured by allocated blocks on a filesystem that reports them: {allocated} "
        f"bytes allocated for a {size}-byte file with 4 KiB written)"
    )


# -- concurrency -----------------------------------------------------------------------------

RECORD = 32


def _appender(path: str, tag: str, count: int, seconds: float, go: tuple[int, int]) -> dict[str, Any]:
    """Append up to ``count`` fixed-size records within ``seconds``; say how many, or what failed.

    Starts once the pipe ``go`` (read end, write end) reaches end of file, that is when
    the parent has started both writers and closed its write end: the appends interleave.
    """
    os.close(go[1])
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as err:
        return {
            "written": 0,
            "step": f"open(O_APPEND) in process {tag}",
            "errno": errno_name(err.errno),
            "error": _err_text(err),
        }
    select.select([go[0]], [], [], seconds)
    end = time.monotonic() + seconds
    written = 0
    try:
        while written < count and time.monotonic() < end:
            try:
                os.write(fd, f"{tag}{written:08d}".ljust(RECORD - 1, ".").encode() + b"\n")
            except OSError as err:
                return {
                    "written": written,
                    "step": f"write with O_APPEND (process {tag}, record {written + 1})",
                    "errno": errno_name(err.errno),
                    "error": _err_text(err),
                }
            written += 1
    finally:
        os.close(fd)
    return {"written": written}


APPEND_TRIES = 10


def _append_once(path: Path, seconds: float, wait: float) -> Finding | dict[str, Any]:
    """Two processes append 300 records each to ``path``: a Finding when a writer hung or
    crashed, else what they wrote (counts, the first refusal) and what the file holds."""
    go_r, go_w = os.pipe()
    try:
        writers = [Child(_appender, str(path), tag, 300, seconds, (go_r, go_w), new_group=False) for tag in "AB"]
    finally:
        os.close(go_w)  # both writers start now
        os.close(go_r)
    counts: dict[str, int] = {}
    refused = None
    for tag, w in zip("AB", writers, strict=True):
        outcome = w.wait(wait)
        if outcome.status != "ok":
            return Finding(DIFFERS, f"writer {tag} ended with {outcome.status}: {outcome.message}")
        counts[tag] = outcome.value["written"]
        if "error" in outcome.value and refused is None:
            refused = outcome.value
    with helper("read the appended file"):
        data = _read(path)
    return {"counts": counts, "refused": refused, "data": data}


def append_bytes(path: Path, data: bytes) -> str | None:
    """One process appends ``data`` with O_APPEND; "CALL: ERRNO" for the call that failed (open, write or
    close: a FUSE mount may refuse only when the data is flushed), or None."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError as err:
        return f"open(O_APPEND): {errno_name(err.errno)}"
    failed = None
    try:
        os.write(fd, data)
    except OSError as err:
        failed = f"write: {errno_name(err.errno)}"
    try:
        os.close(fd)
    except OSError as err:
        failed = failed or f"close: {errno_name(err.errno)}"
    return failed


def _one_writer(ctx: ProbeContext) -> Finding | None:
    """Before two writers: one process appending 10 bytes to a 13-byte file. Where that already fails,
    two processes have nothing to show (issue 49: fusefat's ‼ here read as a two-process problem)."""
    path = ctx.work / "one"
    with helper("write a 13-byte file"):
        _write(path, b"0123456789abc")
    failed = append_bytes(path, b"+" * 10)
    with helper("read it back"):
        got = _read(path)
    if got == b"0123456789abc" + b"+" * 10:
        return None
    see = "(see 'O_APPEND by one process'): not a problem of two processes, which were not tried"
    if failed is not None and got == b"0123456789abc":
        call, _, code = failed.partition(": ")
        what = f"{call} with O_APPEND by one process on a 13-byte file"
        return Finding(NO, f"{what}: {code} {see}", errno=code, step=what)
    return Finding(DIFFERS, f"one process appending 10 bytes to a 13-byte file left {len(got)} bytes "
                            f"({failed or 'no error'}) {see}", severity=DATA_LOSS)  # fmt: skip


def probe_o_append(ctx: ProbeContext) -> Finding:
    """Two processes appending to one file: are records lost or torn (data loss), refused
    ("no"), or all intact ("yes")?

    Whether appends collide depends on how the two writers happen to run: on a busy
    machine one may finish before the other starts, and that try says nothing. So tries
    repeat (each on a new file) until one settles the question: records lost or torn
    (once is enough: that is data loss), an append refused, or every record intact although
    the writers' records interleave in the file (they really ran at the same time).
    """
    alone = _one_writer(ctx)
    if alone is not None:
        return alone
    with step("open(O_APPEND|O_CREAT)"):
        os.close(os.open(ctx.work / "log-1", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))
    seconds = ctx.timeout * 0.2  # per try: on a slow mount, fewer records rather than a hang
    last_start = time.monotonic() + ctx.timeout * 0.4
    for attempt in range(1, APPEND_TRIES + 1):
        path = ctx.work / f"log-{attempt}"
        got = _append_once(path, seconds, ctx.timeout * 0.25)
        if isinstance(got, Finding):
            return got
        counts, refused, data = got["counts"], got["refused"], got["data"]
        lines = data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")
        good = [ln for ln in lines if len(ln) == RECORD - 1]
        seen = {ln[:9] for ln in good}
        expected = {f"{t}{i:08d}".encode() for t, n in counts.items() for i in range(n)}
        total = sum(counts.values())
        lost = len(expected - seen)
        torn = len(lines) - len(good)
        tries = f" (try {attempt})" if attempt > 1 else ""
        detail = f"{total} records of {RECORD} bytes from 2 processes{tries}: file is {len(data)} bytes"
        if lost or torn or (refused is None and len(data) != total * RECORD):
            also = f"; besides, {refused['step']}: {refused['error']}" if refused is not None else ""
            return Finding(DIFFERS, f"{detail}, {lost} records lost, {torn} torn{also}", severity=DATA_LOSS)
        if refused is not None:
            return Finding(
                NO,
                f"{refused['step']}: {refused['error']}; the {total} records appended before are intact",
                errno=refused["errno"],
                step=refused["step"],
            )
        switches = sum(a[0] != b[0] for a, b in itertools.pairwise(good))
        if switches >= 2:  # one writer's records on both sides of the other's: they overlapped
            return Finding(YES, f"{detail}, interleaved, none lost or torn")
        with helper("remove a try's file"):
            os.unlink(path)
        if time.monotonic() >= last_start:
            break
    return Finding(
        YES,
        f"{detail}, none lost or torn; but the writers never ran at the same time in {attempt} tries, "
        "so concurrent appends were not tested",
    )


def probe_mmap_shared(ctx: ProbeContext) -> Finding:
    path = ctx.work / "mapped"
    with helper("create an 8 KiB file"):
        _write(path, b"\0" * 8192)
    with helper("open the file twice"):
        fd = os.open(path, os.O_RDWR)
        reader = os.open(path, os.O_RDONLY)
    try:
        with step("mmap(MAP_SHARED, PROT_WRITE)"):
            mm = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        try:
            mm[100:116] = b"mountbench-mmap!"
            with helper("pread through another descriptor"):
                before = os.pread(reader, 16, 100)
            with step("msync"):
                mm.flush()
            with helper("pread after msync"):
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
    with helper("create a test file"):
        _write(path, b"lock")
    with helper("open the test file"):
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
        with step(f"{kind} LOCK_UN"):
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

# A whole multiple of every plausible step (1 ns ... 10 s; FAT's 2 s; time zones' 15 min).
MTIME_BASE_NS = 1_600_000_000 * 10**9
# Offsets from the base, a factor of 2 apart from 1 ns to ~8.6 s: whatever the step T and
# whether the filesystem truncates or rounds, one offset reads back as exactly base + T.
MTIME_OFFSETS_NS = tuple(2**k for k in range(34))


def mtime_step_ns(set_ns: list[int] | tuple[int, ...], got_ns: list[int] | tuple[int, ...]) -> int | None:
    """The step a filesystem keeps mtimes in, from times set (``set_ns``) and read back.

    Every value is base + offset; a filesystem keeping a step T (truncating or rounding)
    reads back base + a multiple of T, and some offset in a factor-of-2 sweep reads back
    exactly base + T: the smallest positive difference is T. None if a value reads back
    further from what was set than that step explains (the filesystem changes times).
    """
    diffs = [g - MTIME_BASE_NS for g in got_ns]
    positive = [d for d in diffs if d > 0]
    if not positive:
        return None
    step_ns = min(positive)
    if any(abs(g - s) >= step_ns or d % step_ns for s, g, d in zip(set_ns, got_ns, diffs, strict=True)):
        return None
    return step_ns


def _unit_text(ns: int) -> str:
    for unit, name in ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs")):
        if ns >= unit:
            return f"{ns / unit:g} {name}"
    return f"{ns} ns"


def _seconds(ns: int) -> str:
    """Nanoseconds since the epoch as exact decimal seconds (a float would round them)."""
    return f"{ns // 10**9}.{ns % 10**9:09d}"


def _mtimes_from_writes(path: Path) -> str:
    """How finely mtimes set by the filesystem itself step: 10 overwrites 2 ms apart."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as err:
        return f"mtimes set by writes not measured: opening the file failed: {_err_text(err)}"
    stamps = []
    try:
        for _ in range(10):
            os.pwrite(fd, b"x", 0)  # in place: no file growth, which some filesystems refuse
            stamps.append(os.fstat(fd).st_mtime_ns)
            time.sleep(0.002)
    except OSError as err:
        return f"mtimes set by writes not measured: an overwrite failed: {_err_text(err)}"
    finally:
        os.close(fd)
    steps = sorted({b - a for a, b in itertools.pairwise(stamps) if b != a})
    text = f"10 writes 2 ms apart gave {len(set(stamps))} distinct mtime(s)"
    if all(s % 1_000_000_000 == 0 for s in stamps):
        text += ", all whole seconds"
    elif steps:
        text += f", smallest step {steps[0] / 1e6:.3f} ms"
    return text


def probe_mtime_granularity(ctx: ProbeContext) -> Finding:
    path = ctx.work / "f"
    with helper("create a test file"):
        _write(path, b"x")
    set_ns = [MTIME_BASE_NS + off for off in MTIME_OFFSETS_NS]
    got_ns = []
    for value in set_ns:
        with step("utimensat with nanoseconds"):
            os.utime(path, ns=(value, value))
        with helper("stat after utimensat"):
            got_ns.append(os.stat(path).st_mtime_ns)
    unit = mtime_step_ns(set_ns, got_ns)
    writes = _mtimes_from_writes(path)
    if unit is None:
        odd = next((s, g) for s, g in zip(set_ns, got_ns, strict=True) if g != s)
        return Finding(DIFFERS, f"set {odd[0]} ns, read back {odd[1]} ns: no fixed step explains it; {writes}")
    s, g = max(zip(set_ns, got_ns, strict=True), key=lambda pair: abs(pair[1] - pair[0]))
    kept = "" if s == g else f" ({_seconds(s)} s read back as {_seconds(g)} s)"
    detail = f"utimensat keeps a step of {_unit_text(unit)}{kept}; {writes}"
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
    with step("inotify_init1 and inotify_add_watch on the directory"):
        watch = inotify.Watch(ctx.work)
    with watch:
        f, g = ctx.work / "f", ctx.work / "g"
        # Each change in one call that limited filesystems accept (no appends, no chmod).
        with helper("create and write 'f'"):
            _write(f, b"one")
        with helper("utimensat 'f' (for IN_ATTRIB)"):
            os.utime(f, ns=(MTIME_BASE_NS, MTIME_BASE_NS))
        with helper("rename 'f' to 'g'"):
            os.rename(f, g)
        with helper("unlink 'g'"):
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
        f"as the mount reports them: bsize {st.f_bsize}, frsize {st.f_frsize}, {total / 2**30:.2f} GiB total, "
        f"{st.f_bavail * st.f_frsize / 2**30:.2f} GiB available, "
        f"{st.f_ffree} of {st.f_files} inodes free, namemax {st.f_namemax}"
    )
    problems = []
    if st.f_blocks == 0 or st.f_frsize == 0:
        problems.append("no size reported")
    if st.f_bfree > st.f_blocks or st.f_bavail > st.f_bfree:
        problems.append("free figures exceed the total")
    if problems:
        return Finding(DIFFERS, f"{detail} ({'; '.join(problems)})", value=total, unit="bytes", reported=True)
    return Finding(YES, detail, value=total, unit="bytes", reported=True)


BASIC: tuple[Capability, ...] = (
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
    Capability("statfs", "statfs: total size (not free)", probe_statfs),
)
