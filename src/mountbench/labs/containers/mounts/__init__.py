"""The container lab's mount types: one module each, and the registry (MOUNT_TYPES), in the
order runs, help and reports list them. Adding one: a module with its TYPE, one line below."""

from __future__ import annotations

from mountbench.labs.containers.mounts import bind, layer, overlay, tmpfs, volume
from mountbench.labs.containers.mounts.containermount import MountType
from mountbench.labs.frame import registry

MOUNT_TYPES: dict[str, MountType] = registry(
    bind.TYPE,
    volume.TYPE,
    layer.TYPE,
    tmpfs.TYPE,
    overlay.TYPE,
)

__all__ = ["MOUNT_TYPES", "MountType"]
