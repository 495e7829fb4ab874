"""A network namespace of the cloud lab's own, so that what it serves is reachable by the run alone.

``rclone serve webdav`` (the remote), toxiproxy (its API and one proxy per RTT) and each mount's
remote control listen on TCP. Started inside a namespace made for the run (``ip netns add``,
only its loopback up), they listen on that namespace's 127.0.0.1, which no other process of the
machine can reach: another user's connection to their ports is refused (entering the
namespace needs CAP_SYS_ADMIN). The FUSE mounts still show on the machine: ``nsenter --net``
enters the network namespace only, never the mount namespace.

This process reaches those listeners from a short-lived thread that joined the namespace
(``setns`` moves one thread); the sockets it opens there stay in the namespace.

Without root (no ``ip netns add``) the lab runs on the machine's own loopback and says so: the
remote and the remote controls then still need a password only the run holds, but toxiproxy's
API has none (it cannot take one).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from mountbench.host import process as procs

CLONE_NEWNET = 0x40000000
NETNS_DIR = Path("/run/netns")
PREFIX = "mountbench-cloudlab-"
T = TypeVar("T")


def can_isolate() -> bool:
    """Root with ip and nsenter: the lab can make a namespace of its own."""
    return os.geteuid() == 0 and shutil.which("ip") is not None and shutil.which("nsenter") is not None


class LabNetwork:
    """One named network namespace (loopback only), made for one run and removed with it."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name or f"{PREFIX}{secrets.token_hex(4)}"
        self.path = NETNS_DIR / self.name

    def create(self) -> LabNetwork:
        _ip("netns", "add", self.name)
        try:
            _ip("-n", self.name, "link", "set", "lo", "up")
        except OSError:
            self.remove()
            raise
        return self

    def argv(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the namespace (nsenter execs it: the PID is the program's own)."""
        return ["nsenter", f"--net={self.path}", "--", *argv]

    def call(self, work: Callable[[], T]) -> T:
        """``work()`` in a thread of its own that joined the namespace; its result or its exception."""
        libc = ctypes.CDLL(None, use_errno=True)
        found: dict[str, object] = {}

        def body() -> None:
            try:
                fd = os.open(self.path, os.O_RDONLY)
                try:
                    if libc.setns(fd, CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), f"setns into {self.path}")
                finally:
                    os.close(fd)
                found["value"] = work()
            except BaseException as exc:  # handed to the caller's thread below
                found["error"] = exc

        thread = threading.Thread(target=body, name=f"netns-{self.name}", daemon=True)
        thread.start()
        thread.join()
        if "error" in found:
            raise found["error"]  # type: ignore[misc]
        return found["value"]  # type: ignore[return-value]

    def remove(self) -> None:
        """Remove the namespace (its processes must be gone: a namespace lives while one runs in it)."""
        if self.path.exists():
            with contextlib.suppress(OSError):
                _ip("netns", "delete", self.name)


class HostNetwork:
    """No namespace (not root): the machine's own loopback, said in a note."""

    name = ""

    def argv(self, argv: list[str]) -> list[str]:
        return argv

    def call(self, work: Callable[[], T]) -> T:
        return work()

    def remove(self) -> None:
        return None


Network = LabNetwork | HostNetwork

NOT_ISOLATED = (
    "not root: the cloud lab's servers listen on this machine's loopback; the remote and rclone's remote "
    "controls take only a password this run holds, but toxiproxy's API takes none (any local user could change "
    "the delay); run as root for a network namespace of the lab's own"
)


class PortPool:
    """Ports for the lab's listeners: free on this machine now, and never one handed out before (the
    kernel may offer a port again once its probe socket closed; two listeners of one namespace would
    then collide)."""

    def __init__(self) -> None:
        self.taken: set[int] = set()

    def take(self) -> int:
        while True:
            port = procs.free_port()
            if port not in self.taken:
                self.taken.add(port)
                return port


def remove_named(name: str) -> None:
    """Remove a dead run's namespace by the name its state recorded (never by a pattern)."""
    if name.startswith(PREFIX) and (NETNS_DIR / name).exists():
        LabNetwork(name).remove()


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    if done.returncode != 0:
        raise OSError(f"ip {' '.join(args)}: {done.stderr.strip() or f'exit {done.returncode}'}")
