"""measure_coherence: how (and how soon) changes made through view A show through view B.

A and B are two paths to the same directory through different mounts (a host
directory and its sshfs/9p/virtiofs mount, an NFS export and its client). Every
change is made through A inside a scratch directory created through A; B is polled
for it. Before each change, B first observes the old state (so caches in B's mount
hold it, as they would for an application watching the file). Each measurement runs
in a child process (see :mod:`mountbench.probe.sandbox`) so a hung mount cannot hang
the caller.

Checks, each repeated ``repeat`` times (repetitions outermost):
- visibility of create / append / truncate / rename / delete, observed with stat() only;
- stale reads right after A replaces a file (by rename, and rewritten in place);
- inotify events through B for changes through A;
- whether flock / fcntl locks held through A block a second process locking through B.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mountbench.errors import TargetError
from mountbench.probe import inotify
from mountbench.probe.capabilities import try_lock
from mountbench.probe.model import (
    CoherenceResult,
    InotifyResult,
    LockResult,
    StaleReadResult,
    VisibilityResult,
)
from mountbench.probe.sandbox import Child, Outcome, run_isolated
from mountbench.probe.target import (
    create_scratch,
    marker_id,
    new_marker,
    new_scratch_name,
    remove_probe_scratch,
    sweep_killed_probes,
)

OPERATIONS = ("create", "append", "truncate", "rename", "delete")
STALE_MODES = ("replace by rename", "rewrite in place")
LOCK_KINDS = ("flock", "fcntl")
INOTIFY_EXPECTED = ("create", "modify", "close_write", "moved_from", "moved_to", "delete")
POLL_INTERVAL_S = 0.001


# -- child side: each function runs in a child process and returns JSON-safe data -----------


def _poll(predicate: Callable[[], bool], timeout: float) -> float | None:
    """Milliseconds until ``predicate()`` holds, or None if not within ``timeout`` s."""
    t0 = time.perf_counter()
    deadline = t0 + timeout
    while True:
        try:
            if predicate():
                return round((time.perf_counter() - t0) * 1000.0, 3)
        except FileNotFoundError:
            pass
        if time.perf_counter() >= deadline:
            return None
        time.sleep(POLL_INTERVAL_S)


def _read(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _write(path: Path, data: bytes, flags: int = os.O_TRUNC) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | flags, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _shows(path: Path, data: bytes) -> Callable[[], bool]:
    """B shows exactly ``data`` at ``path``: content by read and size by stat agree."""
    return lambda: _read(path) == data and os.stat(path).st_size == len(data)


def _size_is(path: Path, size: int) -> Callable[[], bool]:
    return lambda: os.stat(path).st_size == size


def _exists(path: Path) -> Callable[[], bool]:
    return lambda: os.path.lexists(path)


def _gone(path: Path) -> Callable[[], bool]:
    return lambda: not os.path.lexists(path)


def visibility_once(a_dir: str, b_dir: str, op: str, rep: int, timeout: float) -> dict[str, Any]:
    """Make ``op`` through A; return {"delay_ms": ms or None, "note": ...}.

    B observes like ``ls``, ``make`` or ``tail -f`` do: with stat() only (existence,
    size), never opening the file, so polling does not itself refresh B's caches.
    Content freshness is measured by :func:`stale_read_once`.
    """
    name = f"vis-{op}-{rep}"
    a, b = Path(a_dir) / name, Path(b_dir) / name
    initial = b"0123456789abcdef" * 256  # 4 KiB
    if op == "create":
        os.path.lexists(b)  # B looks first (and may cache the absence)
    else:
        _write(a, initial)
        if _poll(_size_is(b, len(initial)), timeout) is None:
            return {"delay_ms": None, "note": "the file's initial state never showed through B"}
    if op == "create":
        _write(a, b"new")
        seen = _exists(b)
    elif op == "append":
        _write(a, b"appended", os.O_APPEND)
        seen = _size_is(b, len(initial) + len(b"appended"))
    elif op == "truncate":
        os.truncate(a, 100)
        seen = _size_is(b, 100)
    elif op == "rename":
        new_a, new_b = a.with_name(name + ".renamed"), b.with_name(name + ".renamed")
        os.rename(a, new_a)
        seen = lambda: os.path.lexists(new_b) and not os.path.lexists(b)  # noqa: E731
    elif op == "delete":
        os.unlink(a)
        seen = _gone(b)
    else:
        raise ValueError(f"unknown operation {op!r}")
    return {"delay_ms": _poll(seen, timeout), "note": None}


OLD = b"old version\n" * 100  # 1,200 bytes
NEW = b"NEW VERSION, LONGER\n" * 150  # 3,000 bytes


def _classify(size: int | None, data: bytes | None) -> str:
    if size is None or data is None:
        return "missing"
    if data == NEW and size == len(NEW):
        return "fresh"
    if data == OLD and size == len(OLD):
        return "stale"
    return "torn"


def stale_read_once(a_dir: str, b_dir: str, mode: str, rep: int, timeout: float) -> dict[str, Any]:
    """A replaces a file B has just read; what does B see right after?

    B is primed by read() then stat() of the old version (the order matters on FUSE:
    a read invalidates the cached atime, so a stat after it goes to the server). Right
    after A's change, B calls stat() then read(): a stale size with new data ("torn")
    is the truncated file users of cached network mounts meet.
    """
    name = f"stale-{rep}-{STALE_MODES.index(mode)}"
    a, b = Path(a_dir) / name, Path(b_dir) / name
    _write(a, OLD)
    if _poll(_shows(b, OLD), timeout) is None:
        return {"outcome": "unseen", "observed": "the old version never showed through B"}
    if mode == "replace by rename":
        tmp = a.with_name(name + ".tmp")
        _write(tmp, NEW)
        os.rename(tmp, a)
    else:
        _write(a, NEW)
    try:
        size: int | None = os.stat(b).st_size
        data: bytes | None = _read(b)
    except FileNotFoundError:
        size, data = None, None
    outcome = _classify(size, data)
    observed = (
        "no file"
        if data is None
        else f"stat size {size}, read {len(data)} bytes"
        + (", old data" if data[:12] == OLD[:12] else ", new data" if data[:12] == NEW[:12] else "")
    )
    fresh_after = None if outcome == "fresh" else _poll(_shows(b, NEW), timeout)
    return {
        "outcome": outcome,
        "observed": observed,
        "fresh_after_ms": 0.0 if outcome == "fresh" else fresh_after,
    }


def inotify_once(a_dir: str, b_dir: str, rep: int, timeout: float) -> dict[str, Any]:
    """Watch B's directory while A creates, appends to, renames and deletes a file."""
    f, g = f"ino-{rep}", f"ino-{rep}.renamed"
    wanted = {
        ("create", f),
        ("modify", f),
        ("close_write", f),
        ("moved_from", f),
        ("moved_to", g),
        ("delete", g),
    }
    a = Path(a_dir)
    with inotify.Watch(Path(b_dir)) as watch:
        t0 = time.monotonic()
        _write(a / f, b"one")
        _write(a / f, b"two", os.O_APPEND)
        os.rename(a / f, a / g)
        os.unlink(a / g)
        events, _missing = watch.collect_until(wanted, timeout)
    mine = [e for e in events if e.name in (f, g)]
    return {
        "received": sorted({e.kind for e in mine}),
        "first_event_ms": round((mine[0].at - t0) * 1000.0, 3) if mine else None,
    }


def lock_once(a_dir: str, b_dir: str, kind: str, rep: int, timeout: float) -> dict[str, Any]:
    """Lock a file through A; does a second process locking it through B get blocked?"""
    import fcntl

    name = f"lock-{kind}-{rep}"
    a, b = Path(a_dir) / name, Path(b_dir) / name
    _write(a, b"lock")
    if _poll(_exists(b), timeout) is None:
        return {"blocked": None, "note": "the lock file never showed through B"}
    fd = os.open(a, os.O_RDWR)
    try:
        if kind == "flock":
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            fcntl.lockf(fd, fcntl.LOCK_EX)
        other = Child(try_lock, str(b), kind, False, new_group=False).wait(timeout)
    finally:
        os.close(fd)
    if other.status != "ok":
        return {"blocked": None, "note": f"locker through B: {other.status} {other.message}"}
    got = other.value
    if got["got"]:
        return {"blocked": False, "note": None}
    return {"blocked": True, "note": None}


def _confirm_same(b_scratch: str, token: str, timeout: float) -> float | None:
    """Milliseconds until B shows A's scratch marker with our token (None: never)."""
    return _poll(lambda: marker_id(b_scratch) == token, timeout)


# -- parent side ---------------------------------------------------------------------------


def _ping(a_dir: str, b_dir: str) -> bool:
    """Do both views still answer? (readdir goes to the server; stat may not)"""
    os.listdir(a_dir)
    os.listdir(b_dir)
    return True


class _Collector:
    """Per-check raw results, filled repetition by repetition (parent side)."""

    def __init__(self) -> None:
        self.delays: dict[str, list[float | None]] = {op: [] for op in OPERATIONS}
        self.vis_hung: dict[str, int] = dict.fromkeys(OPERATIONS, 0)
        self.vis_notes: dict[str, list[str]] = {op: [] for op in OPERATIONS}
        self.stale: dict[str, list[dict[str, Any]]] = {m: [] for m in STALE_MODES}
        self.ino: list[dict[str, Any]] = []
        self.ino_error: str | None = None
        self.locks: dict[str, list[dict[str, Any]]] = {k: [] for k in LOCK_KINDS}

    def visibility(self, op: str, o: Outcome) -> None:
        if o.status == "ok":
            self.delays[op].append(o.value["delay_ms"])
            if o.value["note"]:
                self.vis_notes[op].append(o.value["note"])
            return
        self.delays[op].append(None)
        self.vis_hung[op] += o.status == "hung"
        self.vis_notes[op].append(_why(o))

    def stale_read(self, mode: str, o: Outcome) -> None:
        if o.status == "ok":
            self.stale[mode].append(o.value)
        else:
            outcome = "hung" if o.status == "hung" else "unseen"
            self.stale[mode].append({"outcome": outcome, "observed": _why(o)})

    def inotify(self, o: Outcome) -> None:
        if o.status == "ok":
            self.ino.append(o.value)
        else:
            self.ino.append({"received": [], "first_event_ms": None})
            self.ino_error = _why(o)

    def lock(self, kind: str, o: Outcome) -> None:
        self.locks[kind].append(o.value if o.status == "ok" else {"blocked": None, "note": _why(o)})


def _why(o: Outcome) -> str:
    return f"{o.status}: {o.errno or ''} {o.message}".replace("  ", " ").strip()[:200]


def _skipped(reason: str) -> Outcome:
    return Outcome("hung", message=reason)


def measure_coherence(view_a: Path, view_b: Path, *, repeat: int = 5, timeout: float = 5.0) -> CoherenceResult:
    """Measure coherence from A to B with ``repeat`` repetitions of each check.

    ``timeout`` bounds each wait for B (a change never seen within it is reported as
    not seen). Each check runs in a child process given ``3 * timeout + 2`` seconds;
    if one hangs and a view then stops answering, the remaining checks are recorded
    as hung without being run (``error`` says so). Raises TargetError if A cannot be
    written, or if B does not show A's scratch directory (A and B are not the same
    directory).
    """
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    a_target, b_target = os.path.abspath(view_a), os.path.abspath(view_b)
    name, marker = new_scratch_name(), new_marker()
    token = marker.id
    swept = sweep_killed_probes(a_target, timeout)
    created = run_isolated(create_scratch, a_target, name, marker, timeout=timeout)
    if created.status != "ok":
        raise TargetError(f"{view_a}: cannot create a scratch directory ({_why(created)})")
    a_dir = created.value["scratch"]
    b_dir = os.path.join(b_target, name)
    budget = 3 * timeout + 2.0  # setup wait + measurement wait + slack, per child
    got = _Collector()
    error: str | None = None
    try:
        same = run_isolated(_confirm_same, b_dir, token, timeout, timeout=timeout + 2.0)
        if same.status != "ok" or same.value is None:
            raise TargetError(
                f"{view_b} does not show {a_dir} within {timeout:g} s: "
                f"are {view_a} and {view_b} views of the same directory?"
            )

        def run(fn: Callable[..., Any], *args: Any) -> Outcome:
            nonlocal error
            if error is not None:
                return _skipped(error)
            outcome = run_isolated(fn, a_dir, b_dir, *args, timeout, timeout=budget)
            if outcome.status == "hung":
                ping = run_isolated(_ping, a_dir, b_dir, timeout=min(timeout, 2.0))
                if ping.status == "hung":
                    error = f"a view stopped answering during {fn.__name__}; later checks not run"
            return outcome

        for rep in range(repeat):  # repetitions outermost: drift hits every check alike
            for op in OPERATIONS:
                got.visibility(op, run(visibility_once, op, rep))
            for mode in STALE_MODES:
                got.stale_read(mode, run(stale_read_once, mode, rep))
            got.inotify(run(inotify_once, rep))
            for kind in LOCK_KINDS:
                got.lock(kind, run(lock_once, kind, rep))
    finally:
        removal_timeout = min(timeout, 2.0) if error else max(timeout, 5.0)
        removed = run_isolated(remove_probe_scratch, a_dir, token, timeout=removal_timeout)
        cleanup = "removed" if removed.status == "ok" else f"left {a_dir}: {_why(removed)}"

    return CoherenceResult(
        view_a=str(view_a),
        view_b=str(view_b),
        repeat=repeat,
        timeout_s=timeout,
        visibility=tuple(
            VisibilityResult(op, tuple(got.delays[op]), got.vis_hung[op], tuple(got.vis_notes[op])) for op in OPERATIONS
        ),
        stale_reads=tuple(
            StaleReadResult(
                mode,
                tuple(r["outcome"] for r in got.stale[mode]),
                tuple(r.get("fresh_after_ms") for r in got.stale[mode]),
                tuple(r.get("observed", "") for r in got.stale[mode]),
            )
            for mode in STALE_MODES
        ),
        inotify=InotifyResult(
            INOTIFY_EXPECTED,
            tuple(tuple(r["received"]) for r in got.ino),
            tuple(r["first_event_ms"] for r in got.ino),
            got.ino_error,
        ),
        locks=tuple(
            LockResult(
                kind,
                tuple(r["blocked"] for r in got.locks[kind]),
                tuple(str(r["note"]) for r in got.locks[kind] if r.get("note")),
            )
            for kind in LOCK_KINDS
        ),
        cleanup=cleanup,
        error=error,
        started=started,
        duration_s=round(time.monotonic() - t0, 3),
        swept=swept,
    )
