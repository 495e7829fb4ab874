"""What tells one instance of a filesystem from another mounted at the same place.

The device number alone does not: unmount a tmpfs and mount a fresh one, and the kernel hands
out the same anonymous device number again. Two facts do: the filesystem id ``statfs`` reports
(``f_fsid``: from the UUID on ext4, XFS and Btrfs; random for each tmpfs on recent kernels) and
the birth time of the target directory itself (``statx``' btime: a directory made again, or the
root of a fresh filesystem, is born anew; remounting the same disk keeps it). Where a filesystem
reports neither (many FUSE filesystems), nothing is recorded and nothing is compared.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path

_AT_FDCWD = -100
_AT_SYMLINK_NOFOLLOW = 0x100
_STATX_BTIME = 0x800
_STATX_SIZE = 256  # struct statx is 256 bytes
_BTIME_OFFSET = 80  # stx_btime: struct statx_timestamp {__s64 tv_sec; __u32 tv_nsec; __s32 pad}


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "statx") else None


_LIBC = _libc()


def birth_time_ns(path: Path | str) -> int | None:
    """The directory's birth time in nanoseconds, None where the filesystem or libc has none."""
    if _LIBC is None:
        return None
    buffer = ctypes.create_string_buffer(_STATX_SIZE)
    result = _LIBC.statx(_AT_FDCWD, os.fsencode(str(path)), _AT_SYMLINK_NOFOLLOW, _STATX_BTIME, buffer)
    if result != 0:
        return None
    mask = int.from_bytes(buffer.raw[0:4], "little")
    if not mask & _STATX_BTIME:
        return None
    seconds = int.from_bytes(buffer.raw[_BTIME_OFFSET : _BTIME_OFFSET + 8], "little", signed=True)
    nanos = int.from_bytes(buffer.raw[_BTIME_OFFSET + 8 : _BTIME_OFFSET + 12], "little")
    return seconds * 1_000_000_000 + nanos if seconds or nanos else None


def instance(path: Path | str) -> str:
    """``fsid <hex>; born <ns>`` for the filesystem instance ``path`` is on ('' when neither is known)."""
    parts = []
    try:
        fsid = os.statvfs(path).f_fsid
    except OSError:
        fsid = 0
    if fsid:
        parts.append(f"fsid {fsid:x}")
    born = birth_time_ns(path)
    if born is not None:
        parts.append(f"born {born}")
    return "; ".join(parts)


def differs(recorded: str, now: str) -> str:
    """What differs between two :func:`instance` texts ('' when nothing known to both does)."""
    then_parts = dict(part.split(" ", 1) for part in recorded.split("; ") if " " in part)
    now_parts = dict(part.split(" ", 1) for part in now.split("; ") if " " in part)
    return ", ".join(
        f"{name} {then_parts[name]} → {now_parts[name]}"
        for name in then_parts
        if name in now_parts and then_parts[name] != now_parts[name]
    )
