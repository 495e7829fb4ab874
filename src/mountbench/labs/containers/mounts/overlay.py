"""An overlay mount of a host directory (``-v HOSTDIR:/mnt/overlay:O``): the host directory as
the lower layer, the container's writes in an upper layer of its own that the host never sees."""

from __future__ import annotations

import shlex

from mountbench.labs.containers.mounts.base import SHARED_HOST_TO_CONTAINER, PlainMount
from mountbench.labs.containers.podman import Podman
from mountbench.labs.containers.workdir import LabDir, Names

FROM_LOWER = "from-lower"  # a directory of the lower (host) directory: the probe renames it


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

    def prepare(self, lab: LabDir, podman: Podman) -> None:
        seed = lab.path / "lower" / FROM_LOWER
        seed.mkdir(exist_ok=True)
        (seed / "seed").write_text("a file of the lower directory\n")

    def prepare_text(self, lab: LabDir, podman: Podman) -> list[str]:
        seed = lab.path / "lower" / FROM_LOWER
        return [f"mkdir {shlex.quote(str(seed))} && echo 'a file of the lower directory' > "
                f"{shlex.quote(str(seed / 'seed'))}"]  # fmt: skip

    def run_args(self, lab: LabDir, names: Names) -> list[str]:
        return ["--volume", f"{lab.path / 'lower'}:{self.path}:O"]

    def probe_seed(self, lab: LabDir) -> str | None:
        return f"{self.path}/{FROM_LOWER}"


TYPE = OverlayMount()
