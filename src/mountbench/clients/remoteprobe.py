"""Coherence between two clients of a shared filesystem (``probe --view PATH@A=PATH@B``):
"a file written on client A shows on client B after how long", through `mountbench serve`
on each machine.

The controller drives both agents (clients/agent.py): A makes each change in a scratch
directory A created (``.mountbench-probe-*`` with a token in its marker), B polls for it
with stat() only, as the local probe does (probe/coherence.py). There is no common clock,
so a delay is measured on the controller: from A's reply "done" to B's reply "seen", B
having started polling before A was asked; its precision is about one round trip, which
the result's notes state. Stale reads, inotify and locks are checked the same way. Every
agent request is confined to the scratch directories that agent created or attached to
(the agent's side: clients/probeagent.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from mountbench.clients import agent
from mountbench.clients.agent import AgentError
from mountbench.clients.probeagent import INITIAL
from mountbench.clients.spec import ClientSpec, parse_client
from mountbench.errors import TargetError, UsageError
from mountbench.probe import target as probe_target
from mountbench.probe.coherence import INOTIFY_EXPECTED, LOCK_KINDS, OPERATIONS, STALE_MODES
from mountbench.probe.model import CoherenceResult, InotifyResult, LockResult, StaleReadResult, VisibilityResult

SLACK_S = 5.0  # on top of the probe's timeout for one agent request


@dataclass(frozen=True)
class RemoteView:
    """A directory as one client sees it."""

    client: ClientSpec
    path: str

    @property
    def label(self) -> str:
        return f"{self.path}@{self.client.label}"


def parse_view(text: str) -> tuple[RemoteView, RemoteView] | None:
    """``PATH@CLIENT=PATH@CLIENT``; None when ``text`` names no client (a local pair)."""
    a, sep, b = text.partition("=")
    remote = [_remote(part) for part in (a, b)]
    if not sep or all(r is None for r in remote):
        return None
    if any(r is None for r in remote):
        raise UsageError(
            f"--view {text}: give both views through clients (PATH@HOST[:PORT]=PATH@HOST[:PORT]) or neither"
        )
    return remote[0], remote[1]  # type: ignore[return-value]


def _remote(part: str) -> RemoteView | None:
    path, at, where = part.rpartition("@")
    if not at or "/" in where or not path:
        return None
    if not path.startswith("/"):
        raise UsageError(f"--view {part}: the path on a client must be absolute, e.g. /mnt/share@{where}")
    return RemoteView(parse_client(where), path)


# --- the controller's side -------------------------------------------------------------------


class _Remote:
    """Requests to one view's agent, with the probe's time limits."""

    def __init__(self, view: RemoteView, token: str, timeout: float) -> None:
        self.view, self.token, self.timeout = view, token, timeout

    def __call__(self, op: str, **fields: Any) -> dict[str, Any]:
        return agent.call(self.view.client, {"op": op, "token": self.token, **fields}, self.timeout + SLACK_S)

    def timed(self, op: str, **fields: Any) -> tuple[dict[str, Any], float]:
        reply = self(op, **fields)
        return reply, time.monotonic()


def measure_remote_coherence(a: RemoteView, b: RemoteView, *, repeat: int = 5, timeout: float = 5.0) -> CoherenceResult:
    """The local probe's checks, with A and B on two clients. Raises TargetError when a
    client has no `mountbench serve` or B does not show A's scratch directory."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    name, token = probe_target.new_scratch_name(), probe_target.new_marker().id
    on_a, on_b = _Remote(a, token, timeout), _Remote(b, token, timeout)
    rtt = {view.label: _round_trip(view, on) for view, on in ((a, on_a), (b, on_b))}
    on_a("probe.create", path=a.path, name=name)
    error: str | None = None
    delays: dict[str, list[float | None]] = {op: [] for op in OPERATIONS}
    notes: dict[str, list[str]] = {op: [] for op in OPERATIONS}
    stale: dict[str, list[dict[str, Any]]] = {mode: [] for mode in STALE_MODES}
    received: list[tuple[str, ...]] = []
    locks: dict[str, list[bool | None]] = {kind: [] for kind in LOCK_KINDS}
    lock_notes: dict[str, list[str]] = {kind: [] for kind in LOCK_KINDS}
    try:
        attached = on_b("probe.attach", path=b.path, name=name, timeout=timeout)
        if attached.get("delay_ms") is None:
            raise TargetError(
                f"{b.label} does not show the scratch directory {a.label} made within {timeout:g} s: "
                "are they the same shared directory?"
            )
        for rep in range(repeat):
            try:
                for op in OPERATIONS:
                    delay, note = _visibility(on_a, on_b, op, rep, timeout)
                    delays[op].append(delay)
                    if note:
                        notes[op].append(note)
                for index, mode in enumerate(STALE_MODES):
                    stale[mode].append(_stale_read(on_a, on_b, mode, f"stale-{rep}-{index}", timeout))
                received.append(_inotify(on_a, on_b, f"ino-{rep}", timeout))
                for kind in LOCK_KINDS:
                    blocked, note = _lock(on_a, on_b, kind, f"lock-{kind}-{rep}", timeout)
                    locks[kind].append(blocked)
                    if note:
                        lock_notes[kind].append(note)
            except (OSError, AgentError) as exc:
                error = f"a client stopped answering in repetition {rep + 1} ({exc}); later checks not run"
                break
    finally:
        try:
            cleanup = on_a("probe.remove").get("cleanup", "removed")
            on_b("probe.remove")
        except (OSError, AgentError) as exc:
            cleanup = f"left {a.path}/{name} on {a.client.label}: {exc}"
    precision = ", ".join(f"{label} {ms:.1f} ms" for label, ms in rtt.items())
    note = f"delays measured on the controller between A's reply and B's; round trips: {precision}"
    return CoherenceResult(
        view_a=a.label,
        view_b=b.label,
        repeat=repeat,
        timeout_s=timeout,
        visibility=tuple(
            VisibilityResult(op, tuple(delays[op]), 0, tuple([note] if op == "create" else []) + tuple(notes[op]))
            for op in OPERATIONS
        ),
        stale_reads=tuple(
            StaleReadResult(
                mode,
                tuple(r["outcome"] for r in stale[mode]),
                tuple(r.get("fresh_after_ms") for r in stale[mode]),
                tuple(r.get("observed", "") for r in stale[mode]),
            )
            for mode in STALE_MODES
        ),
        inotify=InotifyResult(INOTIFY_EXPECTED, tuple(received), tuple(None for _ in received)),
        locks=tuple(LockResult(kind, tuple(locks[kind]), tuple(lock_notes[kind])) for kind in LOCK_KINDS),
        cleanup=cleanup,
        error=error,
        started=started,
        duration_s=round(time.monotonic() - t0, 3),
    )


def _round_trip(view: RemoteView, on: _Remote) -> float:
    try:
        t0 = time.monotonic()
        on("probe.ping")
        return (time.monotonic() - t0) * 1000
    except (OSError, AgentError) as exc:
        raise TargetError(
            f"{view.label}: no `mountbench serve` answers on {view.client.host}:{view.client.agent_port} ({exc}); "
            "start 'mountbench serve --bind ADDRESS' on that client"
        ) from None


def _while_b_waits(on_b: _Remote, file: str, condition: str, timeout: float, act: Callable[[], float], **extra: Any):
    """B polls for ``condition`` while A acts; (delay in ms on the controller, or None)."""
    box: dict[str, Any] = {}

    def wait() -> None:
        try:
            box["reply"], box["at"] = on_b.timed("probe.wait", file=file, condition=condition, timeout=timeout, **extra)
        except (OSError, AgentError) as exc:
            box["error"] = exc

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    done_at = act()
    waiter.join(timeout + 2 * SLACK_S)
    if "error" in box:
        raise box["error"]
    if box.get("reply", {}).get("delay_ms") is None:
        return None
    return round(max(0.0, box["at"] - done_at) * 1000, 3)


def _visibility(on_a: _Remote, on_b: _Remote, op: str, rep: int, timeout: float) -> tuple[float | None, str]:
    file = f"vis-{op}-{rep}"
    if op == "create":
        on_b("probe.wait", file=file, condition="look", timeout=0)
    else:
        on_a("probe.step", file=file, action="initial")
        if on_b("probe.wait", file=file, condition="size", size=len(INITIAL), timeout=timeout)["delay_ms"] is None:
            return None, "the file's initial state never showed through B"
    condition = {"create": "exists", "append": "size", "truncate": "size", "rename": "renamed", "delete": "gone"}[op]
    size = {"append": len(INITIAL) + len(b"appended"), "truncate": 100}.get(op, 0)
    act = lambda: on_a.timed("probe.step", file=file, action=op)[1]  # noqa: E731
    return _while_b_waits(on_b, file, condition, timeout, act, size=size), ""


def _stale_read(on_a: _Remote, on_b: _Remote, mode: str, file: str, timeout: float) -> dict[str, Any]:
    on_a("probe.step", file=file, action="old")
    if on_b("probe.wait", file=file, condition="old", timeout=timeout)["delay_ms"] is None:
        return {"outcome": "unseen", "observed": "the old version never showed through B"}
    done_at = on_a.timed("probe.step", file=file, action=mode)[1]
    now = on_b("probe.read_now", file=file)
    if now["outcome"] == "fresh":
        return {**now, "fresh_after_ms": 0.0}
    reply, seen_at = on_b.timed("probe.wait", file=file, condition="new", timeout=timeout)
    fresh = None if reply["delay_ms"] is None else round((seen_at - done_at) * 1000, 3)
    return {**now, "fresh_after_ms": fresh}


def _inotify(on_a: _Remote, on_b: _Remote, file: str, timeout: float) -> tuple[str, ...]:
    on_b("probe.watch", file=file)
    on_a("probe.step", file=file, action="inotify")
    return tuple(on_b("probe.collect", file=file, timeout=timeout)["received"])


def _lock(on_a: _Remote, on_b: _Remote, kind: str, file: str, timeout: float) -> tuple[bool | None, str]:
    on_a("probe.step", file=file, action="create")
    if on_b("probe.wait", file=file, condition="exists", timeout=timeout)["delay_ms"] is None:
        return None, "the lock file never showed through B"
    on_a("probe.lock", file=file, kind=kind)
    try:
        tried = on_b("probe.trylock", file=file, kind=kind, timeout=timeout)
    finally:
        on_a("probe.unlock", file=file)
    if tried["got"] is None:
        return None, str(tried.get("note") or "the second locker failed")
    return not tried["got"], ""
