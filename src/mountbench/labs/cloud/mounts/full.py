"""``--vfs-cache-mode full``: reads and writes go through the local cache; reads fetch
only the parts asked for and keep them; writes are uploaded after close as in writes."""

from mountbench.labs.cloud.mounts.cachemode import CacheMode


class Full(CacheMode):
    name = "full"
    summary = "reads and writes through the disk cache (sparse files); uploads after close"
    caches_reads = True
    caches_writes = True
