"""Starting and reliably stopping the host processes the lab owns.

Every process is started in its own session, so a Ctrl-C on the terminal reaches
only Python, which then stops them in order; and with PR_SET_PDEATHSIG, so they
die with the Python thread that started them even if Python is killed outright.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

import psutil

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _die_with_parent() -> None:  # runs in the child between fork and exec
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def start(
    argv: Sequence[str],
    *,
    log: Path | None = None,
    stdout: int | IO[bytes] | None = None,
    stdin: int | None = subprocess.DEVNULL,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start `argv` in a new session; stderr (and stdout unless given) go to `log`."""
    logf = log.open("ab") if log is not None else subprocess.DEVNULL
    try:
        return subprocess.Popen(
            list(argv),
            stdin=stdin,
            stdout=stdout if stdout is not None else logf,
            stderr=logf,
            start_new_session=True,
            preexec_fn=_die_with_parent,  # only a prctl call: safe enough with threads
            env=env,
        )
    finally:
        if log is not None and not isinstance(logf, int):
            logf.close()


def tree_pids(pid: int) -> list[int]:
    """`pid` and all its live descendants (sshd's session children, virtiofsd's sandbox child)."""
    try:
        proc = psutil.Process(pid)
        return [pid, *(c.pid for c in proc.children(recursive=True))]
    except psutil.Error:
        return []


def stop_tree(proc: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """SIGTERM `proc` and its descendants, SIGKILL whatever is left after `grace` s.

    Descendants are collected before the parent dies (they may have called setsid,
    as sshd's session children do, so the process group is not enough).
    """
    pids = tree_pids(proc.pid) if proc.poll() is None else []
    procs = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            procs.append(psutil.Process(pid))
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for p in alive:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(alive, timeout=grace)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=grace)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on `host` that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def wait_until(
    ready: Callable[[], bool],
    timeout: float,
    proc: subprocess.Popen[bytes] | None = None,
    interval: float = 0.05,
) -> bool:
    """Poll `ready()` until true (True), `timeout` passes or `proc` exits (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return True
        if proc is not None and proc.poll() is not None:
            return ready()
        time.sleep(interval)
    return ready()


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def log_tail(path: Path, lines: int = 20) -> str:
    """The last `lines` lines of a log file ('' when missing)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def is_root() -> bool:
    """True when running as root (the lab's daemons then use their default sandboxes)."""
    return os.geteuid() == 0
