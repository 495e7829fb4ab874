"""The QEMU lab as a member of the labs (labs/frame.py): what `doctor`, `run --resume` and
`lab --resume` ask of it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from mountbench.errors import UsageError
from mountbench.labs.frame import Problem
from mountbench.labs.qemu.mounts import MOUNT_TYPES
from mountbench.labs.qemu.prereq import DOCTOR_FLAG, lab_problems
from mountbench.model import QemuLabFacts

if TYPE_CHECKING:
    from mountbench.engine.session import Events
    from mountbench.model import RunData
    from mountbench.store import Store


class QemuLabMember:
    name = QemuLabFacts.name
    command = "lab"
    doctor_flag = DOCTOR_FLAG
    needs = "QEMU, kernel, busybox and what each mount type needs"
    variants = MOUNT_TYPES
    resumes = False

    def prerequisites(self, optional: bool = False, variants: Iterable[str] | None = None) -> list[Problem]:
        return lab_problems(optional, variants)

    def resume(
        self,
        run: RunData,
        store: Store,
        events: Events,
        on_note: Callable[[str], None],
        on_saved: Callable[[str], None] | None = None,
        keep: bool = False,
    ) -> str:
        """Not yet: the guest's run would have to be handed its finished samples back, and the
        host's cost of each (measured around the guest's events) joined to the new ones."""
        raise UsageError(
            f"run {run.id} ran in the QEMU lab, which cannot resume a run yet; start a new one with 'mountbench lab'"
        )


LAB = QemuLabMember()
