"""`mountbench serve`: this machine as a client of `run --client`. It runs ``fio --server``
bound to one address and port, and next to it the agent (clients/agent.py) on the port
+ 1, which tells the controller this machine's host facts and runs coherence probes.

Neither fio's protocol nor the agent's has any authentication: whoever reaches the ports
can run fio jobs (which read, write and delete files, and run commands through fio's
exec_prerun) as the user running serve. The default address is therefore loopback, which
still lets every user of this machine in; any other address must be named with --bind.
``run --client ssh://`` needs no serve and no port (clients/sshremote.py).

fio sets SO_REUSEPORT on its socket, so a second fio server of the same user on the same
port would silently share the connections. serve refuses a port anything listens on
before it starts fio, checks that the only listener on it is its own fio once it is up,
and stops (saying why) should another appear beside it later.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import shutil
import signal
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
from mountbench.host.process import bind_error, last_lines, spawn, stop_tree, tcp_listeners

DEFAULT_BIND = "127.0.0.1"
HOME_PREFIX = "mountbench-serve-"
START_TIMEOUT_S = 30.0
SHARE_CHECK_S = 2.0  # how often serve checks that its fio server is alone on its port


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


def who_can_reach(bind: str, port: int, user: str) -> str:
    """The line serve prints once it listens: who can now run commands as ``user`` here."""
    ports = f"ports {port} and {port + AGENT_PORT_OFFSET}"
    reach = exposure(bind)
    who = (
        "every user of this machine"
        if reach == "loopback"
        else f"anyone who reaches {bind if reach == 'network' else 'any address of this machine'} on {ports} "
        "(every user of this machine too)"
    )
    return (
        f"warning: no authentication: {who} can run fio jobs here, and commands through them (fio's exec_prerun), "
        f"as {user}; where SSH reaches this machine, prefer 'mountbench run --client ssh://HOST' on the controller "
        "(no serve, no port: a private socket for that run alone)"
    )


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
    _refuse_taken(bind, port, "fio's server")
    _refuse_taken(bind, port + AGENT_PORT_OFFSET, "the agent")
    # fio's server works in a directory of its own: what its jobs' exec_prerun writes
    # (<job>.prerun.txt) lands there, and the start barrier's script lives there
    home = _new_home()
    barrier = home / "barrier.sh"
    barrier.write_text(BARRIER_SH)
    try:
        proc = spawn([fio.path, fio_server_arg(bind, port)], death_signal=signal.SIGTERM, cwd=home,
                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
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
    """Until Ctrl-C or SIGTERM (which the CLI turns into KeyboardInterrupt), until fio's
    server exits on its own, or until another process listens on its port too
    (ServerStopped)."""
    next_check = time.monotonic() + SHARE_CHECK_S
    while serving.fio.poll() is None:
        time.sleep(0.2)
        if time.monotonic() >= next_check:
            if _other_listeners(serving.fio.pid, serving.bind, serving.port):
                raise ServerStopped(
                    f"another process now listens on {serving.bind}:{serving.port} too (fio's "
                    "SO_REUSEPORT lets one of this user's processes share the port): runs would reach either; "
                    "stopped so that none does"
                )
            next_check = time.monotonic() + SHARE_CHECK_S
    out = serving.fio.stdout.read().decode(errors="replace") if serving.fio.stdout else ""
    raise ServerStopped(f"fio's server exited with {serving.fio.returncode}: {last_lines(out)}")


def _listening_sockets(bind: str, port: int) -> set[str]:
    """The inodes of the TCP sockets listening on ``port`` at ``bind`` or at a wildcard address
    (which takes its connections too), from /proc/net/tcp and tcp6."""
    wanted = {"0.0.0.0", "::", str(ipaddress.ip_address(bind))}
    return {inode for address, at, inode in tcp_listeners() if at == port and address in wanted}


def _held_by(pid: int) -> set[str]:
    """The socket inodes process ``pid`` holds."""
    held = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    held.add(link[8:-1])
    return held


def _other_listeners(pid: int, bind: str, port: int) -> int:
    """How many sockets listen there besides fio's server's own (``pid``'s; the processes it
    forks for each connection hold the same socket)."""
    return len(_listening_sockets(bind, port) - _held_by(pid))


def _wait_listening(proc: subprocess.Popen, bind: str, port: int) -> None:
    """Until this fio server (not merely something) listens on the port, and nothing else does."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            hint = "; choose another --port" if "in use" in out else ""
            raise UsageError(f"fio --server could not listen on {bind}:{port}: {last_lines(out)}{hint}")
        listening = _listening_sockets(bind, port)
        if listening & _held_by(proc.pid):
            if listening - _held_by(proc.pid):
                raise UsageError(f"{bind}:{port} is shared with another process's socket; choose another --port")
            return
        time.sleep(0.1)
    raise UsageError(f"fio --server did not start listening on {bind}:{port} within {START_TIMEOUT_S:g} s")


def _refuse_taken(bind: str, port: int, what: str) -> None:
    """A one-line error when anything listens on ``bind:port`` already. The trial socket sets
    no SO_REUSEPORT, so a fio server there (which sets it) makes the bind fail too."""
    exc = bind_error(bind, port)
    if exc is None:
        return
    if exc.errno == errno.EADDRNOTAVAIL:
        raise UsageError(
            f"--bind {bind} is not an address of this machine ({exc.strerror}); give one it has, "
            "e.g. 127.0.0.1 ('ip -brief address' lists them)"
        )
    raise UsageError(
        f"{what} cannot listen on {bind}:{port} ({exc.strerror}); choose another --port "
        f"(fio takes PORT, the agent PORT + {AGENT_PORT_OFFSET})"
    )


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
