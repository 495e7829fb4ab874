"""Talking to a client's fio server through fio itself: who it is (fio's probe reply:
hostname, OS, fio version) and tiny real jobs run there. Every call is one
``fio --client`` process with a timeout."""

from __future__ import annotations

import errno
import os
import re
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mountbench.clients.addresses import ClientSpec, fio_cwd
from mountbench.errors import UsageError
from mountbench.host.process import last_lines

CONNECT_TIMEOUT_S = 5.0
FIO_CALL_TIMEOUT_S = 60.0
# fio's client prints the server's probe reply in its normal output
_PROBE_LINE = re.compile(
    r"hostname=(?P<hostname>.*?), be=\d+, (?P<bits>\d+)-bit, os=(?P<os>.*?), arch=(?P<arch>.*?), "
    r"fio=(?P<fio>\S+), flags="
)
_NULL_JOB = "[mountbench-identify]\nioengine=null\nrw=read\nsize=4k\n"
# what fio's client prints when the server's protocol version is not its own
_PROTOCOL_MISMATCH = re.compile(r"client/server version mismatch \((?P<theirs>\d+) != (?P<ours>\d+)\)")


class ProtocolMismatch(UsageError):
    """The client's fio server speaks another version of fio's protocol."""


@dataclass(frozen=True)
class ServerIdentity:
    """What a client's fio server says about itself."""

    hostname: str
    os: str
    arch: str
    fio_version: str  # "fio-3.33"


def connect(client: ClientSpec, timeout: float) -> socket.socket:
    """A connection to the client's fio server: its TCP port, or its SSH tunnel's unix socket."""
    if client.dial:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.settimeout(timeout)
            conn.connect(client.dial)
        except OSError:
            conn.close()
            raise
        return conn
    return socket.create_connection((client.connect_host, client.connect_port), timeout=timeout)


def check_reachable(client: ClientSpec, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """A connection to the client's fio server; a one-line UsageError when none is possible."""
    try:
        with connect(client, timeout):
            pass
    except ConnectionRefusedError:
        if client.dial:
            raise UsageError(f"client {client.label}: its SSH tunnel's socket refused the connection") from None
        raise UsageError(
            f"client {client.label} refused the connection on port {client.connect_port}: no fio server listens there; "
            f"start one on that machine with 'mountbench serve --bind ADDRESS' (or 'fio --server')"
        ) from None
    except TimeoutError:
        raise UsageError(
            f"client {client.label} did not answer on {client.where} within {timeout:g} s; "
            "check the address, that its fio server runs, and firewalls on the way"
        ) from None
    except OSError as exc:
        why = exc.strerror or str(exc)
        if isinstance(exc, socket.gaierror):
            why = f"unknown host ({why})"
        elif exc.errno is not None and exc.errno in errno.errorcode:
            why = f"{errno.errorcode[exc.errno]}: {why}"
        raise UsageError(
            f"client {client.label} cannot be reached ({why}); check the address and the network"
        ) from None


def identify(fio_path: str, client: ClientSpec, timeout: float = FIO_CALL_TIMEOUT_S) -> ServerIdentity:
    """Run a job that does no I/O (ioengine=null) on the client; read fio's probe reply."""
    with tempfile.TemporaryDirectory(prefix="mountbench-identify-") as tmp:
        job = Path(tmp) / "identify.fio"
        job.write_text(_NULL_JOB)
        output = run_client_job(fio_path, [(client, job)], output_format="normal", timeout=timeout, cwd=Path(tmp))
    match = _PROBE_LINE.search(output)
    mismatch = _PROTOCOL_MISMATCH.search(output)
    if match is None and mismatch is not None:
        raise ProtocolMismatch(
            f"client {client.label} speaks fio's client/server protocol {mismatch['theirs']}, this controller's fio "
            f"speaks {mismatch['ours']}: both need the same fio version; install this machine's fio version there"
        )
    if match is None and client.dial:
        said = last_lines(output, 2, empty="")
        raise UsageError(
            f"client {client.label}: no fio server identified itself through its SSH tunnel"
            + (f" (fio said: {said})" if said else "")
            + "; does that machine's sshd allow unix-socket forwarding (AllowStreamLocalForwarding yes, "
            "no DisableForwarding)?"
        )
    if match is None:
        said = last_lines(output, 2, empty="")
        raise UsageError(
            f"client {client.label} answered on {client.where} "
            "but no compatible fio server identified itself"
            + (f" (fio said: {said})" if said else "")
            + "; is it a fio server of the same version as this machine's?"
        )
    return ServerIdentity(match["hostname"], match["os"], match["arch"], match["fio"])


def identify_all(fio_path: str, clients: list[ClientSpec], timeout: float = FIO_CALL_TIMEOUT_S) -> list[str] | None:
    """One ``fio --client=A --client=B …`` with a job that does no I/O on each: the fio version of every
    probe reply, or None when fewer replied than there are clients or one speaks another protocol
    (fio's replies do not say which client they came from: :func:`identify` then asks each alone)."""
    with tempfile.TemporaryDirectory(prefix="mountbench-identify-") as tmp:
        job = Path(tmp) / "identify.fio"
        job.write_text(_NULL_JOB)
        try:
            output = run_client_job(fio_path, [(c, job) for c in clients], output_format="normal", timeout=timeout,
                                    cwd=Path(tmp))  # fmt: skip
        except UsageError:
            return None
    versions = [m["fio"] for m in _PROBE_LINE.finditer(output)]
    if len(versions) != len(clients) or _PROTOCOL_MISMATCH.search(output):
        return None
    return versions


def run_client_job(
    fio_path: str,
    jobs: list[tuple[ClientSpec, Path]],
    *,
    output_format: str = "json+",
    timeout: float = FIO_CALL_TIMEOUT_S,
    cwd: Path | None = None,
) -> str:
    """One short ``fio --client=A jobA --client=B jobB ...`` (job files by absolute path); everything
    fio printed. For checks only: the timed samples go through the runner, which handles Ctrl-C."""
    argv = [fio_path, f"--output-format={output_format}", *client_args(jobs)]
    where = fio_cwd([client for client, _ in jobs], cwd or Path.cwd())
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, cwd=where, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as exc:
        names = ", ".join(c.label for c, _ in jobs)
        raise UsageError(f"fio on client {names} did not finish a tiny check job within {timeout:g} s") from exc
    return done.stdout + done.stderr


def client_args(jobs: list[tuple[ClientSpec, Path]]) -> list[str]:
    """``--client=HOST,PORT JOBFILE`` for each client: each gets its own job file."""
    args: list[str] = []
    for client, job in jobs:
        args += [f"--client={client.fio_arg}", str(job)]
    return args


def same_major_minor(ours: tuple[int, ...], theirs: tuple[int, ...]) -> bool:
    return ours[:2] == theirs[:2]


def errno_text(code: int) -> str:
    name = errno.errorcode.get(code, "")
    return f"{name}: {os.strerror(code)}" if name else f"error {code}"
