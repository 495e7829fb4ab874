"""Read counters of the block device under a filesystem (/sys/class/block/NAME/stat),
to see whether direct reads really reached the device."""

from __future__ import annotations

import os
from pathlib import Path

SECTOR = 512  # the stat file counts 512-byte sectors whatever the device's block size


def stat_file(mount_source: str) -> Path | None:
    """The stat file of the device a filesystem was mounted from; None when it is not a
    block device (tmpfs, FUSE, network and virtual filesystems)."""
    if not mount_source.startswith("/dev/"):
        return None
    name = os.path.basename(os.path.realpath(mount_source))  # /dev/mapper/x -> dm-0
    path = Path("/sys/class/block") / name / "stat"
    return path if path.exists() else None


def bytes_read(path: Path) -> int | None:
    try:
        fields = path.read_text().split()
        return int(fields[2]) * SECTOR
    except (OSError, IndexError, ValueError):
        return None
