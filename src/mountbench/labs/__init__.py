"""The labs: storage that mountbench builds itself, measures, and takes down again.

One frame (frame.py: what a lab member supplies, and the pieces they share) and its members,
one subpackage each: qemu/ (`mountbench lab`: mounts into a throwaway QEMU guest), cloud/
(`mountbench cloudlab`: rclone mounts of a remote served on this machine). A lab joins with a
subpackage of its own, its member object (labs/<name>/member.py), one line in LABS below, and
its facts record in model.py (one line in model.LAB_FACTS).

May import: the ground floor, host/, probe/, records/, engine/, kinds/, fio/, store/.
Imported by cli/ only.
"""

from __future__ import annotations

from typing import Final

from mountbench.errors import UsageError
from mountbench.labs.cloud.member import LAB as CLOUD
from mountbench.labs.frame import Lab
from mountbench.labs.qemu.member import LAB as QEMU
from mountbench.model import RunData

LABS: Final[dict[str, Lab]] = {lab.name: lab for lab in (QEMU, CLOUD)}


def lab_of(run: RunData) -> Lab | None:
    """The lab that made this run (None: `mountbench run` on directories as they were)."""
    facts = run.config.lab
    return LABS[facts.name] if facts is not None else None


def resume_advice(run: RunData) -> str:
    """How this run can be resumed: by the command that made it, or not yet."""
    lab = lab_of(run)
    if lab is None:
        return f"resume it with 'mountbench run --resume {run.id}'"
    if lab.resumes:
        return f"resume it with 'mountbench {lab.command} --resume {run.id}'"
    return f"'mountbench {lab.command}' cannot resume a run yet: start a new one"


def refuse_plain_resume(run: RunData) -> None:
    """A lab run cannot be resumed by `mountbench run --resume`: its mounts went with the lab.
    Say which command can (or that its lab cannot)."""
    lab = lab_of(run)
    if lab is not None:
        raise UsageError(f"run {run.id} ran in 'mountbench {lab.command}', whose mounts are gone; {resume_advice(run)}")
