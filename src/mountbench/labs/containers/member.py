"""The container lab as a member of the labs (labs/frame.py): what `doctor`, `run --resume` and
`containers --resume` ask of it."""

from __future__ import annotations

from typing import Any

from mountbench.labfacts import ContainerLabFacts
from mountbench.labs.containers.mounts import MOUNT_TYPES
from mountbench.labs.containers.prereq import DOCTOR_FLAG, lab_problems
from mountbench.labs.frame import Lab


def _resume(*args: Any) -> str:
    from mountbench.labs.containers.rounds import resume_containers  # the lab, only when a run resumes

    return resume_containers(*args)


LAB = Lab(
    name=ContainerLabFacts.name,
    title="the container lab",
    command="containers",
    doctor_flag=DOCTOR_FLAG,
    needs="rootful Podman with runc, fio and the overlay filesystem",
    variants=MOUNT_TYPES,
    problems=lab_problems,
    resumer=_resume,
)
