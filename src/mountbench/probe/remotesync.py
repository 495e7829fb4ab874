"""What "durable" and "coherent" mean on a cloud drive: a mount (rclone, a FUSE cloud
client) and the remote's own directory, two views of one tree.

Five checks, each repeated, each wait bounded by ``timeout``:

- ``round trip``: one mkdir and one rmdir through the mount, which a cloud client sends
  to the remote at once: the time the wire and the remote take for a metadata call;
- ``close``: a file written through the mount and closed: is it on the remote when
  close() returns, and if not, how long until it is (write-back);
- ``fsync``: a file written through the mount and fsync()ed, still open: is it on the
  remote when fsync() returns (durable at fsync), how long fsync took, and how long
  until it is on the remote;
- ``remote create``: a file created in the remote's directory: how long until the mount
  shows it (stat only), or not within the timeout (a directory cache);
- ``remote change``: a file the mount has just read is rewritten on the remote: what a
  read through the mount gets right after (fresh, stale, torn) and how long until fresh.

Every step runs on a :class:`~mountbench.probe.sides.Side` in a child process bounded in
time (a hung FUSE call hangs only its child), as :mod:`mountbench.probe.coherence` does.
The result is a :class:`SyncResult`, stored with the run (see :class:`CloudProbe`).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mountbench.errors import TargetError
from mountbench.probe.coherence import NEW, OLD, seen_version
from mountbench.probe.sides import LocalSide, Signals
from mountbench.probefacts import SyncResult

SCRATCH_PREFIX = ".mountbench-sync-"
PAYLOAD = bytes(range(256)) * 256  # 64 KiB: more than one FUSE write
POLL_S = 0.002


def _poll(predicate: Callable[[], bool], timeout: float) -> float | None:
    """time.monotonic() when ``predicate()`` first holds, or None within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if predicate():
                return time.monotonic()
        except (FileNotFoundError, NotADirectoryError):
            pass
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_S)


def _holds(path: Path, data: bytes) -> Callable[[], bool]:
    def check() -> bool:
        with open(path, "rb") as f:
            return os.fstat(f.fileno()).st_size == len(data) and f.read() == data

    return check


def _name(check: str, rep: int) -> str:
    return f"{check}-{int(rep)}"


# -- steps (each runs in a child process, on the side of the view it touches) ---------------


def mkdir_rmdir(m_dir: str, rep: int) -> float:
    """Mount: milliseconds for one mkdir plus one rmdir (each a request to the remote)."""
    path = Path(m_dir) / _name("rtt", rep)
    t0 = time.monotonic()
    path.mkdir()
    path.rmdir()
    return round((time.monotonic() - t0) * 1000.0, 3)


def first_reads(seed: str, blocks: int = 8) -> dict[str, list[float]]:
    """Mount: read ``blocks`` 4 KiB blocks at spread offsets of a file that so far exists only
    on the remote (a miss each: the wire), then the same blocks again (hits); milliseconds each."""
    size = os.stat(seed).st_size
    step = max(4096, (size // blocks) // 4096 * 4096)
    offsets = [i * step for i in range(blocks) if i * step + 4096 <= size]
    timed: dict[str, list[float]] = {"first": [], "again": []}
    fd = os.open(seed, os.O_RDONLY)
    try:
        for key in ("first", "again"):
            for offset in offsets:
                t0 = time.monotonic()
                os.pread(fd, 4096, offset)
                timed[key].append(round((time.monotonic() - t0) * 1000.0, 3))
    finally:
        os.close(fd)
    return timed


def write_close(m_dir: str, rep: int) -> dict[str, Any]:
    """Mount: write the payload and close; when close() returned (time.monotonic())."""
    fd = os.open(Path(m_dir) / _name("close", rep), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, PAYLOAD)
    finally:
        os.close(fd)
    return {"at": time.monotonic()}


def write_fsync_hold(sig: Signals, m_dir: str, rep: int, timeout: float) -> dict[str, Any]:
    """Mount: write the payload, fsync, say ready with the file still open, close when released."""
    fd = os.open(Path(m_dir) / _name("fsync", rep), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, PAYLOAD)
        t0 = time.monotonic()
        os.fsync(fd)
        at = time.monotonic()
        sig.ready()
        sig.wait_release(3 * timeout + 10.0)
    finally:
        os.close(fd)
    return {"at": at, "fsync_ms": round((at - t0) * 1000.0, 3)}


def holds_now(r_dir: str, check: str, rep: int) -> bool:
    """Remote: does it hold the whole payload right now?"""
    try:
        return _holds(Path(r_dir) / _name(check, rep), PAYLOAD)()
    except FileNotFoundError:
        return False


def await_payload(r_dir: str, check: str, rep: int, timeout: float) -> float | None:
    """Remote: when (time.monotonic()) the whole payload is there, None: not within ``timeout``."""
    return _poll(_holds(Path(r_dir) / _name(check, rep), PAYLOAD), timeout)


def remote_create(r_dir: str, rep: int) -> dict[str, Any]:
    """Remote: create a file; when it was done."""
    (Path(r_dir) / _name("create", rep)).write_bytes(b"new")
    return {"at": time.monotonic()}


def await_exists(m_dir: str, rep: int, timeout: float) -> float | None:
    """Mount: when a stat() first shows the remote's new file (None: not within ``timeout``)."""
    path = Path(m_dir) / _name("create", rep)
    return _poll(lambda: os.path.lexists(path), timeout)


def change_setup(m_dir: str, rep: int) -> None:
    """Mount: the file the remote will change (written through the mount, so the mount knows it)."""
    (Path(m_dir) / _name("change", rep)).write_bytes(OLD)


def change_await_remote(r_dir: str, rep: int, timeout: float) -> bool:
    """Remote: wait until the mount's file reached the remote (write-back)."""
    return _poll(_holds(Path(r_dir) / _name("change", rep), OLD), timeout) is not None


def change_prime(m_dir: str, rep: int) -> bool:
    """Mount: read the old version (so the mount's caches hold it)."""
    return _holds(Path(m_dir) / _name("change", rep), OLD)()


def change_act(r_dir: str, rep: int) -> dict[str, Any]:
    """Remote: rewrite the file in place with the new (longer) version."""
    (Path(r_dir) / _name("change", rep)).write_bytes(NEW)
    return {"at": time.monotonic()}


def change_check(m_dir: str, rep: int, timeout: float) -> dict[str, Any]:
    """Mount, right after the remote's change: stat then read; how long until fresh."""
    path = Path(m_dir) / _name("change", rep)
    outcome, _size, _data = seen_version(path)
    fresh_at = time.monotonic() if outcome == "fresh" else _poll(_holds(path, NEW), timeout)
    return {"outcome": outcome, "fresh_at": fresh_at}


def make_scratch(m_dir: str, name: str) -> str:
    """Mount: the check's scratch directory (mkdir reaches the remote at once on rclone)."""
    if not name.startswith(SCRATCH_PREFIX) or "/" in name:
        raise ValueError(f"not a sync scratch name: {name!r}")
    path = Path(m_dir) / name
    path.mkdir()
    return str(path)


def await_dir(r_dir: str, timeout: float) -> bool:
    return _poll(lambda: os.path.isdir(r_dir), timeout) is not None


def remove_scratch(directory: str) -> str:
    """Remove the check's scratch directory (only ever one named by this module), through
    whichever view it is given."""
    if not Path(directory).name.startswith(SCRATCH_PREFIX):
        raise ValueError(f"refusing to remove {directory}: not a sync scratch directory")
    shutil.rmtree(directory)
    return "removed"


STEPS: dict[str, Callable[..., Any]] = {
    fn.__name__: fn
    for fn in (
        mkdir_rmdir, first_reads, write_close, write_fsync_hold, holds_now, await_payload, remote_create, await_exists,
        change_setup, change_await_remote, change_prime, change_act, change_check,
        make_scratch, await_dir, remove_scratch,
    )
}  # fmt: skip


# -- records ---------------------------------------------------------------------------------


def _ms(value: float | None) -> float | None:
    return None if value is None else round(max(0.0, value) * 1000.0, 3)


# -- the driver ------------------------------------------------------------------------------


class _Steps:
    """Runs the checks' steps on one side, bounded; the first failure of each kind becomes a note."""

    def __init__(self, side: LocalSide, timeout: float) -> None:
        self.side = side
        self.timeout = timeout
        self.notes: list[str] = []

    def run(self, step: str, *args: Any, waits: bool = False) -> Any:
        budget = self.timeout + 5.0 if waits else max(5.0, self.timeout)
        outcome = self.side.run(step, *args, timeout=budget)
        if outcome.status != "ok":
            self.notes.append(f"{step}: {outcome.why()}")
            return None
        return outcome.value


def measure_sync(
    mount: str, remote: str, *, repeat: int = 1, timeout: float = 10.0, seed: str | None = None
) -> SyncResult:
    """The five checks between ``mount`` (a cloud drive's mount point, or a directory in it)
    and ``remote`` (the same directory as the remote stores it), ``repeat`` times.

    ``seed``: a file (seen through the mount) that only the remote has so far, never read
    through the mount: the first reads of it cross the wire. A scratch directory
    ``.mountbench-sync-<pid>`` is made through the mount and removed
    through it at the end. Raises TargetError when the remote never shows it.
    """
    side = LocalSide(STEPS, "host")
    s = _Steps(side, timeout)
    name = f"{SCRATCH_PREFIX}{os.getpid()}-{time.monotonic_ns() % 10**9}"
    m_dir = s.run("make_scratch", mount, name)
    if m_dir is None:
        raise TargetError(f"{mount}: cannot create a scratch directory ({'; '.join(s.notes)})")
    r_dir = os.path.join(remote, name)
    got: dict[str, list[Any]] = {k: [] for k in SyncResult.__dataclass_fields__ if k not in ("repeat", "timeout_s")}
    if seed is not None:
        timed = s.run("first_reads", seed, waits=True)
        if timed:
            got["first_read_ms"], got["reread_ms"] = timed["first"], timed["again"]
    try:
        if not s.run("await_dir", r_dir, timeout, waits=True):
            raise TargetError(f"{remote} does not show {m_dir} within {timeout:g} s: is it the mount's remote?")
        for rep in range(repeat):
            got["round_trip_ms"].append(s.run("mkdir_rmdir", m_dir, rep))
            _close_check(s, m_dir, r_dir, rep, got)
            _fsync_check(s, side, m_dir, r_dir, rep, got)
            _create_check(s, m_dir, r_dir, rep, got)
            _change_check(s, m_dir, r_dir, rep, got)
    finally:
        cleanup = _remove(side, m_dir, r_dir, timeout)
    return SyncResult(
        repeat=repeat,
        timeout_s=timeout,
        round_trip_ms=tuple(got["round_trip_ms"]),
        first_read_ms=tuple(got["first_read_ms"]),
        reread_ms=tuple(got["reread_ms"]),
        at_close=tuple(got["at_close"]),
        close_delay_ms=tuple(got["close_delay_ms"]),
        at_fsync=tuple(got["at_fsync"]),
        fsync_ms=tuple(got["fsync_ms"]),
        fsync_delay_ms=tuple(got["fsync_delay_ms"]),
        remote_create_ms=tuple(got["remote_create_ms"]),
        remote_change=tuple(got["remote_change"]),
        remote_change_fresh_ms=tuple(got["remote_change_fresh_ms"]),
        notes=tuple(dict.fromkeys(s.notes)),
        cleanup=cleanup,
    )


def _remove(side: LocalSide, m_dir: str, r_dir: str, timeout: float) -> str:
    """Through the mount; when the mount cannot (files it never saw make the remote's
    directory non-empty: EIO on rclone), from the remote's side, which then holds nothing."""
    removed = side.run("remove_scratch", m_dir, timeout=max(10.0, timeout))
    if removed.status == "ok":
        return "removed"
    if not os.path.isdir(r_dir):
        return f"removed (the mount said {removed.why()})"
    again = side.run("remove_scratch", r_dir, timeout=max(10.0, timeout))
    if again.status == "ok":
        return "removed from the remote's side (through the mount: " + removed.why() + ")"
    return f"left {r_dir}: {again.why()}"


def _close_check(s: _Steps, m_dir: str, r_dir: str, rep: int, got: dict[str, list[Any]]) -> None:
    wrote = s.run("write_close", m_dir, rep)
    now = s.run("holds_now", r_dir, "close", rep) if wrote else None
    seen = s.run("await_payload", r_dir, "close", rep, s.timeout, waits=True) if wrote else None
    got["at_close"].append(now)
    got["close_delay_ms"].append(0.0 if now else _ms(seen - wrote["at"]) if wrote and seen else None)


def _fsync_check(s: _Steps, side: LocalSide, m_dir: str, r_dir: str, rep: int, got: dict[str, list[Any]]) -> None:
    pending = side.begin("write_fsync_hold", m_dir, rep, s.timeout, timeout=max(5.0, s.timeout))
    now = s.run("holds_now", r_dir, "fsync", rep) if pending.ready else None
    seen = s.run("await_payload", r_dir, "fsync", rep, s.timeout, waits=True) if pending.ready else None
    done = pending.finish(s.timeout + 5.0)
    if done.status != "ok":
        s.notes.append(f"write_fsync_hold: {done.why()}")
        got["at_fsync"].append(None)
        got["fsync_ms"].append(None)
        got["fsync_delay_ms"].append(None)
        return
    got["at_fsync"].append(now)
    got["fsync_ms"].append(done.value["fsync_ms"])
    got["fsync_delay_ms"].append(0.0 if now else _ms(seen - done.value["at"]) if seen else None)


def _create_check(s: _Steps, m_dir: str, r_dir: str, rep: int, got: dict[str, list[Any]]) -> None:
    s.run("await_exists", m_dir, rep, 0.0)  # the mount looks first: the absence is what it may cache
    made = s.run("remote_create", r_dir, rep)
    seen = s.run("await_exists", m_dir, rep, s.timeout, waits=True) if made else None
    got["remote_create_ms"].append(_ms(seen - made["at"]) if made and seen else None)


def _change_check(s: _Steps, m_dir: str, r_dir: str, rep: int, got: dict[str, list[Any]]) -> None:
    ready = s.run("change_setup", m_dir, rep) is None and not any(n.startswith("change_setup") for n in s.notes)
    ready = ready and bool(s.run("change_await_remote", r_dir, rep, s.timeout, waits=True))
    ready = ready and bool(s.run("change_prime", m_dir, rep))
    if not ready:
        got["remote_change"].append("unseen")
        got["remote_change_fresh_ms"].append(None)
        return
    acted = s.run("change_act", r_dir, rep)
    checked = s.run("change_check", m_dir, rep, s.timeout, waits=True) if acted else None
    if checked is None:
        got["remote_change"].append("failed")
        got["remote_change_fresh_ms"].append(None)
        return
    got["remote_change"].append(checked["outcome"])
    fresh = checked["fresh_at"]
    got["remote_change_fresh_ms"].append(_ms(fresh - acted["at"]) if fresh is not None else None)


__all__ = ["STEPS", "measure_sync"]
