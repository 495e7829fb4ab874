"""Client machines mountbench starts over SSH (``run --client ssh://HOST``): their host
facts, a ``fio --server`` started there and reached through an SSH tunnel, and everything
stopped again when the run ends.

On each client (Linux, POSIX sh, fio on the PATH of an SSH session):

- the facts: kernel, CPU, fio's version, and what each target path is there (findmnt);
- a run directory ``${XDG_CACHE_HOME:-~/.cache}/mountbench/remote/<token>/`` (the token
  is new for every run and client: several clients may be one machine) holding the
  watcher's pid; fio's server is started in it with the environment variable
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

fio's server listens on the client's loopback only and the controller reaches it through
the SSH connection (``ssh -O forward -L``): fio's protocol has no authentication, so it
is never exposed to the network, and a firewall that lets only SSH through is no
obstacle. The tunnel carries fio's job files and results, never the I/O being measured.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mountbench.clients.spec import FIO_PORT, ClientSpec
from mountbench.clients.sshconn import SshConnection, control_directory
from mountbench.clients.sshconn import stop as stop_process
from mountbench.errors import MountbenchError, UsageError
from mountbench.fio.binary import FioInfo, parse_fio_version

RUN_VAR = "MOUNTBENCH_REMOTE_RUN"  # the marker on fio's server and every process it forks
WATCH_VAR = "MOUNTBENCH_REMOTE_WATCH"  # the marker on the watcher: its run is alive
START_TIMEOUT_S = 30.0
HEARTBEAT_S = 2.0  # the controller tells each watcher it is still there this often
CHECK_S = 20.0  # a watcher that heard nothing for this long (to twice this) stops its fio server
STOP_TIMEOUT_S = 15.0
PORT_TRIES = 20
UNKNOWN = "unknown"
T = TypeVar("T")

_COMMON = r"""
base="${XDG_CACHE_HOME:-$HOME/.cache}/mountbench/remote"
marked() {  # pids of the processes carrying the marker $1
    grep -lsxzF "MOUNTBENCH_REMOTE_RUN=$1" /proc/[0-9]*/environ 2>/dev/null | sed 's#^/proc/\([0-9]*\)/.*#\1#'
}
end_marked() {  # end the processes carrying the marker $1; how many there were
    n=0
    for sig in TERM KILL; do
        pids=$(marked "$1")
        [ -z "$pids" ] && break
        [ $sig = TERM ] && n=$(echo $pids | wc -w)
        kill -$sig $pids 2>/dev/null
        i=0; while [ $i -lt 20 ] && [ -n "$(marked "$1")" ]; do sleep 0.1; i=$((i+1)); done
    done
    echo $n
}
"""

# $1: this client's token (the run's token, "-", its index), $2: address to bind, $3: first port
# to try, $4: seconds without a heartbeat to stop
_SERVE = (
    _COMMON
    + r"""
token=$1; bind=$2; port=$3
mkdir -p "$base" || { echo "ERROR cannot create $base"; exit 1; }
for old in "$base"/*; do
    [ -d "$old" ] || continue
    name=${old##*/}
    case "$name" in "${token%-*}"-*) continue ;; esac  # this run's (several clients may share a machine)
    w=$(cat "$old/watcher.pid" 2>/dev/null)
    if [ -n "$w" ] && grep -qsxzF "MOUNTBENCH_REMOTE_WATCH=$name" /proc/$w/environ; then continue; fi
    n=$(end_marked "$name")
    rm -rf "$old"
    echo "LEFTOVER $name $n"
done
dir="$base/$token"
mkdir -p "$dir" && cd "$dir" || { echo "ERROR cannot create $dir"; exit 1; }
echo $$ > watcher.pid
: > heartbeat; : > checked
# the start barrier: a job's exec_prerun, waiting until the instant (epoch ns, this clock) given
cat > barrier.sh <<'BARRIER'
now=$(date +%s%N); d=$(( $1 - now ))
[ $d -gt 0 ] && sleep "$(( d / 1000000000 )).$(printf '%09d' $(( d % 1000000000 )))"
exit 0
BARRIER
stopping() {
    end_marked "$token" > /dev/null
    for w in $(grep -lsxzF "MOUNTBENCH_REMOTE_WATCH=$token" /proc/[0-9]*/environ | sed 's#^/proc/\([0-9]*\)/.*#\1#'); do
        [ "$w" != $$ ] && kill "$w" 2>/dev/null
    done
    cd /; rm -rf "$dir"
}
trap 'stopping; exit 0' HUP INT TERM
command -v fio > /dev/null || { echo "ERROR fio is not installed"; stopping; exit 1; }
hexport() { printf ':%04X 00000000:0000 0A' "$1"; }
tries=0; ready=""
while [ $tries -lt 20 ] && [ -z "$ready" ]; do
    MOUNTBENCH_REMOTE_RUN=$token fio --server=ip:$bind,$port > fio-server.log 2>&1 < /dev/null &
    pid=$!
    i=0
    while [ $i -lt 100 ]; do
        if ! kill -0 $pid 2>/dev/null; then break; fi
        if grep -qs "$(hexport $port)" /proc/net/tcp; then ready=$port; break; fi
        sleep 0.05; i=$((i+1))
    done
    if [ -z "$ready" ]; then kill $pid 2>/dev/null; wait $pid 2>/dev/null; port=$((port+1)); tries=$((tries+1)); fi
done
if [ -z "$ready" ]; then echo "ERROR fio --server did not listen: $(tail -n 1 fio-server.log)"; stopping; exit 1; fi
# the controller writes a line every HEARTBEAT_S; none for CHECK_S: it is gone even if this
# session lives on (its network went and sshd has not noticed): stop as if the session had ended
( while :; do
    i=0; while [ $i -lt $4 ]; do sleep 1; i=$((i+1)); done
    if [ ! heartbeat -nt checked ]; then kill -TERM $$; exit 0; fi
    touch checked
  done ) &
echo "READY $ready $pid $dir"
while read -r line; do touch heartbeat; done
stopping
echo STOPPED
"""
)

_FACTS = r"""
echo "hostname=$(cat /proc/sys/kernel/hostname 2>/dev/null || hostname)"
echo "kernel=$(uname -r)"
echo "arch=$(uname -m)"
echo "os=$(uname -s)"
echo "cpu_model=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
echo "cpu_count=$(grep -c '^processor' /proc/cpuinfo 2>/dev/null)"
echo "ram_kib=$(grep -m1 MemTotal /proc/meminfo 2>/dev/null | tr -s ' ' | cut -d' ' -f2)"
if command -v fio > /dev/null; then echo "fio_version=$(fio --version 2>&1 | head -n 1)"; else echo "fio_version="; fi
for p in "$@"; do
    if [ -e "$p" ]; then
        m=$(findmnt -n -o FSTYPE,SOURCE,TARGET -T "$p" 2>/dev/null | head -n 1 | tr -s ' ')
        [ -z "$m" ] && m="$(stat -f -c %T "$p" 2>/dev/null) ? ?"
        echo "path=$p|$m"
    else
        echo "path=$p|missing"
    fi
done
"""

# $1: fio server's pid, $2: token: is it still ours and running?
_ALIVE = 'grep -qsxzF "MOUNTBENCH_REMOTE_RUN=$2" /proc/$1/environ'
_CLOCK = "while read -r _; do date +%s%N; done"
CLOCK_ROUNDS = 9


@dataclass
class RemoteServer:
    """One client's SSH connection, its watcher session and its tunnelled fio server."""

    client: ClientSpec  # as given (ssh://…)
    conn: SshConnection
    token: str
    session: subprocess.Popen | None = None
    remote_port: int = 0
    fio_pid: int = 0  # fio's server on the client
    directory: str = ""  # its run directory there (holds barrier.sh)
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
                done = self.conn.run(_ALIVE, str(self.fio_pid), self.token, timeout=10)
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

    def start(self) -> dict[str, ClientSpec]:
        """Log in to every client, check its fio, start its server and tunnel: label -> the
        client as fio reaches it. Raises UsageError naming every client that failed (and
        then stops whatever was started)."""
        try:
            for server in self.servers.values():  # from this thread: see sshconn (PDEATHSIG)
                server.conn.start()
            self._each(lambda s: s.conn.wait_ready())
            self._each(self._check_facts)
            for server in self.servers.values():
                server.session = server.conn.start_session(
                    _SERVE, server.token, "127.0.0.1", str(FIO_PORT), str(int(CHECK_S)), env={WATCH_VAR: server.token}
                )
            self._each(self._await_server)
            for index, server in enumerate(self.servers.values()):
                local = (_loopback(index), _free_port(_loopback(index)))
                server.conn.forward(local, ("127.0.0.1", server.remote_port))
                server.dialed = server.client.dialed(*local)
                self.facts[server.client.label]["fio_server"] = (
                    f"127.0.0.1:{server.remote_port} there, reached through ssh -L {local[0]}:{local[1]}"
                )
            self._each(self._clock)
            self._heartbeat.start()
        except BaseException:
            self.stop()
            raise
        for server in self.servers.values():
            for line in server.leftovers:
                self.notices.append(f"client {server.client.label}: {line}")
        return {label: s.dialed for label, s in self.servers.items() if s.dialed is not None}

    def _check_facts(self, server: RemoteServer) -> None:
        facts = describe(server.conn, [])
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
                _, port, pid, directory = (*line.split(maxsplit=3), "0", "")[:4]
                server.remote_port, server.fio_pid = int(port), int(pid) if pid.isdigit() else 0
                server.directory = directory
                return

    def _clock(self, server: RemoteServer) -> None:
        """The client's clock against this one's (its own timestamps give the start skew): one
        session answers each line it reads with its time; the best of CLOCK_ROUNDS round trips
        (offset = its time - the round trip's midpoint, uncertain by half the round trip)."""
        session = server.conn.start_session(_CLOCK, env={})
        best: tuple[float, float] | None = None
        try:
            assert session.stdin is not None
            deadline = time.monotonic() + 15
            for _ in range(CLOCK_ROUNDS):
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
        """What each target path is on each client, as it sees it."""

        def one(server: RemoteServer) -> None:
            described = describe(server.conn, list(paths)).get("paths", {})
            with self._lock:
                self.facts.setdefault(server.client.label, {})["paths"] = described

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
        with ThreadPoolExecutor(max_workers=min(16, max(1, len(servers)))) as pool:
            problems = [str(p) for p in pool.map(guarded, servers) if p is not None]
        if problems:
            raise UsageError("; ".join(problems))


def describe(conn: SshConnection, paths: list[str]) -> dict[str, Any]:
    """The client's host facts (and each path's filesystem there), over its SSH connection."""
    done = conn.run(_FACTS, *paths)
    if done.returncode != 0:
        raise UsageError(f"client {conn.client.label}: could not read its host facts over ssh "
                         f"({(done.stderr.strip().splitlines() or ['no message'])[-1][:200]})")  # fmt: skip
    return parse_facts(done.stdout)


def parse_facts(text: str) -> dict[str, Any]:
    """The facts script's ``key=value`` lines as host facts (the names content.HOST_FACTS uses)."""
    facts: dict[str, Any] = {}
    paths: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        if key == "path":
            path, _, mount = value.partition("|")
            if mount == "missing":
                paths[path] = {"fstype": UNKNOWN, "error": "no such file or directory"}
                continue
            fstype, source, target = ([*mount.split(" "), UNKNOWN, UNKNOWN, UNKNOWN])[:3]
            paths[path] = {"fstype": fstype or UNKNOWN, "mount_source": source, "mount_point": target}
        elif key == "cpu_count":
            facts[key] = int(value) if value.isdigit() else UNKNOWN
        elif key == "ram_kib":
            if value.isdigit():
                facts["ram_bytes"] = int(value) * 1024
        else:
            facts[key] = value.strip() or UNKNOWN if key != "fio_version" else value.strip()
    facts["paths"] = paths
    return facts


def _loopback(index: int) -> str:
    """A loopback address of its own for each client's tunnel end, so fio's messages (which
    name the address) tell the clients apart."""
    return f"127.42.{index // 250}.{index % 250 + 1}"


def _free_port(address: str) -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


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
