"""A lab's run delegated to `mountbench run` somewhere else, and its result brought back: inside
the QEMU guest (its root is the host's, read-only), inside the container lab's container (the
host's Python and mountbench, read-only), or, for the container lab's host side, on this machine.

The delegated run is the host's own mountbench given the run's options whole (``--options-json``)
with a database of its own, its JSON export in the lab's results directory (which the host reads
too) and its events on standard output (``--events -``: each sample's start and end, for what the
host measures around it, and "saved" once a sample is stored and the export rewritten). Every
"saved" hands the lab the run as the export holds it then (``on_run``), so the lab stores each
sample on the host as it comes: a ``kill -9`` of mountbench loses nothing that finished. To resume
one (the lab made again), the host writes the run as it stored it, in the delegated run's own
terms, to a database in the results directory (:func:`seed`); the run inside copies it to its
own and runs `mountbench run --resume` on it.

The lab says where the run runs (:class:`Inside`); this module builds the command, follows its
lines and events, and reads the export back.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mountbench.errors import ExitCode, MountbenchError
from mountbench.labs.frame import Stopped
from mountbench.model import RunData, RunOptions
from mountbench.records.codec import options_to_dict
from mountbench.records.events import parse_event
from mountbench.records.export import read_document
from mountbench.store import Store

EXPORT = "run.json"
SEED = "seed.sqlite"


class InsideTimeout(MountbenchError):
    """The delegated run did not finish within its time limit (and was stopped)."""


class Inside(Protocol):
    """Where a delegated run runs: a command line runs there, each line of its output to ``on_line``;
    its exit status. A run past ``timeout`` raises InsideTimeout; Ctrl-C stops it (KeyboardInterrupt)."""

    python: str  # the Python that runs mountbench there
    results: Path  # the lab's results directory on the host
    results_inside: str  # ... as the inside sees it

    def run(self, argv: Sequence[str], setup: Sequence[Sequence[str]], on_line: Callable[[str], None],
            timeout: float | None) -> int:  # fmt: skip
        """``argv`` run there after each of ``setup`` (commands that must succeed first)."""
        ...


@dataclass(frozen=True)
class Delegation:
    """One delegated run: its targets as the inside sees them (``label=path``), its options, its
    database there, and what it learns its first ETA from (``learnt``: run's --learnt-json)."""

    targets: tuple[str, ...]
    options: RunOptions
    db: str
    export: str = EXPORT  # its file name in the results directory
    learnt: str = ""
    resume: str | None = None  # the run to resume, seeded (seed()) in the results directory


@dataclass(frozen=True)
class Outcome:
    """What came back: the run as its export held it last (None: it wrote none), its exit status
    (None: it was stopped), and why it ended early."""

    run: RunData | None
    status: int | None
    stopped: Stopped | None


def command(inside: Inside, delegation: Delegation) -> tuple[list[str], list[list[str]]]:
    """The run's command line there, and what runs first (a resume's seed copied to its database)."""
    export = f"{inside.results_inside}/{delegation.export}"
    ending = ["--db", delegation.db, "--json", export, "--events", "-"]
    mountbench = [inside.python, "-m", "mountbench", "run"]
    if delegation.resume is not None:
        copy = ["cp", f"{inside.results_inside}/{SEED}", delegation.db]
        return [*mountbench, "--resume", delegation.resume, *ending], [copy]
    options = json.dumps(options_to_dict(delegation.options))
    learnt = ["--learnt-json", delegation.learnt] if delegation.learnt else []
    return [*mountbench, *delegation.targets, "--options-json", options, *ending, *learnt], []


def shell_line(argv: Sequence[str], setup: Sequence[Sequence[str]], env: str = "") -> str:
    """The command line for a shell (the QEMU guest runs one), from /tmp: each setup step must succeed."""
    steps = [*(shlex.join(step) for step in setup), f"env {env} {shlex.join(argv)}" if env else shlex.join(argv)]
    return "cd /tmp && " + " && ".join(steps)


def delegate(
    inside: Inside,
    delegation: Delegation,
    *,
    on_output: Callable[[str], None],
    on_event: Callable[[dict[str, Any]], None] | None = None,
    on_run: Callable[[RunData], None] | None = None,
    timeout: float | None = None,
    what: str = "the delegated run",
) -> Outcome:
    """Run it there, to its end or until it is stopped. ``on_event`` gets every event as it comes;
    ``on_run`` the run as the export holds it after every stored sample and at the end; every other
    line goes to ``on_output``."""
    path = inside.results / delegation.export
    path.unlink(missing_ok=True)

    def on_line(line: str) -> None:
        event = parse_event(line)
        if event is None:
            on_output(line)
            return
        if on_event is not None:
            on_event(event)
        if event.get("event") == "saved" and on_run is not None and path.exists():
            on_run(read_document(path)[0])

    argv, setup = command(inside, delegation)
    stopped: Stopped | None = None
    status: int | None = None
    try:
        status = inside.run(argv, setup, on_line, timeout)
    except KeyboardInterrupt:
        stopped = Stopped("interrupted; the samples that finished are stored", ExitCode.INTERRUPTED)
    except InsideTimeout:
        stopped = Stopped(f"{what} did not finish within {timeout:.0f} s; the samples that finished are stored",
                          ExitCode.FAILURE)  # fmt: skip
    run = read_document(path)[0] if path.exists() else None
    if run is not None and on_run is not None:
        on_run(run)
    return Outcome(run, status, stopped)


def seed(results: Path, run: RunData) -> None:
    """``run`` (in the delegated run's own terms: its targets and samples as it labels them) as the
    database it resumes from, in the results directory. It is the host's record, handed back: its
    targets' recorded facts are left out (the lab made them again: the run inside reads them anew)
    and so is the host's name (the inside runs under another: the machine ID, shared, still says
    it is this machine)."""
    path = results / SEED
    for leftover in (path, path.with_name(SEED + "-wal"), path.with_name(SEED + "-shm")):
        leftover.unlink(missing_ok=True)
    targets = tuple(dataclasses.replace(record, info=None) for record in run.targets)
    host = {key: value for key, value in run.host.items() if key != "hostname"}
    handed = dataclasses.replace(run, targets=targets, host=host, origin="")
    with Store(path) as store:
        store.import_run(handed)
