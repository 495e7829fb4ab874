"""What a cloud-drive mount kind declares: one rclone ``--vfs-cache-mode``, the options it
mounts with, what it is expected to do with writes, and the caveats on its numbers.

A kind builds the ``rclone mount`` command line for one target; the lab (cloud/lab.py)
runs it in the foreground as its own child, so it stops with the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mountbench.model import Caveat

CLOUD_CACHE = "cloud-cache"  # caveat code: rclone's VFS cache (on local disk) may serve these


@dataclass(frozen=True)
class Wire:
    """Where the mount reaches the remote: the delay proxy's URL for this RTT."""

    url: str
    rtt_ms: float
    bandwidth_kbps: int | None = None


class CacheMode:
    """One rclone VFS cache mode (subclasses set the class attributes)."""

    name: str = ""
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

    def caveats(self) -> tuple[Caveat, ...]:
        """What every number of this mode carries (the lab puts them on each sample)."""
        found = []
        if self.caches_reads:
            found.append(Caveat(CLOUD_CACHE, f"vfs-cache-mode {self.name}: rclone's cache on this machine's disk "
                                             "may serve reads; a first (uncached) read crosses the wire"))  # fmt: skip
        if self.caches_writes:
            found.append(Caveat(CLOUD_CACHE, f"vfs-cache-mode {self.name}: writes land in rclone's disk cache and "
                                             "reach the remote ~5 s after close, outside the timed part"))  # fmt: skip
        return tuple(found)
