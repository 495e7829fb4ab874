"""Every child process mountbench starts, and how it stops: the one place for process handling.

- an engine run to completion (fio, tar, git): :func:`run_child`, :func:`run_timed`, each born
  inside a fence (host/contain.py: it can write only beneath the directories it is given);
- any other child: :func:`spawn`, the one call that starts a process (host/contain.py's spawner
  aside, through which a fenced child is born); a long-lived one (a lab's daemons, QEMU, rclone,
  nginx): :func:`start`, in a session of its own (a Ctrl-C on the terminal reaches only Python,
  which stops it in order) and killed by the kernel should mountbench die without stopping it
  (:func:`die_with_parent`);
- a child's output line by line to a callback: :func:`stream`;
- stopping any of them with everything they started: :func:`stop_tree`; processes known by their
  PID only: :func:`stop_processes`, :func:`send_signal`, :func:`kill`;
- the ports and logs around them: :func:`free_port`, :func:`port_open`, :func:`bind_error`,
  :func:`wait_until`, :func:`log_tail`, :func:`tree_pids`.

tests/host/test_process_guard.py keeps it so: no other module starts, signals or port-checks a
process by itself.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mountbench.host import contain
from mountbench.host.contain import Fence


@dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


def run_child(
    argv: list[str],
    *,
    fence: Fence,
    cwd: Path | None = None,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    stdout_path: Path | None = None,
) -> Completed:
    """Run ``argv`` in its own process group, inside ``fence``.

    On KeyboardInterrupt the whole group gets SIGINT (fio then stops its jobs),
    then SIGKILL if it lingers, and the interrupt propagates. On timeout the
    group is killed and ``timed_out`` is set. Either way it returns or raises only once
    every process the child started is gone (:func:`stop_tree`).
    """
    out = open(stdout_path, "wb") if stdout_path else subprocess.PIPE  # noqa: SIM115
    try:
        proc = contain.popen(
            argv,
            fence,
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


def stop_tree(proc: subprocess.Popen[Any], first: signal.Signals = signal.SIGTERM, grace_s: float = 5.0) -> None:
    """Stop ``proc`` (started with a session of its own) and everything it started.

    fio's job processes and sshd's session children each call setsid(), so they are in no group
    of their parent's: signalling the group reaches the main process only, and after a SIGKILL
    of it (or even a clean exit, by a moment) a child can go on running. So ``first`` goes to the
    group and to every descendant, taken before the signal (once the leader is gone they belong
    to init), and SIGKILL to what is left after ``grace_s``. Returns once all are gone; zombies
    count as gone (a PID 1 that never reaps must not stall a stop). A process already reaped
    (``returncode`` set) is not signalled at all: its PID may be another's by now."""
    if proc.returncode is not None:
        return
    members = _descendants(proc.pid)
    for sig in (first, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
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


def stop_processes(members: list, grace_s: float = 5.0) -> list:
    """Stop processes known only by their PID (psutil.Process objects, which check the PID was not
    reused: a dead run's recorded servers): SIGTERM, then SIGKILL to those left after ``grace_s``.
    Those still running after that."""
    _signal_all(members, signal.SIGTERM)
    left = _wait_gone(members, grace_s)
    _signal_all(left, signal.SIGKILL)
    return _wait_gone(left, grace_s)


def send_signal(pid: int, sig: signal.Signals, *, group: bool = False) -> bool:
    """``sig`` to the process ``pid`` (``group``: to its process group); False when there is none
    (or it is not ours to signal)."""
    try:
        (os.killpg if group else os.kill)(pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def kill(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL to ``proc`` itself at once, nothing else: for a child that must not wait (a sync stuck
    in the kernel, a decompressor stopped early, a server past its memory bound). Not waited for."""
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


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


def run_timed(argv: list[str], *, fence: Fence, cwd: Path | None = None, timeout: float | None = None) -> Timed:
    """Run ``argv`` to completion, inside ``fence``, and time it. Output goes to a temporary file,
    not a pipe, so nothing in this process has to read while the command runs. The clock starts
    before the spawner is asked (host/contain.py: handing the start to its thread costs ~0.1 ms)."""
    import tempfile
    import threading
    import time

    with tempfile.TemporaryFile() as errfile:
        start = time.monotonic()
        proc = contain.popen(
            argv,
            fence,
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


# --- long-lived processes: daemons, QEMU, rclone, nginx ------------------------------------

PR_SET_PDEATHSIG = 1


@functools.cache
def _libc() -> Any:
    """libc, loaded once in the parent (never between fork and exec: the loader takes a lock)."""
    import ctypes

    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)  # libc's own symbols
    except OSError:
        return None


def die_with_parent(sig: signal.Signals) -> Callable[[], None]:
    """What a child calls (between fork and exec, as ``preexec_fn``, or first thing after a
    fork) to get ``sig`` from the kernel when the thread that started it ends
    (PR_SET_PDEATHSIG): not even a SIGKILL of mountbench then leaves it running. SIGKILL for
    what may simply vanish, SIGTERM for what should stop cleanly (nginx, ssh, fio's server).
    Start long-lived children from the main thread. libc is loaded here, in the parent, so
    the child makes one prctl call and nothing else; off Linux it does nothing. A parent that
    died between the fork and the prctl sends nothing (the child is already an orphan then), so
    the child then ends at once, as the signal would have ended it."""
    libc = _libc()
    parent = os.getpid()  # called in the parent, before the fork

    def set_in_child() -> None:
        if libc is not None:
            libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
            if os.getppid() != parent:
                os._exit(1)

    return set_in_child


def spawn(
    argv: Sequence[str],
    *,
    fence: Fence | None = None,
    session: bool = True,
    death_signal: signal.Signals | None = signal.SIGKILL,
    **popen: Any,
) -> subprocess.Popen[Any]:
    """Start ``argv`` (``popen``: subprocess.Popen's own arguments): in a session of its own unless
    ``session`` is False (a Ctrl-C at the terminal is then mountbench's to pass on), getting
    ``death_signal`` should mountbench die (:func:`die_with_parent`; None: none), and with ``fence``
    born inside it (host/contain.py). Stop it with :func:`stop_tree`."""
    if session:
        popen["start_new_session"] = True
    if death_signal is not None:
        popen["preexec_fn"] = die_with_parent(death_signal)  # only a prctl call: safe enough with threads
    if fence is not None:
        return contain.popen(list(argv), fence, **popen)
    return subprocess.Popen(list(argv), **popen)


def start(
    argv: Sequence[str],
    *,
    log: Path | None = None,
    stdout: int | IO[bytes] | None = None,
    stdin: int | IO[bytes] | None = subprocess.DEVNULL,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    death_signal: signal.Signals = signal.SIGKILL,
    fence: Fence | None = None,
) -> subprocess.Popen[bytes]:
    """Start a long-lived ``argv`` (:func:`spawn`: a session of its own, ``death_signal`` should
    mountbench die); stderr (and stdout unless given) go to ``log``. Stop it with
    :func:`stop_tree`; stopping it twice is harmless. With ``fence``, it is born inside it
    (host/contain.py; a daemon that mounts, as rclone and QEMU's helpers do, cannot be)."""
    logf: int | IO[bytes] = log.open("ab") if log is not None else subprocess.DEVNULL
    try:
        return spawn(argv, fence=fence, death_signal=death_signal, cwd=cwd, stdin=stdin,
                     stdout=stdout if stdout is not None else logf, stderr=logf, env=env)  # fmt: skip
    finally:
        if not isinstance(logf, int):
            logf.close()


def decoded(raw: bytes) -> str:
    """One line of a child's output: UTF-8, any byte that is not shown as U+FFFD (a line is whole
    here, so only bytes that were never UTF-8 are), without its line ending."""
    return raw.rstrip(b"\r\n").decode("utf-8", errors="replace")


def stream(proc: subprocess.Popen[bytes], on_line: Callable[[str], None]) -> None:
    """Every line of ``proc``'s stdout and stderr (those that are binary pipes) to ``on_line``, one at a
    time, until both end. The two are read apart, each split into lines as bytes and each line decoded
    on its own: one pipe for both (``stderr=STDOUT``) mixes them where the writes fall, not where the
    lines end (a child's block-buffered stdout leaves in 8 KiB chunks cut anywhere, even inside a
    character, while its stderr is written line by line: "container: ┏━━…━�run … complete", issue 49).
    Read apart, a line is never split or mixed with the other stream's. stdout is read in this thread:
    a KeyboardInterrupt, or an ``on_line`` that raises, ends the wait at once (the caller then stops
    the child, and the other stream's reader ends with it)."""
    lock = threading.Lock()
    failed: list[BaseException] = []

    def pump(pipe: IO[bytes]) -> None:
        for raw in iter(pipe.readline, b""):
            with lock:
                on_line(decoded(raw))

    def pump_aside(pipe: IO[bytes]) -> None:
        try:
            pump(pipe)
        except BaseException as exc:  # raised in the caller's thread below
            failed.append(exc)

    pipes = [p for p in (proc.stdout, proc.stderr) if p is not None]
    aside = [threading.Thread(target=pump_aside, args=(p,), daemon=True, name="child-output") for p in pipes[1:]]
    for thread in aside:
        thread.start()
    if pipes:
        pump(pipes[0])
    for thread in aside:
        thread.join()
    if failed:
        raise failed[0]


def tree_pids(pid: int) -> list[int]:
    """``pid`` and all its live descendants (sshd's session children, virtiofsd's sandbox child)."""
    import psutil

    try:
        proc = psutil.Process(pid)
        return [pid, *(c.pid for c in proc.children(recursive=True))]
    except psutil.Error:
        return []


# --- ports and logs -------------------------------------------------------------------------


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nothing listens on right now (a server may still lose it to
    a race before it binds: callers that can, retry)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def tcp_listeners(net: str = "/proc/net") -> list[tuple[str, int, str]]:
    """(address, port, socket inode) of every TCP socket listening in a network namespace, read
    from ``net``/tcp and tcp6: /proc/net is this process's namespace, /proc/PID/net that of PID."""
    found = []
    for name, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        try:
            rows = Path(net, name).read_text().splitlines()[1:]
        except OSError:
            continue
        for fields in (row.split() for row in rows):
            if len(fields) < 10 or fields[3] != "0A":  # 0A: TCP_LISTEN
                continue
            address, _, hexport = fields[1].partition(":")
            raw = bytes.fromhex(address)
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))  # each 32-bit word is host order
            found.append((str(ipaddress.ip_address(socket.inet_ntop(family, raw))), int(hexport, 16), fields[9]))
    return found


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def bind_error(host: str, port: int) -> OSError | None:
    """Why a server could not listen on ``host:port`` now (an address this machine lacks, a port
    taken), or None. The trial socket sets no SO_REUSEPORT, so a server there that sets it (fio's)
    makes the bind fail too."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as trial:
        trial.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            trial.bind((host, port))
        except OSError as exc:
            return exc
    return None


def wait_until(
    ready: Callable[[], bool],
    timeout: float,
    proc: subprocess.Popen[bytes] | None = None,
    interval: float = 0.05,
) -> bool:
    """Poll ``ready()`` until true (True), ``timeout`` passes or ``proc`` exits (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return True
        if proc is not None and proc.poll() is not None:
            return ready()
        time.sleep(interval)
    return ready()


def last_lines(text: str, count: int = 1, *, limit: int = 300, empty: str = "no message") -> str:
    """What an error message quotes of a tool's output: its last ``count`` distinct non-blank
    lines, joined by '; ', at most ``limit`` characters (``empty`` when it said nothing)."""
    lines = list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))
    return "; ".join(lines[-count:])[:limit] or empty


def log_tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of a log file ('' when missing)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
