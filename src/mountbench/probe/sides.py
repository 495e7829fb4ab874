"""Where a view of a directory lives: the side that runs a coherence check's steps there.

A coherence check has an actor (changes the directory through view A) and an observer
(watches it through view B). When both views are on this machine they are two mounts
of one directory here; in the lab one view is the host's directory and the other the
guest's mount, on another machine. A :class:`Side` runs the check's steps where its
view lives, each in a child process bounded in time (see :mod:`mountbench.probe.sandbox`):

- :meth:`Side.run` runs a step and returns its :class:`Outcome`;
- :meth:`Side.begin` starts a step that runs on while the other side acts: it returns
  once the step said it is ready (watching, holding a lock), and :meth:`Pending.finish`
  tells it to let go and collects its outcome;
- :meth:`Side.to_local` turns a time read on that side's monotonic clock into the
  driver's, known to :attr:`Side.resolution_s` (0 for this machine's own clock).

Steps are named: each side looks the name up in the same step table (the guest runs
the host's own mountbench), so a check is written once for every pair of sides. A
step started with :meth:`Side.begin` takes a :class:`Signals` as its first argument.

:class:`LocalSide` runs steps on this machine; the lab's guest side speaks to an agent
in the guest (:mod:`mountbench.probe.agent`) with the same interface.
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from mountbench.host.scratch import boot_id
from mountbench.probe.sandbox import Child, Outcome, run_isolated

Steps = Mapping[str, Callable[..., Any]]
READY = b"r"
RELEASE = b"x"


class Pending(Protocol):
    """A step started with :meth:`Side.begin`."""

    @property
    def ready(self) -> bool:
        """True when the step said it was ready; False when it ended or hung before."""
        ...

    def finish(self, timeout: float) -> Outcome:
        """Let the step go on to its end (release what it holds) and return its outcome,
        waiting at most ``timeout`` seconds (then it is killed: "hung")."""
        ...


class Side(Protocol):
    """One machine (or view) a check runs steps on."""

    @property
    def name(self) -> str:
        """Where the steps run ("host", "guest"): what the driver's messages call it."""
        ...

    @property
    def clock(self) -> str:
        """Which clock the times of this side's steps are read on: two sides with the same
        clock compare times exactly."""
        ...

    @property
    def resolution_s(self) -> float:
        """How well :meth:`to_local` knows this side's clock (seconds either way)."""
        ...

    def run(self, step: str, *args: Any, timeout: float) -> Outcome: ...

    def begin(self, step: str, *args: Any, timeout: float) -> Pending: ...

    def to_local(self, t: float) -> float:
        """A time read with time.monotonic() on this side, on the driver's monotonic clock."""
        ...


class Signals:
    """What a step started with :meth:`Side.begin` uses to talk to its starter."""

    def __init__(self, ready_fd: int, release_fd: int) -> None:
        self._ready_fd = ready_fd
        self._release_fd = release_fd

    def ready(self) -> None:
        """Say the step is ready (watching, holding its lock): :meth:`Side.begin` returns."""
        os.write(self._ready_fd, READY)

    def wait_release(self, timeout: float) -> bool:
        """Block until the starter calls :meth:`Pending.finish` (True), or ``timeout`` passes."""
        ready, _, _ = select.select([self._release_fd], [], [], max(0.0, timeout))
        if not ready:
            return False
        with contextlib.suppress(OSError):
            os.read(self._release_fd, 1)
        return True

    def released(self) -> bool:
        """Has the starter already called :meth:`Pending.finish`? (does not block)"""
        ready, _, _ = select.select([self._release_fd], [], [], 0)
        return bool(ready)


def _signalled(fn: Callable[..., Any], fds: tuple[int, int, int, int], args: tuple[Any, ...]) -> Any:
    """Child side of :meth:`LocalSide.begin`: keep this step's ends of the two pipes, close the
    starter's, and run the step with its Signals."""
    ready_r, ready_w, release_r, release_w = fds
    os.close(ready_r)
    os.close(release_w)
    return fn(Signals(ready_w, release_r), *args)


class LocalPending:
    """A step running in a child process on this machine (see :meth:`LocalSide.begin`)."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], ready_timeout: float) -> None:
        ready_r, ready_w = os.pipe()
        release_r, release_w = os.pipe()
        self._child = Child(_signalled, fn, (ready_r, ready_w, release_r, release_w), args)
        os.close(ready_w)
        os.close(release_r)
        self._release_fd: int | None = release_w
        try:
            got, _, _ = select.select([ready_r], [], [], max(0.0, ready_timeout))
            self._ready = bool(got) and os.read(ready_r, 1) == READY
        finally:
            os.close(ready_r)

    @property
    def ready(self) -> bool:
        return self._ready

    def finish(self, timeout: float) -> Outcome:
        if self._release_fd is not None:
            with contextlib.suppress(OSError):  # the step may have ended already
                os.write(self._release_fd, RELEASE)
            os.close(self._release_fd)
            self._release_fd = None
        return self._child.wait(timeout)


class LocalSide:
    """Steps run in child processes on this machine; its clock is the driver's own."""

    def __init__(self, steps: Steps, name: str = "local") -> None:
        self._steps = steps
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def clock(self) -> str:
        return f"monotonic@{os.uname().nodename}:{boot_id() or '?'}"

    @property
    def resolution_s(self) -> float:
        return 0.0

    def step(self, name: str) -> Callable[..., Any]:
        try:
            return self._steps[name]
        except KeyError:
            raise ValueError(f"unknown probe step {name!r}") from None

    def run(self, step: str, *args: Any, timeout: float) -> Outcome:
        return run_isolated(self.step(step), *args, timeout=timeout)

    def begin(self, step: str, *args: Any, timeout: float) -> LocalPending:
        return LocalPending(self.step(step), args, timeout)

    def to_local(self, t: float) -> float:
        return t

    def now(self) -> float:
        return time.monotonic()
