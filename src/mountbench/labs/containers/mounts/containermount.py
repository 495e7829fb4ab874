"""What a container mount type is: how the container gets it (podman's options), where it
appears inside, what the host must prepare for it, and what it is made of.

Adding a mount type is one module here implementing :class:`MountType` and one line in the
registry (``mounts/__init__.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Protocol

from mountbench.labfacts import NOT_SHARED
from mountbench.labs.containers.podman import Podman
from mountbench.labs.containers.workdir import LabDir, Names
from mountbench.labs.frame import Problem


class MountType(Protocol):
    name: ClassVar[str]  # --mount NAME, and the target's label
    path: ClassVar[str]  # where it appears inside the container
    meaning: ClassVar[str]  # what it is, for a developer choosing where to put data
    outlives: ClassVar[str]  # whether its data outlives the container ("yes (...)" or "no: ...")
    shares: ClassVar[str]  # what the host sees of it: labfacts' SHARED_BOTH_WAYS, SHARED_HOST_TO_CONTAINER, NOT_SHARED
    copied_up_from: ClassVar[str | None]  # overlayfs: where a file's first write copies it up from (None: not overlay)

    def prerequisites(self) -> list[Problem]: ...

    def prepare(self, lab: LabDir, podman: Podman) -> None:
        """Make what the container's option names, before the container starts (a volume)."""

    def prepare_text(self, lab: LabDir, podman: Podman) -> list[str]:
        """What :meth:`prepare` does, as the commands a person would type (``containers --dry-run``)."""

    def run_args(self, lab: LabDir, names: Names) -> list[str]:
        """podman run's options that give the container this mount."""

    def host_path(self, lab: LabDir) -> Path | None:
        """The host directory the mount shows (both ways, or below the container's own changes), or
        None: the host has none of its own here."""


class PlainMount:
    """The usual answers: nothing to prepare, nothing needed, nothing below."""

    name: ClassVar[str]
    path: ClassVar[str]
    copied_up_from: ClassVar[str | None] = None
    shares: ClassVar[str] = NOT_SHARED

    def prerequisites(self) -> list[Problem]:
        return []

    def prepare(self, lab: LabDir, podman: Podman) -> None:
        return None

    def prepare_text(self, lab: LabDir, podman: Podman) -> list[str]:
        return []

    def host_path(self, lab: LabDir) -> Path | None:
        return None


def host_dir(lab: LabDir) -> Path:
    """The host directory behind the bind mount, and the baseline measured from the host."""
    return lab.path / "host"
