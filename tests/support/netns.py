"""Client machines on one host: network namespaces joined to the root namespace by veth
pairs, created and removed by the test.

Each namespace gets one address, on its own end of the pair; the root namespace gets no
address at all, only a host route to each namespace's address through its veth end
(its replies go back over the namespace's default route on the same pair). Mounts are
shared with the root namespace (``ip netns exec`` copies the mount table), so a tmpfs
mounted by the test is one shared directory seen by every "client".

``clients(n)`` yields ``n`` :class:`NetNs`; ``NetNs.fio_server()`` and ``NetNs.serve()``
start ``fio --server`` or ``mountbench serve`` inside, stopped (whole process group) on exit.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from support.realmounts import Unavailable, require_root

FIO_PORT = 8765
FALLBACK_METRIC = 65000


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise Unavailable(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


@dataclass
class Server:
    """A server process started inside a namespace (its own process group)."""

    proc: subprocess.Popen
    address: str
    port: int
    log: str = ""

    @property
    def client(self) -> str:
        return f"{self.address}:{self.port}"

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """The server and everything it started (`mountbench serve` runs fio in a group of its own)."""
        import psutil

        with suppress(psutil.NoSuchProcess):
            for child in psutil.Process(self.proc.pid).children(recursive=True):
                with suppress(psutil.NoSuchProcess):
                    child.send_signal(sig)
        with suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)
        with suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    def alive(self) -> bool:
        return self.proc.poll() is None


@dataclass
class NetNs:
    name: str
    address: str
    host_end: str
    servers: list[Server] = field(default_factory=list)

    def command(self, *argv: str) -> list[str]:
        return ["ip", "netns", "exec", self.name, *argv]

    def fio_server(self, port: int = FIO_PORT) -> Server:
        """Plain ``fio --server`` bound to this namespace's address."""
        fio = shutil.which("fio")
        if fio is None:
            raise Unavailable("fio is not installed")
        return self._start(self.command(fio, f"--server=ip:{self.address},{port}"), port)

    def serve(self, port: int = FIO_PORT, env: dict[str, str] | None = None) -> Server:
        """``mountbench serve`` bound to this namespace's address (fio on port, agent on port + 1)."""
        argv = self.command(sys.executable, "-m", "mountbench", "serve", "--bind", self.address, "--port", str(port))
        server = self._start(argv, port, env)
        _wait_port(self.address, port + 1, server.proc, timeout=30)
        return server

    def _start(self, argv: list[str], port: int, env: dict[str, str] | None = None) -> Server:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
        server = Server(proc, self.address, port)
        self.servers.append(server)
        _wait_port(self.address, port, proc, timeout=30)
        return server

    def stop(self) -> None:
        for server in self.servers:
            server.kill(signal.SIGTERM)
            if server.alive():
                server.kill()
            with suppress(subprocess.TimeoutExpired, ValueError):
                out, _ = server.proc.communicate(timeout=5)
                server.log = (out or b"").decode(errors="replace")
        self.servers.clear()


def _wait_port(host: str, port: int, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            raise Unavailable(f"server exited with {proc.returncode} before listening on {host}:{port}: {out[-500:]}")
        with suppress(OSError), socket.create_connection((host, port), timeout=1):
            return
        time.sleep(0.1)
    raise Unavailable(f"nothing listens on {host}:{port} after {timeout:g} s")


def _prefix() -> tuple[str, int]:
    """Names and an address block unlikely to collide with another test process."""
    tag = os.getpid() % 100000
    return f"mb{tag}", 200 + os.getpid() % 50


def _drop_routes(address: str) -> None:
    """Every host route to ``address`` (the veth route, the fallback, a cut-off's unreachable)."""
    for _ in range(8):
        if _ip("route", "del", f"{address}/32", check=False).returncode != 0:
            return


def _own_machine_id(name: str) -> None:
    """A machine-id of the namespace's own: ``ip netns exec`` bind-mounts /etc/netns/NAME/*
    over /etc, so what runs inside (sshd's sessions, serve) sees another machine, as mountbench
    tells machines apart by machine-id and boot id (the boot id stays the host's)."""
    directory = Path("/etc/netns") / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "machine-id").write_text(os.urandom(16).hex() + "\n")


def _sweep(name: str, host_end: str, address: str) -> None:
    """What a killed earlier process with this pid left: its names carry the pid, so they are
    stale here (CI saw a cut-off route outlive its run and every client test skipped)."""
    _ip("netns", "del", name, check=False)
    _ip("link", "del", host_end, check=False)
    shutil.rmtree(f"/etc/netns/{name}", ignore_errors=True)
    _drop_routes(address)


@contextmanager
def namespace(index: int) -> Iterator[NetNs]:
    require_root()
    if shutil.which("ip") is None:
        raise Unavailable("the ip command is missing (apt-get install iproute2)")
    tag, block = _prefix()
    name, host_end, ns_end = f"{tag}n{index}", f"{tag}h{index}", f"{tag}c{index}"
    address = f"10.{block}.{index}.2"
    _sweep(name, host_end, address)
    with ExitStack() as undo:
        undo.callback(_drop_routes, address)  # last: a cut-off route a killed test left behind
        _ip("netns", "add", name)
        undo.callback(_ip, "netns", "del", name, check=False)
        _own_machine_id(name)
        undo.callback(shutil.rmtree, f"/etc/netns/{name}", ignore_errors=True)
        _ip("link", "add", host_end, "type", "veth", "peer", "name", ns_end)
        undo.callback(_ip, "link", "del", host_end, check=False)  # takes its peer and the route with it
        _ip("link", "set", ns_end, "netns", name)
        _ip("link", "set", host_end, "up")
        _ip("-n", name, "link", "set", "lo", "up")
        _ip("-n", name, "addr", "add", f"{address}/32", "dev", ns_end)
        _ip("-n", name, "link", "set", ns_end, "up")
        _ip("-n", name, "route", "add", "default", "dev", ns_end)
        _ip("route", "add", f"{address}/32", "dev", host_end)
        # should the veth route die (a link set down), packets for the address must not leave by the
        # default route: a fallback that refuses them here, removed last
        _ip("route", "add", "unreachable", f"{address}/32", "metric", str(FALLBACK_METRIC))
        undo.callback(_ip, "route", "del", "unreachable", f"{address}/32", "metric", str(FALLBACK_METRIC),
                      check=False)  # fmt: skip
        ns = NetNs(name, address, host_end)
        undo.callback(ns.stop)
        yield ns


@contextmanager
def clients(count: int) -> Iterator[list[NetNs]]:
    """``count`` namespaces, each a client machine with its own address."""
    with ExitStack() as stack:
        yield [stack.enter_context(namespace(i + 1)) for i in range(count)]


def cut_off(ns: NetNs) -> None:
    """Make the namespace unreachable from here (No route to host) without taking a link down."""
    _ip("route", "replace", "unreachable", f"{ns.address}/32")


def reconnect(ns: NetNs) -> None:
    _ip("route", "replace", f"{ns.address}/32", "dev", ns.host_end)


def run_cut_off_mid_sample(
    proc: subprocess.Popen, ns: NetNs, wait_for_sample: Callable[[], None]
) -> tuple[int, str, float]:
    """Cut ``ns`` off about a second into the run's next sample (``wait_for_sample`` returns once
    the one before is stored), let the run end, and reconnect: (exit code, stderr, seconds the
    run took after the cut)."""
    try:
        wait_for_sample()
        time.sleep(1.0)
        cut_off(ns)
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=180)
        return proc.returncode, err, time.monotonic() - t0
    finally:
        reconnect(ns)
        if proc.poll() is None:
            proc.kill()


def leftovers() -> list[str]:
    """Namespaces or links of this process still present (should be none after the test)."""
    tag, _ = _prefix()
    names = _ip("netns", "list", check=False).stdout.split()
    links = _ip("-o", "link", "show", check=False).stdout
    etc = [f"/etc/netns/{p.name}" for p in Path("/etc/netns").glob(f"{tag}n*")] if Path("/etc/netns").is_dir() else []
    return (
        [n for n in names if n.startswith(tag)]
        + [line.split(":")[1].strip() for line in links.splitlines() if f" {tag}h" in line]
        + etc
    )
