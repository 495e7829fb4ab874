"""The container's own writable layer: a directory of the image, written through the
container's root filesystem (overlayfs over the image's layers)."""

from __future__ import annotations

from mountbench.labs.containers.image import LAYER_DIR
from mountbench.labs.containers.mounts.containermount import PlainMount
from mountbench.labs.containers.workdir import LabDir, Names


class WritableLayer(PlainMount):
    name = "layer"
    path = LAYER_DIR
    outlives = "no: gone with the container"
    copied_up_from = "the image"
    meaning = "the container's root filesystem: gone with the container; copy-up on the first write of an image file"

    def run_args(self, lab: LabDir, names: Names) -> list[str]:
        return []


TYPE = WritableLayer()
