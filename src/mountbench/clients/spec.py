"""Client addresses as given on the command line (``--client HOST[:PORT]``) and the client
counts of a scaling run (``--clients 1,2,4``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mountbench.errors import UsageError

FIO_PORT = 8765  # fio's default server port
AGENT_PORT_OFFSET = 1  # `mountbench serve` answers host-fact and probe requests on PORT + 1


@dataclass(frozen=True)
class ClientSpec:
    """One machine running ``fio --server`` (or `mountbench serve`)."""

    host: str  # a name or an address; IPv6 without brackets
    port: int = FIO_PORT

    @property
    def ipv6(self) -> bool:
        return ":" in self.host

    @property
    def label(self) -> str:
        """How reports name the client: ``HOST`` or ``HOST:PORT`` (``[v6]:PORT``)."""
        host = f"[{self.host}]" if self.ipv6 else self.host
        return host if self.port == FIO_PORT else f"{host}:{self.port}"

    @property
    def fio_arg(self) -> str:
        """What ``fio --client=`` takes."""
        return f"ip6:{self.host},{self.port}" if self.ipv6 else f"{self.host},{self.port}"

    @property
    def dirname(self) -> str:
        """The client's own directory inside a run's scratch directory."""
        return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{self.host}_{self.port}")

    @property
    def agent_port(self) -> int:
        return self.port + AGENT_PORT_OFFSET

    def is_entry_of(self, hostname: str, port: int) -> bool:
        """Is a ``client_stats`` entry (fio names it by the host given and the port) ours?"""
        return port == self.port and hostname.removeprefix("ip6:").removeprefix("ip:") == self.host

    def to_dict(self) -> dict[str, Any]:
        return {"host": self.host, "port": self.port}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClientSpec:
        return cls(str(data["host"]), int(data.get("port", FIO_PORT)))


def parse_client(text: str) -> ClientSpec:
    """``HOST``, ``HOST:PORT``, ``[IPv6]`` or ``[IPv6]:PORT``."""
    text = text.strip()
    example = "e.g. --client 10.0.0.2 or --client node1:8765"
    if not text:
        raise UsageError(f"--client needs a host, {example}")
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or not host or (rest and not rest.startswith(":")):
            raise UsageError(f"--client {text}: write an IPv6 address as [ADDR] or [ADDR]:PORT")
        port_text = rest[1:] if rest else ""
    elif text.count(":") > 1:
        raise UsageError(f"--client {text}: write an IPv6 address in brackets, e.g. [{text}]:{FIO_PORT}")
    else:
        host, _, port_text = text.partition(":")
    if not host or any(c.isspace() or c in ",/" for c in host):
        raise UsageError(f"--client {text}: {host!r} is not a host name or address; {example}")
    port = FIO_PORT
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65535:
            raise UsageError(f"--client {text}: the port must be a number from 1 to 65534, {example}")
        port = int(port_text)
    return ClientSpec(host, port)


def parse_clients(texts: Sequence[str]) -> tuple[ClientSpec, ...]:
    clients: list[ClientSpec] = []
    for text in texts:
        client = parse_client(text)
        if client in clients:
            raise UsageError(f"--client {client.label} is given twice; give each client once")
        clients.append(client)
    return tuple(clients)


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
