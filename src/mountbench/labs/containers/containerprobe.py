"""The container lab's probe, before the workloads: probe/'s own agent run in the container
(``podman exec -i``: the host's mountbench, read-only there), its requests on the agent's standard
input and its answers on its standard output, neither of them a mount under test. What each mount
supports is the capability probe of probe.target, run inside (labs/insideprobe.py); each mount
that is the host's directory itself (the bind mount, and any other type that shares both ways) is
measured across too, on its own: changes made on the host shown in the container and back, stale
reads after a replace, inotify and locks."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from types import TracebackType

from mountbench.host import process as procs
from mountbench.labfacts import SHARED_BOTH_WAYS
from mountbench.labs.containers.containerlab import RESULTS, ContainerLab
from mountbench.labs.containers.mounts import MountType
from mountbench.labs.insideprobe import Inside, ProbeOptions, Results, probe_inside, unprobed
from mountbench.probe.agent import AgentError, AgentLink, RemoteSide
from mountbench.probefacts import LabProbe

AGENT_START_S = 60.0


class ContainerAgent:
    """probe/agent.py running in the lab's container, and the RemoteSide that speaks to it. Lines of its
    output that are not the agent's go to ``on_output``."""

    def __init__(self, lab: ContainerLab, on_output: Callable[[str], None]) -> None:
        self.argv = lab.exec_argv([sys.executable, "-m", "mountbench.probe.agent", "--channel", "-"], stdin=True)
        self.env = lab.env
        self.on_output = on_output
        self.proc: subprocess.Popen[bytes] | None = None
        self.link = AgentLink(self._send, "the container's probe agent")
        self.side = RemoteSide(self.link, "container")
        self._reader = threading.Thread(target=self._read, name="container-agent", daemon=True)
        self._lock = threading.Lock()

    def _send(self, line: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        with self._lock:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()

    def _read(self) -> None:
        assert self.proc is not None
        try:
            procs.stream(self.proc, self._line)
        except (OSError, ValueError):
            pass
        finally:
            self.link.close("the agent's output ended")

    def _line(self, line: str) -> None:
        if not self.link.feed(line):
            self.on_output(line)

    def __enter__(self) -> ContainerAgent:
        self.proc = procs.spawn(self.argv, env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)  # fmt: skip
        self._reader.start()
        try:
            self.link.wait_hello(AGENT_START_S)
        except AgentError:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(AgentError, OSError):
                self.side.exit()
        procs.stop_tree(self.proc, signal.SIGKILL, grace_s=5.0)
        self._reader.join(timeout=10.0)


def probed_mounts(lab: ContainerLab, mount_types: Sequence[MountType]) -> list[Inside]:
    """Each mount as the probe sees it: where it is inside, and the host's directory behind a mount that
    shares it both ways (measured across)."""
    assert lab.lab is not None
    return [Inside(m.name, m.path, m.host_path(lab.lab), m.shares == SHARED_BOTH_WAYS) for m in mount_types]


def probe_container(
    lab: ContainerLab, mount_types: Sequence[MountType], options: ProbeOptions, on_output: Callable[[str], None]
) -> LabProbe:
    """Every mount probed from inside the container (and across, where it shares the host's directory);
    what failed is said in the result, never raised."""
    mounts = probed_mounts(lab, mount_types)
    try:
        with ContainerAgent(lab, on_output) as agent:
            return probe_inside(agent.side, mounts, Results(lab.results, RESULTS), options, on_output, "the container")
    except AgentError as exc:
        return unprobed(mounts, options, str(exc))
