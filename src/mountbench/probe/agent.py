"""A probe agent on another machine (the lab's guest) and the Side that speaks to it.

The coherence checks across a lab's boundary need steps run inside (the QEMU guest, the
container lab's container) while the host acts, and the reverse; and what a mount supports is
probed where it is mounted. The inside runs this module's agent (``python -m
mountbench.probe.agent --channel /dev/ttyS1``: the host's own mountbench, since the guest's
root is the host's; in the container, ``--channel -``, its standard input through ``podman exec
-i``). It reads one JSON request per line from the channel (the guest's control serial port, the
exec's standard input: never a mount under test) and answers each with one line on its standard
output, which reaches the host on the guest's console (the exec's output):

    MB-AGENT {"id": 3, "outcome": {"status": "ok", "value": {...}, ...}}

Requests: ``run`` (a step, see :mod:`mountbench.probe.sides`), ``begin`` and ``finish``
(a step that runs on while the other side acts), ``clock`` (the agent's monotonic time,
for matching the two clocks), ``exit``. Each step runs in its own child process, as it
would on the host, so a hung mount in the guest hangs a child, never the agent.

On the host, :class:`RemoteSide` implements :class:`~mountbench.probe.sides.Side` over
an :class:`AgentLink`, which is handed the console's lines and a way to send one line.

`mountbench serve` answers the same requests on its TCP side channel (clients/agent.py),
for ``probe --view PATH@A=PATH@B`` across two clients. Reachable by anyone on the
network, it runs only the coherence steps, and only in probe scratch directories
(:func:`confine`).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import queue
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from mountbench.errors import MountbenchError
from mountbench.host.scratch import PROBE_PREFIX
from mountbench.probe.coherence import STEPS
from mountbench.probe.sandbox import Outcome
from mountbench.probe.sides import LocalPending, LocalSide, Steps
from mountbench.probe.target import probe_target

PREFIX = "MB-AGENT "
LINK_SLACK_S = 15.0  # on top of a step's own bound: the channel, the guest's fork, emulation
CLOCK_SAMPLES = 9
IDLE_EXIT_S = 600.0  # the agent leaves when the host has said nothing for this long


class AgentError(MountbenchError):
    """The agent did not answer, or answered with an error."""


class AgentSilent(AgentError):
    """The agent did not answer: not in time, or its channel ended."""


def outcome_to_dict(outcome: Outcome) -> dict[str, Any]:
    return dataclasses.asdict(outcome)


def outcome_from_dict(data: dict[str, Any]) -> Outcome:
    return Outcome(
        status=data["status"],
        value=data.get("value"),
        errno=data.get("errno"),
        message=str(data.get("message", "")),
        elapsed_s=float(data.get("elapsed_s", 0.0)),
    )


# -- the agent (guest side) -----------------------------------------------------------------


class Agent:
    """Answers requests by running steps on this machine (a LocalSide); ``check`` may refuse
    a step and its arguments (ValueError) before it runs."""

    def __init__(self, steps: Steps, check: Callable[[str, list[Any]], None] | None = None) -> None:
        self.side = LocalSide(steps, "agent")
        self.check = check
        self.pending: dict[int, LocalPending] = {}
        self._keys = itertools.count(1)
        self.done = False

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        reply: dict[str, Any] = {"id": request.get("id")}
        op = request.get("op")
        try:
            if op in ("run", "begin") and self.check is not None:
                self.check(request["step"], list(request["args"]))
            if op == "run":
                outcome = self.side.run(request["step"], *request["args"], timeout=float(request["timeout"]))
                reply["outcome"] = outcome_to_dict(outcome)
            elif op == "begin":
                pending = self.side.begin(request["step"], *request["args"], timeout=float(request["timeout"]))
                key = next(self._keys)
                self.pending[key] = pending
                reply.update(pending=key, ready=pending.ready)
            elif op == "finish":
                pending = self.pending.pop(int(request["pending"]))
                reply["outcome"] = outcome_to_dict(pending.finish(float(request["timeout"])))
            elif op == "clock":
                reply["now"] = time.monotonic()
            elif op == "exit":
                self.let_go()
                self.done = True
                reply["bye"] = True
            else:
                reply["error"] = f"unknown request {op!r}"
        except (LookupError, ValueError, TypeError) as exc:
            reply["error"] = f"bad request {op!r}: {type(exc).__name__}: {exc}"
        return reply

    def let_go(self) -> None:
        """Finish the steps still running (the driver left without finishing them)."""
        for pending in self.pending.values():
            pending.finish(1.0)
        self.pending.clear()


def read_lines(fd: int, idle_s: float) -> Any:
    """Lines from a raw file descriptor (a tty in raw mode: no line discipline), until EOF
    or ``idle_s`` seconds without input."""
    import select

    buffer = b""
    while True:
        ready, _, _ = select.select([fd], [], [], idle_s)
        if not ready:
            return
        chunk = os.read(fd, 4096)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            text = line.decode("utf-8", errors="replace").strip()
            if text:
                yield text


def serve(
    fd: int,
    out: IO[str],
    steps: Steps,
    idle_s: float = IDLE_EXIT_S,
    check: Callable[[str, list[Any]], None] | None = None,
) -> None:
    """Answer requests read from ``fd`` on ``out`` until ``exit`` (or EOF, or idleness)."""
    agent = Agent(steps, check)

    def say(data: dict[str, Any]) -> None:
        out.write(PREFIX + json.dumps(data) + "\n")
        out.flush()

    say({"id": 0, "hello": True, "pid": os.getpid(), "now": time.monotonic()})
    try:
        for line in read_lines(fd, idle_s):
            try:
                request = json.loads(line)
            except ValueError:
                continue  # not ours (noise on the channel)
            if not isinstance(request, dict):
                continue
            say(agent.handle(request))
            if agent.done:
                break
    finally:
        agent.let_go()


def capabilities_to_file(path: str, timeout: float, out: str) -> dict[str, Any]:
    """The capability probe of ``path`` (probe_target), written as JSON to ``out`` (a file on a
    share that is not under test: the lab's results share); what it found, in short."""
    probed = probe_target(Path(path), timeout=timeout)
    tmp = f"{out}.tmp"
    with open(tmp, "w") as f:
        json.dump(probed.to_dict(), f)
    os.replace(tmp, out)
    return {"out": out, "results": len(probed.results), "error": probed.error}


def agent_steps() -> Steps:
    """What the agent can run: the coherence checks' steps and the capability probe."""
    return {**STEPS, "capabilities_to_file": capabilities_to_file}


def confine(step: str, args: list[Any]) -> None:
    """Refuse (ValueError) a step that would work outside a probe scratch directory: for an
    agent anyone on the network may reach (`mountbench serve`). The coherence steps' own
    file names are fixed; a scratch directory is removed only with its token; the sweep
    removes only directories of probes that died; the capability probe is not offered."""
    if step not in STEPS:
        raise ValueError(f"unknown probe step {step!r}")
    if step == "sweep_leftovers":
        return
    where = os.path.join(str(args[0]), str(args[1])) if step == "create_scratch_step" else str(args[0])
    if step == "create_scratch_step" and "/" in str(args[1]):
        raise ValueError(f"not a plain directory name: {args[1]!r}")
    if not os.path.isabs(where) or not os.path.basename(os.path.normpath(where)).startswith(PROBE_PREFIX):
        raise ValueError(f"refusing {where!r}: not a probe scratch directory")
    if step == "remove_probe_scratch" and not isinstance(args[1], str):
        raise ValueError("removing a probe scratch directory takes its token")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="mountbench.probe.agent", description=__doc__)
    parser.add_argument("--channel", required=True,
                        help="where requests come from: the QEMU lab's /dev/ttyS1, or - (standard input: the "
                             "container lab's podman exec -i)")  # fmt: skip
    parser.add_argument("--idle", type=float, default=IDLE_EXIT_S, help="leave after this many idle seconds")
    args = parser.parse_args(argv)
    if args.channel == "-":
        serve(sys.stdin.fileno(), sys.stdout, agent_steps(), args.idle)
        return
    fd = os.open(args.channel, os.O_RDONLY | os.O_NOCTTY)
    try:
        serve(fd, sys.stdout, agent_steps(), args.idle)
    finally:
        os.close(fd)


# -- the host side ------------------------------------------------------------------------------


class AgentLink:
    """The host's end: requests go out through ``send`` (one line each); the agent's lines
    come in through :meth:`feed` (called with every console line; the others are ignored)."""

    def __init__(self, send: Callable[[str], None], who: str = "the guest's probe agent") -> None:
        self._send = send
        self._who = who
        self._replies: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self._ids = itertools.count(1)
        self.hello: dict[str, Any] | None = None

    def close(self, why: str) -> None:
        """The channel ended: every waiting and later request fails at once, saying ``why``."""
        self._replies.put((time.monotonic(), {"closed": why}))

    def feed(self, line: str) -> bool:
        """Take one console line; True when it was the agent's."""
        at = time.monotonic()
        start = line.find(PREFIX)
        if start < 0:
            return False
        try:
            data = json.loads(line[start + len(PREFIX) :])
        except ValueError:
            return False
        self._replies.put((at, data))
        return True

    def wait_hello(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            _at, data = self._get(deadline, timeout, f"{self._who} did not start")
            if data.get("hello"):
                self.hello = data
                return data

    def call(self, request: dict[str, Any], timeout: float) -> tuple[float, float, dict[str, Any]]:
        """Send one request; (sent at, answer received at, answer), host monotonic times."""
        request_id = next(self._ids)
        sent = time.monotonic()
        try:
            self._send(json.dumps({"id": request_id, **request}))
        except OSError as exc:  # the channel is gone (a broken pipe must not pass for stdout's)
            raise AgentSilent(f"{self._who} cannot be reached: {exc.strerror or exc}") from None
        deadline = sent + timeout
        while True:
            at, data = self._get(deadline, timeout, f"{self._who} did not answer {request.get('op')!r}")
            if data.get("id") != request_id:
                continue  # the late answer to a request given up on
            if "error" in data:
                raise AgentError(f"{self._who}: {data['error']}")
            return sent, at, data

    def _get(self, deadline: float, timeout: float, what: str) -> tuple[float, dict[str, Any]]:
        try:
            at, data = self._replies.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AgentSilent(f"{what} within {timeout:g} s") from None
        if "closed" in data:
            self._replies.put((at, data))  # for the next request too
            raise AgentSilent(f"{what}: {data['closed']}")
        return at, data


class RemotePending:
    def __init__(self, link: AgentLink, key: int | None, ready: bool) -> None:
        self._link = link
        self._key = key
        self._ready = ready

    @property
    def ready(self) -> bool:
        return self._ready

    def finish(self, timeout: float) -> Outcome:
        if self._key is None:
            return Outcome("crash", message="never started")
        _s, _a, data = self._link.call(
            {"op": "finish", "pending": self._key, "timeout": timeout}, timeout + LINK_SLACK_S
        )
        self._key = None
        return outcome_from_dict(data["outcome"])


class RemoteSide:
    """Steps run by the agent on the other machine; its clock matched to ours by
    :meth:`sync_clock` (the sample with the shortest round trip wins)."""

    def __init__(self, link: AgentLink, name: str = "guest") -> None:
        self._link = link
        self._name = name
        self._offset = 0.0  # remote monotonic minus ours
        self._resolution = float("inf")

    @property
    def name(self) -> str:
        return self._name

    @property
    def clock(self) -> str:
        return f"monotonic@{self._name}"

    @property
    def resolution_s(self) -> float:
        return self._resolution

    def sync_clock(self, samples: int = CLOCK_SAMPLES, timeout: float = LINK_SLACK_S) -> float:
        """Estimate the remote clock's offset; return the resolution (half the best round trip)."""
        best: tuple[float, float] | None = None
        for _ in range(samples):
            sent, received, data = self._link.call({"op": "clock"}, timeout)
            half = (received - sent) / 2
            if best is None or half < best[1]:
                best = (float(data["now"]) - (sent + half), half)
        assert best is not None
        self._offset, self._resolution = best
        return self._resolution

    def run(self, step: str, *args: Any, timeout: float) -> Outcome:
        request = {"op": "run", "step": step, "args": list(args), "timeout": timeout}
        _s, _a, data = self._link.call(request, timeout + LINK_SLACK_S)
        return outcome_from_dict(data["outcome"])

    def begin(self, step: str, *args: Any, timeout: float) -> RemotePending:
        request = {"op": "begin", "step": step, "args": list(args), "timeout": timeout}
        _s, _a, data = self._link.call(request, timeout + LINK_SLACK_S)
        return RemotePending(self._link, int(data["pending"]), bool(data["ready"]))

    def to_local(self, t: float) -> float:
        return t - self._offset

    def exit(self, timeout: float = LINK_SLACK_S) -> None:
        self._link.call({"op": "exit"}, timeout)


if __name__ == "__main__":
    main()
