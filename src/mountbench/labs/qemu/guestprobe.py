"""`mountbench lab --probe`: what each mount in the guest really supports, and how coherent it
is across the VM boundary, after the benchmark run, by probe/'s own agent run in the guest
(labs/insideprobe.py does the probing; this module runs the agent).

The agent (``python -m mountbench.probe.agent``: the host's own mountbench, since the guest's
root is the host's) runs as a guest command in a thread of its own; it reads requests from the
lab's control channel (the guest's /dev/ttyS1) and answers on the console, neither of them a
share under test.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
import threading
from collections.abc import Callable
from types import TracebackType

from mountbench.labs.insideprobe import Inside, ProbeOptions, Results, probe_inside, probe_time, unprobed
from mountbench.labs.qemu.faults import GuestError
from mountbench.labs.qemu.guest import Guest
from mountbench.probe.agent import AgentError, AgentLink, RemoteSide
from mountbench.probefacts import LabProbe

# the guest's root is read-only: caches and data go to its tmpfs (the lab's run and its probe agent alike)
GUEST_ENV = "HOME=/tmp XDG_CACHE_HOME=/tmp/.cache XDG_DATA_HOME=/tmp/.data COLUMNS=160"
CHANNEL = "/dev/ttyS1"  # the lab's control channel in the guest
AGENT_START_S = 300.0  # Python's start in an emulated guest whose root is 9p can take minutes


def agent_command() -> str:
    """The guest command: the host's own probe agent, reading requests from the lab's control channel."""
    argv = [sys.executable, "-m", "mountbench.probe.agent", "--channel", CHANNEL]
    return f"cd /tmp && env {GUEST_ENV} {shlex.join(argv)}"


def agent_timeout(mounts: int, shared: int, options: ProbeOptions) -> float:
    """Seconds the agent may run: its start, then the probe's work (insideprobe.probe_time)."""
    return AGENT_START_S + probe_time(mounts, shared, options)


class GuestAgent:
    """The probe agent running in the guest (a guest command, in a thread of its own) and
    the RemoteSide that speaks to it. Lines of the command that are not the agent's go to
    ``on_output``."""

    def __init__(self, guest: Guest, timeout: float, on_output: Callable[[str], None]) -> None:
        self._guest = guest
        self._timeout = timeout
        self._on_output = on_output
        self.link = AgentLink(guest.send_to_command)
        self.side = RemoteSide(self.link, "guest")
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="mountbench-lab-agent", daemon=True)

    def _run(self) -> None:
        try:
            self._guest.run_in_guest(agent_command(), on_line=self._line, timeout=self._timeout)
        except BaseException as exc:  # reported by the caller's next request
            self.failure = exc

    def _line(self, line: str) -> None:
        if not self.link.feed(line):
            self._on_output(line)

    def __enter__(self) -> GuestAgent:
        self._thread.start()
        try:
            self.link.wait_hello(AGENT_START_S)
        except AgentError:
            raise AgentError(f"the probe agent did not start in the guest{self._why()}") from None
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._thread.is_alive() and self.failure is None:
            with contextlib.suppress(AgentError, GuestError):
                self.side.exit()
        self._thread.join(timeout=30.0)

    def _why(self) -> str:
        return f" ({self.failure})" if self.failure is not None else ""


def probe_guest(guest: Guest, options: ProbeOptions, on_output: Callable[[str], None]) -> LabProbe:
    """Probe every mount the guest could use; what failed is said in the result, not raised
    (the benchmark run it comes with is already home)."""
    mounts = [
        Inside(m.label, m.guest_path, m.host_path, m.spec.mount_type.shared) for m in guest.mounts if not m.guest_error
    ]
    if not mounts:
        return unprobed(mounts, options, "no mount worked in the guest")
    shared = sum(1 for m in mounts if m.shared and m.host_path is not None)
    try:
        with GuestAgent(guest, agent_timeout(len(mounts), shared, options), on_output) as agent:
            results = Results(guest.results_path, guest.guest_results)
            return probe_inside(agent.side, mounts, results, options, on_output, "the guest")
    except (AgentError, GuestError) as exc:
        return unprobed(mounts, options, str(exc))
