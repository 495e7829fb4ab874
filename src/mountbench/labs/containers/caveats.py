"""What a container mount puts on the numbers measured through it, as caveats: each mount type
says it in its own module (mounts/: ``copied_up_from``)."""

from __future__ import annotations

from mountbench.labs.containers.mounts import MountType
from mountbench.model import Caveat

COPY_UP = "container-copy-up"


def mount_caveats(mount_type: MountType) -> tuple[Caveat, ...]:
    """The caveats every sample on this mount type carries: on overlayfs, that no copy-up is in
    the numbers (fio's files were made in the container)."""
    if mount_type.copied_up_from is None:
        return ()
    return (
        Caveat(
            COPY_UP,
            f"{mount_type.name} is overlayfs: these files were made in the container, so no copy-up is in these "
            f"numbers; the first write to a file that came from {mount_type.copied_up_from} copies the whole file "
            "up first",
        ),
    )
