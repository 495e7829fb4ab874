"""`mountbench serve`: this machine as a client of `run --client`. It runs ``fio --server``
bound to one address and port, and next to it the agent (clients/agent.py) on the port
+ 1, which tells the controller this machine's host facts and runs coherence probes.

Neither fio's protocol nor the agent's has any authentication: whoever reaches the ports
can run fio jobs (which read, write and delete files) as the user running serve. The
default address is therefore loopback; any other must be named with --bind.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil

from mountbench.clients import agent
from mountbench.clients.addresses import AGENT_PORT_OFFSET, FIO_PORT
from mountbench.clients.sshscripts import BARRIER_SH
from mountbench.errors import MountbenchError, UsageError
from mountbench.fio.binary import FioInfo
from mountbench.host.process import die_with_parent, stop_tree

DEFAULT_BIND = "127.0.0.1"
HOME_PREFIX = "mountbench-serve-"
START_TIMEOUT_S = 30.0


class ServerStopped(MountbenchError):
    """The fio server exited on its own."""


@dataclass
class Serving:
    fio: subprocess.Popen
    agent: object  # the agent's socketserver
    bind: str
    port: int

    @property
    def agent_port(self) -> int:
        return self.port + AGENT_PORT_OFFSET


def exposure(bind: str) -> str:
    """'loopback', 'all addresses' or 'network' for what --bind exposes."""
    try:
        address = ipaddress.ip_address(bind)
    except ValueError:
        return "network"  # a host name: whatever it resolves to
    if address.is_loopback:
        return "loopback"
    if address.is_unspecified:
        return "all addresses"
    return "network"


def fio_server_arg(bind: str, port: int) -> str:
    return f"--server=ip6:{bind},{port}" if ":" in bind else f"--server=ip:{bind},{port}"


@contextlib.contextmanager
def serving(fio: FioInfo, bind: str = DEFAULT_BIND, port: int = FIO_PORT) -> Iterator[Serving]:
    """fio's server and the agent, both listening when this yields; both stopped after."""
    if not 0 < port < 65535:
        raise UsageError(f"--port {port}: choose a port from 1 to 65534 (the agent takes the next one)")
    _refuse_taken(bind, port + AGENT_PORT_OFFSET, "the agent")
    # fio's server works in a directory of its own: what its jobs' exec_prerun writes
    # (<job>.prerun.txt) lands there, and the start barrier's script lives there
    home = _new_home()
    barrier = home / "barrier.sh"
    barrier.write_text(BARRIER_SH)
    try:
        proc = subprocess.Popen(
            [fio.path, fio_server_arg(bind, port)],
            cwd=home,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent(signal.SIGTERM),
        )
        try:
            _wait_listening(proc, bind, port)
            server = agent.serve_agent(agent.Agent(port, fio.version, barrier=str(barrier)), bind,
                                       port + AGENT_PORT_OFFSET)  # fmt: skip
            try:
                yield Serving(proc, server, bind, port)
            finally:
                server.shutdown()
                server.server_close()
        finally:
            _stop(proc)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def wait(serving: Serving) -> None:
    """Until Ctrl-C or SIGTERM (which the CLI turns into KeyboardInterrupt), or until fio's
    server exits on its own (ServerStopped)."""
    while serving.fio.poll() is None:
        time.sleep(0.2)
    out = serving.fio.stdout.read().decode(errors="replace") if serving.fio.stdout else ""
    raise ServerStopped(f"fio's server exited with {serving.fio.returncode}: {_last_line(out)}")


def _wait_listening(proc: subprocess.Popen, bind: str, port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            hint = "; choose another --port" if "in use" in out else ""
            raise UsageError(f"fio --server could not listen on {bind}:{port}: {_last_line(out)}{hint}")
        with (
            contextlib.suppress(OSError),
            socket.create_connection((bind if bind != "0.0.0.0" else "127.0.0.1", port), 1),
        ):
            return
        time.sleep(0.1)
    raise UsageError(f"fio --server did not start listening on {bind}:{port} within {START_TIMEOUT_S:g} s")


def _refuse_taken(bind: str, port: int, what: str) -> None:
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((bind, port))
        except OSError as exc:
            if exc.errno == errno.EADDRNOTAVAIL:
                raise UsageError(
                    f"--bind {bind} is not an address of this machine ({exc.strerror}); give one it has, "
                    "e.g. 127.0.0.1 ('ip -brief address' lists them)"
                ) from None
            raise UsageError(
                f"{what} cannot listen on {bind}:{port} ({exc.strerror}); choose another --port "
                f"(fio takes PORT, the agent PORT + {AGENT_PORT_OFFSET})"
            ) from None


def _new_home() -> Path:
    """A directory of serve's own for fio's server (``mountbench-serve-<pid>-*`` in the temp
    directory), after removing those of serve processes that died without cleaning up (a
    SIGKILL): only directories with this name, this user's, holding the barrier script,
    whose process is gone."""
    for old in Path(tempfile.gettempdir()).glob(f"{HOME_PREFIX}*-*"):
        pid = old.name.removeprefix(HOME_PREFIX).split("-", 1)[0]
        with contextlib.suppress(OSError):
            ours = old.is_dir() and not old.is_symlink() and old.stat().st_uid == os.getuid()
            if ours and pid.isdigit() and not psutil.pid_exists(int(pid)) and (old / "barrier.sh").is_file():
                shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{HOME_PREFIX}{os.getpid()}-"))


def _stop(proc: subprocess.Popen) -> None:
    """fio's server and every job process it forked (each in a session of its own)."""
    stop_tree(proc, signal.SIGTERM)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"
