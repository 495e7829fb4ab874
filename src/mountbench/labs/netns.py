"""A network namespace of the lab's own, so that what a lab serves is reachable by the run alone.

The QEMU lab's NFS server and sshd (which its guest reaches at 10.0.2.2: the loopback of the
namespace QEMU runs in), the cloud lab's remote, delay proxy and each mount's remote control all
listen on TCP. On the machine's own loopback every local user could reach them (nfs-ganesha cannot
tell the guest from anyone else there: AUTH_SYS carries no secret). So when a lab can (as root,
with unshare, nsenter and ip), they run in a fresh namespace holding only a loopback: nothing
outside it can connect to them (entering it needs CAP_SYS_ADMIN). A holder process keeps the
namespace while the lab lives and dies with mountbench (PR_SET_PDEATHSIG), taking the namespace
with it even after a ``kill -9``: nothing is left to sweep. Every process started in it is started
through ``nsenter --net=/proc/<holder>/ns/net``, which execs it (its PID stays the one mountbench
watches). This process reaches the listeners from a short-lived thread that joined the namespace
(``setns`` moves one thread; the sockets it opens there stay in the namespace). Unix sockets
(QEMU's command channel, virtiofsd's) are paths and work across it; FUSE mounts show on the
machine (nsenter enters the network namespace only).

Without root a lab runs on the machine's loopback (:class:`HostLoopback`) and says so.
"""

from __future__ import annotations

import ctypes
import os
import select
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from mountbench.host import process as procs

READY_TIMEOUT_S = 10.0
INSIDE = "192.0.2.1/32"  # TEST-NET-1 (RFC 5737): an address for the namespace's inside only
WHY_NOT_ROOT = "a network namespace of the lab's own needs root"
CLONE_NEWNET = 0x40000000
T = TypeVar("T")


@dataclass
class Namespace:
    """The lab's network namespace, held by ``holder``."""

    holder: subprocess.Popen[bytes]

    @property
    def path(self) -> str:
        return f"/proc/{self.holder.pid}/ns/net"

    def argv(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the namespace (nsenter execs it: the PID is the program's own)."""
        return [_tool("nsenter"), f"--net={self.path}", "--", *argv]

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

        thread = threading.Thread(target=body, name="lab-netns", daemon=True)
        thread.start()
        thread.join()
        if "error" in found:
            raise found["error"]  # type: ignore[misc]
        return found["value"]  # type: ignore[return-value]

    def listening(self, port: int) -> bool:
        """Does a TCP socket listen on ``port`` in the namespace (read from /proc)?"""
        return any(at == port for _address, at, _inode in procs.tcp_listeners(f"/proc/{self.holder.pid}/net"))

    def close(self) -> None:
        """The namespace ends with its holder (its processes must be gone: it lives while one runs in it)."""
        procs.stop_tree(self.holder)


class HostLoopback:
    """No namespace (not root): the machine's own loopback."""

    def argv(self, argv: list[str]) -> list[str]:
        return argv

    def call(self, work: Callable[[], T]) -> T:
        return work()

    def listening(self, port: int) -> bool:
        return procs.port_open(port)

    def close(self) -> None:
        return None


Network = Namespace | HostLoopback


def why_not() -> str:
    """'' when a lab can have a network namespace of its own, else why not."""
    if os.geteuid() != 0:
        return WHY_NOT_ROOT
    missing = [tool for tool in ("unshare", "nsenter", "ip") if _which(tool) is None]
    if missing:
        return f"{', '.join(missing)} missing (apt-get install util-linux iproute2)"
    return ""


def private_network(log: Path) -> Namespace:
    """A new network namespace with its loopback up, held until close()."""
    ip = _tool("ip")
    # besides the loopback, one address on a veth pair whose both ends stay inside: nfs-ganesha
    # resolves its Bind_addr with AI_ADDRCONFIG, which counts no loopback address ("No IP address
    # found for 127.0.0.1"); nothing outside the namespace can reach that address either
    script = (
        f"{ip} link set lo up && {ip} link add mb0 type veth peer name mb1 && {ip} addr add {INSIDE} dev mb0 && "
        f"{ip} link set mb0 up && {ip} link set mb1 up && echo up && exec sleep 2147483647"
    )
    holder = procs.start([_tool("unshare"), "--net", "--", "sh", "-c", script], log=log, stdout=subprocess.PIPE,
                         death_signal=signal.SIGKILL)  # fmt: skip
    assert holder.stdout is not None
    ready, _, _ = select.select([holder.stdout], [], [], READY_TIMEOUT_S)
    line = os.read(holder.stdout.fileno(), 64) if ready else b""
    if line.strip() != b"up":
        procs.stop_tree(holder)
        raise OSError(f"could not make the lab's network namespace: {procs.log_tail(log, 2) or 'no output'}")
    return Namespace(holder)


def lab_network(log: Path) -> tuple[Network, str]:
    """The lab's network: its own namespace when it can have one, else the machine's loopback and why."""
    why = why_not()
    return (HostLoopback(), why) if why else (private_network(log), "")


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


def _which(tool: str) -> str | None:
    return shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin:/usr/bin:/bin")


def _tool(tool: str) -> str:
    return _which(tool) or tool
