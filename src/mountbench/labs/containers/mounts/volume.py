"""A named volume (``podman volume create``, ``-v NAME:/mnt/volume``): with the local driver, a
directory in the container storage bind-mounted in."""

from __future__ import annotations

import shlex

from mountbench.labs.containers.mounts.containermount import PlainMount
from mountbench.labs.containers.podman import Podman
from mountbench.labs.containers.workdir import LabDir, Names


class NamedVolume(PlainMount):
    name = "volume"
    path = "/mnt/volume"
    outlives = "yes (until the volume is removed)"
    meaning = "a directory Podman keeps, outliving the container: databases and node_modules that need no host edits"

    def prepare(self, lab: LabDir, podman: Podman) -> None:
        podman.run(self._create(lab))

    def prepare_text(self, lab: LabDir, podman: Podman) -> list[str]:
        return [shlex.join(podman.argv(self._create(lab)))]

    def _create(self, lab: LabDir) -> list[str]:
        return ["volume", "create", "--label", lab.names.label, lab.names.volume]

    def run_args(self, lab: LabDir, names: Names) -> list[str]:
        return ["--volume", f"{names.volume}:{self.path}"]


TYPE = NamedVolume()
