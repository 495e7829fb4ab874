"""A chosen round-trip time (and optionally bandwidth) between a mount and its remote:
toxiproxy in user space, on loopback, started and stopped by the cloud lab.

This kernel has no netem, so delay cannot come from ``tc``; toxiproxy works on any OS. One
proxy per RTT, each with a ``latency`` toxic of half the RTT on each direction (a request
and its answer each cross once), and a ``bandwidth`` toxic (KB/s) per direction when asked.
Toxiproxy adds its own copy through user space even at 0 ms, so every mount goes
through a proxy, the 0 ms one included: the RTTs differ only by the delay.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import platformdirs

from mountbench.errors import ToolMissing
from mountbench.host import process as procs

TOXIPROXY_FIX = (
    "build toxiproxy: scripts/install.sh --test (or GOBIN=$PWD/.venv/bin go install "
    "github.com/Shopify/toxiproxy/v2/cmd/server@latest && mv .venv/bin/server .venv/bin/toxiproxy-server)"
)


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


class DelayProxy:
    """A toxiproxy server on loopback and one proxy per RTT in front of ``upstream``."""

    def __init__(self, upstream_port: int, log: Path) -> None:
        self.binary = require_toxiproxy()
        self.upstream_port = upstream_port
        self.log = log
        self.api_port = procs.free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> subprocess.Popen[bytes]:
        argv = [str(self.binary), "-host", "127.0.0.1", "-port", str(self.api_port)]
        self.proc = procs.start(argv, log=self.log)
        if not procs.wait_until(lambda: procs.port_open(self.api_port), 20.0, self.proc):
            tail = procs.log_tail(self.log, 5)
            self.stop()
            raise ToolMissing(f"toxiproxy did not start: {tail or 'no output'}; {TOXIPROXY_FIX}")
        return self.proc

    def version(self) -> str:
        try:
            return self._call("GET", "/version").strip() or "toxiproxy"
        except OSError:
            return "toxiproxy"

    def add(self, name: str, rtt_ms: int, bandwidth_kbps: int | None = None) -> str:
        """A proxy delaying each direction by half ``rtt_ms`` (whole ms: the odd one downstream); its URL."""
        port = procs.free_port()
        self._call("POST", "/proxies", {"name": name, "listen": f"127.0.0.1:{port}",
                                        "upstream": f"127.0.0.1:{self.upstream_port}"})  # fmt: skip
        halves = {"upstream": rtt_ms // 2, "downstream": rtt_ms - rtt_ms // 2}
        for stream, delay in halves.items():
            if delay > 0:
                self._call("POST", f"/proxies/{name}/toxics", {
                    "name": f"latency-{stream}", "type": "latency", "stream": stream,
                    "attributes": {"latency": delay, "jitter": 0},
                })  # fmt: skip
            if bandwidth_kbps:
                self._call("POST", f"/proxies/{name}/toxics", {
                    "name": f"bandwidth-{stream}", "type": "bandwidth", "stream": stream,
                    "attributes": {"rate": int(bandwidth_kbps)},
                })  # fmt: skip
        return f"http://127.0.0.1:{port}"

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> str:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://127.0.0.1:{self.api_port}{path}", data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            raise ToolMissing(f"toxiproxy refused {method} {path}: {exc.read().decode(errors='replace')}") from None

    def stop(self) -> None:
        if self.proc is not None:
            procs.stop_tree(self.proc)
            self.proc = None
