"""A chosen round-trip time and bandwidth between a mount and its remote: toxiproxy in user
space, started and stopped by the cloud lab inside its network namespace (netns.py).

This kernel has no netem, so delay cannot come from ``tc``; toxiproxy works on any OS. One
proxy per RTT. Its toxics, in the order data meets them:

- ``bandwidth`` (KB/s) on each direction, when a bandwidth is set (the default is a home link,
  matrix.py), first: it reads from the sender no faster than the rate, so nothing queues in
  front of it;
- ``latency`` of the whole RTT on the requests (upstream) only. A request and its answer cross
  once each, so an HTTP exchange takes the same RTT as with half each way; but toxiproxy's
  latency toxic queues up to 1,024 chunks of 32 KiB per connection and never frees them when
  the client goes away mid-answer (rclone abandons range reads): on the answers' direction
  that held 2–23 GB here. Requests are small, and their direction closes cleanly.

Toxiproxy adds its own copy through user space even at 0 ms, so every mount goes through a
proxy, the 0 ms one included: the RTTs differ only by the delay.

Toxiproxy keeps some memory of every connection a client left mid-answer, with or without toxics
(rclone's abandoned range reads): ~17 MiB more after each 5-second random-read sample here, never
given back. It used to run under a Go soft memory limit (``GOMEMLIMIT=96MiB``) and be started
afresh only past 128 MiB; between the two the Go runtime collected all the time to stay under its
limit, and its CPU per 5-second sample went from 0.5 s to 5 s: every cloud mount slowed in the
samples that fell there (issue 49). So it runs with no memory limit (a ``GOMEMLIMIT`` in the
environment is not passed on), and the lab starts it afresh before every sample on a cloud mount
(CloudLab.fresh_delay, 0.06 s): every sample meets the same fresh proxy. Its memory is still
watched all the time (:class:`MemoryGuard`): past ``MEMORY_LIMIT``, far above what one sample
adds, it is killed and at once started again on the same ports (by the guard itself: a sample
whose reads hang on the dead proxy must not wait for the end of the sample, which may never come,
to get it back; every mount then hung on it), and the sample in flight fails with that reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs
import psutil

from mountbench.errors import ToolMissing
from mountbench.host import process as procs
from mountbench.labs.frame import start_daemon
from mountbench.labs.netns import HostLoopback, Network, PortPool
from mountbench.units import format_bytes

TOXIPROXY_FIX = (
    "build toxiproxy: scripts/install.sh --test (or GOBIN=$PWD/.venv/bin go install "
    "github.com/Shopify/toxiproxy/v2/cmd/server@latest && mv .venv/bin/server .venv/bin/toxiproxy-server)"
)
MEMORY_LIMIT = 1024**3  # the delay's resident memory may not pass this (a 256 MiB sequential read adds ~260 MiB)
WATCH_INTERVAL_S = 0.1


def toxiproxy_candidates() -> list[Path]:
    """Where the toxiproxy server is looked for, in order."""
    found = [Path(p) for p in (os.environ.get("MOUNTBENCH_TOXIPROXY"), shutil.which("toxiproxy-server")) if p]
    found.append(Path(sys.prefix) / "bin" / "toxiproxy-server")  # scripts/install.sh --test builds it there
    found.append(Path(platformdirs.user_cache_dir("mountbench")) / "bin" / "toxiproxy-server")
    return found


def toxiproxy_binary() -> Path | None:
    for path in toxiproxy_candidates():
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def require_toxiproxy() -> Path:
    path = toxiproxy_binary()
    if path is None:
        raise ToolMissing(f"the toxiproxy server is missing (the cloud lab's delay on the wire); {TOXIPROXY_FIX}")
    return path


@dataclass(frozen=True)
class Proxy:
    name: str
    port: int
    rtt_ms: int
    bandwidth_kbps: int | None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def toxics(rtt_ms: int, bandwidth_kbps: int | None) -> list[dict[str, Any]]:
    """The toxics of one proxy, in chain order (the module docstring says why this order)."""
    found: list[dict[str, Any]] = []
    if bandwidth_kbps:
        for stream in ("upstream", "downstream"):
            found.append({"name": f"bandwidth-{stream}", "type": "bandwidth", "stream": stream,
                          "attributes": {"rate": int(bandwidth_kbps)}})  # fmt: skip
    if rtt_ms > 0:
        found.append({"name": "latency-requests", "type": "latency", "stream": "upstream",
                      "attributes": {"latency": int(rtt_ms), "jitter": 0}})  # fmt: skip
    return found


class DelayProxy:
    """A toxiproxy server and one proxy per RTT in front of ``upstream_port``, in ``network``."""

    def __init__(
        self, upstream_port: int, log: Path, network: Network | None = None, ports: PortPool | None = None
    ) -> None:
        self.binary = require_toxiproxy()
        self.upstream_port = upstream_port
        self.log = log
        self.network: Network = network or HostLoopback()
        self.ports = ports or PortPool()
        self.api_port = self.ports.take()
        self.proc: subprocess.Popen[bytes] | None = None
        self.proxies: list[Proxy] = []
        self.guard: MemoryGuard | None = None

    def start(self) -> subprocess.Popen[bytes]:
        argv = self.network.argv([str(self.binary), "-host", "127.0.0.1", "-port", str(self.api_port)])
        # no soft memory limit: near one, the Go runtime collects all the time and slows the delay (issue 49)
        env = {key: value for key, value in os.environ.items() if key != "GOMEMLIMIT"}
        self.proc = start_daemon(
            argv, self.log, env=env, timeout=20.0, ready=lambda: self.network.listening(self.api_port),
            failure="toxiproxy did not start", error=lambda why: ToolMissing(f"{why}; {TOXIPROXY_FIX}"),
        )  # fmt: skip
        return self.proc

    def version(self) -> str:
        try:
            return self._call("GET", "/version").strip() or "toxiproxy"
        except OSError:
            return "toxiproxy"

    def add(self, name: str, rtt_ms: int, bandwidth_kbps: int | None = None, port: int | None = None) -> str:
        """A proxy delaying each request by ``rtt_ms`` (bandwidth-capped each way when given); its URL."""
        proxy = Proxy(name, port or self.ports.take(), rtt_ms, bandwidth_kbps)
        self._call("POST", "/proxies", {"name": name, "listen": f"127.0.0.1:{proxy.port}",
                                        "upstream": f"127.0.0.1:{self.upstream_port}"})  # fmt: skip
        for toxic in toxics(rtt_ms, bandwidth_kbps):
            self._call("POST", f"/proxies/{name}/toxics", toxic)
        if port is None:
            self.proxies.append(proxy)
        return proxy.url

    def restart(self) -> subprocess.Popen[bytes]:
        """Kill and start again on the same ports with the same proxies (rclone reconnects)."""
        if self.proc is not None:
            procs.stop_tree(self.proc, grace_s=1.0)
        proc = self.start()
        for proxy in self.proxies:
            self.add(proxy.name, proxy.rtt_ms, proxy.bandwidth_kbps, port=proxy.port)
        return proc

    def resident_bytes(self) -> int | None:
        if self.proc is None:
            return None
        try:
            return int(psutil.Process(self.proc.pid).memory_info().rss)
        except psutil.Error:
            return None

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> str:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://127.0.0.1:{self.api_port}{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")

        def send() -> str:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.read().decode(errors="replace")

        try:
            return self.network.call(send)
        except urllib.error.HTTPError as exc:
            raise ToolMissing(f"toxiproxy refused {method} {path}: {exc.read().decode(errors='replace')}") from None

    def stop(self) -> None:
        if self.guard is not None:
            self.guard.stop()
            self.guard = None
        if self.proc is not None:
            procs.stop_tree(self.proc, grace_s=2.0)
            self.proc = None


class MemoryGuard:
    """Watches the delay's resident memory every ``WATCH_INTERVAL_S``; past ``limit`` it kills
    toxiproxy at once (the limit cannot be passed by more than one interval's growth), remembers
    why, and calls ``on_trip`` with the stopped process (the lab: start it again on the same ports,
    recorded in its state) right away, from the watching thread. The lab fails the sample in flight with that reason."""

    def __init__(
        self,
        proxy: DelayProxy,
        limit: int = MEMORY_LIMIT,
        on_trip: Callable[[subprocess.Popen[bytes]], None] | None = None,
    ) -> None:
        self.proxy = proxy
        self.limit = limit
        self.on_trip = on_trip
        self.peak = 0
        self.tripped: str | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._watch, name="toxiproxy-memory", daemon=True)

    def start(self) -> MemoryGuard:
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(WATCH_INTERVAL_S):
            proc = self.proxy.proc
            rss = self.proxy.resident_bytes()
            if proc is None or rss is None:
                continue
            with self._lock:
                self.peak = max(self.peak, rss)
                if rss <= self.limit or self.tripped is not None:
                    continue
                procs.kill(proc)
                self.tripped = (
                    f"the delay proxy (toxiproxy) reached {format_bytes(rss)} of memory, over its "
                    f"{format_bytes(self.limit)} bound, and was stopped; this sample is void"
                )
            if self.on_trip is not None:  # back at once: rclone's retries reach it again
                try:
                    self.on_trip(proc)
                except Exception as exc:  # said with the sample, never lost in this thread
                    with self._lock:
                        self.tripped = f"{self.tripped}; starting it again failed: {exc}"

    def take(self) -> tuple[str | None, int]:
        """(why it tripped since the last call or None, the peak resident bytes since then); resets both."""
        with self._lock:
            found = self.tripped, self.peak
            self.tripped, self.peak = None, 0
        return found

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
