"""The QEMU lab as a member of the labs (labs/frame.py): what `doctor`, `run --resume` and
`lab --resume` ask of it. It cannot resume a run yet: the guest's run would have to be handed
its finished samples back, and the host's cost of each (measured around the guest's events)
joined to the new ones."""

from __future__ import annotations

from mountbench.labfacts import QemuLabFacts
from mountbench.labs.frame import Lab
from mountbench.labs.qemu.mounts import MOUNT_TYPES
from mountbench.labs.qemu.prereq import DOCTOR_FLAG, lab_problems

LAB = Lab(
    name=QemuLabFacts.name,
    title="the QEMU lab",
    command="lab",
    doctor_flag=DOCTOR_FLAG,
    needs="QEMU, kernel, busybox and what each mount type needs",
    variants=MOUNT_TYPES,
    problems=lab_problems,
)
