"""Which mount a path lives on, from /proc/self/mountinfo (no syscall on the target)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from mountbench.probe.model import FsInfo

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


@dataclass(frozen=True)
class MountEntry:
    mountpoint: str
    fstype: str
    source: str
    options: str


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> list[MountEntry]:
    """Parse the text of /proc/<pid>/mountinfo (see proc(5))."""
    entries = []
    for line in text.splitlines():
        parts = line.split()
        if "-" not in parts:
            continue
        sep = parts.index("-")
        if sep < 6 or len(parts) < sep + 3:
            continue
        entries.append(
            MountEntry(
                mountpoint=_unescape(parts[4]),
                fstype=parts[sep + 1],
                source=_unescape(parts[sep + 2]),
                options=",".join(filter(None, [parts[5], *parts[sep + 3 : sep + 4]])),
            )
        )
    return entries


def mount_of(path: str, entries: list[MountEntry]) -> MountEntry | None:
    """The entry whose mount point is the longest prefix of ``path`` (last mounted wins)."""
    best: MountEntry | None = None
    for entry in entries:
        mp = entry.mountpoint.rstrip("/") or "/"
        if (path == mp or path.startswith(mp.rstrip("/") + "/")) and (
            best is None or len(mp) >= len(best.mountpoint.rstrip("/") or "/")
        ):
            best = entry
    return best


def statvfs_dict(st: os.statvfs_result) -> dict[str, int]:
    return {name: int(getattr(st, name)) for name in STATVFS_FIELDS}


def fs_info(realpath: str, statvfs: dict[str, int] | None = None) -> FsInfo:
    """FsInfo for an already-resolved path; statvfs figures are passed in (taken in a child)."""
    try:
        entries = parse_mountinfo(Path("/proc/self/mountinfo").read_text())
    except OSError:
        entries = []
    entry = mount_of(realpath, entries)
    if entry is None:
        return FsInfo(statvfs=statvfs or {})
    return FsInfo(
        fstype=entry.fstype,
        source=entry.source,
        mountpoint=entry.mountpoint,
        options=entry.options,
        statvfs=statvfs or {},
    )
