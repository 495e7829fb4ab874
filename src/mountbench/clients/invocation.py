"""One ``fio --client=A jobA --client=B jobB …`` process, watched: Ctrl-C stops every
server's job, a time limit is kept, and a client that becomes unreachable is named.

fio's client notices a server that stops answering only while that server runs its job
(it asks for progress each second with ``--eta=always`` and drops one that does not reply
within 5 s). A client lost while its job is being sent or set up would hang the sample
until the time limit; so once a sample runs past its expected duration, every client's
fio port is tried each few seconds, and an unreachable one ends the sample, by name.
"""

from __future__ import annotations

import errno
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from mountbench.clients.addresses import ClientSpec
from mountbench.clients.fioprobe import connect
from mountbench.host import contain
from mountbench.host.contain import Fence
from mountbench.host.process import send_signal

STOP_GRACE_S = 10.0  # after Ctrl-C, how long fio's client may take to stop every server's job
CHECK_EVERY_S = 5.0
CONNECT_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Finished:
    returncode: int
    stderr: str
    timed_out: bool = False
    lost: tuple[tuple[str, str], ...] = ()  # (client label, why) of clients found unreachable
    killed: bool = False  # fio's client had to be killed: the servers' jobs run on to their end


Reachability = Callable[[ClientSpec], str]  # '' when the client is there, else why not


def run_watched(
    argv: list[str],
    cwd: Path,
    clients: Sequence[ClientSpec],
    *,
    timeout: float,
    overdue_s: float,
    reachable: Reachability | None = None,
    fence: Fence | None = None,
) -> Finished:
    """Run fio's client in its own process group until it ends, ``timeout`` passes, or a
    client is found unreachable after ``overdue_s`` (``reachable``: how to tell, by default a
    TCP connection to its fio port). On KeyboardInterrupt it gets SIGINT,
    which makes it stop every server's job and wait for them; if it has not ended within
    STOP_GRACE_S it is killed. The interrupt then propagates. fio's client is born inside ``fence``
    (by default: it may write only in ``cwd``, where it writes the logs it receives)."""
    proc = contain.popen(
        argv, fence or Fence.of([cwd]), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    start = time.monotonic()
    next_check = start + overdue_s
    try:
        while True:
            wait = max(0.1, min(start + timeout, next_check) - time.monotonic())
            try:
                _, stderr = proc.communicate(timeout=wait)
                return Finished(proc.returncode, stderr.decode(errors="replace"))
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() >= start + timeout:
                _kill(proc)
                return Finished(proc.returncode, "", timed_out=True, killed=True)
            lost = unreachable(clients, reachable)
            if lost:
                _kill(proc)
                return Finished(proc.returncode, "", lost=lost, killed=True)
            next_check = time.monotonic() + CHECK_EVERY_S
    except BaseException:
        send_signal(proc.pid, signal.SIGINT, group=True)
        try:
            proc.communicate(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            _kill(proc)
            raise KilledOnInterrupt from None
        raise


class KilledOnInterrupt(KeyboardInterrupt):
    """Ctrl-C, and fio's client did not stop the servers' jobs in time: they run on."""


def unreachable(clients: Sequence[ClientSpec], reachable: Reachability | None = None) -> tuple[tuple[str, str], ...]:
    """(label, why) of the clients found unreachable now (by default: whose fio port does not
    accept a connection)."""
    with ThreadPoolExecutor(max_workers=min(16, max(1, len(clients)))) as pool:
        reasons = list(pool.map(reachable or why_unreachable, clients))
    return tuple((c.label, why) for c, why in zip(clients, reasons, strict=True) if why)


def why_unreachable(client: ClientSpec) -> str:
    """'' when the client's fio server accepts a connection, else why not."""
    try:
        with connect(client, CONNECT_TIMEOUT_S):
            return ""
    except TimeoutError:
        return f"no answer on {client.where} within {CONNECT_TIMEOUT_S:g} s"
    except ConnectionRefusedError:
        return f"nothing listens on {client.where} any more"
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, "")
        return f"{client.where}: {name + ': ' if name else ''}{exc.strerror or exc}"


def _kill(proc: subprocess.Popen) -> None:
    send_signal(proc.pid, signal.SIGKILL, group=True)
    proc.communicate()
