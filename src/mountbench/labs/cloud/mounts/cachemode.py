"""What a cache mode of the cloud lab declares: one rclone ``--vfs-cache-mode``, the options it
mounts with, and what it does with reads and writes (labs/cloud/caveats.py turns that into the
caveats on its numbers).

A cache mode builds the ``rclone mount`` command line for one target; the lab (labs/cloud/lab.py)
runs it in the foreground as its own child, so it stops with the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from mountbench.labs.frame import Problem


@dataclass(frozen=True)
class Wire:
    """Where the mount reaches the remote: the delay proxy's URL for this RTT."""

    url: str
    rtt_ms: float
    bandwidth_kbps: int | None = None


class CacheMode:
    """One rclone VFS cache mode (subclasses set the class attributes)."""

    name: ClassVar[str] = ""
    summary: str = ""  # one line: what the mode does, as rclone documents it
    caches_reads: bool = False  # read data kept on local disk (a second read is local)
    caches_writes: bool = False  # writes go to local disk first, uploaded after close

    def options(self) -> tuple[str, ...]:
        """The rclone options that make this mode (recorded with the target)."""
        return ("--vfs-cache-mode", self.name)

    def argv(self, remote_path: str, wire: Wire, mountpoint: Path, cache_dir: Path, log: Path) -> list[str]:
        """``rclone mount`` of ``remote_path`` on the served remote, through the wire, in the foreground."""
        return [
            "rclone", "mount", f":webdav:{remote_path}", str(mountpoint),
            "--webdav-url", wire.url,
            *self.options(),
            "--cache-dir", str(cache_dir),
            "--log-file", str(log), "--log-level", "NOTICE",
        ]  # fmt: skip

    def prerequisites(self) -> list[Problem]:
        """Every cache mode needs the same rclone, FUSE and toxiproxy (labs/cloud/prereq.py
        checks them once): nothing of its own."""
        return []
