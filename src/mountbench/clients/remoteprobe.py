"""Coherence between two clients of a shared filesystem (``probe --view PATH@A=PATH@B``):
"a file written on client A shows on client B after how long", through `mountbench serve`
on each machine.

The checks are probe/coherence.py's, driven by its :func:`measure_views` as the lab drives
its guest: each client is a :class:`~mountbench.probe.agent.RemoteSide` speaking
probe/agent.py's protocol over the TCP side channel of that client's `mountbench serve`
(clients/agent.py), its clock matched to the controller's (the result records to within
how much). A view's steps run on its client, each confined to probe scratch directories.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from mountbench.clients import agent
from mountbench.clients.addresses import ClientSpec, parse_client
from mountbench.errors import TargetError, UsageError
from mountbench.probe.agent import AgentError, AgentLink, AgentSilent, RemotePending, RemoteSide
from mountbench.probe.coherence import View, measure_views
from mountbench.probe.sandbox import Outcome
from mountbench.probefacts import CoherenceResult

HELLO_TIMEOUT_S = 10.0


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


class ClientSide(RemoteSide):
    """A client's RemoteSide whose requests that get no answer (the client or its serve went
    away) come back as "hung" steps: the driver then pings both views, records that a view
    stopped answering and skips the later checks, as for a hung mount. An answer saying
    the request was wrong is still raised (AgentError): that is a bug, not a result."""

    def run(self, step: str, *args: Any, timeout: float) -> Outcome:
        try:
            return super().run(step, *args, timeout=timeout)
        except AgentSilent as exc:
            return Outcome("hung", message=str(exc))

    def begin(self, step: str, *args: Any, timeout: float) -> _Tolerant:  # type: ignore[override]
        try:
            return _Tolerant(super().begin(step, *args, timeout=timeout))
        except AgentSilent as exc:
            return _Tolerant(None, str(exc))


class _Tolerant:
    """A step started on a client (None: it could not be started, ``why``)."""

    def __init__(self, pending: RemotePending | None, why: str = "") -> None:
        self._pending = pending
        self._why = why
        self.ready = pending is not None and pending.ready

    def finish(self, timeout: float) -> Outcome:
        try:
            return self._pending.finish(timeout) if self._pending is not None else Outcome("hung", message=self._why)
        except AgentSilent as exc:
            return Outcome("hung", message=str(exc))


@contextlib.contextmanager
def connected(client: ClientSpec) -> Iterator[ClientSide]:
    """A session with the probe agent of the client's `mountbench serve`, its clock matched.
    Raises TargetError when no `mountbench serve` answers there."""
    try:
        conn, lines = agent.open_session(client, "probe", HELLO_TIMEOUT_S)
    except (OSError, agent.AgentError) as exc:
        raise TargetError(
            f"{client.label}: no `mountbench serve` answers on {client.host}:{client.agent_port} ({exc}); "
            "start 'mountbench serve --bind ADDRESS' on that client"
        ) from None
    link = AgentLink(lambda line: conn.sendall(line.encode() + b"\n"), f"the probe agent of {client.label}")
    reader = threading.Thread(target=_pump, args=(lines, link), name=f"probe-{client.label}", daemon=True)
    reader.start()
    side = ClientSide(link, client.label)
    try:
        link.wait_hello(HELLO_TIMEOUT_S)
        side.sync_clock()
        yield side
    finally:
        with contextlib.suppress(AgentError, OSError):
            side.exit()
        with contextlib.suppress(OSError):
            conn.shutdown(socket.SHUT_RDWR)
        reader.join(5.0)
        lines.close()
        conn.close()


def _pump(lines: BinaryIO, link: AgentLink) -> None:
    """Hand the agent's lines to the link until the connection ends."""
    try:
        for line in lines:
            link.feed(line.decode("utf-8", errors="replace"))
        why = "the connection was closed"
    except OSError as exc:
        why = f"the connection failed ({exc})"
    link.close(why)


def measure_remote_coherence(a: RemoteView, b: RemoteView, *, repeat: int = 5, timeout: float = 5.0) -> CoherenceResult:
    """The local probe's checks, with A and B on two clients (or two paths on one: then one
    session and one clock). Raises TargetError when a client has no `mountbench serve` or B
    does not show A's scratch directory."""
    with contextlib.ExitStack() as stack:
        sides = {client: stack.enter_context(connected(client)) for client in dict.fromkeys((a.client, b.client))}
        return measure_views(
            View(sides[a.client], a.path, a.label),
            View(sides[b.client], b.path, b.label),
            repeat=repeat,
            timeout=timeout,
        )
