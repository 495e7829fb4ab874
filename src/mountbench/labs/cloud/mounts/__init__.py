"""The cloud lab's mount kinds: one module per rclone VFS cache mode, one registry.

To add a kind: write cloud/mounts/<mode>.py with a CacheMode subclass (cloud/mounts/base.py)
and add one line to MODES below.
"""

from __future__ import annotations

from typing import Final

from mountbench.labs.cloud.mounts.base import CLOUD_CACHE, CacheMode, Wire
from mountbench.labs.cloud.mounts.full import Full
from mountbench.labs.cloud.mounts.minimal import Minimal
from mountbench.labs.cloud.mounts.off import Off
from mountbench.labs.cloud.mounts.writes import Writes

MODES: Final[dict[str, CacheMode]] = {
    mode.name: mode
    for mode in (
        Off(),
        Minimal(),
        Writes(),
        Full(),
    )
}

__all__ = ["CLOUD_CACHE", "MODES", "CacheMode", "Wire"]
