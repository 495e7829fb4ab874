"""Client machines mountbench starts over SSH (``run --client ssh://HOST``): their host
facts, a ``fio --server`` started there and reached through an SSH tunnel, and everything
stopped again when the run ends.

On each client (Linux, POSIX sh, fio on the PATH of an SSH session):

- the facts: kernel, CPU, fio's version, and what each target path is there (findmnt);
- a run directory ``${XDG_CACHE_HOME:-~/.cache}/mountbench/remote/<token>/`` (the token
  is new for every run and client), mode 0700, holding the watcher's pid and fio's server's
  unix socket; fio's server is started in it with the environment variable
  MOUNTBENCH_REMOTE_RUN=<token>, which every process it forks inherits. That variable is
  the marker: stopping means ending the processes whose /proc/PID/environ carries it
  (never anything found by its name), then removing the directory;
- the watcher (a ``sh`` session) stays until its stdin closes: mountbench closes it at
  the end of the run, on Ctrl-C, and on a crash the kernel ends the local ssh process
  (PR_SET_PDEATHSIG), so sshd closes the session. Either way the watcher stops its marked
  processes. The controller also writes it a line every HEARTBEAT_S; a watcher that hears
  nothing for CHECK_S (the network went and sshd has not noticed its session is dead)
  stops the same way. Should it have been killed itself, the next run on that machine
  finds the directory, sees its watcher gone, and ends that run's marked processes
  ("leftovers").

fio's protocol has no authentication, so its server listens on no TCP port at all: on a
unix socket in that 0700 directory, which only the SSH user (and root) can connect to. The
controller reaches it through the SSH connection (``ssh -O forward -L LOCAL:REMOTE``, both
unix sockets): the local end is in the run's own 0700 control directory here, mode 0600
(OpenSSH's StreamLocalBindMask), so no other user of either machine can reach the server
that runs commands as the SSH user, and no other run (nor `mountbench serve`) can be
mistaken for this one's. The tunnel carries fio's job files and results, never the I/O
being measured.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mountbench.clients import sshscripts
from mountbench.clients.addresses import ClientSpec
from mountbench.clients.preflight import refuse_one_machine_twice
from mountbench.clients.sshconn import SshConnection, control_directory
from mountbench.clients.sshconn import stop as stop_process
from mountbench.errors import MountbenchError, UsageError
from mountbench.fio.binary import FioInfo, parse_fio_version

RUN_VAR = sshscripts.RUN_VAR
WATCH_VAR = sshscripts.WATCH_VAR
START_TIMEOUT_S = 30.0
HEARTBEAT_S = 2.0  # the controller tells each watcher it is still there this often
CHECK_S = 20.0  # a watcher that heard nothing for this long (to twice this) stops its fio server
STOP_TIMEOUT_S = 15.0
# clients set up at a time: their logins, commands and fio processes are CPU work on this machine too
# (16 at once on 2 CPUs only queue); each goes through its steps without waiting for the others
AT_ONCE = 8
T = TypeVar("T")


@dataclass
class RemoteServer:
    """One client's SSH connection, its watcher session and its tunnelled fio server."""

    client: ClientSpec  # as given (ssh://…)
    conn: SshConnection
    token: str
    session: subprocess.Popen | None = None
    fio_pid: int = 0  # fio's server on the client
    directory: str = ""  # its run directory there (holds fio's socket and barrier.sh)
    dialed: ClientSpec | None = None  # the client as fio's client reaches it (the tunnel's end)
    leftovers: list[str] = field(default_factory=list)  # what the watcher ended of earlier runs

    def why_lost(self, *, ask: bool = False) -> str:
        """'' while the client is there; else why not. ``ask``: also ask the client whether its
        fio server still runs (a command through the connection: tens of milliseconds)."""
        lost = self.conn.why_lost()
        if lost:
            return lost
        if self.session is not None and self.session.poll() is not None:
            return "its fio server's SSH session ended"
        if ask and self.fio_pid:
            try:
                done = self.conn.run(sshscripts.ALIVE_SCRIPT, str(self.fio_pid), self.token, timeout=10)
            except MountbenchError:
                return "it did not answer over SSH within 10 s"
            if done.returncode == 255:
                return f"its SSH connection failed ({(done.stderr.strip().splitlines() or ['no message'])[-1][:200]})"
            if done.returncode != 0:
                return "its fio server is no longer running"
        return ""


class SshClients:
    """Every ``ssh://`` client of a run: started together, stopped together (idempotent)."""

    def __init__(self, fio: FioInfo, clients: Sequence[ClientSpec]) -> None:
        self.fio = fio
        self.token = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"
        self.control = control_directory()
        self.servers = {
            c.label: RemoteServer(c, SshConnection(c, self.control), f"{self.token}-{index}")
            for index, c in enumerate(clients)
        }
        self.facts: dict[str, dict[str, Any]] = {}
        self.notices: list[str] = []
        self._lock = threading.Lock()
        self._stopped = False
        self._quiet = threading.Event()
        self._heartbeat = threading.Thread(target=self._beat, name="mountbench-ssh-heartbeat", daemon=True)

    def _beat(self) -> None:
        """A line to every watcher each HEARTBEAT_S, until stop()."""
        while not self._quiet.wait(HEARTBEAT_S):
            for server in self.servers.values():
                session = server.session
                if session is None or session.stdin is None or session.poll() is not None:
                    continue
                with contextlib.suppress(OSError, ValueError):
                    session.stdin.write(b"\n")
                    session.stdin.flush()

    # --- starting ------------------------------------------------------------------------------

    def start(self, paths: Sequence[str] = ()) -> dict[str, ClientSpec]:
        """Log in to every client, check its fio, start its server and tunnel: label -> the
        client as fio reaches it. ``paths``: the target paths, whose facts on each client come
        with its host facts (one command, not two). Each client goes through its steps on its
        own, ``AT_ONCE`` clients at a time (a login, its facts, its server, its tunnel and clock
        do not wait for the slowest client's step before), the ssh processes started from this
        thread (sshconn: PR_SET_PDEATHSIG). Raises UsageError naming every client that failed
        (and then stops whatever was started)."""
        try:
            self._bounded(lambda s: s.conn.start(), lambda s: self._logged_in(s, paths))
            refuse_one_machine_twice(self.facts)  # before anything is started there
            self._bounded(self._start_server, self._served)
            self._heartbeat.start()
        except BaseException:
            self.stop()
            raise
        for server in self.servers.values():
            for line in server.leftovers:
                self.notices.append(f"client {server.client.label}: {line}")
        return {label: s.dialed for label, s in self.servers.items() if s.dialed is not None}

    def _logged_in(self, server: RemoteServer, paths: Sequence[str]) -> None:
        server.conn.wait_ready()
        self._check_facts(server, paths)

    def _start_server(self, server: RemoteServer) -> None:
        server.session = server.conn.start_session(
            sshscripts.SERVE_SCRIPT, server.token, str(int(CHECK_S)), env={WATCH_VAR: server.token}
        )

    def _served(self, server: RemoteServer) -> None:
        """Its server up, tunnelled here, and its clock compared."""
        self._await_server(server)
        index = list(self.servers.values()).index(server)
        remote = f"{server.directory}/{sshscripts.SOCKET_NAME}"
        local = self.control / f"{index}-{server.client.dirname[:40]}.fio"
        server.conn.forward_socket(str(local), remote)
        server.dialed = server.client.dialed(str(local))
        with self._lock:
            self.facts[server.client.label]["fio_server"] = (
                f"unix socket {remote} there (0700 directory), reached through ssh -L to a 0600 socket here"
            )
        self._clock(server)

    def _bounded(self, spawn: Callable[[RemoteServer], None], step: Callable[[RemoteServer], None]) -> None:
        """For every client: ``spawn`` (from this thread: it starts ssh processes), then ``step`` in a
        worker; at most ``AT_ONCE`` clients between the two at a time. One UsageError naming every
        client that failed."""
        problems: list[str] = []

        def guarded(server: RemoteServer) -> None:
            try:
                step(server)
            except MountbenchError as exc:
                problems.append(str(exc))

        submitted: list[Future[None]] = []
        with ThreadPoolExecutor(max_workers=AT_ONCE) as pool:
            for server in self.servers.values():
                while sum(not f.done() for f in submitted) >= AT_ONCE:
                    wait([f for f in submitted if not f.done()], return_when=FIRST_COMPLETED)
                spawn(server)
                submitted.append(pool.submit(guarded, server))
            for future in submitted:
                future.result()  # anything but a client's own failure is raised here
        if problems:
            raise UsageError("; ".join(problems))

    def _check_facts(self, server: RemoteServer, paths: Sequence[str] = ()) -> None:
        facts = describe(server.conn, list(paths))
        theirs = str(facts.get("fio_version") or "")
        label = server.client.label
        if not theirs:
            raise UsageError(f"client {label} has no fio on the PATH of an SSH session; install fio "
                             f"{self.fio.version.removeprefix('fio-')} there")  # fmt: skip
        if parse_fio_version(theirs)[:2] != self.fio.version_tuple[:2]:
            raise UsageError(
                f"client {label} runs {theirs} but this controller runs {self.fio.version}: fio's client/server "
                f"protocol needs the same major.minor version on both; install fio "
                f"{'.'.join(map(str, self.fio.version_tuple[:2]))} there"
            )
        with self._lock:
            self.facts[label] = {"label": label, "address": server.client.destination,
                                 "server": "fio --server over ssh", "run_token": server.token, **facts}  # fmt: skip

    def _await_server(self, server: RemoteServer) -> None:
        assert server.session is not None and server.session.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        label = server.client.label
        while True:
            line = _readline(server.session, deadline)
            if line is None:
                ended = server.session.poll() is not None and server.session.stderr is not None
                said = server.session.stderr.read().decode(errors="replace").strip() if ended else ""  # type: ignore[union-attr]
                raise UsageError(f"client {label}: fio's server did not start within {START_TIMEOUT_S:g} s"
                                 + (f" ({said.splitlines()[-1][:200]})" if said else ""))  # fmt: skip
            if line.startswith("LEFTOVER "):
                _, name, count = ([*line.split(), "0"])[:3]
                server.leftovers.append(f"ended {count} process(es) left by an earlier run ({name})")
            elif line.startswith("ERROR "):
                raise UsageError(f"client {label}: {line[6:]}")
            elif line.startswith("READY "):
                _, pid, directory = (*line.split(maxsplit=2), "0", "")[:3]
                server.fio_pid = int(pid) if pid.isdigit() else 0
                server.directory = directory
                return

    def _clock(self, server: RemoteServer) -> None:
        """The client's clock against this one's (its own timestamps give the start skew): one
        session answers each line it reads with its time; the best of CLOCK_ROUNDS round trips
        (offset = its time - the round trip's midpoint, uncertain by half the round trip)."""
        session = server.conn.start_session(sshscripts.CLOCK_SCRIPT, env={})
        best: tuple[float, float] | None = None
        try:
            assert session.stdin is not None
            deadline = time.monotonic() + 15
            for _ in range(sshscripts.CLOCK_ROUNDS):
                before = time.time_ns()
                session.stdin.write(b"\n")
                session.stdin.flush()
                line = _readline(session, deadline)
                after = time.time_ns()
                if line is None or not line.isdigit():
                    break
                rtt = (after - before) / 1e6
                offset = (int(line) - (before + after) / 2) / 1e6
                if best is None or rtt < best[0]:
                    best = (rtt, offset)
        except OSError:
            pass
        finally:
            stop_process(session)
        if best is not None:
            with self._lock:
                self.facts[server.client.label] |= {"clock_offset_ms": round(best[1], 3),
                                                    "clock_uncertainty_ms": round(best[0] / 2, 3)}  # fmt: skip

    def add_path_facts(self, paths: Sequence[str]) -> None:
        """What each target path is on each client, as it sees it (already there when ``start``
        was given the same paths)."""

        def one(server: RemoteServer) -> None:
            described = describe(server.conn, list(paths)).get("paths", {})
            with self._lock:
                self.facts.setdefault(server.client.label, {})["paths"] = described

        if any(set(self.facts.get(label, {}).get("paths", {})) != set(paths) for label in self.servers):
            self._each(one)

    # --- while running -------------------------------------------------------------------------

    def barrier(self, label: str, instant_ns: int) -> str | None:
        """The job option that makes this client's job start its I/O at ``instant_ns`` (epoch
        nanoseconds of this machine's clock, the client's offset added): fio runs
        ``exec_prerun`` in each job process after its setup, before its I/O and its runtime
        start. None for a client not started here."""
        server = self.servers.get(label)
        if server is None or not server.directory or any(c.isspace() for c in server.directory):
            return None
        offset_ms = float(self.facts.get(label, {}).get("clock_offset_ms", 0.0) or 0.0)
        return f"sh {server.directory}/barrier.sh {instant_ns + round(offset_ms * 1e6)}"

    def why_lost(self, label: str, *, ask: bool = False) -> str:
        server = self.servers.get(label)
        return server.why_lost(ask=ask) if server else ""

    # --- stopping ------------------------------------------------------------------------------

    def stop(self) -> None:
        """Close every watcher's stdin (it stops fio's server and removes its directory), wait
        for that, then end the SSH connections. Safe to call more than once."""
        if self._stopped:
            return
        self._stopped = True
        self._quiet.set()
        if self._heartbeat.is_alive():
            self._heartbeat.join(timeout=5)
        for server in self.servers.values():
            if server.session is not None and server.session.stdin is not None:
                with contextlib.suppress(OSError):
                    server.session.stdin.close()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for server in self.servers.values():
            if server.session is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    server.session.wait(timeout=max(0.1, deadline - time.monotonic()))
                if server.session.poll() is None:
                    self.notices.append(f"client {server.client.label}: its fio server did not confirm it stopped; "
                                        f"the next run there ends it (marker {RUN_VAR}={server.token})")  # fmt: skip
        for server in self.servers.values():
            server.conn.close()
            if server.session is not None:
                stop_process(server.session)
        shutil.rmtree(self.control, ignore_errors=True)

    # --- helpers -------------------------------------------------------------------------------

    def _each(self, step: Callable[[RemoteServer], T]) -> None:
        """``step`` on every client at once; one UsageError naming every failure."""

        def guarded(server: RemoteServer) -> MountbenchError | None:
            try:
                step(server)
            except MountbenchError as exc:
                return exc
            return None

        servers = list(self.servers.values())
        with ThreadPoolExecutor(max_workers=min(AT_ONCE, max(1, len(servers)))) as pool:
            problems = [str(p) for p in pool.map(guarded, servers) if p is not None]
        if problems:
            raise UsageError("; ".join(problems))


def describe(conn: SshConnection, paths: list[str]) -> dict[str, Any]:
    """The client's host facts (and each path's filesystem there), over its SSH connection."""
    done = conn.run(sshscripts.FACTS_SCRIPT, *paths)
    if done.returncode != 0:
        raise UsageError(f"client {conn.client.label}: could not read its host facts over ssh "
                         f"({(done.stderr.strip().splitlines() or ['no message'])[-1][:200]})")  # fmt: skip
    return sshscripts.parse_facts(done.stdout)


def _readline(proc: subprocess.Popen, deadline: float) -> str | None:
    """The session's next output line, or None when it ended or the deadline passed."""
    import select

    assert proc.stdout is not None
    stream = proc.stdout
    buffer = getattr(proc, "_mb_buffer", b"")
    while b"\n" not in buffer:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([stream], [], [], remaining)
        if not ready:
            return None
        chunk = _read_some(stream)
        if not chunk:
            return None
        buffer += chunk
    line, _, rest = buffer.partition(b"\n")
    proc._mb_buffer = rest  # type: ignore[attr-defined]
    return line.decode(errors="replace").strip()


def _read_some(stream: Any) -> bytes:
    return os.read(stream.fileno(), 4096)
