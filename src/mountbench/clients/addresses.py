"""Client addresses as given on the command line (``--client HOST[:PORT]``, or
``--client ssh://[USER@]HOST[:PORT]`` for a machine mountbench starts over SSH, and
``--hosts-file FILE``) and the client counts of a scaling run (``--clients 1,2,4``).

An ``ssh://`` client's fio server listens on a unix socket in a private directory there,
which SSH forwards to a unix socket in a private directory here (clients/sshremote.py): fio's
client reaches it as ``sock:NAME``, run from that directory (fio names the latency logs it
receives ``LOG.HOSTNAME``, so the name must hold no ``/``: :func:`fio_cwd`)."""

from __future__ import annotations

import codecs
import os
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mountbench.errors import UsageError
from mountbench.host.inputs import read_bounded

FIO_PORT = 8765  # fio's default server port
MAX_FIO_PORT = 65534  # `mountbench serve` puts its agent on the next port
AGENT_PORT_OFFSET = 1  # `mountbench serve` answers host-fact and probe requests on PORT + 1
SSH_SCHEME = "ssh://"
HOSTS_FILE_LIMIT = 1 << 20  # 1 MiB: tens of thousands of hosts; /dev/zero never ends


@dataclass(frozen=True)
class ClientSpec:
    """One machine running ``fio --server`` (or `mountbench serve`), or one mountbench starts
    over SSH (``ssh``: then ``port`` is the SSH port, None for ssh's own choice)."""

    host: str  # a name or an address; IPv6 without brackets
    port: int | None = FIO_PORT
    ssh: bool = False
    user: str = ""  # ssh only: the login name given (else ssh's own choice)
    # where fio's client reaches the server: an SSH client's tunnel end (a unix socket's absolute
    # path here), set once it is started
    dial: str | None = field(default=None, compare=False)

    @property
    def ipv6(self) -> bool:
        return ":" in self.host

    @property
    def label(self) -> str:
        """How reports name the client: ``HOST`` or ``HOST:PORT`` (``[v6]:PORT``), or the
        ``ssh://`` address as given."""
        host = f"[{self.host}]" if self.ipv6 else self.host
        if self.ssh:
            user = f"{self.user}@" if self.user else ""
            return f"{SSH_SCHEME}{user}{host}" + (f":{self.port}" if self.port is not None else "")
        return host if self.port == FIO_PORT else f"{host}:{self.port}"

    @property
    def destination(self) -> str:
        """What ssh takes as its destination (the port goes to ``-p``)."""
        return f"{self.user}@{self.host}" if self.user else self.host

    @property
    def connect_host(self) -> str:
        """How fio's client names the server in its messages and JSON: the address, or (through
        an SSH tunnel) the local socket's file name."""
        if self.dial:
            return os.path.basename(self.dial)
        if self.ssh:
            raise ValueError(f"{self.label}: an SSH client has no fio address until it is started")
        return self.host

    @property
    def connect_port(self) -> int:
        if self.dial:
            return FIO_PORT  # what fio's JSON says of a unix-socket client
        if self.ssh or self.port is None:
            raise ValueError(f"{self.label}: an SSH client has no fio address until it is started")
        return self.port

    def dialed(self, socket_path: str) -> ClientSpec:
        """This client reached through the unix socket ``socket_path`` (its SSH tunnel's end)."""
        return replace(self, dial=socket_path)

    @property
    def fio_arg(self) -> str:
        """What ``fio --client=`` takes (from :func:`fio_cwd` for a client behind a socket)."""
        if self.dial:
            return f"sock:{os.path.basename(self.dial)}"
        host, port = self.connect_host, self.connect_port
        return f"ip6:{host},{port}" if ":" in host else f"{host},{port}"

    @property
    def where(self) -> str:
        """Where its fio server is reached, for messages: ``port N`` or ``its SSH tunnel``."""
        return "its SSH tunnel" if self.dial else f"port {self.connect_port}"

    @property
    def dirname(self) -> str:
        """The client's own directory inside a run's scratch directory."""
        if self.ssh:
            return re.sub(r"[^A-Za-z0-9._-]+", "_", f"ssh_{self.user}_{self.host}_{self.port or 22}")
        return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{self.host}_{self.port}")

    @property
    def agent_port(self) -> int:
        return self.connect_port + AGENT_PORT_OFFSET

    def is_entry_of(self, hostname: str, port: int) -> bool:
        """Is a ``client_stats`` entry (fio names it by the host given and the port) ours?"""
        if self.ssh and not self.dial:
            return False
        if self.dial:
            return hostname == self.connect_host
        return port == self.connect_port and hostname.removeprefix("ip6:").removeprefix("ip:") == self.connect_host

    def to_dict(self) -> dict[str, Any]:
        if self.ssh:
            return {"host": self.host, "port": self.port, "ssh": True, "user": self.user}
        return {"host": self.host, "port": self.port}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClientSpec:
        if data.get("ssh"):
            port = data.get("port")
            return cls(str(data["host"]), int(port) if port is not None else None, True, str(data.get("user", "")))
        return cls(str(data["host"]), int(data.get("port", FIO_PORT)))


def fio_cwd(clients: Sequence[ClientSpec], default: Path) -> Path:
    """The directory ``fio --client`` must run in for these clients: that of their tunnels'
    sockets (fio is given their bare names), else ``default``. fio's client writes the logs
    it receives there."""
    directories = {os.path.dirname(c.dial) for c in clients if c.dial}
    if len(directories) > 1:
        raise ValueError(f"the clients' sockets are in more than one directory: {sorted(directories)}")
    return Path(directories.pop()) if directories else default


def parse_client(text: str) -> ClientSpec:
    """``HOST``, ``HOST:PORT``, ``[IPv6]`` or ``[IPv6]:PORT``; any of them after ``ssh://``
    (with an optional ``USER@``) for a machine mountbench starts over SSH."""
    text = text.strip()
    bad = next((c for c in text if not c.isprintable()), None)
    if bad is not None:
        raise UsageError(f"--client {text}: holds a control character ({bad!r}); give a host name or address")
    if text.lower().startswith(SSH_SCHEME):
        return _parse_ssh(text)
    if "@" in text:
        raise UsageError(f"--client {text}: a login name belongs to an SSH client; write --client ssh://{text} "
                         "(or give a fio server's HOST[:PORT])")  # fmt: skip
    # `mountbench serve`'s agent takes the port after fio's: a fio port can be at most 65534
    host, port = _host_port(text, text, MAX_FIO_PORT, "e.g. --client 10.0.0.2 or --client node1:8765")
    return ClientSpec(host, port if port is not None else FIO_PORT)


def _host_port(text: str, shown: str, highest: int, example: str) -> tuple[str, int | None]:
    """``HOST``, ``HOST:PORT``, ``[IPv6]`` or ``[IPv6]:PORT``: (host, port or None)."""
    if not text:
        raise UsageError(f"--client needs a host, {example}")
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or not host or (rest and not rest.startswith(":")):
            raise UsageError(f"--client {shown}: write an IPv6 address as [ADDR] or [ADDR]:PORT")
        port_text = rest[1:] if rest else ""
    elif text.count(":") > 1:
        raise UsageError(f"--client {shown}: write an IPv6 address in brackets, e.g. [{text}]:{FIO_PORT}")
    else:
        host, _, port_text = text.partition(":")
    if not host or any(c.isspace() or c in ",/" for c in host):
        raise UsageError(f"--client {shown}: {host!r} is not a host name or address; {example}")
    if not port_text:
        return host, None
    if not port_text.isdigit() or not 0 < int(port_text) <= highest:
        raise UsageError(f"--client {shown}: the port must be a number from 1 to {highest}, {example}")
    return host, int(port_text)


def _parse_ssh(text: str) -> ClientSpec:
    example = "e.g. --client ssh://node1 or --client ssh://me@10.0.0.2:2222"
    rest = text[len(SSH_SCHEME) :]
    user, at, address = rest.rpartition("@")
    if at and (not user or any(c.isspace() or c in "/:@" for c in user)):
        raise UsageError(f"--client {text}: {user!r} is not a login name; {example}")
    if not address or "/" in address or "?" in address:
        raise UsageError(f"--client {text}: give ssh://[USER@]HOST[:PORT] and nothing after it; {example}")
    host, port = _host_port(address, text, 65535, example)  # the port is SSH's: any TCP port
    return ClientSpec(host, port, ssh=True, user=user)


def read_hosts_file(path: Path) -> tuple[str, ...]:
    """``--hosts-file``: one client a line, as --client takes it; blank lines and ``#``
    comments are skipped (a comment may hold any bytes; a UTF-8 byte-order mark at the start is
    skipped too). A bare host name means ``ssh://HOST`` (mountbench starts it)."""
    fix = "give a text file with one host a line"
    data = read_bounded(path, HOSTS_FILE_LIMIT, "--hosts-file", fix).removeprefix(codecs.BOM_UTF8)
    hosts = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        # a comment is a comment whatever its bytes (a '#' byte is never part of a UTF-8 character):
        # only what comes before it must be text
        raw = raw.split(b"#", 1)[0]
        try:
            line = raw.decode()
        except UnicodeDecodeError:
            raise UsageError(f"--hosts-file {path}, line {number}: not text (UTF-8); {fix}") from None
        bad = next((c for c in line.rstrip("\r") if not c.isprintable() and c != "\t"), None)
        if bad is not None:
            raise UsageError(
                f"--hosts-file {path}, line {number}: holds a control character ({bad!r}), not text; {fix}"
            )
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        if any(c.isspace() for c in entry):
            raise UsageError(
                f"--hosts-file {path}, line {number}: {entry!r}: one host a line, e.g. node1 or ssh://me@node2"
            )
        hosts.append(entry if "://" in entry else f"{SSH_SCHEME}{entry}")
    if not hosts:
        raise UsageError(f"--hosts-file {path} names no host; write one host a line, e.g. node1")
    return tuple(hosts)


def parse_clients(texts: Sequence[str]) -> tuple[ClientSpec, ...]:
    """The clients, each once: one fio server given twice, also by two names (``localhost`` and
    ``127.0.0.1``, a name and its address), is refused."""
    clients: list[ClientSpec] = []
    reached: dict[tuple[str, int], ClientSpec] = {}
    for text in texts:
        client = parse_client(text)
        if client in clients:
            raise UsageError(f"--client {client.label} is given twice; give each client once")
        for address in _addresses(client):
            other = reached.get(address)
            if other is not None:
                raise UsageError(
                    f"--client {other.label} and --client {client.label} are one fio server (both reach "
                    f"{address[0]} port {address[1]}): it would be counted as two clients; give each client once"
                )
        for address in _addresses(client):
            reached[address] = client
        clients.append(client)
    return tuple(clients)


def _addresses(client: ClientSpec) -> set[tuple[str, int]]:
    """The (address, port) pairs a plain fio server's name reaches (empty for an SSH client, whose
    machine mountbench tells apart by its machine id, and for a name that does not resolve here)."""
    if client.ssh or client.port is None:
        return set()
    try:
        found = socket.getaddrinfo(client.host, client.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return set()
    return {(str(info[4][0]).split("%")[0], client.port) for info in found}


def parse_counts(text: str | None, clients: int) -> tuple[int, ...]:
    """``--clients 1,2,4``: how many of the --client machines each scaling step uses
    (the first N, in the order given)."""
    if text is None:
        return ()
    if not clients:
        raise UsageError("--clients needs the machines to use: give them with --client HOST (repeatable)")
    counts: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise UsageError(f"--clients {text}: give client counts such as 1,2,4")
        if int(part) > clients:
            raise UsageError(
                f"--clients {text}: {part} clients asked for but only {clients} given with --client; "
                "add more --client or lower the count"
            )
        counts.append(int(part))
    return tuple(sorted(set(counts)))
