"""The container lab's mount kinds: one module each, and the registry (MOUNT_KINDS), in the
order runs, help and reports list them. Adding one: a module with its KIND, one line below."""

from __future__ import annotations

from mountbench.labs.containers.mounts import bind, layer, overlay, tmpfs, volume
from mountbench.labs.containers.mounts.base import MountKind
from mountbench.labs.frame import registry

MOUNT_KINDS: dict[str, MountKind] = registry(
    bind.KIND,
    volume.KIND,
    layer.KIND,
    tmpfs.KIND,
    overlay.KIND,
)

__all__ = ["MOUNT_KINDS", "MountKind"]
