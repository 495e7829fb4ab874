"""What developers' tools rely on, checked like a conformance suite: one function per check.

The same frame as :mod:`mountbench.probe.capabilities` (a :class:`ProbeContext` in, a
:class:`Finding` out, run in a child process; :func:`step` labels the check's own call,
:func:`helper` a call it only needs to get there), for what make, git, rsync and editors
depend on and a mount may quietly get wrong:

- another user kept to the file modes (as uid 65534, against a file it does not own);
- ctime updated by chmod, chown, link and rename;
- setting one timestamp alone (``UTIME_OMIT``), and a symbolic link's own times;
- a directory's contents kept through a rename; a file read after its name was unlinked;
- the error codes tools branch on (ENAMETOOLONG, ENOTEMPTY, EEXIST, EXDEV);
- where the deep-path limit really is (searched to past PATH_MAX). A mount's daemon may die or hang
  on that one (fusefat does), so it runs last, bounded like every probe, and its verdict says so.

Every finding names the call that failed and the errno seen.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import stat
import time
from pathlib import Path
from typing import Any

from mountbench.host.targets import mount_of, read_mounts
from mountbench.probe.capabilities import ProbeContext, helper, step
from mountbench.probe.sandbox import Child, errno_name
from mountbench.probefacts import DATA_LOSS, DIFFERS, NO, YES, Finding

OTHER_UID = 65534  # "nobody" on Linux: an unprivileged user that owns nothing here
PATH_MAX = 4096
DEEP_NAME = 100  # bytes per directory name in the deep-path check
DEEP_MARGIN = 100  # the search goes half this far past PATH_MAX within the mount
SEARCH_TOP = PATH_MAX + DEEP_MARGIN // 2  # the longest path within the mount the deep-path search tries
DEEP_STEP = 16  # the deep-path search's names grow this much at a time, then one byte at a time
UTIME_OMIT = (1 << 30) - 2
AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW = 0x100
# Two times years apart, whole days (FAT keeps access dates only, modification times to 2 s).
TIME_A_S = 1_599_955_200  # 2020-09-13 00:00 UTC
TIME_B_S = 1_499_990_400  # 2017-07-14 00:00 UTC
DAY_S = 86_400
GONE = ("ENOTCONN", "ECONNABORTED")  # a FUSE mount whose daemon has died


def _text(err: OSError) -> str:
    return f"{err.strerror or err} ({errno_name(err.errno)})" if err.errno else str(err)


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _try(call: Any) -> str | None:
    """The errno name if ``call()`` raises OSError, else None."""
    try:
        call()
    except OSError as err:
        return errno_name(err.errno)
    return None


# -- another user -----------------------------------------------------------------------------


def _as_other_user(dfd: int, uid: int) -> dict[str, Any]:
    """In a child: become ``uid`` (no groups), then try what it must not be allowed to do to
    root's 0644 file ``owned``, and create ``shared/mine`` (a 0777 directory)."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    seen: dict[str, Any] = {}
    try:
        fd = os.open("owned", os.O_RDONLY, dir_fd=dfd)
        os.close(fd)
        seen["read"] = None
    except OSError as err:
        seen["read"] = errno_name(err.errno)
    try:
        fd = os.open("owned", os.O_WRONLY | os.O_TRUNC, dir_fd=dfd)
        os.close(fd)
        seen["truncate"] = None
    except OSError as err:
        seen["truncate"] = errno_name(err.errno)
    seen["chmod"] = _try(lambda: os.chmod("owned", 0o666, dir_fd=dfd))
    try:
        fd = os.open("shared/mine", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=dfd)
        os.close(fd)
        seen["create"] = None
    except OSError as err:
        seen["create"] = errno_name(err.errno)
    return seen


def mount_options(path: Path) -> str:
    """The options that decide other users' access (allow_other, default_permissions), as mounted."""
    try:
        entry = mount_of(os.path.realpath(path), read_mounts())
    except OSError:
        entry = None
    if entry is None:
        return "mount options unknown"
    opts = set(entry.options.split(","))
    if not entry.fstype.startswith("fuse"):
        return f"{entry.fstype}: the kernel checks permissions"
    said = [f"{o} {'set' if o in opts else 'not set'}" for o in ("allow_other", "default_permissions")]
    return f"{entry.fstype}: {', '.join(said)}"


def probe_other_uid(ctx: ProbeContext) -> Finding:
    owned, shared = ctx.work / "owned", ctx.work / "shared"
    os.umask(0)
    with helper("create a 0644 file owned by this user"):
        _write(owned, b"owned by the probing user\n")
    with helper("mkdir a 0777 directory"):
        os.mkdir(shared, 0o777)
    with helper("stat the test file"):
        before = os.stat(owned)
    with helper("open the work directory"):
        dfd = os.open(ctx.work, os.O_RDONLY | os.O_DIRECTORY)
    try:
        outcome = Child(_as_other_user, dfd, OTHER_UID, new_group=False).wait(ctx.timeout / 2)
    finally:
        os.close(dfd)
    options = mount_options(ctx.work)
    if outcome.status != "ok":
        return Finding(DIFFERS, f"the process acting as uid {OTHER_UID} ended with {outcome.status}: {outcome.message}")
    seen = outcome.value
    with helper("stat the test file after"):
        after = os.stat(owned)
    who = f"uid {OTHER_UID} against a {stat.S_IMODE(before.st_mode):o} file of uid {before.st_uid}"
    if seen["read"] is not None and seen["create"] is not None:
        what = f"open a 0644 file for reading as uid {OTHER_UID}"
        return Finding(
            NO,
            f"{what}: {seen['read']}; creating in a 0777 directory: {seen['create']}: "
            f"other users cannot use the mount at all ({options})",
            errno=seen["read"],
            step=what,
        )
    wrong = []
    if seen["truncate"] is None:
        wrong.append(f"opened it for writing with O_TRUNC (now {after.st_size} bytes, was {before.st_size})")
    if seen["chmod"] is None:
        wrong.append(f"chmod 666 succeeded (mode now {stat.S_IMODE(after.st_mode):o})")
    created = ""
    if seen["create"] is None:
        with helper("stat the file the other user created"):
            mine = os.stat(shared / "mine")
        if mine.st_uid != OTHER_UID:
            wrong.append(f"a file it created is owned by uid {mine.st_uid}")
        created = f", a file it creates is owned by uid {mine.st_uid}"
    else:
        created = f", creating in a 0777 directory: {seen['create']}"
    if wrong:
        return Finding(DIFFERS, f"{who}: {'; '.join(wrong)}: permissions are not enforced ({options})")
    return Finding(
        YES,
        f"{who}: writing refused ({seen['truncate']}), chmod refused ({seen['chmod']}){created} ({options})",
    )


# -- ctime ------------------------------------------------------------------------------------------


def probe_ctime(ctx: ProbeContext) -> Finding:
    names = ("chmod", "chown", "link", "rename")
    files = {n: ctx.work / n for n in names}
    for n, f in files.items():
        with helper(f"create the test file for {n}"):
            _write(f, b"c")
    with helper("stat the test files"):
        before = {n: os.stat(f).st_ctime_ns for n, f in files.items()}
    # ctime must be able to move: past the filesystem's clock step (whole seconds on sshfs, 2 s on FAT)
    step_s = 2.0 if all(c % 2_000_000_000 == 0 for c in before.values()) else 1.0
    coarse = all(c % 1_000_000_000 == 0 for c in before.values())
    wait = (max(before.values()) / 1e9 + step_s + 0.05 - time.time()) if coarse else 0.03
    time.sleep(min(max(wait, 0.03), 2.1))
    uid, gid = os.getuid(), os.getgid()
    ops = {
        "chmod": lambda: os.chmod(files["chmod"], 0o600),
        "chown": lambda: os.chown(files["chown"], uid, 4242 if uid == 0 else gid),
        "link": lambda: os.link(files["link"], ctx.work / "link.2"),
        "rename": lambda: os.rename(files["rename"], ctx.work / "renamed"),
    }
    refused: dict[str, str] = {}
    for n, op in ops.items():
        e = _try(op)
        if e is not None:
            refused[n] = e
    after_path = {**files, "rename": ctx.work / "renamed"}
    unchanged = []
    for n in names:
        if n in refused:
            continue
        with helper(f"stat after {n}"):
            if os.stat(after_path[n]).st_ctime_ns == before[n]:
                unchanged.append(n)
    tried = [n for n in names if n not in refused]
    not_tried = "; ".join(f"{n} refused ({e})" for n, e in refused.items())
    if not tried:
        first = next(iter(refused.items()))
        return Finding(NO, f"{not_tried}: ctime could not be checked", errno=first[1], step=first[0])
    also = f"; not checked: {not_tried}" if refused else ""
    if unchanged:
        return Finding(
            DIFFERS,
            f"ctime unchanged by {', '.join(unchanged)} (make, rsync and backup tools rely on it){also}",
            step=unchanged[0],
        )
    return Finding(YES, f"ctime updated by {', '.join(tried)}{also}")


# -- timestamps one at a time -------------------------------------------------------------------------


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def utimensat(path: Path, atime_s: int | None, mtime_s: int | None, *, nofollow: bool = False) -> None:
    """utimensat(2) with UTIME_OMIT for a time given as None (os.utime cannot omit one)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    times = (_Timespec * 2)(
        (0, UTIME_OMIT) if atime_s is None else (atime_s, 0),
        (0, UTIME_OMIT) if mtime_s is None else (mtime_s, 0),
    )
    flags = AT_SYMLINK_NOFOLLOW if nofollow else 0
    if libc.utimensat(AT_FDCWD, os.fsencode(path), times, flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(path))


def _which(ns: int, kept_s: int, set_s: int, now_s: float) -> str:
    """What a time read back is: "kept" (the earlier value), "set" (the new one), "now", or the time."""
    s = ns / 1e9
    for name, ref in (("kept", kept_s), ("set", set_s), ("now", now_s)):
        if abs(s - ref) < DAY_S:
            return name
    return f"{ns // 10**9} s"


def probe_utime_one(ctx: ProbeContext) -> Finding:
    path = ctx.work / "f"
    with helper("create a test file"):
        _write(path, b"t")
    problems, said = [], []
    for which in ("mtime", "atime"):
        with helper("utimensat setting both times"):
            os.utime(path, (TIME_A_S, TIME_A_S))
        with step(f"utimensat setting only the {which} (the other UTIME_OMIT)"):
            if which == "mtime":
                utimensat(path, None, TIME_B_S)
            else:
                utimensat(path, TIME_B_S, None)
        with helper("stat after utimensat"):
            st = os.stat(path)
        now = time.time()
        got = {
            "mtime": _which(st.st_mtime_ns, TIME_A_S, TIME_B_S, now),
            "atime": _which(st.st_atime_ns, TIME_A_S, TIME_B_S, now),
        }
        other = "atime" if which == "mtime" else "mtime"
        if got[which] != "set":
            problems.append(f"setting only the {which} left it {_said(got[which])}")
        if got[other] != "kept":
            problems.append(f"setting only the {which} changed the {other} ({_said(got[other])})")
        said.append(f"{which} alone set, {other} kept")
    if problems:
        return Finding(DIFFERS, "; ".join(problems) + " (touch -m / touch -a)")
    return Finding(YES, "; ".join(said))


def _said(which: str) -> str:
    return {"kept": "unchanged", "set": "set", "now": "set to now"}.get(which, f"at {which}")


def probe_symlink_times(ctx: ProbeContext) -> Finding:
    target, link = ctx.work / "target", ctx.work / "link"
    with helper("create the link's target"):
        _write(target, b"t")
    with helper("set the target's times"):
        os.utime(target, (TIME_A_S, TIME_A_S))
    with helper("symlink"):
        os.symlink("target", link)
    with step("utimensat(AT_SYMLINK_NOFOLLOW) on the link"):
        utimensat(link, TIME_B_S, TIME_B_S, nofollow=True)
    with helper("lstat the link and stat its target"):
        link_m = os.lstat(link).st_mtime_ns
        target_m = os.stat(target).st_mtime_ns
    now = time.time()
    on_link, on_target = _which(link_m, 0, TIME_B_S, now), _which(target_m, TIME_A_S, TIME_B_S, now)
    problems = []
    if on_link != "set":
        problems.append(f"the link's own mtime is {_said(on_link)}, not the time given")
    if on_target != "kept":
        problems.append(f"the target's mtime was changed ({_said(on_target)})")
    if problems:
        return Finding(DIFFERS, "; ".join(problems) + " (touch -h, rsync -a of links)")
    return Finding(YES, "a link's own times set without touching its target")


# -- contents kept ------------------------------------------------------------------------------------


def probe_dir_rename_contents(ctx: ProbeContext) -> Finding:
    d, e = ctx.work / "d", ctx.work / "e"
    with helper("mkdir d"):
        os.mkdir(d)
    with helper("write d/f"):
        _write(d / "f", b"x\n")
    with step("rename d to e"):
        os.rename(d, e)
    with helper("list and read e"):
        listed = sorted(os.listdir(e))
        try:
            content: bytes | None = (e / "f").read_bytes()
        except FileNotFoundError:
            content = None
    if content != b"x\n":
        what = "is gone" if content is None else f"holds {content[:16]!r}"
        return Finding(
            DIFFERS,
            f"mkdir d; echo x > d/f; mv d e: e/f {what} (e lists {listed})",
            severity=DATA_LOSS,
            step="rename d to e",
        )
    return Finding(YES, "mkdir d; echo x > d/f; mv d e: e/f holds x")


UNLINK_SIZES = (13, 4095, 4096, 5000, 65536)  # not all multiples of 4 KiB: fusefat reads those back wrong


def probe_unlink_open(ctx: ProbeContext) -> Finding:
    """Files of ``UNLINK_SIZES`` bytes, each written through its descriptor, unlinked while open, then
    read back through the descriptor; and what the directory lists meanwhile and after."""
    datas = {size: os.urandom(size) for size in UNLINK_SIZES}
    fds: dict[int, int] = {}
    got: dict[int, bytes] = {}
    try:
        for size, data in datas.items():
            with helper(f"create a {size:,}-byte test file"):
                fds[size] = os.open(ctx.work / f"f{size}", os.O_CREAT | os.O_RDWR, 0o644)
                os.write(fds[size], data)
        for size in datas:
            with step("unlink the open file"):
                os.unlink(ctx.work / f"f{size}")
        for size, data in datas.items():
            with step("pread after unlink"):
                got[size] = os.pread(fds[size], len(data) + 1, 0)
        with helper("list the directory while the files are open"):
            listed = os.listdir(ctx.work)
    finally:
        for fd in fds.values():
            os.close(fd)
    with helper("list the directory after close"):
        later = os.listdir(ctx.work)
    sizes = ", ".join(f"{size:,}" for size in UNLINK_SIZES)
    wrong = {size: back for size, back in got.items() if back != datas[size]}
    if wrong:

        def what(size: int, back: bytes) -> str:
            if not back:
                return f"{size:,} bytes: nothing"
            other = datas[size][: len(back)] != back[:size]
            return f"{size:,} bytes: {len(back):,} bytes" + (", other data" if other else "")

        kept = [f"{s:,}" for s in UNLINK_SIZES if s not in wrong]
        return Finding(
            DIFFERS,
            f"wrote {sizes} bytes through descriptors, unlinked the names, pread returned wrong data for "
            f"{'; '.join(what(s, b) for s, b in wrong.items())}"
            + (f" ({', '.join(kept)} bytes read back)" if kept else ""),
            severity=DATA_LOSS,
            step="pread after unlink",
        )
    if listed or later:
        return Finding(
            DIFFERS,
            f"the data reads back ({sizes} bytes), but while the files are open the directory lists "
            f"{sorted(listed)}"
            + (f", and after close {sorted(later)}" if later else " (gone after close)")
            + ": removing the directory meanwhile fails (rm -r)",
        )
    return Finding(YES, f"{sizes} bytes read back through their descriptors after unlink; the names are gone at once")


# -- error codes -------------------------------------------------------------------------------------


def _other_mount_dir(work: Path) -> str | None:
    """A directory on another mount than ``work`` where nothing can be created (/proc)."""
    try:
        here = os.stat(work).st_dev
        return "/proc" if os.stat("/proc").st_dev != here else None
    except OSError:
        return None


def probe_errno(ctx: ProbeContext) -> Finding:
    w = ctx.work
    with helper("fstatvfs (f_namemax)"):
        namemax = os.statvfs(w).f_namemax
    long_len = min(max(256, namemax + 1), 4095)
    with helper("mkdir a directory holding a file, and an empty one"):
        os.mkdir(w / "full")
        _write(w / "full" / "f", b"x")
        os.mkdir(w / "full2")
        _write(w / "full2" / "f", b"x")
        _write(w / "file", b"x")
    checks: list[tuple[str, str, Any]] = [
        (f"create a {long_len}-byte name", "ENAMETOOLONG", lambda: _write(w / ("n" * long_len), b"")),
        (f"look up a {long_len}-byte name", "ENAMETOOLONG", lambda: os.stat(w / ("n" * long_len))),
        ("rmdir a non-empty directory", "ENOTEMPTY", lambda: os.rmdir(w / "full")),
        ("rename a directory onto a non-empty one", "ENOTEMPTY", lambda: os.rename(w / "full2", w / "full")),
        ("mkdir an existing name", "EEXIST", lambda: os.mkdir(w / "file")),
        (
            "open(O_CREAT|O_EXCL) an existing file",
            "EEXIST",
            lambda: os.close(os.open(w / "file", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)),
        ),
    ]
    other = _other_mount_dir(w)
    if other is not None:
        checks.append(
            (f"rename to another mount ({other})", "EXDEV", lambda: os.rename(w / "file", f"{other}/mountbench-exdev"))
        )
    wrong, right = [], []
    for what, want, call in checks:
        got = _try(call)
        if got == want:
            right.append(want)
        else:
            wrong.append((what, want, got))
    if wrong:
        text = "; ".join(f"{what}: {got or 'succeeded'}, not {want}" for what, want, got in wrong)
        first = wrong[0]
        return Finding(DIFFERS, f"{text} (tools branch on these codes)", errno=first[2], step=first[0])
    return Finding(YES, f"{', '.join(dict.fromkeys(right))} where a local filesystem gives them")


# -- deep paths (last: a mount's daemon may die on it) -------------------------------------------------


def _mount_root_len(work: Path) -> int:
    """Bytes of ``work``'s path below its mount point (what a FUSE daemon is handed, roughly)."""
    real = os.path.realpath(work)
    try:
        entry = mount_of(real, read_mounts())
    except OSError:
        entry = None
    if entry is None:
        return len(real)
    root = entry.mount_point.rstrip("/")
    return len(real) - len(root)


def _mount_gone(work: Path) -> str | None:
    """Why ``work``'s mount no longer answers (its daemon died), or None if it answers."""
    try:
        os.statvfs(work)
    except OSError as err:
        if errno_name(err.errno) in GONE:
            return _text(err)
    return None


def probe_deep_paths(ctx: ProbeContext) -> Finding:
    """Where the deep-path limit really is, searched: mkdir 100-byte names one inside the other with
    relative (*at) calls to within ``DEEP_MARGIN`` of PATH_MAX within the mount (or until a mkdir fails);
    then, in the deepest directory, the longest name a file can be created under, searched upward to
    ``SEARCH_TOP`` (past PATH_MAX: ``DEEP_STEP`` bytes at a time, then byte by byte), each try removed at
    once: the longest path a file can have there; then a file (written and fsynced first, as an editor
    saves) renamed in under that name. A local filesystem
    takes every path up to the top; a mount that hands full paths to a daemon stops short (sshfs counts
    its source directory's path too), or its daemon dies (fusefat's: the fsync has the mount write out
    what it holds first, so what is left can be removed once it is mounted again). Bounded in time."""
    real = os.path.realpath(ctx.work)
    inside = _mount_root_len(ctx.work)  # bytes of the work directory's path below the mount point
    deadline = time.monotonic() + ctx.timeout * 0.6
    name = "d" * DEEP_NAME
    with helper("create the file to rename"):
        _write(ctx.work / "f", b"deep\n")
    with helper("open the work directory"):
        wfd = os.open(ctx.work, os.O_RDONLY | os.O_DIRECTORY)
    fds = [wfd]
    failed: list[tuple[str, int, OSError]] = []  # every call that failed, in order: (step, path within the mount, why)
    at_limit: list[tuple[str, int, OSError]] = []  # the create refused one byte past the longest path found
    best, renamed, levels, base = 0, False, 0, inside
    cut = False  # the time bound ended the search
    try:
        # the chain stays DEEP_MARGIN below PATH_MAX within the mount; the names tried in its deepest
        # directory go from there to SEARCH_TOP, a byte at a time
        while inside + len(fds) * (DEEP_NAME + 1) <= PATH_MAX - DEEP_MARGIN:
            if time.monotonic() > deadline:
                cut = True
                break
            length = inside + len(fds) * (DEEP_NAME + 1)
            try:
                os.mkdir(name, dir_fd=fds[-1])
                fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
            except OSError as err:
                failed.append((DEEP_MKDIR, length, err))
                break
        levels = len(fds) - 1
        base = inside + levels * (DEEP_NAME + 1)  # the deepest directory's path within the mount
        top = min(255, SEARCH_TOP - base - 1)
        if _mount_gone(ctx.work) is None:
            best = _longest_name(fds[-1], top, deadline, failed, at_limit, base)
        if best and _mount_gone(ctx.work) is None:
            with helper("fsync the file to rename"):
                ffd = os.open("f", os.O_RDWR, dir_fd=wfd)
                try:
                    os.fsync(ffd)
                finally:
                    os.close(ffd)
            try:
                os.rename("f", "g" * best, src_dir_fd=wfd, dst_dir_fd=fds[-1])
                renamed = True
                with open(os.open("g" * best, os.O_RDONLY, dir_fd=fds[-1]), "rb") as f:
                    moved = f.read()
                if moved != b"deep\n":
                    failed.append((DEEP_RENAME, base + 1 + best, OSError(0, f"read back {moved!r}")))
            except OSError as err:
                failed.append((DEEP_RENAME, base + 1 + best, err))
        if _mount_gone(ctx.work) is None:
            _unwind(fds, name, "g" * best if renamed else "")
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
    limit = base + 1 + best if best else base  # the longest path within the mount a file was made at
    from_root = len(real) - inside + limit
    where = f"{limit:,} bytes within the mount ({from_root:,} from /)"
    gone = _mount_gone(ctx.work)
    if gone is not None:
        # the call in flight when the daemon died: the first that got its connection's end
        what, at, err = next((f for f in failed if errno_name(f[2].errno) in GONE), failed[-1] if failed else
                             ("a call", limit, OSError(0, "no answer")))  # fmt: skip
        return Finding(
            DIFFERS,
            f"the mount's daemon died: {what} at {at:,} bytes within the mount got {_text(err)}; the mount is gone "
            f"({gone}): every file open on it is cut off and its unwritten data lost",
            errno=errno_name(err.errno),
            step=what,
            severity=DATA_LOSS,
            value=from_root,
            unit="bytes",
        )
    renaming = [f for f in failed if f[0] == DEEP_RENAME]
    if renaming:
        what, at, err = renaming[0]
        return Finding(
            DIFFERS,
            f"files were made at paths up to {where}, but renaming one in there ({at:,} bytes, as an editor saves) "
            f"failed: {_text(err)}",
            errno=errno_name(err.errno),
            step=what,
            value=from_root,
            unit="bytes",
        )
    stop = at_limit[0] if at_limit else (failed[0] if failed else None)
    if stop is not None:
        what, at, err = stop
        side = "within" if len(real) - inside + at <= PATH_MAX else "past"
        return Finding(
            DIFFERS,
            f"paths end at {where}: {what} at {at:,} bytes ({side} PATH_MAX {PATH_MAX:,} from /) got {_text(err)}; "
            "a local filesystem takes paths past PATH_MAX with relative calls",
            errno=errno_name(err.errno),
            step=what,
            value=from_root,
            unit="bytes",
        )
    if cut:
        return Finding(DIFFERS, f"searched up to {where} within the probe's time, no further: no limit found "
                                "so far", value=from_root, unit="bytes")  # fmt: skip
    return Finding(
        YES,
        f"no limit up to {where}, past PATH_MAX {PATH_MAX:,} with relative calls: {levels} levels of "
        f"{DEEP_NAME}-byte names, files made at every length tried and one renamed in at the deepest",
        value=from_root,
        unit="bytes",
    )


DEEP_MKDIR = "mkdir one level deeper"
DEEP_CREATE = "create a file in the deepest directory"
DEEP_RENAME = "rename a file into the deepest directory"


def _longest_name(
    dfd: int, top: int, deadline: float, failed: list[tuple[str, int, OSError]], limit: list[tuple[str, int, OSError]],
    base: int,
) -> int:  # fmt: skip
    """The longest name (1..``top`` bytes) a file can be created under in ``dfd`` (0: none), searched
    upward: ``DEEP_STEP`` bytes longer at a time, then one byte at a time from the last that worked, each
    try removed at once. Upward, so a daemon that dies past its limit dies at most ``DEEP_STEP`` - 1
    bytes past it (a bisection would first try far past it); in steps, so a mount that answers slowly
    (a network's round trips) is searched in a few dozen tries. Every create that failed goes into
    ``failed`` in call order; the refusal one byte past the longest into ``limit``."""

    def creates(n: int) -> OSError | None:
        try:
            fd = os.open("c" * n, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644, dir_fd=dfd)
        except OSError as err:
            failed.append((DEEP_CREATE, base + 1 + n, err))
            return err
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink("c" * n, dir_fd=dfd)
        return None

    best, stepped = 0, None  # the longest that worked; the step that did not, and why
    for n in [*range(DEEP_STEP, top, DEEP_STEP), top] if top >= 1 else []:
        if time.monotonic() > deadline:
            return best
        err = creates(n)
        if err is not None:
            stepped = (n, err)
            break
        best = n
    if stepped is None:
        return best
    for n in range(best + 1, stepped[0]):  # one byte at a time up to the step that failed
        if time.monotonic() > deadline:
            return best
        err = creates(n)
        if err is not None:
            limit.append((DEEP_CREATE, base + 1 + n, err))
            return best
        best = n
    limit.append((DEEP_CREATE, base + 1 + stepped[0], stepped[1]))  # the step was the first length refused
    return best


def _unwind(fds: list[int], name: str, leaf: str) -> None:
    """Remove the chain from the deepest level up, by descriptor: no path is ever too long."""
    with contextlib.suppress(OSError):
        os.unlink(leaf, dir_fd=fds[-1])
    while len(fds) > 1:
        os.close(fds.pop())
        try:
            os.rmdir(name, dir_fd=fds[-1])
        except OSError:
            return
