"""A bind mount of a host directory (``-v HOSTDIR:/mnt/bind``): the host's filesystem itself."""

from __future__ import annotations

from pathlib import Path

from mountbench.labfacts import SHARED_BOTH_WAYS
from mountbench.labs.containers.mounts.containermount import PlainMount, host_dir
from mountbench.labs.containers.workdir import LabDir, Names


class BindMount(PlainMount):
    name = "bind"
    path = "/mnt/bind"
    shares = SHARED_BOTH_WAYS
    outlives = "yes (the host's directory)"
    meaning = "the host's directory itself: the host sees every change at once (source code you edit on the host)"

    def run_args(self, lab: LabDir, names: Names) -> list[str]:
        return ["--volume", f"{host_dir(lab)}:{self.path}"]

    def host_path(self, lab: LabDir) -> Path:
        return host_dir(lab)


TYPE = BindMount()
