"""Run an external engine as a child process that Ctrl-C and timeouts stop cleanly."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


def run_child(
    argv: list[str],
    *,
    cwd: Path | None = None,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    stdout_path: Path | None = None,
) -> Completed:
    """Run ``argv`` in its own process group.

    On KeyboardInterrupt the whole group gets SIGINT (fio then stops its jobs),
    then SIGKILL if it lingers, and the interrupt propagates. On timeout the
    group is killed and ``timed_out`` is set. Either way it returns or raises only once
    every process the child started is gone (:func:`stop_tree`).
    """
    out = open(stdout_path, "wb") if stdout_path else subprocess.PIPE  # noqa: SIM115
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_tree(proc, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            return Completed(proc.returncode, _text(stdout), _text(stderr), timed_out=True)
        except BaseException:
            stop_tree(proc, signal.SIGINT)
            raise
        return Completed(proc.returncode, _text(stdout), _text(stderr), timed_out=False)
    finally:
        if stdout_path:
            out.close()  # type: ignore[union-attr]


def stop_tree(proc: subprocess.Popen, first: signal.Signals, grace_s: float = 5.0) -> None:
    """Stop ``proc`` (started with a session of its own) and everything it started.

    fio's job processes each call setsid(), so they are in no group of fio's: signalling the
    group reaches fio's main process only, and after a SIGKILL of it (or even a clean exit on
    SIGINT, by a moment) a job can go on running. The descendants are taken before the signal
    (once the leader is gone they belong to init) and waited for too; SIGKILL to what is left
    after ``grace_s``. Zombies count as gone (a PID 1 that never reaps must not stall a stop)."""
    members = _descendants(proc.pid)
    for sig in (first, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        if sig == signal.SIGKILL:
            members += [m for m in _descendants(proc.pid) if m not in members]  # forked since
            _signal_all(members, sig)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            continue
        members = _wait_gone(members, grace_s)
        if not members:
            return
    proc.wait()
    _wait_gone(members, grace_s)


def _descendants(pid: int) -> list:
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _signal_all(members: list, sig: signal.Signals) -> None:
    import psutil

    for member in members:
        with contextlib.suppress(psutil.Error):
            member.send_signal(sig)  # psutil checks the pid was not reused


def _wait_gone(members: list, limit_s: float) -> list:
    """Those of ``members`` still running (not zombies) after up to ``limit_s`` seconds."""
    import psutil

    deadline = time.monotonic() + limit_s
    while True:
        alive = []
        for member in members:
            with contextlib.suppress(psutil.Error):
                if member.is_running() and member.status() != psutil.STATUS_ZOMBIE:
                    alive.append(member)
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.02)


def _text(data: bytes | None) -> str:
    return data.decode(errors="replace") if data else ""


@dataclass(frozen=True)
class Timed:
    """A whole process timed: wall clock around it, user and sys from wait4's rusage
    (which includes the children it waited for, e.g. git's or find's helpers)."""

    returncode: int
    wall_s: float
    user_s: float
    sys_s: float
    stderr: str
    timed_out: bool


def run_timed(argv: list[str], *, cwd: Path | None = None, timeout: float | None = None) -> Timed:
    """Run ``argv`` to completion and time it. Output goes to a temporary file, not a
    pipe, so nothing in this process has to read while the command runs."""
    import tempfile
    import threading
    import time

    with tempfile.TemporaryFile() as errfile:
        start = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errfile,
            start_new_session=True,
        )
        expired = threading.Event()

        def on_timeout() -> None:
            expired.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, on_timeout) if timeout else None
        if timer:
            timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            stop_tree(proc, signal.SIGINT)
            raise
        finally:
            if timer:
                timer.cancel()
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        errfile.seek(0)
        stderr = errfile.read()[-4000:].decode(errors="replace")
    return Timed(proc.returncode, wall, usage.ru_utime, usage.ru_stime, stderr, expired.is_set())


# --- servers mountbench owns (nginx for the http workloads) ----------------------------------


def _die_with_parent() -> None:  # runs in the child between fork and exec: one prctl call
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


def start_server(argv: list[str], *, log: Path, cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start a server in its own session with its output in ``log``. On Linux it gets
    SIGTERM from the kernel if mountbench dies without stopping it (PR_SET_PDEATHSIG), so
    not even a SIGKILL of mountbench leaves it running. Stop it with :func:`stop_server`."""
    import sys

    with open(log, "ab") as out:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )


def stop_server(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """SIGTERM to the server's whole process group (nginx's master and workers), then
    SIGKILL to what is left after ``grace_s``. Safe to call twice."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)
    # workers may outlive a master that was killed: the group goes whatever the master did
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.wait()
