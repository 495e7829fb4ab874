"""``--vfs-cache-mode minimal``: like off, but files opened for reading and writing at
once are kept in the cache (so more applications work)."""

from mountbench.labs.cloud.mounts.cachemode import CacheMode


class Minimal(CacheMode):
    name = "minimal"
    summary = "like off, but files opened read-write are cached on disk"
