"""Times tools trust: does changing a file's content move its mtime and ctime, and a directory's when a
name comes or goes; and which times a file can carry at all (the epoch of reproducible builds, past
2038, 2106).

The same frame as :mod:`mountbench.probe.capabilities` (a :class:`ProbeContext` in, a
:class:`Finding` out, in a child process; :func:`step` labels the check's own call, :func:`helper` a
call it only needs to get there). make rebuilds what is older than its inputs, git's index and
rsync's quick check compare mtime (and ctime): a write that leaves them alone leaves a stale build or
an unsynced file behind, silently (issue 49: on fusefat, after ``echo two > in`` make said "'out' is
up to date").
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from mountbench.probe.capabilities import ProbeContext, helper
from mountbench.probe.sandbox import errno_name
from mountbench.probefacts import DIFFERS, NO, YES, Finding

# A time read back within this many seconds of the one set is that time (FAT keeps mtime to 2 s).
SAME_TIME_S = 2.0
# The times set: what reproducible builds stamp (SOURCE_DATE_EPOCH=0), past 32-bit seconds, near the end
# of FAT's range, and past unsigned 32-bit seconds.
TIMES_S: tuple[tuple[int, str], ...] = (
    (0, "epoch 0, as reproducible builds stamp"),
    (2**31, "past 32-bit seconds"),
    (4_041_964_800, "late in FAT's range, which ends in 2107"),
    (2**32 + 86_400, "past unsigned 32-bit seconds"),
)


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _errno(err: OSError) -> str:
    return errno_name(err.errno) or str(err)


def when(seconds: float) -> str:
    """A time as a reader checks it: UTC, to the second."""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))
    except (OverflowError, OSError, ValueError):
        return f"{seconds:.0f} s"


def _past_the_clock_step(stamps: list[int]) -> None:
    """Sleep until a time taken now would differ from every stamp in ``stamps`` (ns): past whole
    seconds where the filesystem keeps whole seconds, past 2 s on FAT; a moment otherwise."""
    two = all(s % 2_000_000_000 == 0 for s in stamps)
    coarse = all(s % 1_000_000_000 == 0 for s in stamps)
    if not coarse:
        time.sleep(0.03)
        return
    wait = max(stamps) / 1e9 + (2.0 if two else 1.0) + 0.05 - time.time()
    time.sleep(min(max(wait, 0.03), 2.1))


def _grow(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.posix_fallocate(fd, 0, 8192)
    finally:
        os.close(fd)


def _shrink(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, 1)
    finally:
        os.close(fd)


def _rewrite(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, b"y", 0)
    finally:
        os.close(fd)


def probe_content_times(ctx: ProbeContext) -> Finding:
    """mtime and ctime of a file moved by write (no O_TRUNC), O_TRUNC, ftruncate and posix_fallocate;
    those of a directory by a create and an unlink in it."""
    w = ctx.work
    files = {"write": w / "write", "O_TRUNC": w / "trunc", "ftruncate": w / "shrink", "posix_fallocate": w / "grow"}
    with helper("create the test files"):
        for name, path in files.items():
            _write(path, b"xx" if name == "ftruncate" else b"x")
        os.mkdir(w / "made-in")
        os.mkdir(w / "gone-from")
        _write(w / "gone-from" / "f", b"g")
    dirs = {"a create in it": w / "made-in", "an unlink in it": w / "gone-from"}
    with helper("stat the test files and directories"):
        before = {n: os.stat(p) for n, p in {**files, **dirs}.items()}
    _past_the_clock_step([s.st_ctime_ns for s in before.values()] + [s.st_mtime_ns for s in before.values()])
    ops = {
        "write": lambda: _rewrite(files["write"]),
        "O_TRUNC": lambda: os.close(os.open(files["O_TRUNC"], os.O_WRONLY | os.O_TRUNC)),
        "ftruncate": lambda: _shrink(files["ftruncate"]),
        "posix_fallocate": lambda: _grow(files["posix_fallocate"]),
        "a create in it": lambda: _write(dirs["a create in it"] / "new", b"n"),
        "an unlink in it": lambda: os.unlink(dirs["an unlink in it"] / "f"),
    }
    refused: dict[str, str] = {}
    for name, op in ops.items():
        try:
            op()
        except OSError as err:
            refused[name] = _errno(err)
    with helper("stat after the changes"):
        after = {n: os.stat(p) for n, p in {**files, **dirs}.items()}
    stale: dict[str, list[str]] = {"mtime": [], "ctime": []}
    for name in ops:
        if name in refused:
            continue
        if after[name].st_mtime_ns == before[name].st_mtime_ns:
            stale["mtime"].append(name)
        if after[name].st_ctime_ns == before[name].st_ctime_ns:
            stale["ctime"].append(name)
    not_tried = "; ".join(f"{n} refused ({e})" for n, e in refused.items())
    tried = [n for n in ops if n not in refused]
    if not tried:
        first = next(iter(refused.items()))
        return Finding(NO, f"{not_tried}: the times could not be checked", errno=first[1], step=first[0])
    also = f"; not checked: {not_tried}" if refused else ""
    said = [f"{which} unchanged by {_ops_text(names)}" for which, names in stale.items() if names]
    if said:
        return Finding(
            DIFFERS,
            f"{'; '.join(said)} (make rebuilds by mtime; git's index and rsync's quick check compare mtime and "
            f"ctime: a change they miss stays unbuilt or unsynced){also}",
            step=(stale["mtime"] or stale["ctime"])[0],
        )
    return Finding(YES, f"mtime and ctime moved by {_ops_text(tried)}{also}")


def _ops_text(names: list[str]) -> str:
    """ "write, O_TRUNC and a directory's by an unlink in it"."""
    files = [n for n in names if not n.endswith(" in it")]
    dirs = [n for n in names if n.endswith(" in it")]
    parts = [", ".join(files)] if files else []
    if dirs:
        parts.append(f"a directory's by {' and '.join(dirs)}")
    return "; ".join(parts)


def probe_time_range(ctx: ProbeContext) -> Finding:
    """Set a file's times to each of ``TIMES_S`` and read them back: what a file can carry."""
    path = ctx.work / "f"
    with helper("create a test file"):
        _write(path, b"t")
    wrong, kept, refused = [], [], []
    for seconds, meaning in TIMES_S:
        try:
            os.utime(path, (seconds, seconds))
        except OSError as err:
            refused.append((seconds, meaning, _errno(err)))
            continue
        with helper("stat after utime"):
            got = os.stat(path).st_mtime
        if abs(got - seconds) <= SAME_TIME_S:
            kept.append(f"{when(seconds)[:10]}")
        else:
            wrong.append(f"{when(seconds)} ({meaning}) read back as {when(got)}")
    said = [f"refused {when(s)[:10]} ({m}): {e}" for s, m, e in refused]
    if wrong:
        return Finding(
            DIFFERS,
            f"{'; '.join(wrong + said)} (make and rsync -t trust the times they set; tar and reproducible builds "
            "stamp epoch 0)",
        )
    if not kept:
        return Finding(NO, f"utime: {'; '.join(said)}", errno=refused[0][2], step="utime")
    if said:
        return Finding(DIFFERS, f"kept {', '.join(kept)}; {'; '.join(said)}", errno=refused[0][2], step="utime")
    return Finding(YES, f"times set to {', '.join(kept)} read back as set")
