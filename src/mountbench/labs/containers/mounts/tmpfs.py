"""A tmpfs mount (``--tmpfs /mnt/tmpfs``): memory, made by the runtime inside the container."""

from __future__ import annotations

from mountbench.labs.containers.mounts.containermount import PlainMount
from mountbench.labs.containers.workdir import LabDir, Names


class TmpfsMount(PlainMount):
    name = "tmpfs"
    path = "/mnt/tmpfs"
    outlives = "no: gone when the container stops"
    meaning = "memory: fastest, gone when the container stops, counted against its memory (caches, test databases)"

    def run_args(self, lab: LabDir, names: Names) -> list[str]:
        return ["--tmpfs", f"{self.path}:rw,nosuid,nodev"]


TYPE = TmpfsMount()
