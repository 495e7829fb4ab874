"""A minimal inotify watcher through ctypes (libc inotify_init1 / inotify_add_watch).

No dependency: the probe only needs to know which events arrive, and when.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import struct
import time
from dataclasses import dataclass
from pathlib import Path

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

EVENT_NAMES = {
    IN_MODIFY: "modify",
    IN_ATTRIB: "attrib",
    IN_CLOSE_WRITE: "close_write",
    IN_MOVED_FROM: "moved_from",
    IN_MOVED_TO: "moved_to",
    IN_CREATE: "create",
    IN_DELETE: "delete",
}
ALL_EVENTS = 0
for _bit in EVENT_NAMES:
    ALL_EVENTS |= _bit

_EVENT = struct.Struct("iIII")


@dataclass(frozen=True)
class Event:
    kind: str
    name: str
    at: float  # time.monotonic() when read


def _libc() -> ctypes.CDLL:
    lib = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    lib.inotify_init1.argtypes = [ctypes.c_int]
    lib.inotify_init1.restype = ctypes.c_int
    lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    lib.inotify_add_watch.restype = ctypes.c_int
    return lib


def parse_events(data: bytes, at: float) -> list[Event]:
    """Split a buffer read from an inotify fd into events (one per known mask bit)."""
    events = []
    offset = 0
    while offset + _EVENT.size <= len(data):
        _wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
        raw = data[offset + _EVENT.size : offset + _EVENT.size + length]
        name = os.fsdecode(raw.rstrip(b"\0"))
        offset += _EVENT.size + length
        for bit, kind in EVENT_NAMES.items():
            if mask & bit:
                events.append(Event(kind, name, at))
    return events


class Watch:
    """Watch one directory for ``mask`` events. Use as a context manager."""

    def __init__(self, directory: Path, mask: int = ALL_EVENTS) -> None:
        lib = _libc()
        fd = lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"inotify_init1: {os.strerror(err)}")
        self.fd = fd
        if lib.inotify_add_watch(fd, os.fsencode(directory), mask) < 0:
            err = ctypes.get_errno()
            os.close(fd)
            raise OSError(err, f"inotify_add_watch: {os.strerror(err)}", str(directory))

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def read(self, timeout: float) -> list[Event]:
        """Events available within ``timeout`` seconds (waits only if none are queued)."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return []
        try:
            data = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return []
        return parse_events(data, time.monotonic())

    def collect_until(self, wanted: set[tuple[str, str]], timeout: float) -> tuple[list[Event], set[tuple[str, str]]]:
        """Read events until every (kind, name) in ``wanted`` arrived or ``timeout`` passed.

        Returns all events read and the wanted pairs that never arrived.
        """
        deadline = time.monotonic() + timeout
        events: list[Event] = []
        missing = set(wanted)
        while missing:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            for ev in self.read(remaining):
                events.append(ev)
                missing.discard((ev.kind, ev.name))
        return events, missing
