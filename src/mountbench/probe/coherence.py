"""Coherence: how (and how soon) changes made through view A show through view B.

A and B are two paths to the same directory through different mounts (a host directory
and its sshfs/9p/virtiofs mount, an NFS export and its client), on this machine
(:func:`measure_coherence`) or on two machines (:func:`measure_views`: the lab's host
directory and the guest's mount, each view on its own :class:`~mountbench.probe.sides.Side`).
One side acts, the other observes: every change is made through A inside a scratch
directory, and B is watched for it. Before each change, B first observes the old state
(so caches in B's mount hold it, as they would for an application watching the file).

Each check is a few named steps (the ``*_setup``, ``*_prime``, ``*_act``, ``*_watch``,
``*_check`` functions below, listed in :data:`STEPS`), each run by the side of the view
it touches, in a child process bounded in time, so a hung mount cannot hang the caller.
A watching step starts before the change and runs while it is made; times are read on
each side's monotonic clock and compared on the driver's (a remote side's clock is
matched to within :attr:`~mountbench.probe.sides.Side.resolution_s`, which the result
records).

Checks, each repeated ``repeat`` times (repetitions outermost):
- visibility of create / append / truncate / rename / delete, observed with stat() only;
- stale reads right after A replaces a file (by rename, and rewritten in place);
- inotify events through B for changes through A;
- whether flock / fcntl locks held through A block a second process locking through B.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from mountbench.errors import TargetError
from mountbench.host import scratch as scratch_mod
from mountbench.probe import inotify
from mountbench.probe.capabilities import try_lock
from mountbench.probe.sandbox import Outcome
from mountbench.probe.sides import LocalSide, Pending, Side, Signals
from mountbench.probe.target import (
    create_scratch,
    describe_sweep,
    marker_id,
    new_marker,
    new_scratch_name,
    remove_probe_scratch,
    sweep_leftovers,
)
from mountbench.probefacts import (
    CoherenceResult,
    InotifyResult,
    LockResult,
    StaleReadResult,
    VisibilityResult,
)

OPERATIONS = ("create", "append", "truncate", "rename", "delete")
STALE_MODES = ("replace by rename", "rewrite in place")
LOCK_KINDS = ("flock", "fcntl")
INOTIFY_EXPECTED = ("create", "modify", "close_write", "moved_from", "moved_to", "delete")
POLL_INTERVAL_S = 0.001
QUICK_STEP_S = 2.0  # a step that only makes a change (or sets one up): bounded apart from the timeout


# -- child side: each step runs in a child process and returns JSON-safe data ---------------


def _poll(predicate: Callable[[], bool], timeout: float) -> float | None:
    """Milliseconds until ``predicate()`` holds, or None if not within ``timeout`` s."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    while True:
        try:
            if predicate():
                return round((time.monotonic() - t0) * 1000.0, 3)
        except FileNotFoundError:
            pass
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_INTERVAL_S)


def _watch(sig: Signals, predicate: Callable[[], bool], timeout: float) -> float | None:
    """Poll ``predicate()`` from now (before the change is made) until it holds; return
    time.monotonic() at that moment, or None when it did not hold within ``timeout`` s after
    the starter released the watch (it does so right after the change was made)."""
    sig.ready()
    deadline: float | None = None
    give_up = time.monotonic() + 3 * timeout + 10.0  # the starter never released: bounded anyway
    while True:
        try:
            if predicate():
                return time.monotonic()
        except FileNotFoundError:
            pass
        now = time.monotonic()
        if deadline is None and sig.released():
            deadline = now + timeout
        if (deadline is not None and now >= deadline) or now >= give_up:
            return None
        time.sleep(POLL_INTERVAL_S)


def _write(path: Path, data: bytes, flags: int = os.O_TRUNC) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | flags, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _shows(path: Path, data: bytes) -> Callable[[], bool]:
    """B shows exactly ``data`` at ``path``: content by read and size by stat agree."""
    return lambda: path.read_bytes() == data and os.stat(path).st_size == len(data)


def _size_is(path: Path, size: int) -> Callable[[], bool]:
    return lambda: os.stat(path).st_size == size


def _exists(path: Path) -> Callable[[], bool]:
    return lambda: os.path.lexists(path)


def _gone(path: Path) -> Callable[[], bool]:
    return lambda: not os.path.lexists(path)


# visibility: B observes like ``ls``, ``make`` or ``tail -f`` do, with stat() only (existence,
# size), never opening the file, so polling does not itself refresh B's caches. Content
# freshness is the stale-read check's.

INITIAL = b"0123456789abcdef" * 256  # 4 KiB
APPENDED = b"appended"


def _vis_name(op: str, rep: int) -> str:
    if op not in OPERATIONS:
        raise ValueError(f"unknown operation {op!r}")
    return f"vis-{op}-{int(rep)}"  # a step's file names are fixed: never a path from a request


def vis_setup(a_dir: str, op: str, rep: int) -> None:
    """A: the file the change starts from (none for create)."""
    if op != "create":
        _write(Path(a_dir) / _vis_name(op, rep), INITIAL)


def vis_prime(b_dir: str, op: str, rep: int, timeout: float) -> dict[str, Any]:
    """B looks first: at the absence (create, which B may cache), or until the initial state shows."""
    b = Path(b_dir) / _vis_name(op, rep)
    if op == "create":
        os.path.lexists(b)
        return {"ok": True}
    return {"ok": _poll(_size_is(b, len(INITIAL)), timeout) is not None}


def _vis_seen(b_dir: str, op: str, rep: int) -> Callable[[], bool]:
    name = _vis_name(op, rep)
    b = Path(b_dir) / name
    if op == "create":
        return _exists(b)
    if op == "append":
        return _size_is(b, len(INITIAL) + len(APPENDED))
    if op == "truncate":
        return _size_is(b, 100)
    if op == "rename":
        renamed = b.with_name(name + ".renamed")
        return lambda: os.path.lexists(renamed) and not os.path.lexists(b)
    if op == "delete":
        return _gone(b)
    raise ValueError(f"unknown operation {op!r}")


def vis_watch(sig: Signals, b_dir: str, op: str, rep: int, timeout: float) -> dict[str, Any]:
    """B: poll with stat() until the change shows; when (time.monotonic()) or None."""
    return {"seen_at": _watch(sig, _vis_seen(b_dir, op, rep), timeout)}


def vis_act(a_dir: str, op: str, rep: int) -> dict[str, Any]:
    """A: make the change; when it returned (time.monotonic())."""
    a = Path(a_dir) / _vis_name(op, rep)
    if op == "create":
        _write(a, b"new")
    elif op == "append":
        _write(a, APPENDED, os.O_APPEND)
    elif op == "truncate":
        os.truncate(a, 100)
    elif op == "rename":
        os.rename(a, a.with_name(a.name + ".renamed"))
    elif op == "delete":
        os.unlink(a)
    else:
        raise ValueError(f"unknown operation {op!r}")
    return {"at": time.monotonic()}


# stale reads: A replaces a file B has just read; what does B see right after?

OLD = b"old version\n" * 100  # 1,200 bytes
NEW = b"NEW VERSION, LONGER\n" * 150  # 3,000 bytes


def _stale_name(mode: str, rep: int) -> str:
    return f"stale-{int(rep)}-{STALE_MODES.index(mode)}"


def seen_version(path: Path) -> tuple[str, int | None, bytes | None]:
    """stat() then read() of a file whose OLD version was just replaced by NEW: "fresh",
    "stale", "torn" (a size of one version with data of the other, short or mixed data) or
    "missing", with the size and data seen."""
    try:
        size, data = os.stat(path).st_size, path.read_bytes()
    except FileNotFoundError:
        return "missing", None, None
    if data == NEW and size == len(NEW):
        return "fresh", size, data
    if data == OLD and size == len(OLD):
        return "stale", size, data
    return "torn", size, data


def stale_setup(a_dir: str, mode: str, rep: int) -> None:
    _write(Path(a_dir) / _stale_name(mode, rep), OLD)


def stale_prime(b_dir: str, mode: str, rep: int, timeout: float) -> dict[str, Any]:
    """B reads then stats the old version until it shows (the order matters on FUSE: a read
    invalidates the cached atime, so a stat after it goes to the server)."""
    return {"ok": _poll(_shows(Path(b_dir) / _stale_name(mode, rep), OLD), timeout) is not None}


def stale_act(a_dir: str, mode: str, rep: int) -> dict[str, Any]:
    """A replaces the file: a new file renamed over it, or rewritten in place."""
    a = Path(a_dir) / _stale_name(mode, rep)
    if mode == "replace by rename":
        tmp = a.with_name(a.name + ".tmp")
        _write(tmp, NEW)
        os.rename(tmp, a)
    else:
        _write(a, NEW)
    return {"at": time.monotonic()}


def stale_check(b_dir: str, mode: str, rep: int, timeout: float) -> dict[str, Any]:
    """B, right after A's change: stat() then read(). A stale size with new data ("torn") is
    the truncated file users of cached network mounts meet. Then: how long until fresh."""
    b = Path(b_dir) / _stale_name(mode, rep)
    outcome, size, data = seen_version(b)
    observed = (
        "no file"
        if data is None
        else f"stat size {size}, read {len(data)} bytes"
        + (", old data" if data[:12] == OLD[:12] else ", new data" if data[:12] == NEW[:12] else "")
    )
    fresh_after = 0.0 if outcome == "fresh" else _poll(_shows(b, NEW), timeout)
    return {"outcome": outcome, "observed": observed, "fresh_after_ms": fresh_after}


# inotify: B watches its directory while A creates, appends to, renames and deletes a file.


def _inotify_names(rep: int) -> tuple[str, str]:
    return f"ino-{int(rep)}", f"ino-{int(rep)}.renamed"


def inotify_watch(sig: Signals, b_dir: str, rep: int, timeout: float) -> dict[str, Any]:
    """B: watch the directory (ready once the watch is set) until every expected event
    arrived, or ``timeout`` s after release; the events as [kind, name, time.monotonic()]."""
    f, g = _inotify_names(rep)
    wanted = {("create", f), ("modify", f), ("close_write", f), ("moved_from", f), ("moved_to", g), ("delete", g)}
    events: list[list[Any]] = []
    with inotify.Watch(Path(b_dir)) as watch:
        sig.ready()
        deadline: float | None = None
        give_up = time.monotonic() + 3 * timeout + 10.0
        while wanted:
            now = time.monotonic()
            if deadline is None and sig.released():
                deadline = now + timeout
            end = min(give_up, deadline if deadline is not None else give_up)
            if now >= end:
                break
            ready, _, _ = select.select([watch.fd], [], [], min(0.05, end - now))
            if ready:
                for ev in watch.read(0):
                    events.append([ev.kind, ev.name, ev.at])
                    wanted.discard((ev.kind, ev.name))
    return {"events": [e for e in events if e[1] in (f, g)]}


def inotify_act(a_dir: str, rep: int) -> dict[str, Any]:
    """A: create, append to, rename and delete a file; when it began (time.monotonic())."""
    f, g = _inotify_names(rep)
    a = Path(a_dir)
    t0 = time.monotonic()
    _write(a / f, b"one")
    _write(a / f, b"two", os.O_APPEND)
    os.rename(a / f, a / g)
    os.unlink(a / g)
    return {"at": t0}


# locks: a lock held through A; does a second process locking through B get blocked?


def _lock_name(kind: str, rep: int) -> str:
    if kind not in LOCK_KINDS:
        raise ValueError(f"unknown lock kind {kind!r}")
    return f"lock-{kind}-{int(rep)}"


def lock_setup(a_dir: str, kind: str, rep: int) -> None:
    _write(Path(a_dir) / _lock_name(kind, rep), b"lock")


def lock_prime(b_dir: str, kind: str, rep: int, timeout: float) -> dict[str, Any]:
    return {"ok": _poll(_exists(Path(b_dir) / _lock_name(kind, rep)), timeout) is not None}


def lock_hold(sig: Signals, a_dir: str, kind: str, rep: int, timeout: float) -> dict[str, Any]:
    """A: take an exclusive lock and hold it (ready once held) until released."""
    import fcntl

    fd = os.open(Path(a_dir) / _lock_name(kind, rep), os.O_RDWR)
    try:
        if kind == "flock":
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            fcntl.lockf(fd, fcntl.LOCK_EX)
        sig.ready()
        sig.wait_release(3 * timeout + 10.0)
    finally:
        os.close(fd)
    return {"held": True}


def lock_try(b_dir: str, kind: str, rep: int) -> dict[str, Any]:
    """B: a non-blocking exclusive lock; {"got": bool, ...}."""
    return try_lock(str(Path(b_dir) / _lock_name(kind, rep)), kind, False)


# the scratch directory and the views' health


def create_scratch_step(target: str, name: str, marker_text: str) -> dict[str, Any]:
    marker = scratch_mod.Marker.parse(marker_text)
    if marker is None:
        raise ValueError("not a scratch marker")
    return create_scratch(target, name, marker)


def confirm_same(b_scratch: str, token: str, timeout: float) -> float | None:
    """Milliseconds until B shows A's scratch marker with our token (None: never)."""
    return _poll(lambda: marker_id(b_scratch) == token, timeout)


def ping(directory: str) -> bool:
    """Does the view still answer? (readdir goes to the server; stat may not)"""
    os.listdir(directory)
    return True


STEPS: dict[str, Callable[..., Any]] = {
    fn.__name__: fn
    for fn in (
        vis_setup, vis_prime, vis_watch, vis_act,
        stale_setup, stale_prime, stale_act, stale_check,
        inotify_watch, inotify_act,
        lock_setup, lock_prime, lock_hold, lock_try,
        create_scratch_step, confirm_same, ping, sweep_leftovers, remove_probe_scratch,
    )
}  # fmt: skip


# -- parent side ---------------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    """One view of the directory: the side it lives on, its path there, and its name in results."""

    side: Side
    path: str
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or self.path


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
        self.vis_notes[op].append(o.why())

    def stale_read(self, mode: str, o: Outcome) -> None:
        if o.status == "ok":
            self.stale[mode].append(o.value)
        else:
            outcome = "hung" if o.status == "hung" else "unseen"
            self.stale[mode].append({"outcome": outcome, "observed": o.why()})

    def inotify(self, o: Outcome) -> None:
        if o.status == "ok":
            self.ino.append(o.value)
        else:
            self.ino.append({"received": [], "first_event_ms": None})
            self.ino_error = o.why()

    def lock(self, kind: str, o: Outcome) -> None:
        self.locks[kind].append(o.value if o.status == "ok" else {"blocked": None, "note": o.why()})


def _skipped(reason: str) -> Outcome:
    return Outcome("hung", message=reason)


class _Measurement:
    """Runs one measurement's steps on the two views' sides; after a step hangs, pings both
    views and, if one stopped answering, skips every later step (``error`` says why)."""

    def __init__(self, a: View, b: View, a_dir: str, b_dir: str, timeout: float) -> None:
        self.a, self.b = a, b
        self.dirs = {id(a): a_dir, id(b): b_dir}
        self.timeout = timeout
        self.wait_budget = timeout + 2.0  # a step that waits for B: its wait plus slack
        self.error: str | None = None

    def dir(self, view: View) -> str:
        return self.dirs[id(view)]

    def run(self, view: View, step: str, *args: Any, waits: bool = False) -> Outcome:
        if self.error is not None:
            return _skipped(self.error)
        budget = self.wait_budget if waits else max(QUICK_STEP_S, self.timeout)
        outcome = view.side.run(step, self.dir(view), *args, timeout=budget)
        self._after(outcome, step)
        return outcome

    def begin(self, view: View, step: str, *args: Any) -> Pending | Outcome:
        """Start a step that runs on; an Outcome when it never became ready."""
        if self.error is not None:
            return _skipped(self.error)
        pending = view.side.begin(step, self.dir(view), *args, timeout=max(QUICK_STEP_S, self.timeout))
        if pending.ready:
            return pending
        outcome = pending.finish(QUICK_STEP_S)
        if outcome.status == "ok":  # ended without saying it was ready: a bug in the step
            outcome = Outcome("crash", message=f"{step} ended before it was ready")
        self._after(outcome, step)
        return outcome

    def finish(self, pending: Pending, step: str) -> Outcome:
        outcome = pending.finish(self.wait_budget)
        self._after(outcome, step)
        return outcome

    def _after(self, outcome: Outcome, step: str) -> None:
        if outcome.status != "hung" or self.error is not None:
            return
        pings = [view.side.run("ping", self.dir(view), timeout=min(self.timeout, 2.0)) for view in (self.a, self.b)]
        if any(p.status == "hung" for p in pings):
            self.error = f"a view stopped answering during {step}; later checks not run"

    def delay_ms(self, seen: View, seen_at: float | None, acted: View, acted_at: float) -> float | None:
        """Milliseconds from A's change (returned) to B seeing it, on the driver's clock; None
        when not seen within the timeout. A sighting before A's call returned counts as 0."""
        if seen_at is None:
            return None
        delay = (seen.side.to_local(seen_at) - acted.side.to_local(acted_at)) * 1000.0
        if delay > self.timeout * 1000.0:
            return None
        return round(max(0.0, delay), 3)


def _failed(*outcomes: Outcome) -> Outcome | None:
    return next((o for o in outcomes if o.status != "ok"), None)


def _set_up_and_prime(m: _Measurement, step: str, arg: str, rep: int, unseen: dict[str, Any]) -> Outcome | None:
    """'<step>_setup' through A, then '<step>_prime' through B (waiting until B sees the
    setup): None when B saw it, else the outcome the check ends with: the failed outcome of
    either, or ``unseen`` (the check's result when B never showed the setup)."""
    setup = m.run(m.a, f"{step}_setup", arg, rep)
    if setup.status != "ok":
        return setup
    prime = m.run(m.b, f"{step}_prime", arg, rep, m.timeout, waits=True)
    if prime.status != "ok":
        return prime
    return None if prime.value["ok"] else Outcome("ok", unseen)


def _act_while_watched(m: _Measurement, step: str, *args: Any) -> tuple[Outcome, Outcome] | Outcome:
    """'<step>_watch' through B in the background while '<step>_act' runs through A: both
    outcomes (acted, seen), or the first that failed."""
    watch = m.begin(m.b, f"{step}_watch", *args, m.timeout)
    if isinstance(watch, Outcome):
        return watch
    acted = m.run(m.a, f"{step}_act", *args)
    seen = m.finish(watch, f"{step}_watch")
    failed = _failed(acted, seen)
    return (acted, seen) if failed is None else failed


def _visibility(m: _Measurement, op: str, rep: int) -> Outcome:
    a, b = m.a, m.b
    unseen = {"delay_ms": None, "note": "the file's initial state never showed through B"}
    if (ended := _set_up_and_prime(m, "vis", op, rep, unseen)) is not None:
        return ended
    both = _act_while_watched(m, "vis", op, rep)
    if isinstance(both, Outcome):
        return both
    acted, seen = both
    delay = m.delay_ms(b, seen.value["seen_at"], a, acted.value["at"])
    return Outcome("ok", {"delay_ms": delay, "note": None})


def _stale_read(m: _Measurement, mode: str, rep: int) -> Outcome:
    a, b = m.a, m.b
    unseen = {"outcome": "unseen", "observed": "the old version never showed through B"}
    if (ended := _set_up_and_prime(m, "stale", mode, rep, unseen)) is not None:
        return ended
    acted = m.run(a, "stale_act", mode, rep)
    if acted.status != "ok":
        return acted
    return m.run(b, "stale_check", mode, rep, m.timeout, waits=True)


def _inotify(m: _Measurement, rep: int) -> Outcome:
    a, b = m.a, m.b
    both = _act_while_watched(m, "inotify", rep)
    if isinstance(both, Outcome):
        return both
    acted, seen = both
    events = seen.value["events"]
    first = m.delay_ms(b, min(e[2] for e in events), a, acted.value["at"]) if events else None
    return Outcome("ok", {"received": sorted({e[0] for e in events}), "first_event_ms": first})


def _lock(m: _Measurement, kind: str, rep: int) -> Outcome:
    a, b = m.a, m.b
    unseen = {"blocked": None, "note": "the lock file never showed through B"}
    if (ended := _set_up_and_prime(m, "lock", kind, rep, unseen)) is not None:
        return ended
    hold = m.begin(a, "lock_hold", kind, rep, m.timeout)
    if isinstance(hold, Outcome):
        return Outcome("ok", {"blocked": None, "note": f"locking through A: {hold.why()}"})
    tried = m.run(b, "lock_try", kind, rep)
    released = m.finish(hold, "lock_hold")
    if tried.status != "ok":
        return Outcome("ok", {"blocked": None, "note": f"locker through B: {tried.why()}"})
    if released.status != "ok":
        return released
    return Outcome("ok", {"blocked": not tried.value["got"], "note": None})


def measure_views(
    a: View,
    b: View,
    *,
    repeat: int = 5,
    timeout: float = 5.0,
    scratch_in: Literal["a", "b"] = "a",
) -> CoherenceResult:
    """Measure coherence from view A to view B with ``repeat`` repetitions of each check.

    The scratch directory is made (and removed) through ``scratch_in``'s view; the other
    view must show it within ``timeout`` (else TargetError: A and B are not views of one
    directory). ``timeout`` bounds each wait for B (a change never seen within it is
    reported as not seen); each step's child process gets ``timeout + 2`` seconds. If a
    step hangs and a view then stops answering, the remaining checks are recorded as hung
    without being run (``error`` says so). Raises TargetError if the scratch directory
    cannot be created.
    """
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    owner, other = (a, b) if scratch_in == "a" else (b, a)
    name, marker = new_scratch_name(), new_marker()
    token = marker.id
    swept = describe_sweep(owner.side.run("sweep_leftovers", owner.path, timeout=timeout))
    created = owner.side.run("create_scratch_step", owner.path, name, marker.to_text(), timeout=timeout)
    if created.status != "ok":
        raise TargetError(f"{owner.label}: cannot create a scratch directory ({created.why()})")
    owner_dir = created.value["scratch"]
    other_dir = os.path.join(other.path, name)
    a_dir, b_dir = (owner_dir, other_dir) if owner is a else (other_dir, owner_dir)
    got = _Collector()
    m = _Measurement(a, b, a_dir, b_dir, timeout)
    try:
        same = other.side.run("confirm_same", other_dir, token, timeout, timeout=timeout + 2.0)
        if same.status != "ok" or same.value is None:
            raise TargetError(
                f"{other.label} does not show {owner_dir} within {timeout:g} s: "
                f"are {a.label} and {b.label} views of the same directory?"
            )
        for rep in range(repeat):  # repetitions outermost: drift hits every check alike
            for op in OPERATIONS:
                got.visibility(op, _visibility(m, op, rep))
            for mode in STALE_MODES:
                got.stale_read(mode, _stale_read(m, mode, rep))
            got.inotify(_inotify(m, rep))
            for kind in LOCK_KINDS:
                got.lock(kind, _lock(m, kind, rep))
    finally:
        removal_timeout = min(timeout, 2.0) if m.error else max(timeout, 5.0)
        removed = owner.side.run("remove_probe_scratch", owner_dir, token, timeout=removal_timeout)
        cleanup = "removed" if removed.status == "ok" else f"left {owner_dir}: {removed.why()}"

    same_clock = a.side.clock == b.side.clock
    return CoherenceResult(
        view_a=a.label,
        view_b=b.label,
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
        error=m.error,
        started=started,
        duration_s=round(time.monotonic() - t0, 3),
        swept=swept,
        clock_resolution_ms=None if same_clock else round((a.side.resolution_s + b.side.resolution_s) * 1000.0, 3),
    )


def measure_coherence(view_a: Path, view_b: Path, *, repeat: int = 5, timeout: float = 5.0) -> CoherenceResult:
    """Measure coherence from A to B, two views on this machine (see :func:`measure_views`).

    Raises TargetError if A cannot be written, or if B does not show A's scratch directory
    (A and B are not the same directory).
    """
    local = LocalSide(STEPS)
    return measure_views(
        View(local, os.path.abspath(view_a), str(view_a)),
        View(local, os.path.abspath(view_b), str(view_b)),
        repeat=repeat,
        timeout=timeout,
    )
