"""A network namespace of the lab's own for QEMU and the servers its guest reaches over the
network (nfs-ganesha, the lab's sshd).

The guest reaches them through QEMU's user networking: its 10.0.2.2 is the loopback of the
network namespace QEMU runs in. On the host's own loopback every local user could reach them
too, and nfs-ganesha cannot tell the guest from anyone else there (AUTH_SYS carries no secret;
the guest's connections come from 127.0.0.1 like anyone's, from unprivileged ports). So when
the lab can (as root, with unshare, nsenter and ip), QEMU and those servers run in a fresh
namespace holding only a loopback: nothing outside it can connect to them. A holder process
keeps the namespace while the lab lives; every process started in it is started through
``nsenter --net=/proc/<holder>/ns/net``, which execs it (its pid stays the one mountbench
watches). Unix sockets (QEMU's command channel, virtiofsd's) are paths and work across it.

Without root the lab runs as before, on the host's loopback, and says so (a notice).
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mountbench.host import process as procs

READY_TIMEOUT_S = 10.0
INSIDE = "192.0.2.1/32"  # TEST-NET-1 (RFC 5737): an address for the namespace's inside only
WHY_NOT_ROOT = "a network namespace of the lab's own needs root"


@dataclass
class PrivateNetwork:
    """The holder of the lab's network namespace."""

    holder: subprocess.Popen[bytes]

    @property
    def path(self) -> str:
        return f"/proc/{self.holder.pid}/ns/net"

    def prefix(self) -> list[str]:
        """What a command line gets to run in the namespace (nsenter execs it: same pid)."""
        return [_tool("nsenter"), f"--net={self.path}", "--"]

    def listening(self, port: int) -> bool:
        """Does a TCP socket listen on ``port`` in the namespace (read from /proc, as nothing
        outside it can connect)?"""
        return any(at == port for _address, at, _inode in procs.tcp_listeners(f"/proc/{self.holder.pid}/net"))

    def close(self) -> None:
        procs.stop_tree(self.holder)


def why_not() -> str:
    """'' when the lab can have a network namespace of its own, else why not."""
    if os.geteuid() != 0:
        return WHY_NOT_ROOT
    missing = [tool for tool in ("unshare", "nsenter", "ip") if _which(tool) is None]
    if missing:
        return f"{', '.join(missing)} missing (apt-get install util-linux iproute2)"
    return ""


def private_network(log: Path) -> PrivateNetwork:
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
    return PrivateNetwork(holder)


def _which(tool: str) -> str | None:
    return shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin:/usr/bin:/bin")


def _tool(tool: str) -> str:
    return _which(tool) or tool
