"""The cloud lab's wire and mounts made by hand, as a careful person would make them to check the
lab: ``rclone serve webdav`` over a directory, ``toxiproxy-server`` with one proxy per RTT (the
bandwidth on each direction, the latency on the requests: the lab's wire), one ``rclone mount``
per cache mode and RTT, and fio run as a plain command line. Nothing of mountbench's lab code is
used (only its idea of the wire), so the two can be held against each other.

A sample by hand: a 64 MiB file of random bytes is put straight into the remote's directory, in a
directory the mount has never listed (so the mount knows nothing of it: cold), the page cache is
dropped, and ``fio --rw=randread --bs=4k --ioengine=psync --iodepth=1 --runtime=5`` reads it.
Warm (cache mode ``full``): the same fio once more untimed first, then only rclone's cache file of
that file evicted from the page cache (posix_fadvise DONTNEED), then the timed fio; and, for
reference, warm with nothing evicted.

toxiproxy's CPU time and resident memory are read around every sample (from /proc): what its own
behaviour was while the sample ran.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

TOXIPROXY = Path(sys.prefix) / "bin" / "toxiproxy-server"
FILE_BYTES = 64 * 1024**2
DEFAULT_BANDWIDTH = 12_500


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {limit:.0f} s")


def drop_caches() -> None:
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def evict(path: Path) -> None:
    """Only ``path``'s pages leave the page cache (written back first)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


@dataclass
class HandMount:
    mode: str
    rtt_ms: int
    path: Path
    remote: Path
    cache: Path
    proc: subprocess.Popen

    @property
    def label(self) -> str:
        return f"{self.mode}-{self.rtt_ms}ms"


@dataclass
class HandLab:
    """Everything started by hand in ``work``; a context manager that stops it all."""

    work: Path
    modes: tuple[str, ...] = ("off", "minimal", "writes", "full")
    rtts: tuple[int, ...] = (0, 20)
    bandwidth_kbps: int = DEFAULT_BANDWIDTH
    gomemlimit: str | None = None  # e.g. "96MiB": what the lab set before issue 49
    mounts: list[HandMount] = field(default_factory=list)
    procs: list[subprocess.Popen] = field(default_factory=list)
    toxiproxy: subprocess.Popen | None = None
    samples: int = 0

    def __enter__(self) -> HandLab:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, argv: list[str], log: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        out = open(self.work / "log" / log, "ab")  # noqa: SIM115 (the child keeps it)
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)  # fmt: skip
        out.close()
        self.procs.append(proc)
        return proc

    def start(self) -> None:
        for sub in ("remote", "mnt", "cache", "log"):
            (self.work / sub).mkdir(parents=True, exist_ok=True)
        self.serve_port = free_port()
        self._spawn(["rclone", "serve", "webdav", str(self.work / "remote"), "--addr",
                     f"127.0.0.1:{self.serve_port}", "--dir-cache-time", "0s"], "serve.log")  # fmt: skip
        wait_port(self.serve_port)
        self.api_port = free_port()
        self.proxy_ports = {rtt: free_port() for rtt in self.rtts}
        self.start_toxiproxy()
        for rtt in self.rtts:
            for mode in self.modes:
                self.mounts.append(self._mount(mode, rtt))

    def start_toxiproxy(self) -> None:
        env = dict(os.environ)
        env.pop("GOMEMLIMIT", None)
        if self.gomemlimit:
            env["GOMEMLIMIT"] = self.gomemlimit
        self.toxiproxy = self._spawn([str(TOXIPROXY), "-host", "127.0.0.1", "-port", str(self.api_port)],
                                     "toxiproxy.log", env)  # fmt: skip
        wait_port(self.api_port)
        for rtt, port in self.proxy_ports.items():
            name = f"rtt{rtt}"
            self._api("/proxies", {"name": name, "listen": f"127.0.0.1:{port}",
                                   "upstream": f"127.0.0.1:{self.serve_port}"})  # fmt: skip
            for stream in ("upstream", "downstream"):
                self._api(f"/proxies/{name}/toxics", {"name": f"bw-{stream}", "type": "bandwidth", "stream": stream,
                                                      "attributes": {"rate": self.bandwidth_kbps}})  # fmt: skip
            if rtt:
                self._api(f"/proxies/{name}/toxics", {"name": "lat", "type": "latency", "stream": "upstream",
                                                      "attributes": {"latency": rtt, "jitter": 0}})  # fmt: skip

    def restart_toxiproxy(self) -> None:
        assert self.toxiproxy is not None
        self.toxiproxy.terminate()
        self.toxiproxy.wait(10)
        self.procs.remove(self.toxiproxy)
        self.start_toxiproxy()

    def _api(self, path: str, body: dict) -> None:
        request = urllib.request.Request(f"http://127.0.0.1:{self.api_port}{path}", data=json.dumps(body).encode(),
                                         method="POST", headers={"Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(request, timeout=10) as answer:
            answer.read()

    def _mount(self, mode: str, rtt: int) -> HandMount:
        label = f"{mode}-{rtt}ms"
        (self.work / "remote" / label).mkdir()
        path = self.work / "mnt" / label
        path.mkdir()
        cache = self.work / "cache" / label
        proc = self._spawn(["rclone", "mount", f":webdav:{label}", str(path), "--webdav-url",
                            f"http://127.0.0.1:{self.proxy_ports[rtt]}", "--vfs-cache-mode", mode, "--cache-dir",
                            str(cache)], f"mount-{label}.log")  # fmt: skip
        deadline = time.monotonic() + 20
        while not os.path.ismount(path):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"rclone mount {label} did not come up")
            time.sleep(0.05)
        return HandMount(mode, rtt, path, self.work / "remote" / label, cache, proc)

    def toxiproxy_usage(self) -> tuple[float, int]:
        """(CPU seconds so far, resident bytes) of the running toxiproxy."""
        assert self.toxiproxy is not None
        proc = psutil.Process(self.toxiproxy.pid)
        times = proc.cpu_times()
        return times.user + times.system, proc.memory_info().rss

    def stop(self) -> None:
        for mount in self.mounts:
            subprocess.run(["fusermount3", "-u", "-z", str(mount.path)], capture_output=True)
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()
        shutil.rmtree(self.work, ignore_errors=True)

    # --- samples -------------------------------------------------------------------------

    def remote_only_file(self, mount: HandMount) -> Path:
        """A 64 MiB file only the remote has, in a directory the mount never listed; its path on the mount."""
        self.samples += 1
        name = f"hand-{self.samples}"
        (mount.remote / name).mkdir()
        with open(mount.remote / name / "file.bin", "wb") as f:
            for _ in range(FILE_BYTES // 2**20):
                f.write(os.urandom(2**20))
        return mount.path / name / "file.bin"

    def cache_file(self, mount: HandMount, on_mount: Path) -> Path | None:
        """rclone's cache file of ``on_mount`` (``--vfs-cache-mode full``), if it has one."""
        relative = on_mount.relative_to(mount.path)
        found = list((mount.cache / "vfs").glob(f"*/{mount.label}/{relative}"))
        return found[0] if found else None


def fio_randread(path: Path, runtime_s: int = 5) -> float:
    """Plain fio, the clouddrive preset's random read as its command line: IOPS."""
    argv = ["fio", "--name=random-read", f"--filename={path}", "--rw=randread", f"--size={FILE_BYTES}",
            "--ioengine=psync",
            "--bs=4k", "--iodepth=1", f"--runtime={runtime_s}", "--output-format=json"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"fio failed: {done.stderr.strip()[-300:]}")
    return float(json.loads(done.stdout[done.stdout.find("{") :])["jobs"][0]["read"]["iops"])


@dataclass(frozen=True)
class HandSample:
    label: str
    phase: str  # cold, warm (rclone's cache file evicted), warm-kept (nothing evicted)
    iops: float
    toxiproxy_cpu_s: float
    toxiproxy_rss: int


def sample(lab: HandLab, mount: HandMount, phase: str, restart: bool = False) -> HandSample:
    """One sample by hand on ``mount`` (the module docstring); ``restart``: a fresh toxiproxy first."""
    target = lab.remote_only_file(mount)
    if restart:
        lab.restart_toxiproxy()
    if phase == "cold" or mount.mode != "full":  # a mode without a read cache has no warm of its own
        drop_caches()
    else:
        fio_randread(target)  # the read the warm phase comes after (untimed)
        if phase == "warm":
            cached = lab.cache_file(mount, target)
            if cached is None:
                raise RuntimeError(f"no cache file of {target} in {mount.cache}")
            evict(cached)
    cpu0, _ = lab.toxiproxy_usage()
    iops = fio_randread(target)
    cpu1, rss = lab.toxiproxy_usage()
    os.unlink(mount.remote / target.parent.name / target.name)  # the mount never wrote it: fio reads only
    return HandSample(mount.label, phase, iops, cpu1 - cpu0, rss)
