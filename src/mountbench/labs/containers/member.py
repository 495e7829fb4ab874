"""The container lab as a member of the labs (labs/frame.py): what `doctor` and `run --resume`
ask of it. It cannot resume a run yet: its container and volume go with the run."""

from __future__ import annotations

from mountbench.labfacts import ContainerLabFacts
from mountbench.labs.containers.mounts import MOUNT_TYPES
from mountbench.labs.containers.prereq import DOCTOR_FLAG, lab_problems
from mountbench.labs.frame import Lab

LAB = Lab(
    name=ContainerLabFacts.name,
    title="the container lab",
    command="containers",
    doctor_flag=DOCTOR_FLAG,
    needs="rootful Podman with runc, fio and the overlay filesystem",
    variants=MOUNT_TYPES,
    problems=lab_problems,
)
