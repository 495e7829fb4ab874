"""`--resume RUN` of a lab command (`lab`, `cloudlab`): the stored run handed to its lab's
resume hook (labs/frame.py), and the run printed and exported as `run --resume` does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mountbench.cli.console import err, print_run
from mountbench.cli.progress import ProgressEvents
from mountbench.errors import Interrupted, UsageError
from mountbench.labs.frame import Lab
from mountbench.labs.members import lab_of, resume_advice
from mountbench.records.export import write_document
from mountbench.report.document import make_document
from mountbench.store import Store


def resume_lab_run(lab: Lab, run_ref: str, db: Path, json_out: Path | None, keep: bool) -> None:
    """Finish run ``run_ref`` of ``lab`` (a one-line usage error when it is another lab's, not a
    lab's, finished, or of a lab that cannot resume)."""
    resume_command = f"mountbench {lab.command}"
    with Store(db) as store:
        run = store.load_run(run_ref)
        if run.status in ("complete", "failed"):
            raise UsageError(f"run {run.id} is {run.status}; nothing to resume ('mountbench show {run.id}' shows it)")
        if lab_of(run) is not lab:
            raise UsageError(f"run {run.id} is not a {lab.command} run; {resume_advice(run)}")
        export = exporter(store, json_out)
        try:
            status = lab.resume(run, store, ProgressEvents(err, ()), note, export, keep)
        except Interrupted:
            raise Interrupted(run.id, resume_command) from None
        run = store.load_run(run.id)
        export(run.id)
    print_run(run)
    if status != "complete":
        raise Interrupted(run.id, resume_command)


def note(line: str) -> None:
    """A lab's progress line, on stderr as it came."""
    err.print(line, markup=False, highlight=False)


def exporter(store: Store, json_out: Path | None) -> Callable[[str], None]:
    """The --json document, rewritten after every sample as run --json is."""

    def export(run_id: str) -> None:
        if json_out:
            write_document(json_out.expanduser(), make_document([store.load_run(run_id)]))

    return export
