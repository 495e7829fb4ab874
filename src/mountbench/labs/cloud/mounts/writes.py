"""``--vfs-cache-mode writes``: written files go to the local cache first and are
uploaded after close (``--vfs-write-back``, 5 s by default); reads go to the remote."""

from mountbench.labs.cloud.mounts.cachemode import CacheMode


class Writes(CacheMode):
    name = "writes"
    summary = "writes to the disk cache, uploaded after close (write-back 5 s); reads from the remote"
    caches_writes = True
