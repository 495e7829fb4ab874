"""The cloud lab as a member of the labs (labs/frame.py): what `doctor`, `run --resume` and
`cloudlab --resume` ask of it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from mountbench.labs.cloud.mounts import CACHE_MODES
from mountbench.labs.cloud.prereq import DOCTOR_FLAG, lab_problems
from mountbench.labs.frame import Problem
from mountbench.model import CloudLabFacts

if TYPE_CHECKING:
    from mountbench.engine.session import Events
    from mountbench.model import RunData
    from mountbench.store import Store


class CloudLabMember:
    name = CloudLabFacts.name
    command = "cloudlab"
    doctor_flag = DOCTOR_FLAG
    needs = "rclone, fuse3 and toxiproxy"
    variants = CACHE_MODES
    resumes = True

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
        from mountbench.labs.cloud.run import resume_cloudlab  # the engine, only when a run resumes

        return resume_cloudlab(run, store, events, on_note, on_saved, keep)


LAB = CloudLabMember()
