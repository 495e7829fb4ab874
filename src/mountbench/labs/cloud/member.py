"""The cloud lab as a member of the labs (labs/frame.py): what `doctor`, `run --resume` and
`cloudlab --resume` ask of it."""

from __future__ import annotations

from typing import Any

from mountbench.labfacts import CloudLabFacts
from mountbench.labs.cloud.mounts import CACHE_MODES
from mountbench.labs.cloud.prereq import DOCTOR_FLAG, lab_problems
from mountbench.labs.frame import Lab


def _resume(*args: Any) -> str:
    from mountbench.labs.cloud.cloudrun import resume_cloudlab  # the engine, only when a run resumes

    return resume_cloudlab(*args)


LAB = Lab(
    name=CloudLabFacts.name,
    title="the cloud lab",
    command="cloudlab",
    doctor_flag=DOCTOR_FLAG,
    needs="rclone, fuse3 and toxiproxy",
    variants=CACHE_MODES,
    problems=lab_problems,
    resumer=_resume,
)
