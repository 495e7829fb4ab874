"""What happens to a file through the mount, beyond the basic capabilities: appending to a small file
from one process, growing a file with truncate, the mode a new file gets under the process's umask,
device nodes, attributes changed through one hard-link name as seen through another, and renaming a
directory that an overlay's lower layer holds.

The same frame as :mod:`mountbench.probe.capabilities` (a :class:`ProbeContext` in, a
:class:`Finding` out, in a child process; :func:`step` labels the check's own call, :func:`helper` a
call it only needs to get there). Each was a gap a hand check found (issue 49): fusefat refused an
append to a 13-byte file and cut an 8 KiB file to 4 KiB on one; it refused to grow a file with
truncate; sshfs applied the server's umask; ``rsync -a`` as root met EPERM (sshfs) and EIO (fusefat) on
device nodes; bindfs showed a mode changed through the other name a second late; and a directory in an
overlay's lower layer could not be renamed (EXDEV) where the probe's own directories could.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

from mountbench.host.targets import mount_of, read_mounts
from mountbench.probe.capabilities import ProbeContext, append_bytes, helper, step
from mountbench.probefacts import DATA_LOSS, DIFFERS, NO, YES, Finding

UMASK = 0o002  # not the usual 022: a mount that applies its own mask shows
OVERLAY_MODULE = Path("/sys/module/overlay/parameters/redirect_dir")


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _read(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# -- appending, one process ----------------------------------------------------------------------


def probe_append_one(ctx: ProbeContext) -> Finding:
    """One process appends 10 bytes with O_APPEND to a 13-byte and to an 8,192-byte file."""
    problems, refusals, lost = [], [], False
    for size in (13, 8192):
        path = ctx.work / f"log-{size}"
        base = os.urandom(size)
        with helper(f"write a {size:,}-byte file"):
            _write(path, base)
        failed = append_bytes(path, b"+" * 10)
        with helper("read the file back"):
            got = _read(path)
        if got == base + b"+" * 10:
            continue
        if failed is not None and got == base:
            refusals.append((size, failed))
            continue
        lost = True
        what = f"{len(got):,} bytes" + ("" if got[: min(size, len(got))] == base[: len(got)] else ", its data changed")
        problems.append(f"appending 10 bytes to {size:,} left {what}" + (f" ({failed})" if failed else ""))
    if lost:
        also = "".join(f"; appending to {s:,} bytes: {f}" for s, f in refusals)
        return Finding(DIFFERS, "; ".join(problems) + also + " (logs, git's reflogs)", severity=DATA_LOSS)
    if refusals:
        size, failed = refusals[0]
        call, _, code = failed.partition(": ")
        what = f"{call} with O_APPEND on a {size:,}-byte file"
        return Finding(
            NO,
            f"{what}: {code}; "
            + "; ".join(f"appending 10 bytes to {s:,} bytes: {f}" for s, f in refusals)
            + " (the file is unchanged)",
            errno=code,
            step=what,
        )
    return Finding(YES, "10 bytes appended with O_APPEND to a 13-byte and an 8,192-byte file, both intact")


# -- growing with truncate -----------------------------------------------------------------------


def probe_truncate_grow(ctx: ProbeContext) -> Finding:
    path = ctx.work / "f"
    base = os.urandom(13)
    with helper("write a 13-byte file"):
        _write(path, base)
    with helper("open it"):
        fd = os.open(path, os.O_RDWR)
    try:
        with step("ftruncate a 13-byte file to 8,192 bytes"):
            os.ftruncate(fd, 8192)
    finally:
        os.close(fd)
    with helper("read the file back"):
        got = _read(path)
    if got[:13] != base:
        return Finding(DIFFERS, f"after growing, the first 13 bytes changed ({len(got):,} bytes)", severity=DATA_LOSS)
    if got != base + bytes(8192 - 13):
        return Finding(DIFFERS, f"grown to {len(got):,} bytes, not 8,192 with zeros after the data")
    return Finding(YES, "a 13-byte file grown to 8,192 bytes with ftruncate: zeros after its data")


# -- the mode of a new file -----------------------------------------------------------------------


def probe_create_mode(ctx: ProbeContext) -> Finding:
    """With umask 002 (this child's own), a file created 0666 must be 0664, a directory made 0777 0775."""
    os.umask(UMASK)
    with step("create a file with mode 0666"):
        os.close(os.open(ctx.work / "f", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    with step("mkdir with mode 0777"):
        os.mkdir(ctx.work / "d", 0o777)
    with helper("stat them"):
        made = stat.S_IMODE(os.stat(ctx.work / "f").st_mode), stat.S_IMODE(os.stat(ctx.work / "d").st_mode)
    want = 0o666 & ~UMASK, 0o777 & ~UMASK
    said = f"with umask {UMASK:03o}: a file created 0666 is {made[0]:04o}, a directory made 0777 is {made[1]:04o}"
    if made != want:
        return Finding(DIFFERS, f"{said} (expected {want[0]:04o} and {want[1]:04o}: the process's umask alone)")
    return Finding(YES, said)


# -- device nodes ------------------------------------------------------------------------------


def probe_mknod(ctx: ProbeContext) -> Finding:
    """A character device node (1, 3: what /dev/null is), made as root and never opened."""
    path = ctx.work / "null"
    with step("mknod a character device (1, 3)"):
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    with helper("lstat the node"):
        st = os.lstat(path)
    if not stat.S_ISCHR(st.st_mode) or st.st_rdev != os.makedev(1, 3):
        kind = "a character device" if stat.S_ISCHR(st.st_mode) else f"mode {st.st_mode:o}"
        return Finding(DIFFERS, f"made, but it reads back as {kind}, device {os.major(st.st_rdev)},"
                                f"{os.minor(st.st_rdev)}")  # fmt: skip
    return Finding(YES, "a character device node (1, 3) made and read back as one (rsync -a -D as root)")


# -- attributes through another hard-link name -------------------------------------------------------


def _late(checks: dict[str, Callable[[], bool]], patience: float) -> dict[str, float | None]:
    """Seconds until each check held (0.0: at once), None for those that did not within ``patience``."""
    t0 = time.monotonic()
    found: dict[str, float | None] = {}
    while True:
        now = time.monotonic() - t0
        for name, check in checks.items():
            if name not in found and check():
                found[name] = 0.0 if now < 0.02 else round(now, 2)
        if len(found) == len(checks) or now > patience:
            return {name: found.get(name) for name in checks}
        time.sleep(0.02)


def probe_hardlink_attrs(ctx: ProbeContext) -> Finding:
    """Change the mode, the link count (a third name) and, as root, the group through one name; how
    long until stat through the other name shows each."""
    a, b = ctx.work / "a", ctx.work / "b"
    with helper("create a test file"):
        _write(a, b"h")
    with step("link"):
        os.link(a, b)
    with helper("stat through the first name"):
        os.stat(a)  # what the mount may now keep of it
    with helper("chmod 600, link a third name and chown through the second name"):
        os.chmod(b, 0o600)
        os.link(b, ctx.work / "c")
        if os.getuid() == 0:
            os.chown(b, 0, 4242)
    checks = {
        "mode": lambda: stat.S_IMODE(os.stat(a).st_mode) == 0o600,
        "link count": lambda: os.stat(a).st_nlink == 3,
    }
    if os.getuid() == 0:
        checks["group"] = lambda: os.stat(a).st_gid == 4242
    patience = min(1.5, ctx.timeout / 3)
    late = _late(checks, patience)
    stale = {name: seen for name, seen in late.items() if seen != 0.0}
    if not stale:
        return Finding(YES, f"{', '.join(checks)} changed through one name seen at once through the other")
    said = [f"{name} seen after {seen:.1f} s" if seen is not None else f"{name} not seen within {patience:g} s"
            for name, seen in stale.items()]  # fmt: skip
    return Finding(DIFFERS, f"changed through one hard-link name, through the other: {'; '.join(said)} (stale "
                            "attributes: rsync -H, backup tools)")  # fmt: skip


# -- a directory from an overlay's lower layer --------------------------------------------------------


def overlay_redirect(options: str, module: Path = OVERLAY_MODULE) -> tuple[str, str]:
    """An overlay mount's redirect_dir mode (on, follow, nofollow, off) and where it was read."""
    for option in options.split(","):
        if option.startswith("redirect_dir="):
            return option.split("=", 1)[1], "the mount's options"
    if "metacopy=on" in options.split(","):
        return "on", "the mount's options (metacopy=on implies it)"
    try:
        default = module.read_text().strip()
    except OSError:
        return "unknown", "nowhere (the overlay module's parameters are not readable)"
    return ("on" if default == "Y" else "off"), f"the overlay module's default ({module}: {default})"


def probe_lower_dir_rename(ctx: ProbeContext) -> Finding:
    """On an overlay mount, whether rename(2) of a directory that came from a lower layer works: only
    with redirect_dir=on. The probe writes only in its own directory, which is in the upper layer, so
    this is read from the mount's options, not tried (marked as reported); elsewhere there is no lower
    layer and every directory is the filesystem's own."""
    with helper("read the mount table"):
        entry = mount_of(os.path.realpath(ctx.work), read_mounts())
    if entry is None or entry.fstype != "overlay":
        fstype = entry.fstype if entry is not None else "unknown"
        return Finding(YES, f"not an overlay mount ({fstype}): there is no lower layer, every directory can be renamed")
    mode, where = overlay_redirect(entry.options)
    if mode == "unknown":
        return Finding(DIFFERS, f"an overlay mount whose redirect_dir mode could not be read ({where}): whether a "
                                "directory from a lower layer can be renamed is unknown")  # fmt: skip
    if mode == "on":
        return Finding(YES, f"overlay with redirect_dir=on (from {where}): a directory from a lower layer is "
                            "renamed (a redirect is recorded)", reported=True)  # fmt: skip
    what = "rename a directory from a lower layer"
    return Finding(
        NO,
        f"{what}: EXDEV, as an overlay with redirect_dir={mode} (from {where}) answers: mv copies such a directory "
        "instead, and tools that rename directories into place fail; the probe's own directories, in the upper "
        "layer, rename (read from the mount, not tried: the probe writes only in its own directory)",
        errno="EXDEV",
        step=what,
        reported=True,
    )
