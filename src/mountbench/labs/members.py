"""Every lab of labs/, by the name its runs are stored under: what the commands ask of
any lab (doctor's checks, which command resumes a run) goes through here."""

from __future__ import annotations

from typing import Final

from mountbench.errors import UsageError
from mountbench.labs.cloud.member import LAB as CLOUD
from mountbench.labs.containers.member import LAB as CONTAINERS
from mountbench.labs.frame import Lab
from mountbench.labs.qemu.member import LAB as QEMU
from mountbench.model import RunData

LABS: Final[dict[str, Lab]] = {lab.name: lab for lab in (QEMU, CLOUD, CONTAINERS)}


def lab_of(run: RunData) -> Lab | None:
    """The lab that made this run (None: `mountbench run` on directories as they were)."""
    facts = run.config.lab
    return LABS[facts.name] if facts is not None else None


def resume_advice(run: RunData) -> str:
    """How this run can be resumed: by the command that made it."""
    lab = lab_of(run)
    command = "run" if lab is None else lab.command
    return f"resume it with 'mountbench {command} --resume {run.id}'"


def refuse_plain_resume(run: RunData) -> None:
    """A lab run cannot be resumed by `mountbench run --resume`: its mounts went with the lab.
    Say which command can."""
    lab = lab_of(run)
    if lab is not None:
        raise UsageError(f"run {run.id} ran in 'mountbench {lab.command}', whose mounts are gone; {resume_advice(run)}")
