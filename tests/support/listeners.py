"""What processes listen on, read from /proc, and whether another user can reach it.

``listening(pids)`` finds every socket the given processes hold that takes connections: TCP
sockets in LISTEN, bound UDP sockets, and listening unix sockets (with their path), each
read from the network namespace of the process holding it. ``attempt_as(user, ...)``
tries to connect to each one as another user (``runuser``), inside that namespace, and says
what happened: the test's proof that nobody but the run reaches what the run started.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

LISTENING_UNIX = "00010000"  # __SO_ACCEPTCON in /proc/net/unix's Flags column
TCP_LISTEN = "0A"


@dataclass(frozen=True)
class Listener:
    kind: str  # "tcp", "tcp6", "udp", "udp6", "unix"
    where: str  # "127.0.0.1:8765", "[::1]:80", or a unix socket's path ("@name" if abstract)
    pid: int  # a process holding it (its network namespace is the one to try it in)
    command: str  # that process's command name


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        entries = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for entry in entries:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{entry}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    return inodes


def _inet(hexaddr: str, v6: bool) -> str:
    address, port = hexaddr.split(":")
    raw = bytes.fromhex(address)
    if v6:
        words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
        text = ":".join(b"".join(words)[i : i + 2].hex() for i in range(0, 16, 2))
        return f"[{text}]:{int(port, 16)}"
    return f"{'.'.join(str(b) for b in raw[::-1])}:{int(port, 16)}"


def _table(pid: int, name: str) -> list[list[str]]:
    try:
        lines = Path(f"/proc/{pid}/net/{name}").read_text().splitlines()[1:]
    except OSError:
        return []
    return [line.split() for line in lines]


def listening(pids: Iterable[int]) -> list[Listener]:
    """Every socket taking connections that one of ``pids`` holds."""
    found: dict[tuple[str, str], Listener] = {}
    for pid in pids:
        inodes = socket_inodes(pid)
        if not inodes:
            continue
        try:
            command = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        for name in ("tcp", "tcp6", "udp", "udp6"):
            for row in _table(pid, name):
                if len(row) > 9 and row[9] in inodes and (row[3] == TCP_LISTEN or name.startswith("udp")):
                    key = (name, _inet(row[1], name.endswith("6")))
                    found.setdefault(key, Listener(name, key[1], pid, command))
        for row in _table(pid, "unix"):
            if len(row) >= 8 and row[6] in inodes and row[3] == LISTENING_UNIX:
                key = ("unix", row[7])
                found.setdefault(key, Listener("unix", row[7], pid, command))
    return sorted(found.values(), key=lambda item: (item.kind, item.where))


_ATTEMPT = r"""
import json, socket, sys
out = []
for kind, where in json.loads(sys.argv[1]):
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        address = "\0" + where[1:] if where.startswith("@") else where
    else:
        host, _, port = where.rpartition(":")
        s = socket.socket(socket.AF_INET6 if kind.endswith("6") else socket.AF_INET,
                          socket.SOCK_DGRAM if kind.startswith("udp") else socket.SOCK_STREAM)
        address = (host.strip("[]"), int(port))
    s.settimeout(3)
    try:
        s.connect(address)
        out.append("connected")
    except OSError as exc:
        out.append(type(exc).__name__)
    finally:
        s.close()
print(json.dumps(out))
"""


def attempt_as(user: str, listeners: list[Listener], namespace: list[str] | None = None) -> dict[Listener, str]:
    """Connect to each listener as ``user`` (inside ``namespace``: an ``ip netns exec NAME``
    prefix, or none): listener -> "connected" or the exception's name."""
    if not listeners:
        return {}
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable  # one any user may run
    argv = [*(namespace or []), "runuser", "-u", user, "--", python, "-I", "-c", _ATTEMPT,
            json.dumps([(item.kind, item.where) for item in listeners])]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/")
    if done.returncode != 0:
        raise RuntimeError(f"could not try the listeners as {user}: {done.stderr.strip()[-300:]}")
    return dict(zip(listeners, json.loads(done.stdout), strict=True))


def netns_of(pid: int) -> str:
    """The network namespace's identity of a process (``net:[inode]``)."""
    return os.readlink(f"/proc/{pid}/ns/net")
