"""What a lab is: the parts every member of labs/ supplies, and the pieces they share.

A lab builds the storage it measures (mounts into a QEMU guest, rclone mounts of a remote
served on this machine, the mounts of a Podman container), runs the workloads on it and
stores one run. Each member (labs/<name>/) supplies, in modules of its own:

- its **mount variants**: one module each and one registry line (the QEMU lab's mount types,
  ``labs/qemu/mounts``; the cloud lab's cache modes, ``labs/cloud/mounts``; the container
  lab's mount types, ``labs/containers/mounts``); each says what the host must have for it
  (:class:`MountVariant`);
- its **running part**: a :class:`LabContext` (``with``: checked, started, closed however it ends);
- its **prerequisites**: every missing piece as a :class:`Problem` with its fix; before
  anything starts, :func:`refuse` turns them into the one error a user sees;
- its **caveats**: what each of its mounts puts on every number it measures;
- its **probe**: what each mount supports and how coherent it is, stored in the run's lab
  facts (``labfacts.LabFacts``: the member's own record, never another lab's fields);
- its **resume**: finishing an interrupted run, or saying plainly that it cannot.

The member itself is one object (:class:`Lab`) listed in ``labs.LABS``; what the commands do
with every lab alike (``doctor``, ``run --resume`` of a lab's run) goes through it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, ClassVar, Protocol, Self, TypeVar

from mountbench.errors import ExitCode, MountbenchError, ToolMissing
from mountbench.host import process as procs

if TYPE_CHECKING:
    from mountbench.engine.session import Events
    from mountbench.model import RunData
    from mountbench.store import Store


@dataclass(frozen=True)
class Problem:
    """Something a lab needs that is missing or wrong, and the command or step that fixes it.

    ``optional``: the lab works without it but is better with it (``doctor`` marks it, a run
    goes ahead)."""

    what: str
    fix: str
    optional: bool = False

    def __str__(self) -> str:
        return f"optional: {self.what}" if self.optional else self.what


def refuse(problems: Sequence[Problem], doctor_flag: str) -> None:
    """Raise ToolMissing for the first problem that is not optional, with its fix and how
    many more there are (all of them: ``mountbench doctor <doctor_flag>``); nothing when
    there is none."""
    blocking = [p for p in problems if not p.optional]
    if not blocking:
        return
    first = blocking[0]
    more = f" (and {len(blocking) - 1} more: see 'mountbench doctor {doctor_flag}')" if len(blocking) > 1 else ""
    raise ToolMissing(f"{first.what}; {first.fix}{more}")


class MountVariant(Protocol):
    """One way a lab mounts storage, one module of the member's registry."""

    name: ClassVar[str]  # what the user names it by (--mount NAME, --mode NAME)

    def prerequisites(self) -> list[Problem]:
        """What this machine lacks for it (empty: nothing)."""
        ...


V = TypeVar("V", bound=MountVariant)


def registry(*variants: V) -> dict[str, V]:
    """A member's registry: its variants by name, in the order help and errors list them."""
    return {variant.name: variant for variant in variants}


def variant_problems(variants: Mapping[str, MountVariant], names: Iterable[str] | None = None) -> list[Problem]:
    """The missing host pieces of these variants (default: all), in registry order, each once."""
    wanted = set(variants) if names is None else set(names)
    problems: dict[Problem, None] = {}
    for variant in variants.values():
        if variant.name in wanted:
            problems.update(dict.fromkeys(variant.prerequisites()))
    return list(problems)


class Stopped(MountbenchError):
    """A lab's run ended early (Ctrl-C, its time limit, a side that failed); what finished was
    kept and stored. ``exit_code`` says how the command ends."""

    def __init__(self, message: str, code: ExitCode) -> None:
        super().__init__(message)
        self.exit_code = code


# --- up and down -----------------------------------------------------------------------------


class LabContext:
    """A lab's running part, used as ``with Lab(...) as lab:`` by every member. ``__enter__``
    runs ``_before_start`` (refusals, what a killed run left: nothing to undo when it fails),
    then ``_start``; when the start fails (Ctrl-C too), ``close`` undoes what it began before
    the failure goes on. ``__exit__`` closes. ``close`` is idempotent and safe on a part-made lab."""

    def _before_start(self) -> None:
        """Nothing by default."""

    def _start(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._before_start()
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def start_daemon(
    argv: Sequence[str],
    log: Path,
    *,
    ready: Callable[[], bool],
    failure: str,
    error: Callable[[str], Exception],
    timeout: float = 10.0,
    env: dict[str, str] | None = None,
    started: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> subprocess.Popen[bytes]:
    """A lab's daemon (a virtiofsd, an sshd, rclone's server, the delay proxy) started with its output
    in ``log`` and waited for until ``ready()`` (``timeout`` seconds at most, or until it exits).
    ``started`` is told of it at once (the lab's close() stops what it was told of). A daemon that
    is not ready is stopped, and ``error("<failure>: <the log's last lines>")`` raised."""
    proc = procs.start(argv, log=log, env=env)
    if started is not None:
        started(proc)
    if not procs.wait_until(ready, timeout, proc):
        tail = procs.log_tail(log, 3)
        procs.stop_tree(proc)
        raise error(f"{failure}: {tail or 'no output'}")
    return proc


# --- probe -----------------------------------------------------------------------------------

CAPABILITIES_ROOM = 10  # capabilities past those the probe (probe.target) checks now: room to spare


def capability_bound(timeout_s: float) -> float:
    """Seconds the capability probe of one mount may take, each capability bounded by
    ``timeout_s``: how long a lab's probe driver waits for it before calling it hung. (It counted 40
    capabilities when the probe had 34; issue 49 took it to 42, so the count is the probe's own.)"""
    from mountbench.probe.catalogue import CAPABILITIES  # here: the lab commands' start stays light

    return (len(CAPABILITIES) + CAPABILITIES_ROOM) * (timeout_s + 2.0)


Resume = Callable[..., str]  # (run, store, events, on_note, on_saved=None, keep=False) -> final status


@dataclass(frozen=True)
class Lab:
    """A member of the labs: what the commands ask of every lab alike, one record per member
    (labs/<name>/member.py)."""

    name: str  # the name its runs are stored under (labfacts.LabFacts' name)
    title: str  # how sentences name it: "the QEMU lab"
    command: str  # the mountbench command that runs it
    doctor_flag: str  # the doctor option that checks its prerequisites
    needs: str  # what doctor says it found when nothing is missing
    variants: Mapping[str, MountVariant]  # its registry
    # every missing piece for the lab and these variants (default: all); with optional=True, also what
    # the lab works without but is better with
    problems: Callable[[bool, Iterable[str] | None], list[Problem]]
    resumer: Resume  # finishes an interrupted or killed run on the lab made again

    def prerequisites(self, optional: bool = False, variants: Iterable[str] | None = None) -> list[Problem]:
        return self.problems(optional, variants)

    def resume(
        self,
        run: RunData,
        store: Store,
        events: Events,
        on_note: Callable[[str], None],
        on_saved: Callable[[str], None] | None = None,
        keep: bool = False,
    ) -> str:
        """Finish an interrupted or killed run of this lab (the lab is made again as the run recorded
        it) and return its final status."""
        return self.resumer(run, store, events, on_note, on_saved, keep)
