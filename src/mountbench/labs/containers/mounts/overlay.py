"""An overlay mount of a host directory (``-v HOSTDIR:/mnt/overlay:O``): the host directory as
the lower layer, the container's writes in an upper layer of its own that the host never sees."""

from __future__ import annotations

from pathlib import Path

from mountbench.labfacts import SHARED_HOST_TO_CONTAINER
from mountbench.labs.containers.mounts.containermount import PlainMount
from mountbench.labs.containers.workdir import LabDir, Names


class OverlayMount(PlainMount):
    name = "overlay"
    path = "/mnt/overlay"
    shares = SHARED_HOST_TO_CONTAINER
    outlives = "no: the container's changes are dropped with it"
    copied_up_from = "the host's lower directory"
    meaning = (
        "the host's directory, read-only below the container's own changes, which are dropped with it "
        "(build inputs a container may scribble on)"
    )

    def run_args(self, lab: LabDir, names: Names) -> list[str]:
        return ["--volume", f"{self.host_path(lab)}:{self.path}:O"]

    def host_path(self, lab: LabDir) -> Path:
        return lab.path / "lower"


TYPE = OverlayMount()
