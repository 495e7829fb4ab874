"""The QEMU lab as a member of the labs (labs/frame.py): what `doctor`, `run --resume` and
`lab --resume` ask of it."""

from __future__ import annotations

from typing import Any

from mountbench.labfacts import QemuLabFacts
from mountbench.labs.frame import Lab
from mountbench.labs.qemu.mounts import MOUNT_TYPES
from mountbench.labs.qemu.prereq import DOCTOR_FLAG, lab_problems


def _resume(*args: Any) -> str:
    from mountbench.labs.qemu.guestrun import resume_qemu  # the guest, only when a run resumes

    return resume_qemu(*args)


LAB = Lab(
    name=QemuLabFacts.name,
    title="the QEMU lab",
    command="lab",
    doctor_flag=DOCTOR_FLAG,
    needs="QEMU, kernel, busybox and what each mount type needs",
    variants=MOUNT_TYPES,
    problems=lab_problems,
    resumer=_resume,
)
