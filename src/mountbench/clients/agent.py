"""The side channel `mountbench serve` runs next to its fio server, on the fio port + 1.

fio's protocol carries jobs and results but says nothing about the machine beyond its
hostname and fio version, and cannot run anything but jobs. The agent answers the
controller's other questions: host facts (kernel, CPU, RAM, the filesystem of each
target path) and the steps of a coherence probe between two clients. Like fio's
protocol it has no authentication: it binds to the same address as the fio server
(loopback unless another is named) and must only be reachable on a trusted network.

Wire format: one JSON object per line each way, one request per connection:
``{"op": NAME, ...}`` -> ``{"ok": true, ...}`` or ``{"ok": false, "error": TEXT}``.
After ``{"op": "probe"}`` is answered, the connection carries probe/agent.py's protocol
(the lab's, there over a serial port) until either end closes it: the probe agent's
lines one way, its requests the other (clients/remoteprobe.py drives it), each step
confined to probe scratch directories (:func:`mountbench.probe.agent.confine`).
"""

from __future__ import annotations

import json
import shutil
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from mountbench.clients.addresses import ClientSpec
from mountbench.host import facts as hostinfo
from mountbench.host.targets import find_mount
from mountbench.probe import agent as probe_agent
from mountbench.probe.coherence import STEPS

SERVICE = "mountbench"
MAX_REQUEST = 1 << 20
QUERY_TIMEOUT_S = 5.0
BARRIER_FACT = "barrier_script"  # a host fact: where the start barrier's script is on that machine
CLOCK_ROUNDS = 8

Handler = Callable[[dict[str, Any]], dict[str, Any]]
Session = Callable[[socket.socket], None]  # takes the connection over once the request is answered


class AgentError(Exception):
    """The agent answered with an error, or not as an agent."""


def host_facts(fio_version: str, paths: list[str]) -> dict[str, Any]:
    """This machine's facts, and what each path is here (the filesystem holding it)."""
    facts = hostinfo.collect(fio_version) | hostinfo.machine_identity()
    described: dict[str, Any] = {}
    for path in paths:
        try:
            mount = find_mount(Path(path).resolve())
            usage = shutil.disk_usage(path)
            described[path] = {
                "fstype": mount.fstype,
                "mount_point": mount.mount_point,
                "mount_source": mount.source,
                "mount_options": mount.options,
                "free_bytes": usage.free,
                "total_bytes": usage.total,
            }
        except OSError as exc:
            described[path] = {"fstype": "unknown", "error": exc.strerror or str(exc)}
    facts["paths"] = described
    return facts


def probe_session(conn: socket.socket) -> None:
    """Answer probe/agent.py's requests on this connection until the controller leaves."""
    with conn.makefile("w", encoding="utf-8") as out:
        probe_agent.serve(conn.fileno(), out, STEPS, check=probe_agent.confine)


class Agent:
    """The request handlers of one `mountbench serve`; ``sessions`` are the requests after
    whose answer the connection carries another protocol."""

    def __init__(
        self, fio_port: int, fio_version: str, sessions: dict[str, Session] | None = None, barrier: str = ""
    ) -> None:
        self.fio_port = fio_port
        self.fio_version = fio_version
        self.barrier = barrier  # the start barrier's script next to fio's server ("" when there is none)
        self.sessions: dict[str, Session] = {"probe": probe_session} if sessions is None else sessions
        self.handlers: dict[str, Handler] = {
            "facts": self._facts,
            "clock": lambda _: {"ns": time.time_ns()},
            **{op: lambda _: {} for op in self.sessions},
        }

    def _facts(self, request: dict[str, Any]) -> dict[str, Any]:
        paths = [str(p) for p in request.get("paths") or []]
        facts = host_facts(self.fio_version, paths)
        return {"facts": facts | ({BARRIER_FACT: self.barrier} if self.barrier else {})}

    def answer(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            return {"ok": False, "error": 'not a request: send {"op": NAME, ...}'}
        handler = self.handlers.get(request["op"])
        if handler is None:
            return {"ok": False, "error": f"unknown op {request['op']!r}; known: {', '.join(self.handlers)}"}
        try:
            reply = handler(request)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        return {"ok": True, "service": SERVICE, "fio_port": self.fio_port, **reply}


def serve_agent(agent: Agent, bind: str, port: int) -> socketserver.ThreadingTCPServer:
    """Start answering on (bind, port) in a background thread; call ``shutdown()`` to stop."""

    class _Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            line = self.rfile.readline(MAX_REQUEST)
            try:
                request = json.loads(line)
            except ValueError:
                request = None
            reply = agent.answer(request)
            self.wfile.write(json.dumps(reply).encode() + b"\n")
            if reply["ok"] and request["op"] in agent.sessions:
                agent.sessions[request["op"]](self.connection)

    family = socket.AF_INET6 if ":" in bind else socket.AF_INET

    class _Server(socketserver.ThreadingTCPServer):
        address_family = family
        allow_reuse_address = True
        daemon_threads = True

    server = _Server((bind, port), _Handler)
    threading.Thread(target=server.serve_forever, name="mountbench-agent", daemon=True).start()
    return server


def call(client: ClientSpec, request: dict[str, Any], timeout: float = QUERY_TIMEOUT_S) -> dict[str, Any]:
    """One request to a client's agent; raises OSError when it cannot be reached,
    AgentError when what answers is not this client's agent or reports an error."""
    conn, lines, reply = _exchange(client, request, timeout)
    lines.close()
    conn.close()
    return reply


def open_session(client: ClientSpec, op: str, timeout: float) -> tuple[socket.socket, BinaryIO]:
    """Ask for a session (``probe``): the connection and a line reader over it, which then
    carry the session (blocking, with no time limit: the caller bounds each exchange)."""
    conn, lines, _reply = _exchange(client, {"op": op}, timeout)
    conn.settimeout(None)
    return conn, lines


def _exchange(client: ClientSpec, request: dict[str, Any], timeout: float) -> tuple[socket.socket, BinaryIO, dict]:
    conn = socket.create_connection((client.host, client.agent_port), timeout=timeout)
    try:
        conn.sendall(json.dumps(request).encode() + b"\n")
        lines = conn.makefile("rb")
        data = lines.readline(MAX_REQUEST + 1)
        if len(data) > MAX_REQUEST:
            raise AgentError("the answer is too long")
        return conn, lines, _checked(client, data)
    except BaseException:
        conn.close()
        raise


def _checked(client: ClientSpec, data: bytes) -> dict[str, Any]:
    """The agent's answer, when it is this client's agent's and not an error."""
    try:
        reply = json.loads(data)
    except ValueError:
        raise AgentError(f"port {client.agent_port} did not answer as a mountbench agent") from None
    if not isinstance(reply, dict) or reply.get("service", SERVICE) != SERVICE:
        raise AgentError(f"port {client.agent_port} did not answer as a mountbench agent")
    if not reply.get("ok"):
        raise AgentError(str(reply.get("error", "unknown error")))
    if reply.get("fio_port") != client.port:
        raise AgentError(f"the agent on port {client.agent_port} belongs to the fio server on {reply.get('fio_port')}")
    return reply


def query_facts(client: ClientSpec, paths: list[str], timeout: float = QUERY_TIMEOUT_S) -> dict[str, Any] | None:
    """The client's host facts when `mountbench serve` runs there; None for a plain fio server."""
    try:
        reply = call(client, {"op": "facts", "paths": paths}, timeout)
    except (OSError, AgentError):
        return None
    facts = reply.get("facts")
    return facts if isinstance(facts, dict) else None


def clock_facts(client: ClientSpec) -> dict[str, float]:
    """The agent's clock against this one's, as the ssh:// clients measure theirs: the best of
    CLOCK_ROUNDS round trips (offset = its time - the round trip's midpoint, uncertain by half
    the round trip); {} when it cannot be asked."""
    best: tuple[float, float] | None = None
    for _ in range(CLOCK_ROUNDS):
        before = time.time_ns()
        try:
            reply = call(client, {"op": "clock"})
        except (OSError, AgentError):
            return {}
        after = time.time_ns()
        if not isinstance(reply.get("ns"), int):
            return {}
        rtt = (after - before) / 1e6
        if best is None or rtt < best[0]:
            best = (rtt, (reply["ns"] - (before + after) / 2) / 1e6)
    if best is None:
        return {}
    return {"clock_offset_ms": round(best[1], 3), "clock_uncertainty_ms": round(best[0] / 2, 3)}


def barrier_option(facts: dict[str, Any], instant_ns: int) -> str | None:
    """The exec_prerun that makes a `mountbench serve` client's job start its I/O at
    ``instant_ns`` (this machine's clock, the client's offset added); None when that client
    has no barrier script or no measured clock."""
    script, offset_ms = facts.get(BARRIER_FACT), facts.get("clock_offset_ms")
    if not isinstance(script, str) or not script or any(c.isspace() for c in script):
        return None
    if not isinstance(offset_ms, int | float):
        return None
    return f"sh {script} {instant_ns + round(offset_ms * 1e6)}"
