"""``--vfs-cache-mode off``: every read and write goes to the remote; a write streams while
the file is open and is on the remote when close() returns."""

from mountbench.labs.cloud.mounts.cachemode import CacheMode


class Off(CacheMode):
    name = "off"
    summary = "no disk cache: reads and writes go to the remote; files open write-only, written sequentially"
