"""Run a function in a forked child process, bounded in time.

A filesystem call on a broken FUSE mount can block forever; when it does, only
the process making it is stuck. Every probe therefore runs in a child process
(``os.fork``, so any callable works, including ones injected by tests) that sends
its JSON-safe return value back through a pipe. The parent waits at most
``timeout`` seconds, then kills the child's whole process group (probes may start
helper processes of their own) and reports "hung".

The parent never touches the target filesystem itself.

Note: ``fork`` copies only the calling thread. The child runs nothing but the
probe function and ``os._exit``; it never returns into the caller's stack. On Linux a
child is killed when its parent dies (``PR_SET_PDEATHSIG``), so killing a probe with
SIGKILL leaves no probe running on in its scratch directory.
"""

from __future__ import annotations

import contextlib
import errno as errno_mod
import faulthandler
import json
import os
import select
import signal
import struct
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from mountbench.host.process import die_with_parent, send_signal

Status = Literal["ok", "oserror", "signal", "hung", "crash"]

_HEADER = struct.Struct("!Q")
_UNREAPED: set[int] = set()
KILL_GRACE_S = 2.0


def errno_name(code: int | None) -> str | None:
    """ENOENT for 2 and so on; None for None; the number as text when unknown."""
    if code is None:
        return None
    return errno_mod.errorcode.get(code, str(code))


@dataclass(frozen=True)
class Outcome:
    """How a child ended.

    ``ok``: returned ``value``; ``oserror``: raised an OSError (``errno``, ``message``);
    ``signal``: killed by a signal it did not expect (``message`` names it); ``hung``:
    still running at the timeout, killed; ``crash``: raised anything else (a bug;
    ``message`` holds the traceback).
    """

    status: Status
    value: Any = None
    errno: str | None = None
    message: str = ""
    elapsed_s: float = 0.0

    def why(self) -> str:
        """How it ended, in a line a note can quote: 'oserror: EACCES Permission denied'."""
        return f"{self.status}: {self.errno or ''} {self.message}".replace("  ", " ").strip()[:200]


class ChildCrashed(RuntimeError):
    """A child raised something other than OSError: a bug in the probe, not a result."""


class Child:
    """A running child process executing ``fn(*args)``.

    ``new_group=True`` puts the child in a process group of its own so that a
    timeout kills it together with any helper processes it started. Nested
    children (helpers started from inside a probe) use ``new_group=False`` so
    they stay in their parent's group and die with it.
    """

    def __init__(self, fn: Callable[..., Any], *args: Any, new_group: bool = True) -> None:
        self.new_group = new_group
        self.started = time.monotonic()
        rfd, wfd = os.pipe()
        death_signal = die_with_parent(signal.SIGKILL)  # libc loaded, and this pid noted, before the fork
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child, reported through the pipe
            os.close(rfd)
            _child_main(wfd, fn, args, new_group, death_signal)
        os.close(wfd)
        self.pid = pid
        self._rfd = rfd
        if new_group:
            with contextlib.suppress(OSError):  # the child did it first, or already exited
                os.setpgid(pid, pid)
        self._outcome: Outcome | None = None
        self._buf = b""
        self._need: int | None = None

    def wait(self, timeout: float) -> Outcome:
        """Wait at most ``timeout`` seconds (from now) for the child's answer; kill it if none."""
        outcome = self.poll(timeout)
        if outcome is None:
            self.stop(f"no answer within {timeout:g} s")
            assert self._outcome is not None
            return self._outcome
        return outcome

    def poll(self, timeout: float) -> Outcome | None:
        """Wait at most ``timeout`` seconds for the answer; None (child left running) if none."""
        if self._outcome is not None:
            return self._outcome
        deadline = time.monotonic() + max(0.0, timeout)
        try:
            payload = self._read_message(deadline)
            if payload is None:
                return None
            outcome = self._finish(payload, deadline)
        except BaseException:
            self._kill()
            os.close(self._rfd)
            self._outcome = Outcome("hung", message="interrupted", elapsed_s=self._elapsed())
            raise
        os.close(self._rfd)
        self._outcome = outcome
        return outcome

    def stop(self, why: str = "killed") -> None:
        """Kill the child (and its group) unless it has already answered."""
        if self._outcome is None:
            self._kill()
            os.close(self._rfd)
            self._outcome = Outcome("hung", message=why, elapsed_s=self._elapsed())

    # -- internals -----------------------------------------------------------------

    def _elapsed(self) -> float:
        return time.monotonic() - self.started

    def _read_message(self, deadline: float) -> bytes | None:
        """Read one length-prefixed message, or None if it is not complete by ``deadline``.

        Framing (not EOF) decides when the message is complete, because helper
        processes of the child may still hold the pipe's write end open. Partial
        data is kept between calls.
        """
        while True:
            if self._need is None and len(self._buf) >= _HEADER.size:
                (self._need,) = _HEADER.unpack(self._buf[: _HEADER.size])
                self._buf = self._buf[_HEADER.size :]
            if self._need is not None and len(self._buf) >= self._need:
                return self._buf[: self._need]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self._rfd], [], [], min(remaining, 0.05))
            if not ready:
                # A helper may keep the pipe open after the child died: look for the exit.
                if self._exited() and not select.select([self._rfd], [], [], 0)[0]:
                    return self._died_silently(deadline)
                continue
            chunk = os.read(self._rfd, 1 << 16)
            if not chunk:
                # EOF before a whole message: the child died (a signal, most likely).
                return self._died_silently(deadline)
            self._buf += chunk

    def _exited(self) -> bool:
        """Has the child exited? (it is left a zombie: its pid stays ours)"""
        try:
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def _died_silently(self, deadline: float) -> bytes | None:
        status = self._wait_exit(deadline, reap=False)  # _finish kills the group, then reaps
        if status is None:
            return None
        if os.WIFSIGNALED(status):
            sig = signal.Signals(os.WTERMSIG(status)).name
            msg = {"status": "signal", "message": f"probe process killed by {sig}"}
        else:
            msg = {
                "status": "crash",
                "message": f"child exited with status {os.waitstatus_to_exitcode(status)} without an answer",
            }
        return json.dumps(msg).encode()

    def _finish(self, payload: bytes, deadline: float) -> Outcome:
        self._wait_exit(max(deadline, time.monotonic() + 0.5), reap=False)
        self._kill(already_exiting=True)
        data = json.loads(payload.decode())
        return Outcome(
            status=data["status"],
            value=data.get("value"),
            errno=data.get("errno"),
            message=data.get("message", ""),
            elapsed_s=self._elapsed(),
        )

    def _wait_exit(self, deadline: float, *, reap: bool = True) -> int | None:
        """Wait until the child has exited; return its wait status (None on timeout).

        With ``reap=False`` the child is left a zombie so that its pid (and process
        group id) cannot be reused before we kill the group's stragglers.
        """
        flags = os.WEXITED | os.WNOHANG | (0 if reap else os.WNOWAIT)
        while True:
            try:
                info = os.waitid(os.P_PID, self.pid, flags)
            except ChildProcessError:
                return 0
            if info is not None:
                if info.si_code == os.CLD_EXITED:
                    return (info.si_status & 0xFF) << 8
                return info.si_status & 0x7F  # killed or dumped: the signal number
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.002)

    def _kill(self, *, already_exiting: bool = False) -> None:
        if self.new_group or not already_exiting:
            send_signal(self.pid, signal.SIGKILL, group=self.new_group)
        if self._wait_exit(time.monotonic() + KILL_GRACE_S) is None:
            # Stuck in the kernel (an unkillable wait); never block on it.
            _UNREAPED.add(self.pid)
        reap_stragglers()


def reap_stragglers() -> int:
    """Reap children that could not be reaped when they were killed; return how many remain."""
    for pid in list(_UNREAPED):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _UNREAPED.discard(pid)
    return len(_UNREAPED)


def run_isolated(fn: Callable[..., Any], *args: Any, timeout: float, new_group: bool = True) -> Outcome:
    """Run ``fn(*args)`` in a child process; wait at most ``timeout`` seconds."""
    return Child(fn, *args, new_group=new_group).wait(timeout)


def _child_main(
    wfd: int,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    new_group: bool,
    death_signal: Callable[[], None],
) -> None:
    """Body of the forked child: never returns."""
    code = 0
    try:
        death_signal()  # killed when the parent dies; ended now if it already has
        if new_group:
            with contextlib.suppress(OSError):
                os.setpgid(0, 0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        faulthandler.disable()  # a fatal signal is a result here, not a crash to dump
        try:
            msg: dict[str, Any] = {"status": "ok", "value": fn(*args)}
        except OSError as exc:
            msg = {"status": "oserror", "errno": errno_name(exc.errno), "message": str(exc)}
        except BaseException:
            msg = {"status": "crash", "message": traceback.format_exc()}
        try:
            data = json.dumps(msg).encode()
        except (TypeError, ValueError):
            data = json.dumps({"status": "crash", "message": f"result is not JSON-safe: {msg!r:.500}"}).encode()
        data = _HEADER.pack(len(data)) + data
        while data:
            data = data[os.write(wfd, data) :]
    except BaseException:
        code = 1
    finally:
        os._exit(code)
