"""Which mount a path lives on, from /proc/self/mountinfo (no syscall on the target)."""

from __future__ import annotations

import os

from mountbench.host.targets import mount_of, read_mounts
from mountbench.probefacts import FsInfo

STATVFS_FIELDS = (
    "f_bsize",
    "f_frsize",
    "f_blocks",
    "f_bfree",
    "f_bavail",
    "f_files",
    "f_ffree",
    "f_favail",
    "f_namemax",
)


def statvfs_dict(st: os.statvfs_result) -> dict[str, int]:
    return {name: int(getattr(st, name)) for name in STATVFS_FIELDS}


def fs_info(realpath: str, statvfs: dict[str, int] | None = None) -> FsInfo:
    """FsInfo for an already-resolved path; statvfs figures are passed in (taken in a child)."""
    try:
        entries = read_mounts()
    except OSError:
        entries = []
    entry = mount_of(realpath, entries)
    if entry is None:
        return FsInfo(statvfs=statvfs or {})
    return FsInfo(
        fstype=entry.fstype,
        source=entry.source,
        mountpoint=entry.mount_point,
        options=entry.options,
        statvfs=statvfs or {},
    )
