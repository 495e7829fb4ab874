"""What limits a cloud-lab mount's numbers, as caveats: rclone's VFS cache on this machine's disk.

A cache mode declares what it keeps locally (labs/cloud/mounts: ``caches_reads``,
``caches_writes``); every sample of its targets carries the caveats that follow from it.
"""

from __future__ import annotations

from mountbench.labs.cloud.mounts.cachemode import CacheMode
from mountbench.model import Caveat

CLOUD_CACHE = "cloud-cache"  # caveat code: rclone's VFS cache (on local disk) may serve these


def mode_caveats(mode: CacheMode) -> tuple[Caveat, ...]:
    """What every number of this cache mode carries (the lab puts them on each sample)."""
    found = []
    if mode.caches_reads:
        found.append(Caveat(CLOUD_CACHE, f"vfs-cache-mode {mode.name}: rclone's cache on this machine's disk "
                                         "serves what was read before; the cold figures are first reads from "
                                         "the remote, the warm ones come after a read"))  # fmt: skip
    if mode.caches_writes:
        found.append(Caveat(CLOUD_CACHE, f"vfs-cache-mode {mode.name}: writes land in rclone's disk cache and "
                                         "reach the remote ~5 s after close, outside the timed part (the lab "
                                         "waits for them before the next sample)"))  # fmt: skip
    return tuple(found)
