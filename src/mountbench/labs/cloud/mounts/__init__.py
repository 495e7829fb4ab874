"""The cloud lab's cache modes: one module per rclone VFS cache mode, one registry.

To add a cache mode: write labs/cloud/mounts/<mode>.py with a CacheMode subclass
(labs/cloud/mounts/base.py) and add one line to CACHE_MODES below.
"""

from __future__ import annotations

from typing import Final

from mountbench.labs.cloud.mounts.cachemode import CacheMode, Wire
from mountbench.labs.cloud.mounts.full import Full
from mountbench.labs.cloud.mounts.minimal import Minimal
from mountbench.labs.cloud.mounts.off import Off
from mountbench.labs.cloud.mounts.writes import Writes
from mountbench.labs.frame import registry

CACHE_MODES: Final[dict[str, CacheMode]] = registry(
    Off(),
    Minimal(),
    Writes(),
    Full(),
)

__all__ = ["CACHE_MODES", "CacheMode", "Wire"]
